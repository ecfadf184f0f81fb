"""Pair finding at scale: 10,000 spheres on a floor, every sphere paired with every other
(5e7 pairs named) and with the ground, compile with memory linear in the shapes and take 10
steps to rest (the deck of scripts/bench/pairs, every second sphere 0.1 mm above the floor).
The unit test test_many_spheres (deck_contacts) checks the model's contents; timings are the
benchmark's (scripts/bench/pairs), never asserted here."""
import importlib.machinery
import importlib.util
import os
import subprocess

import numpy as np

from common import MBSIM, ROOT, check, contact_rows, done, load, run, write_deck

loader = importlib.machinery.SourceFileLoader("pairs", os.path.join(ROOT, "scripts", "bench", "pairs"))
spec = importlib.util.spec_from_loader("pairs", loader)
pairs = importlib.util.module_from_spec(spec)
loader.exec_module(pairs)

N, R, LIFT = 10000, 0.01, 1e-4
path = write_deck("spheres.yaml", pairs.sphere_deck(N, LIFT))

# the compile alone (--check, in a child of its own): its peak memory. A table of the 5e7
# pairs would take 600 MB (12 bytes each); the model is a few tens of MB (65 MB measured,
# twice that under the sanitizers)
p = subprocess.Popen([MBSIM, path, "--check"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
p.returncode = os.waitstatus_to_exitcode(status)
check(os.waitstatus_to_exitcode(status) == 0, "--check of %d spheres: exit %d"
      % (N, os.waitstatus_to_exitcode(status)))
peak = ru.ru_maxrss / 1024.0
check(peak < 400.0, "compiling %d spheres paired with each other takes %.0f MB < 400 MB "
      "(linear in the shapes: no table of pairs)" % (N, peak))

# 10 steps: every sphere at rest on the floor, none below it by more than 1e-9 m
_, _, _, out = run(path, "--dt", "1e-3", "--t-end", "0.01", "--set", "output.every=10")
r = load(out)
z = r["bodies/position"][-1][:, 2]
v = r["bodies/velocity"][-1]
check(r["time"][-1] >= 0.01 - 1e-12, "10 steps to t = %.3g s" % r["time"][-1])
check(np.min(z - R) >= -1e-9, "every sphere on or above the floor: min(z - r) = %.3g m"
      % np.min(z - R))
check(np.max(z - R) <= 1e-9, "every sphere has landed: max(z - r) = %.3g m" % np.max(z - R))
check(np.max(np.abs(v)) <= 1e-6, "every sphere at rest: max |v| = %.3g m/s" % np.max(np.abs(v)))
rows = contact_rows(r, len(r["time"]) - 1)
check(len(rows) == N, "%d contacts in the last record, one per sphere (the spheres never "
      "touch each other)" % len(rows))
check(np.min(rows[:, 9]) >= -1e-9, "contact gaps >= -1e-9 m (min %.3g)" % np.min(rows[:, 9]))
check(np.all(rows[:, 2] == -1), "every contact is with the ground (body b = -1)")
done()

"""The position projection on a pile: 100 dice of scripts/bench/dice (four staggered layers of
5 x 5 cubes, edge 0.1 m, 0.1 kg, mu = 0.3, e = 0, dt = 1e-3) to t = 0.4 s, when they land on
each other (up to ~300 points at once). The projection's Gauss-Seidel sweeps are over-relaxed
and stop where they stall (points whose targets contradict each other), leaving the rest to
the next round's detection; whatever it leaves, no step may end with a penetration beyond
what the projection removes (1e-10 m): the summary's smallest gap over every step and the
records' gaps are at least -1e-10 m, every die above the floor and inside the walls, status
completed."""
import os
import re
import subprocess

import numpy as np

from common import MBSIM, ROOT, TMP, check, done, load, load_script, write_deck

dice = load_script(os.path.join(ROOT, "scripts", "bench", "dice"), "dice_bench")
DECK = write_deck("pile100.yaml", dice.dice_deck(dice.scene(t_end=0.4, n=100), every=10))

path = os.path.join(TMP, "pile100.h5")
p = subprocess.run([MBSIM, DECK, "-o", path], capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "mbsim-run exit status %d %s" % (p.returncode, p.stderr[-300:]))
m = re.search(r"smallest gap (\S+) m", p.stdout + p.stderr)
r = load(path)
status = r["attrs"]["status"]
status = status.decode() if isinstance(status, bytes) else status
check(status == "completed", "100 dice to 0.4 s: status %s" % status)
gmin = float(m.group(1)) if m else -np.inf
check(gmin >= -1e-10, "smallest gap of any step %.3e m >= -1e-10 m" % gmin)
gaps = r["contacts/table"][:, 9]
check(np.min(gaps) >= -1e-10 and np.max(r["contacts/count"]) >= 200,
      "records: smallest gap %.3e m >= -1e-10 m, up to %d points at once"
      % (np.min(gaps), np.max(r["contacts/count"])))
p = r["bodies/position"][-1]
check(np.min(p[:, 2]) >= 0.05 - 1e-6 and np.max(np.abs(p[:, :2])) <= 0.5,
      "every die above the floor (lowest centre %.6f m) and inside the walls" % np.min(p[:, 2]))
done()

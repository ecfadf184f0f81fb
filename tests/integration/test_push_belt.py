"""decks/beams/push_belt.yaml (Zander 2008 sec. 6.5, Table 6.5), shortened: the first 21 ms at
dt = 1e-3 s (the shipped run: 0.2 s at 1e-4 s). The belt starts at rest with every contact
open and swings about the held element e0 under gravity; the elements slide along the ring
and close their gaps.
  - the deck is the generator's output (scripts/push-belt-deck writes it unchanged);
  - the parameters of Table 6.5: ring circumference, the elements' mass and J_zz;
  - the slide_on_beam constraints hold to round-off at every record (the relative
    parametrization keeps g_N = 0 analytically, where the seed's absolute one drifts,
    figure 6.17b), the belt stays in its plane;
  - contacts: none at t = 0, some closed by the end (the seed's figure 6.18a counts up to 80
    for this parametrization over its longer run), no penetration beyond 1e-9 m;
  - energy: E - E0 - W + D within 1e-10 of the scale, the external work zero (no loads, the
    guides do no work), the impacts' dissipation positive; the marked element e30 falls;
  - the absolute parametrization (scripts/push-belt-deck --guide absolute): the shipped deck
    with `param: absolute` on the guides, 60 unknowns fewer, its guides held and energy kept,
    the elements where the relative run has them over the first 11 ms."""
import os
import subprocess
import sys

import numpy as np

from common import ROOT, balance, check, done, load, run, write_deck

DECK = os.path.join(ROOT, "decks", "beams", "push_belt.yaml")

# the shipped deck is what the generator writes
gen = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "push-belt-deck"), "-o",
                      "/dev/stdout"], capture_output=True, text=True)
with open(DECK) as f:
    shipped = f.read()
check(gen.returncode == 0 and gen.stdout == shipped,
      "decks/beams/push_belt.yaml is scripts/push-belt-deck's output")

r = load(run(DECK, "--set", "solver.t_end=0.021", "--set", "solver.dt=1e-3", "--set",
             "output.every=1")[3])
names = [n.decode() for n in r["bodies/names"]]
check(len(names) == 60 and names[0] == "e0" and names[30] == "e30", "60 elements")
ring = r["beams/ring/position"]
L = np.sum(np.linalg.norm(np.diff(ring[0], axis=0), axis=1))
check(abs(L - 1.0) < 2e-3, "ring package: 24 quadratic elements on a circle of circumference "
      "1 m (node polygon %.5f m)" % L)
viol = np.max(r["constraints/violation"])
check(viol < 1e-10, "constraints (the guides' g_N among them) hold to %.1e m" % viol)
zmax = max(np.max(np.abs(r["bodies/position"][:, :, 2])), np.max(np.abs(ring[:, :, 2])))
check(zmax < 1e-12, "the belt stays in its plane (|z| <= %.1e m)" % zmax)
count, off, table = r["contacts/count"], r["contacts/offsets"], r["contacts/table"]
closed = np.array([np.sum(table[o:o + c, 13] > 0) for o, c in zip(off, count)])
check(closed[0] == 0 and closed[-1] >= 2,
      "contacts: %d closed at t = 0, %d at %.3f s (the first from %.3f s), at most %d"
      % (closed[0], closed[-1], r["time"][-1], r["time"][np.argmax(closed > 0)], closed.max()))
gmin = np.min(table[:, 9]) if len(table) else 0.0
check(gmin > -1e-9, "no penetration: smallest gap %.1e m" % gmin)
dE, scale = balance(r)
D = r["energy/dissipated"][-1]
check(dE < 1e-10 * scale and D > 0.0,
      "energy balance %.1e of %.3g J, dissipated %.3g J in the impacts" % (dE, scale, D))
# no loads, scleronomic joints: the external work is zero (the guides' discrete gradients over
# the step's own Delta q, not up to the position projection's end: 4.5e-9 J by 21 ms, a
# balance of 1.4e-7 of the scale, and 8e-7 with a warning by 50 ms)
W = np.max(np.abs(r["energy/external_work"]))
check(W < 1e-12 * scale, "no external work: %.1e J" % W)
y30 = r["bodies/position"][:, 30, 1]
check(y30[-1] < y30[0] - 1e-3, "the marked element e30 falls %.2f mm" % (1e3 * (y30[0] - y30[-1])))

# the seed's other parametrization (scripts/push-belt-deck --guide absolute: the guides'
# `param: absolute`, no s among the unknowns): the same deck but for the header and the
# guides, the same swing over the first 11 ms (scripts/push-belt-compare runs longer), its
# guides held to the Newton tolerance
gen = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "push-belt-deck"), "--guide",
                      "absolute", "-o", "/dev/stdout"], capture_output=True, text=True)
diff = [(a, b) for a, b in zip(shipped.splitlines(), gen.stdout.splitlines()) if a != b]
check(gen.returncode == 0 and len(diff) == 62 and all(
    a.startswith("#") or b == a[:-1] + ", param: absolute}" for a, b in diff),
    "--guide absolute: the shipped deck with `param: absolute` on its 60 guides (and 2 lines of "
    "its header)")
ra = load(run(write_deck("push_belt_absolute.yaml", gen.stdout), "--set", "solver.t_end=0.011",
              "--set", "solver.dt=1e-3", "--set", "output.every=1")[3])
n = len(ra["time"])
check(len(r["q_names"]) - len(ra["q_names"]) == 60, "absolute: 60 unknowns fewer (%d against %d)"
      % (len(ra["q_names"]), len(r["q_names"])))
viol = np.max(ra["constraints/violation"])
dE, scale = balance(ra)
check(viol < 1e-10 and dE < 1e-10 * scale, "absolute: constraints (g_N among them) to %.1e m, "
      "energy balance %.1e of %.3g J" % (viol, dE, scale))
dx = np.max(np.abs(ra["bodies/position"] - r["bodies/position"][:n]))
check(dx < 1e-8, "absolute: the elements' positions agree with the relative run's to %.1e m "
      "(e30 fell %.3f mm)" % (dx, 1e3 * (y30[0] - y30[n - 1])))
done()

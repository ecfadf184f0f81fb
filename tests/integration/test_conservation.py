"""em with default settings keeps its promise: energy and angular momentum of a heavy
symmetric top (m = 1, inertia (0.05, 0.05, 0.08) about the centre of mass 0.5 from the tip,
tilted 30 deg, spinning at 50 rad/s, dt = 1e-3) conserved to round-off over 1e4 and 1e5
steps, with no linear drift, and a state that does not depend on output.every. The reference
is the conservation law itself (gravity has no moment about the vertical through the fixed
tip, so the vertical angular momentum J_z is conserved exactly; E is conserved exactly)."""

import numpy as np

from common import QUICK, check, done, load, run, write_deck
from common import heavy_top_deck

TOP = heavy_top_deck("{dt: 1.0e-3, t_end: 10.0}")
path = write_deck("top.yaml", TOP)


def drift(r):
    """relative energy and J_z errors, and the energy error's slope per 1e4 steps"""
    t, E, J = r["time"], r["energy/total"], r["momentum/angular"]
    e = (E - E[0]) / abs(E[0])
    j = (J[:, 2] - J[0, 2]) / np.linalg.norm(J[0])
    slope = np.polyfit(t, e, 1)[0] * 10.0
    return np.max(np.abs(e)), np.max(np.abs(j)), slope


runs = {}
for every in (1, 10, 100):
    _, _, _, out = run(path, "--set", "output.every=%d" % every)
    runs[every] = load(out)
    r = runs[every]
    check(r["attrs"]["integrator"] == "em", "auto picks em for the top")
    e, j, slope = drift(r)
    check(e <= 1e-12 and j <= 1e-12,
          "default settings, output.every=%d: 1e4 steps, energy %.1e, J_z %.1e relative "
          "(<= 1e-12)" % (every, e, j))
    check(abs(slope) <= 1e-13, "no linear energy drift (slope %.1e per 1e4 steps)" % slope)
    check(np.max(r["constraints/velocity_violation"]) <= 1e-10,
          "recorded velocities satisfy G v = 0 (%.1e)" % np.max(r["constraints/velocity_violation"]))

# the state does not depend on where records fall
q1, q10, q100 = runs[1]["state/q"], runs[10]["state/q"], runs[100]["state/q"]
d10 = np.max(np.abs(q1[::10] - q10))
d100 = np.max(np.abs(q1[::100] - q100))
dv = np.max(np.abs(runs[1]["state/v"][::10] - runs[10]["state/v"]))
check(d10 <= 1e-10 and d100 <= 1e-10 and dv <= 1e-9,
      "state independent of output.every: q differs by %.1e (every 10), %.1e (every 100), "
      "v by %.1e over 10 s" % (d10, d100, dv))

# full Newton gives the same conservation
_, _, _, out = run(path, "--set", "output.every=100", "--set", "solver.newton.reuse=false")
e, j, _ = drift(load(out))
check(e <= 1e-12 and j <= 1e-12, "newton.reuse: false: energy %.1e, J_z %.1e" % (e, j))

# 1e5 steps: still round-off, no drift
if not QUICK:
    _, _, _, out = run(path, "--set", "output.every=100", "--t-end", "100")
    e, j, slope = drift(load(out))
    check(e <= 1e-12 and j <= 1e-12 and abs(slope) <= 1e-14,
          "1e5 steps: energy %.1e, J_z %.1e relative, slope %.1e per 1e4 steps"
          % (e, j, slope))
done()

"""/joints/reaction: the reaction at the recorded time, from the index-1 equations of the
recorded (consistent) state, for every integrator.
- A pendulum (point mass m on a rod of length L from a fixed point) pulls with the tension
  m g cos(theta) + m v^2 / L at every record, the record at t = 0 included (a state identity:
  to round-off), and against an independent reference (scipy, the pendulum ODE at rtol 1e-12)
  the tension converges at order 2, without step-to-step alternation.
- On the double pendulum of point masses the rods are the only forces besides gravity:
  m a - m g (a from central differences of the recorded velocities) equals the reactions to
  O(dt^2), halving as dt^2 with dt."""

import numpy as np
from scipy.integrate import solve_ivp

from common import QUICK, check, deck, done, load, run, write_deck

m, L, g, th0 = 1.5, 0.8, 9.81, 1.0
PEND = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: bob, type: point, mass: 1.5, position: [%.17g, 0, %.17g]}
joints:
  - {name: rod, type: distance, bodies: [ground, bob], points: [[0, 0, 0], [%.17g, 0, %.17g]]}
solver: {t_end: 2.0}
output: {xdmf: false}
""" % ((L * np.sin(th0), -L * np.cos(th0)) * 2)
path = write_deck("pendulum.yaml", PEND)

# independent reference: theta'' = -g/L sin(theta)
sol = solve_ivp(lambda t, y: [y[1], -g / L * np.sin(y[0])], (0, 2), [th0, 0.0],
                method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)


def tension_ref(t):
    th, om = sol.sol(t)
    return m * g * np.cos(th) + m * L * om ** 2


for integ in ("em", "midpoint", "euler", "genalpha"):
    errs = []
    for dt in (2e-3, 1e-3):
        _, _, _, out = run(path, "--integrator", integ, "--dt", str(dt))
        r = load(out)
        x, v = r["state/q"][:, :3], r["state/v"][:, :3]
        F = r["joints/reaction"][:, 0, :3]            # the rod's force on the bob
        cth = -x[:, 2] / L
        tension = m * g * cth + m * np.sum(v * v, axis=1) / L
        pull = -np.sum(F * x, axis=1) / L             # component towards the pivot
        ident = np.max(np.abs(pull - tension)) / (m * g)
        perp = np.max(np.linalg.norm(F + np.outer(pull, np.ones(3)) * x / L, axis=1)) / (m * g)
        if dt == 1e-3:
            check(ident <= 1e-10 and perp <= 1e-10,
                  "%s: rod force = m g cos(theta) + m v^2/L along the rod at every record "
                  "(%.1e, across %.1e)" % (integ, ident, perp))
            check(abs(pull[0] - m * g * np.cos(th0)) <= 1e-12 * m * g,
                  "%s: the record at t = 0 holds the consistent reaction m g cos(theta0)" % integ)
            jerk = np.max(np.abs(np.diff(pull, 2))) / (m * g)
            check(jerk <= 1e-4, "%s: no alternation from step to step (second difference "
                  "%.1e of m g)" % (integ, jerk))
        errs.append(np.max(np.abs(pull - tension_ref(r["time"]))) / (m * g))
    order = np.log2(errs[0] / errs[1])
    lo = 0.8 if integ == "euler" else 1.8
    hi = 1.2 if integ == "euler" else 2.2
    check(lo <= order <= hi, "%s: tension against scipy: %.2e, %.2e, order %.2f"
          % (integ, errs[0], errs[1], order))
    if QUICK:
        break

# double pendulum: Newton's second law with central differences at the records
res = []
for dt in (2e-3, 1e-3):
    _, _, _, out = run(deck("double_pendulum.yaml"), "--t-end", "1", "--dt", str(dt),
                       "--set", "output.every=1")
    r = load(out)
    R, v, t = r["joints/reaction"], r["bodies/velocity"], r["time"]
    grav = np.array([0, 0, -9.81])
    a = (v[2:] - v[:-2]) / (t[2:] - t[:-2])[:, None, None]
    e2 = np.max(np.abs(a[:, 1] - grav - R[1:-1, 1, :3]))
    e1 = np.max(np.abs(a[:, 0] - grav - (R[1:-1, 0, :3] - R[1:-1, 1, :3])))
    res.append(max(e1, e2) / 9.81)
    check(np.max(np.abs(R[:, :, 3:])) <= 1e-9, "no torque on point masses about their joint point")
order = np.log2(res[0] / res[1])
check(res[1] <= 5e-4 and 1.8 <= order <= 2.2,
      "double pendulum: m a - m g = reactions on each bob (%.1e at dt = 2e-3, %.1e at 1e-3, "
      "order %.2f)" % (res[0], res[1], order))
done()

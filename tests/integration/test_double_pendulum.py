"""double_pendulum.yaml against an independent reference: the minimal-coordinate
(two-angle) Lagrange equations solved by scipy at rtol 1e-12: positions (em), and the
accelerations genalpha writes (/state/acceleration), exact at t = 0 and second order after."""
import numpy as np
from scipy.integrate import solve_ivp

from common import check, deck, done, energy_error, load, run, QUICK

m1 = m2 = 1.0
L1 = L2 = 1.0
g = 9.81


def rhs(t, y):
    th1, th2, w1, w2 = y
    c, s = np.cos(th1 - th2), np.sin(th1 - th2)
    M = np.array([[(m1 + m2) * L1 ** 2, m2 * L1 * L2 * c],
                  [m2 * L1 * L2 * c, m2 * L2 ** 2]])
    f = np.array([-m2 * L1 * L2 * s * w2 ** 2 - (m1 + m2) * g * L1 * np.sin(th1),
                  m2 * L1 * L2 * s * w1 ** 2 - m2 * g * L2 * np.sin(th2)])
    a = np.linalg.solve(M, f)
    return [w1, w2, a[0], a[1]]


def positions(th1, th2):
    x1 = L1 * np.sin(th1)
    z1 = -L1 * np.cos(th1)
    return x1, z1, x1 + L2 * np.sin(th2), z1 - L2 * np.cos(th2)


T = 3.0
errors = []
for dt in (1e-3, 5e-4):
    _, _, _, out = run(deck("double_pendulum.yaml"), "--t-end", str(T), "--dt", str(dt),
                       "--set", "output.every=1")
    r = load(out)
    t = r["time"]
    # both angles start horizontal (pi/2 from the downward vertical), at rest
    sol = solve_ivp(rhs, (0, T), [np.pi / 2, np.pi / 2, 0, 0], t_eval=t, rtol=1e-12,
                    atol=1e-12, method="DOP853")
    x1, z1, x2, z2 = positions(sol.y[0], sol.y[1])
    pos = r["bodies/position"]
    err = max(np.max(np.abs(pos[:, 0, 0] - x1)), np.max(np.abs(pos[:, 0, 2] - z1)),
              np.max(np.abs(pos[:, 1, 0] - x2)), np.max(np.abs(pos[:, 1, 2] - z2)))
    errors.append(err)
    print("dt = %g: max position error on [0, %g] = %.3e" % (dt, T, err))
# measured 2.29e-5 at dt = 1e-3
check(errors[0] <= 7e-5, "positions agree with the scipy reference to 7e-5 at dt = 1e-3 "
      "(%.2e)" % errors[0])
ratio = errors[0] / errors[1]
check(3.5 <= ratio <= 4.5, "error falls by about 4 when dt is halved (ratio %.3f)" % ratio)

# genalpha's accelerations from an oblique start (theta1 = 60, theta2 = -45 degrees, at rest,
# set with list-valued --set): the consistent ones at t = 0 solve the index-1 system and equal
# the Lagrange equations' to round-off; along the run they converge at order 2


def bob_accelerations(y):
    """(x, y, z) accelerations of bob1 and bob2 from the angles, rates and rhs"""
    th1, th2, w1, w2 = y
    a1, a2 = rhs(0.0, y)[2:]
    ax1 = L1 * (np.cos(th1) * a1 - np.sin(th1) * w1 ** 2)
    az1 = L1 * (np.sin(th1) * a1 + np.cos(th1) * w1 ** 2)
    ax2 = ax1 + L2 * (np.cos(th2) * a2 - np.sin(th2) * w2 ** 2)
    az2 = az1 + L2 * (np.sin(th2) * a2 + np.cos(th2) * w2 ** 2)
    return np.array([ax1, 0.0, az1, ax2, 0.0, az2])


def vec(v):
    return "[%s]" % ", ".join(repr(float(x)) for x in v)


th0 = (np.pi / 3, -np.pi / 4)
p1 = [L1 * np.sin(th0[0]), 0.0, -L1 * np.cos(th0[0])]
p2 = [p1[0] + L2 * np.sin(th0[1]), 0.0, p1[2] - L2 * np.cos(th0[1])]
acc_err = []
for dt in (2e-3, 1e-3):
    _, _, _, out = run(deck("double_pendulum.yaml"), "--integrator", "genalpha", "--t-end", "1",
                       "--dt", str(dt), "--set", "output.every=1",
                       "--set", "bodies.bob1.position=" + vec(p1),
                       "--set", "bodies.bob2.position=" + vec(p2),
                       "--set", "joints.rod1.points=[[0, 0, 0], %s]" % vec(p1))
    r = load(out)
    t, acc = r["time"], r["state/acceleration"]
    sol = solve_ivp(rhs, (0, 1), [th0[0], th0[1], 0, 0], t_eval=t, rtol=1e-12, atol=1e-12,
                    method="DOP853")
    ref = np.array([bob_accelerations(sol.y[:, k]) for k in range(len(t))])
    if dt == 2e-3:
        e0 = np.max(np.abs(acc[0] - ref[0]))
        # measured 8.9e-16
        check(r["q_names"][:3] == ["bob1.phi.x", "bob1.phi.y", "bob1.phi.z"] and e0 <= 5e-15,
              "genalpha: /state/acceleration at t = 0 equals the Lagrange equations' (%.1e; "
              "bob2 %s)" % (e0, np.round(ref[0, 3:], 4)))
    acc_err.append(np.max(np.abs(acc - ref)))
    print("genalpha dt = %g: max acceleration error on [0, 1] = %.3e" % (dt, acc_err[-1]))
ratio = acc_err[0] / acc_err[1]
# measured 2.6e-3 at dt = 1e-3
check(3.5 <= ratio <= 4.5 and acc_err[1] <= 8e-3,
      "genalpha accelerations converge at order 2 (ratio %.2f, %.1e at dt = 1e-3)"
      % (ratio, acc_err[1]))

# the whole run: energy and constraints
if not QUICK:
    _, _, _, out = run(deck("double_pendulum.yaml"))
    r = load(out)
    e = energy_error(r)
    # measured: energy 2.1e-12, violation 5.1e-15
    check(e <= 7e-12, "em relative energy error over [0, 10] <= 7e-12 (%.2e)" % e)
    v = np.max(r["constraints/violation"])
    check(v <= 5e-14, "constraint violation <= 5e-14 (%.2e)" % v)
    check(r["attrs"]["status"] == "completed", "status completed")
done()

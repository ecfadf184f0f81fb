"""free_body_torque.yaml, free_body_torque_window.yaml (seed 003 sec. 4.1): a free box under
a world torque m = (1, 1, 1). Checks the discrete balance of angular momentum
J_{n+1} - J_n = dt m f(t_n+1/2) per step (seed 000 eq. 64), the centre (20, 20, 20) at t = 4,
the directors at t = 4 against an independent reference (Euler's equations by scipy) and
against the values the seed publishes, and the orders of convergence against an overkill run:
2 for em and midpoint, 1 for euler."""
import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import minimize_scalar

from common import check, deck, done, energy_error, load, run

M = np.ones(3)
I_BODY = np.diag([0.5, 1.25, 1.25])  # box 2 x 1 x 1, density 1.5: mass 3


def reference(t_on, t_off, t_end, k=1.0):
    """Directors (columns) at t_end for a world torque k M on [t_on, t_off), by DOP853."""
    def rhs(t, y):
        R = y[:9].reshape(3, 3)
        w = y[9:]
        Iw = R @ I_BODY @ R.T
        dw = np.linalg.solve(Iw, k * M - np.cross(w, Iw @ w))
        W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        return np.concatenate([(W @ R).ravel(), dw])

    def free(t, y):
        R = y[:9].reshape(3, 3)
        w = y[9:]
        Iw = R @ I_BODY @ R.T
        dw = np.linalg.solve(Iw, -np.cross(w, Iw @ w))
        W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        return np.concatenate([(W @ R).ravel(), dw])

    y = np.concatenate([np.eye(3).ravel(), np.zeros(3)])
    for a, b, f in ((0.0, t_on, free), (t_on, t_off, rhs), (t_off, t_end, free)):
        if b > a:
            y = solve_ivp(f, (a, b), y, rtol=1e-12, atol=1e-13, method="DOP853").y[:, -1]
    return y[:9].reshape(3, 3)


# --- constant torque on [0, 1] ------------------------------------------------------------
_, _, _, out = run(deck("free_body_torque.yaml"))
r = load(out)
J = r["momentum/angular"]
dJ = np.diff(J, axis=0) - 0.01 * M
# measured: 9.7e-14 (J about 1), energy 3.2e-14
check(np.max(np.abs(dJ)) <= 3e-13,
      "constant load: J_{n+1} - J_n = dt m every step (max deviation %.2e)" % np.max(np.abs(dJ)))
e = energy_error(r)
check(e <= 1e-13, "constant load: total - external_work constant to 1e-13 relative (%.2e)" % e)
R1 = r["bodies/orientation"][-1, 0]
angle = np.degrees(np.arccos((np.trace(R1) - 1) / 2))
print("constant load: rotation angle at t = 1: %.1f degrees (seed: 'nearly 90')" % angle)
check(60 < angle < 100, "constant load: large rotation at t = 1 (%.1f deg)" % angle)

# orders of convergence of the directors at t = 1 against an em overkill run (dt = 1e-4: its
# error, about 2e-9 against scipy, is 1e3 below the smallest error measured; a finer dt does
# not improve it, round-off and the Newton tolerance take over)
dtk = 1e-4
_, _, _, out = run(deck("free_body_torque.yaml"), "--dt", repr(dtk), "--set",
                   "output.every=100000")
Rk = load(out)["bodies/orientation"][-1, 0]
Rref = reference(0.0, 1.0, 1.0)
print("overkill em (dt = %g) vs scipy DOP853 at t = 1: %.2e" % (dtk, np.max(np.abs(Rk - Rref))))
# measured 2.1e-9
check(np.max(np.abs(Rk - Rref)) <= 6e-9,
      "overkill run agrees with an independent reference (%.1e)" % np.max(np.abs(Rk - Rref)))
for integ, want in (("em", 2.0), ("midpoint", 2.0), ("euler", 1.0)):
    errs = []
    for dt in (0.02, 0.01, 0.005):
        _, _, _, out = run(deck("free_body_torque.yaml"), "--dt", str(dt), "--integrator", integ)
        rr = load(out)
        errs.append(np.max(np.abs(rr["bodies/orientation"][-1, 0] - Rk)))
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    print("%-8s errors %s, orders %s" % (integ, " ".join("%.3e" % x for x in errs),
                                          " ".join("%.3f" % o for o in orders)))
    check(abs(orders[-1] - want) <= 0.1, "%s converges at order %g (observed %.3f)"
          % (integ, want, orders[-1]))

# --- rectangular load on [0.5, 1.5), t in [0, 4] -------------------------------------------
_, _, _, out = run(deck("free_body_torque_window.yaml"), "--dt", "1e-2", "--set", "output.every=1")
r = load(out)
t = r["time"]
J = r["momentum/angular"]
tm = 0.5 * (t[1:] + t[:-1])
on = ((tm >= 0.5) & (tm < 1.5)).astype(float)
dJ = np.diff(J, axis=0) - 0.01 * on[:, None] * M
# measured 9.8e-14
check(np.max(np.abs(dJ)) <= 3e-13,
      "window load: J_{n+1} - J_n = dt m f(t_n+1/2) every step (max deviation %.2e)"
      % np.max(np.abs(dJ)))
# measured 4.7e-12 (np.allclose's default rtol 1e-5 let 1e-5 through before)
check(np.max(np.abs(J[-1] - M)) <= 1.5e-11, "window load: J(4) = 1 s x m (%.1e)"
      % np.max(np.abs(J[-1] - M)))

_, _, _, out = run(deck("free_body_torque_window.yaml"))
r = load(out)
c = r["bodies/position"][-1, 0]
# measured 4.3e-13
check(np.max(np.abs(c - 20.0)) <= 1.5e-12, "centre at (20, 20, 20) at t = 4 (%.1e)"
      % np.max(np.abs(c - 20.0)))
e = energy_error(r)
# measured 9.0e-13
check(e <= 3e-12, "window load: total - external_work constant to 3e-12 relative (%.2e)" % e)
R4 = r["bodies/orientation"][-1, 0]
Rw = reference(0.5, 1.5, 4.0)
err = np.max(np.abs(R4 - Rw))
# measured 2.4e-6
check(err <= 7e-6, "directors at t = 4 (dt = 1e-3) agree with scipy's Euler equations to 7e-6 "
      "(%.1e)" % err)
# orders on the rectangular load too (its switches fall on step boundaries: the load is
# evaluated at the midpoint of each step, so em and midpoint keep order 2)
_, _, _, out = run(deck("free_body_torque_window.yaml"), "--dt", "1e-4", "--set",
                   "output.every=100000")
Rk4 = load(out)["bodies/orientation"][-1, 0]
for integ, want in (("em", 2.0), ("midpoint", 2.0), ("euler", 1.0)):
    errs = []
    for dt in (0.02, 0.01, 0.005):
        _, _, _, out = run(deck("free_body_torque_window.yaml"), "--dt", str(dt), "--integrator",
                           integ)
        errs.append(np.max(np.abs(load(out)["bodies/orientation"][-1, 0] - Rk4)))
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    print("window, %-8s errors %s, orders %s" % (integ, " ".join("%.3e" % x for x in errs),
                                                  " ".join("%.3f" % o for o in orders)))
    check(abs(orders[-1] - want) <= 0.1, "window load: %s converges at order %g (observed %.3f)"
          % (integ, want, orders[-1]))
# --- the directors the seed publishes at t = 4 ----------------------------------------------
# For this box (J2 = J3: axisymmetric about d1) starting from rest under a world torque of fixed
# direction, the spatial angular momentum stays parallel to m and the attitude at t = 4
# depends on one number only, the accumulated impulse: scaling m by k traces a curve in SO(3).
# The seed's nine digits lie on that curve, at k = 2/sqrt(3) (|m| = 2 rather than the
# |(1, 1, 1)| = sqrt(3) its text states), and at no k near 1. Found with the independent
# reference, then reproduced by mbsim-run with m scaled by k.
seed = np.array([[0.392, -0.271, 0.879], [-0.233, -0.954, -0.190], [0.890, -0.131, -0.437]])
np.set_printoptions(precision=5, suppress=True)
k_seed = 2.0 / np.sqrt(3.0)


def seed_misfit(k):
    return np.max(np.abs(reference(0.5, 1.5, 4.0, k).T - seed))


ks = np.linspace(0.5, 1.5, 201)
mis = np.array([seed_misfit(k) for k in ks])
kb = ks[np.argmin(mis)]
fit = minimize_scalar(seed_misfit, bounds=(kb - 0.005, kb + 0.005), method="bounded",
                      options={"xatol": 1e-8})
print("impulse factor fitted to the seed's directors (scipy): k = %.6f, misfit %.1e; "
      "2/sqrt(3) = %.6f; misfit at k = 1: %.3f" % (fit.x, fit.fun, k_seed, seed_misfit(1.0)))
check(abs(fit.x - k_seed) <= 1e-4 and fit.fun <= 5e-4,
      "the seed's directors are the reference solution at k = 2/sqrt(3) to its last digit")
check(np.all(mis[np.abs(ks - k_seed) > 0.01] > 0.01),
      "no other impulse factor in [0.5, 1.5] comes within 0.01 of the seed's directors")
sets = []
for i in range(3):
    sets += ["--set", "loads.m.value.%d=%r" % (i, k_seed)]
_, _, _, out = run(deck("free_body_torque_window.yaml"), *sets)
Rs = load(out)["bodies/orientation"][-1, 0]
for i in range(3):
    print("d%d at t = 4: mbsim (m x k) %s, seed 003 %s; mbsim (m as stated) %s"
          % (i + 1, Rs[:, i], seed[i], R4[:, i]))
check(np.array_equal(np.round(Rs.T, 3), seed),
      "with m x 2/sqrt(3), mbsim-run's directors at t = 4 round to the seed's nine digits "
      "(max difference %.1e)" % np.max(np.abs(Rs.T - seed)))
done()

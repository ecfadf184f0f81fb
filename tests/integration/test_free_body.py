"""free_body.yaml: energy and angular momentum conservation, and the body-frame angular
velocity against Euler's equations solved by scipy; the thin plate with its singular mass
matrix."""
import numpy as np
from scipy.integrate import solve_ivp

from common import check, deck, done, energy_error, load, run, QUICK

I = np.array([1.0, 2.0, 2.5])
T = 5.0 if QUICK else 20.0


def euler(t, w):
    return [(I[1] - I[2]) * w[1] * w[2] / I[0],
            (I[2] - I[0]) * w[2] * w[0] / I[1],
            (I[0] - I[1]) * w[0] * w[1] / I[2]]


ref = solve_ivp(euler, (0, T), [1.0, 0.1, 0.1], rtol=1e-12, atol=1e-14, method="DOP853")
w_ref = ref.y[:, -1]

errs = []
for dt in (1e-3, 2e-3):
    _, _, _, out = run(deck("free_body.yaml"), "--dt", str(dt), "--t-end", str(T))
    r = load(out)
    R = r["bodies/orientation"][-1, 0]          # column i = d_i
    w_body = R.T @ r["bodies/angular_velocity"][-1, 0]
    err = np.max(np.abs(w_body - w_ref))
    errs.append(err)
    print("dt = %g: |omega_body(T) - Euler| = %.3e" % (dt, err))
    if dt == 1e-3:
        check(abs(r["time"][-1] - T) < 1e-12, "run reaches t = %g" % T)
        e = energy_error(r)
        # measured over [0, 20]: energy 9.3e-11, J 4.6e-11, violation 3.3e-15 (the energy and
        # J errors come from modified Newton's reused factorizations)
        check(e <= 3e-10, "em relative energy error <= 3e-10 (%.2e)" % e)
        J = r["momentum/angular"]
        jrel = np.max(np.abs(J - J[0])) / np.linalg.norm(J[0])
        check(jrel <= 1.5e-10, "every component of J constant to 1.5e-10 relative (%.2e)" % jrel)
        v = np.max(r["constraints/violation"])
        check(v <= 1.5e-14, "constraint violation <= 1.5e-14 (%.2e)" % v)
# measured 1.24e-7
check(errs[0] <= 4e-7, "omega in body axes agrees with Euler's equations to 4e-7 at t = %g "
      "(%.2e)" % (T, errs[0]))
order = np.log2(errs[1] / errs[0])
check(abs(order - 2.0) <= 0.2, "error falls at order 2 (observed %.3f)" % order)

# the thin plate: E33 = 0, the mass matrix is singular, the motion is well posed
_, _, _, out = run(deck("free_body_plate.yaml"), "--t-end", str(T))
r = load(out)
e = energy_error(r)
# measured: energy 3.4e-11, J 2.8e-11, L 0
check(e <= 1e-10, "thin plate: relative energy error <= 1e-10 (%.2e)" % e)
J = r["momentum/angular"]
jrel = np.max(np.abs(J - J[0])) / np.linalg.norm(J[0])
check(jrel <= 1e-10, "thin plate: angular momentum constant to 1e-10 relative (%.2e)" % jrel)
L = r["momentum/linear"]
check(np.max(np.abs(L - L[0])) <= 1e-15, "thin plate: linear momentum constant (%.1e)"
      % np.max(np.abs(L - L[0])))
done()

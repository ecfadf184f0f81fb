#!/usr/bin/python3
"""Independent reference for seed 003 sec. 4.2's double spherical pendulum with centred rods,
written without any code of mbsim-run.

Both rods attach at the cubes' centres of mass and gravity acts there, so nothing exerts a
moment on a cube: the centres move as a double spherical pendulum of two point masses
(m1, m2; rod lengths L1 = |x1(0)|, L2 = |x2(0) - x1(0)|) and each cube, whose inertia is
isotropic, spins at its constant initial angular velocity (its directors R(t) e_i with R the
rotation by |w| t about w).

The point masses are integrated in Cartesian coordinates as an index-1 DAE: with
M = diag(m1 I, m2 I), the constraints g1 = (|x1|^2 - L1^2)/2, g2 = (|x2 - x1|^2 - L2^2)/2 and
their Jacobian G, the multipliers solve (G M^-1 G^T) lam = G M^-1 f + (|v1|^2, |v2 - v1|^2)
(from G a + dG/dt v = 0), a = M^-1 (f - G^T lam); no penalty, no stabilisation: the drift
of g over the horizon is printed and checked by the caller (reference() returns it).

    python3 tests/reference/double_spherical_pendulum.py   # prints the end state at t = 1
"""
import numpy as np
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation


def reference(x1, x2, v1, v2, m1, m2, t_eval, g=(0.0, 0.0, -9.81), rtol=1e-12):
    """positions [len(t_eval), 2, 3] of both masses and the largest |g| (rod length error,
    m) over the run, by DOP853 with rtol (atol = rtol * 1e-2)"""
    g = np.asarray(g, float)
    x1, x2, v1, v2 = (np.asarray(a, float) for a in (x1, x2, v1, v2))
    L1, L2 = np.linalg.norm(x1), np.linalg.norm(x2 - x1)
    minv = np.array([1.0 / m1] * 3 + [1.0 / m2] * 3)
    f = np.concatenate([m1 * g, m2 * g])

    def rhs(t, y):
        p1, p2, u1, u2 = y[0:3], y[3:6], y[6:9], y[9:12]
        G = np.zeros((2, 6))
        G[0, 0:3] = p1
        G[1, 0:3] = -(p2 - p1)
        G[1, 3:6] = p2 - p1
        A = (G * minv) @ G.T
        b = (G * minv) @ f + np.array([u1 @ u1, (u2 - u1) @ (u2 - u1)])
        lam = np.linalg.solve(A, b)
        a = minv * (f - G.T @ lam)
        return np.concatenate([u1, u2, a])

    y0 = np.concatenate([x1, x2, v1, v2])
    sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), y0, method="DOP853", rtol=rtol,
                    atol=rtol * 1e-2, t_eval=t_eval, dense_output=False)
    pos = sol.y[0:6].T.reshape(-1, 2, 3)
    drift = max(np.max(np.abs(np.linalg.norm(pos[:, 0], axis=1) - L1)),
                np.max(np.abs(np.linalg.norm(pos[:, 1] - pos[:, 0], axis=1) - L2)))
    return pos, drift


def spin(omega, t):
    """[len(t), 3, 3] rotation matrices (column i: director d_i) of a body that starts at the
    identity and spins at the constant world angular velocity omega"""
    omega = np.asarray(omega, float)
    return Rotation.from_rotvec(np.outer(np.asarray(t, float), omega)).as_matrix()


if __name__ == "__main__":
    c1, c2 = 4 / np.sqrt(2), 8 / np.sqrt(2)
    t = np.linspace(0.0, 1.0, 11)
    pos, drift = reference([c1, 0, c1], [c2, 0, c2], [0, 1, 0], [0, 1, 0], 1.5, 0.768, t)
    print("t = 1: x1 = %s, x2 = %s, rod length drift %.1e m" % (pos[-1, 0], pos[-1, 1], drift))

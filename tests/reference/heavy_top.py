#!/usr/bin/python3
"""Independent reference for a heavy top on a fixed tip (tests/integration/common.py's
heavy_top_deck), written without any code of mbsim-run: rotation matrix R (columns: the
body axes in world components) and the world angular momentum about the tip, L, integrated
by scipy's DOP853:

    dR/dt = [w]x R,   dL/dt = (l R e3) x (m g),   w = (R I_tip R^T)^-1 L,

with I_tip = diag(A + m l^2, A + m l^2, C) the inertia about the tip (parallel axes) and the
centre of mass at l R e3.

    python3 tests/reference/heavy_top.py   # prints the axis d3 at t = 0.5
"""
import numpy as np
from scipy.integrate import solve_ivp


def reference(R0, omega0, m, A, C, l, t_eval, g=(0.0, 0.0, -9.81), rtol=1e-13):
    """rotation matrices [len(t_eval), 3, 3] (column i: d_i) of the top that starts at R0
    spinning at the world angular velocity omega0"""
    g = np.asarray(g, float)
    I_tip = np.diag([A + m * l * l, A + m * l * l, C])
    R0 = np.asarray(R0, float)
    L0 = R0 @ I_tip @ R0.T @ np.asarray(omega0, float)

    def rhs(t, y):
        R = y[:9].reshape(3, 3)
        L = y[9:]
        w = np.linalg.solve(R @ I_tip @ R.T, L)
        W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        return np.concatenate([(W @ R).ravel(), np.cross(l * R[:, 2], m * g)])

    sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), np.concatenate([R0.ravel(), L0]),
                    method="DOP853", rtol=rtol, atol=rtol * 1e-2, t_eval=t_eval)
    return sol.y[:9].T.reshape(-1, 3, 3)


def deck_top(t_eval):
    """the top of heavy_top_deck: m = 1, A = 0.05, C = 0.08, l = 0.5, tilted 30 deg about y,
    spinning at 50 rad/s about its axis"""
    a = np.radians(30.0)
    R0 = np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])
    return reference(R0, 50.0 * R0[:, 2], 1.0, 0.05, 0.08, 0.5, t_eval)


if __name__ == "__main__":
    R = deck_top(np.array([0.0, 0.5]))
    print("t = 0.5: d3 = %s" % R[-1][:, 2])

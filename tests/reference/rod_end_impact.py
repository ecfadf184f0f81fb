#!/usr/bin/python3
"""Closed-form impact and post-impact motion of a thin rod falling onto one end, written
without any code of mbsim-run (tests/integration/test_contact_defaults.py, the rod).

The rod: a box of 1.0 x 0.02 x 0.02 m, mass m = 1 kg, its axis 1 along the rod, turned by
phi0 = 30 deg about the world y axis (so its end at body x = +L goes down), falling from rest
with the lowest edge (the two corners at body (L, +-hh, -hh), L = 0.5, hh = 0.01) a height
h = g t_c^2 / 2 = 0.04908 m above a frictionless floor z = 0, impact law e = 0. The impact time
t_c = 0.1 s + 1e-4 s / 3 lies just after a step boundary shared by the grids dt = 1e-3, 5e-4
and 1e-4: the step that holds the impact then runs on for 0.97, 0.47 and 0.07 ms after it,
about one step each, so a scheme's error that grows with that remainder shows its order (with
h = 0.05, t_c = 0.100964 s, the first record after the impact is 0.101 s on all three grids,
0.036 ms after it, and an error proportional to that remainder is the same at every dt).
The motion stays in the x-z plane; phi is the rotation about y (omega_y = dphi/dt), the body
point (L, 0, -hh) is at rho = (L cos phi - hh sin phi, 0, -L sin phi - hh cos phi) from the
centre.

Impact (t_c = sqrt(2 h / g), velocity before v- = -g t_c e_z, no rotation): a vertical
impulse P e_z at rho,
  m (v+ - v-) = P e_z,    I_y (omega+ - 0) = (rho x P e_z)_y = -rho_x P,
and the lower edge's normal velocity after it is zero (e = 0):
  v+_z - omega+ rho_x = 0   =>   P = g t_c / (1/m + rho_x^2 / I_y),
  v+_z = -g t_c + P / m,  omega+ = -rho_x P / I_y,  v+_x = 0,
with I_y = m (1.0^2 + 0.02^2) / 12 (the box's moment about its axis 2, which stays world y).

After the impact the edge slides on the floor (frictionless: x of the centre keeps v_x = 0)
with z_c = f(phi) = L sin phi + hh cos phi, one degree of freedom:
  (I_y + m f'^2) phi'' + m f' f'' phi'^2 + m g f' = 0,   f' = L cos phi - hh sin phi, f'' = -f,
integrated by scipy's solve_ivp (DOP853, rtol 1e-12) from phi0, omega+; v_z = f'(phi) phi'.
The floor's force N = m (z_c'' + g) must stay > 0 (the edge stays down): after() returns it,
and running this file checks it over the first 50 ms, together with the energy
T + V = (I_y + m f'^2) phi'^2 / 2 + m g f, constant after the impact to 1e-10.
"""
import numpy as np
from scipy.integrate import solve_ivp

G = 9.81
M = 1.0
L, HH = 0.5, 0.01
IY = M * (1.0 ** 2 + 0.02 ** 2) / 12.0
PHI0 = np.radians(30.0)
TC = 0.1 + 1e-4 / 3
H = 0.5 * G * TC ** 2
# the centre's height at t = 0: the lowest edge h above the floor
Z0 = H + L * np.sin(PHI0) + HH * np.cos(PHI0)


def f(p):
    return L * np.sin(p) + HH * np.cos(p)


def fp(p):
    return L * np.cos(p) - HH * np.sin(p)


def impact():
    """(t_c, P, v+_z, omega+_y)"""
    tc = np.sqrt(2.0 * H / G)
    vm = G * tc
    rx = fp(PHI0)
    P = vm / (1.0 / M + rx ** 2 / IY)
    return tc, P, -vm + P / M, -rx * P / IY


def _rhs(_, y):
    p, pd = y
    return [pd, -(M * fp(p) * (-f(p)) * pd ** 2 + M * G * fp(p)) / (IY + M * fp(p) ** 2)]


def after(t):
    """exact centre vertical velocity, angular velocity about y and floor force N at the
    times t (>= t_c, after the impact)"""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    tc, _, _, w = impact()
    s = solve_ivp(_rhs, (tc, max(t.max(), tc + 1e-9)), [PHI0, w], method="DOP853",
                  rtol=1e-12, atol=1e-14, dense_output=True)
    p, pd = s.sol(t)
    pdd = np.array([_rhs(0.0, [a, b])[1] for a, b in zip(p, pd)])
    zdd = fp(p) * pdd - f(p) * pd ** 2
    return fp(p) * pd, pd, M * (zdd + G)


def energy(t):
    t = np.atleast_1d(np.asarray(t, dtype=float))
    tc, _, _, w = impact()
    s = solve_ivp(_rhs, (tc, t.max()), [PHI0, w], method="DOP853", rtol=1e-12, atol=1e-14,
                  dense_output=True)
    p, pd = s.sol(t)
    return 0.5 * (IY + M * fp(p) ** 2) * pd ** 2 + M * G * f(p)


if __name__ == "__main__":
    tc, P, vz, w = impact()
    ts = tc + np.linspace(0.0, 0.05, 201)
    _, _, N = after(ts)
    E = energy(ts)
    print("t_c = %.12f s, P = %.12f N s, v+_z = %.12f m/s, omega+_y = %.12f rad/s"
          % (tc, P, vz, w))
    lost = M * G * H - 0.5 * M * vz ** 2 - 0.5 * IY * w ** 2
    print("energy lost in the impact: %.12f J" % lost)
    print("floor force over 50 ms after the impact: min %.6f N (must be > 0)" % N.min())
    print("energy drift after the impact: %.2e (relative)" % (np.ptp(E) / abs(E[0])))
    ok = N.min() > 0 and np.ptp(E) <= 1e-10 * abs(E[0])
    raise SystemExit(0 if ok else 1)

#!/usr/bin/python3
"""First impact of the impulse-excited cantilever of seed 002 sec. 6.1 (Zander 2008, Table 6.1)
on a point obstacle under its tip, from the linear Euler-Bernoulli modal response; written
without any code of mbsim-run (the beam's constants and the clamped-free roots come from
beam_modes.py, this directory).

The seed gives neither where the impulse acts nor where the obstacle is (only its figure 6.1
shows them) and reports the first impact at t ~ 6.67e-3 s. Our configuration
(decks/beams/beam_obstacle.yaml): the impulse Lambda acts at the tip, transverse, as a
triangular force pulse over 0 <= t <= tau (peak 2 Lambda / tau at tau / 2: its spectrum falls
as omega^-2, so the tip's response has little of the modes a mesh cannot carry); the obstacle
is a point under the tip, `gap` below the surface of the tip. In the linear regime the tip
displacement is proportional to Lambda, so the impact time depends on gap / Lambda only. At
the seed's Lambda = 10 N s the linear tip displacement at 6.67 ms would be 1.3 m, more than
the beam's length (0.5 m after 1 ms already): with the obstacle under the tip, the seed's
impulse would strike it within a millisecond, so the seed's configuration is not this one.
The deck keeps the motion linear with Lambda = 0.01 N s and puts the obstacle at the gap the
linear theory reaches at the seed's 6.67 ms: the agreement with the seed's time is then by
construction, and what the test measures is the simulated impact time (and the tip's motion
before it) against this modal solution.

Euler-Bernoulli, clamped at x = 0, free at x = L, modes phi_n (beam_modes.eb_mode) with
int_0^L phi_n^2 dx = L and phi_n(L)^2 = 4 (the standard normalisation), modal mass rho A L,
omega_n = (beta_n L / L)^2 sqrt(EI / (rho A)). A tip force F(t) drives the modal coordinates
    rho A L (q_n'' + omega_n^2 q_n) = phi_n(L) F(t),
and the tip displacement is w(L, t) = sum_n phi_n(L) q_n(t). The triangular pulse is a sum of
ramps s_k (t - t_k)_+ (slope changes s_k = (2, -4, 2) F0 / tau at t_k = 0, tau/2, tau), each
driving q_n to s_k phi_n(L) (omega_n s - sin omega_n s) / (rho A L omega_n^3), s = t - t_k > 0:
    w(L, t) = sum_n 4 / (rho A L omega_n^3) sum_k s_k (omega_n s - sin omega_n s),
summed over N_MODES modes (beta_n L = (n - 1/2) pi beyond the first 30 roots, where the two
differ by less than 1e-40; the terms fall as n^-6, the tail is below 1e-9 of the
displacement: --check). The impact time is the first root of w(L, t) = gap (brentq on the
first bracket of a fine grid).

Command line:
    beam_impact.py                       the configuration's impact time and displacements
    beam_impact.py LAMBDA TAU GAP        another configuration
    beam_impact.py --check               self-checks (exit status 1 on failure)
"""
import os
import sys

import numpy as np
from scipy.optimize import brentq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import beam_modes as bm  # noqa: E402

N_MODES = 4000
LAMBDA = 0.01      # [N s] the deck's impulse (the seed's 10 N s scaled down: linear motion)
TAU = 1.0e-3       # [s] pulse length (triangle)
T_SEED = bm.T_IMPACT_SEED


def roots(n=N_MODES):
    """beta_n L, n = 1..n: brentq for the first 30, (n - 1/2) pi beyond (cos cosh + 1 = 0:
    the difference is below 2 exp(-(n - 1/2) pi) < 1e-40 there)"""
    b = np.empty(n)
    k = min(n, 30)
    b[:k] = bm.eb_roots(k)
    j = np.arange(k + 1, n + 1)
    b[k:] = (j - 0.5) * np.pi
    return b


def omegas(n=N_MODES):
    return (roots(n) / bm.L) ** 2 * np.sqrt(bm.E * bm.I / (bm.RHO * bm.A))


def tip_displacement(t, lam=LAMBDA, tau=TAU, n=N_MODES):
    """w(L, t) [m] under the triangular pulse of impulse lam over [0, tau] at the tip (force
    2 lam / tau at tau / 2, positive along it): the force is sum_k s_k (t - t_k)_+ with the
    slope changes s_k = F0 (2, -4, 2) / tau at t_k = 0, tau / 2, tau, and a ramp c (t - t_k)_+
    drives the modal oscillator to c (omega s - sin omega s) / (m omega^3), s = t - t_k"""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    w = omegas(n)
    F0 = 2.0 * lam / tau
    kinks = ((0.0, 2.0 * F0 / tau), (0.5 * tau, -4.0 * F0 / tau), (tau, 2.0 * F0 / tau))
    amp = 4.0 / (bm.RHO * bm.A * bm.L * w ** 3)
    out = np.zeros(t.shape)
    for i, ti in enumerate(t):
        for tk, sk in kinks:
            s = ti - tk
            if s > 0.0:
                out[i] += sk * np.sum(amp * (w * s - np.sin(w * s)))
    return out


def impact_time(gap, lam=LAMBDA, tau=TAU, t_max=0.05, n=N_MODES):
    """the first t at which the tip displacement reaches gap"""
    grid = np.linspace(0.0, t_max, 5001)
    y = tip_displacement(grid, lam, tau, n) - gap
    k = int(np.argmax(y >= 0.0))
    if y[k] < 0.0:
        return None
    f = lambda s: tip_displacement(s, lam, tau, n)[0] - gap  # noqa: E731
    return brentq(f, grid[k - 1], grid[k], xtol=1e-13)


def gap_for(t_impact, lam=LAMBDA, tau=TAU):
    """the gap the tip reaches at t_impact (the deck's gap for the seed's time)"""
    return float(tip_displacement(t_impact, lam, tau)[0])


def check():
    ok = True
    w = omegas()
    # Duhamel's integral of the triangle by quadrature, mode by mode (the first 40 modes)
    from scipy.integrate import quad
    F0, tq = 2 * LAMBDA / TAU, 4.0e-3
    force = lambda s: F0 * (1 - abs(2 * s / TAU - 1))  # noqa: E731
    dq = sum(4.0 / (bm.RHO * bm.A * bm.L * wn) *
             quad(lambda s: force(s) * np.sin(wn * (tq - s)), 0.0, TAU, points=[TAU / 2],
                  limit=200, epsabs=0, epsrel=1e-9)[0] for wn in w[:40])
    cf = tip_displacement(tq, n=40)[0]
    e4 = abs(dq - cf) / abs(cf)
    ok &= e4 < 1e-8
    print(f"40 modes at {tq} s: Duhamel by quadrature {dq:.12e}, ramps {cf:.12e} (rel {e4:.1e})")
    # convergence in the number of modes
    a, b = tip_displacement(T_SEED, n=N_MODES)[0], tip_displacement(T_SEED, n=N_MODES // 2)[0]
    e2 = abs(a - b) / abs(a)
    ok &= e2 < 1e-9
    print(f"modes {N_MODES} vs {N_MODES // 2}: rel {e2:.1e}")
    # linearity: the impact time depends on gap / Lambda only
    g = gap_for(T_SEED)
    t1, t2 = impact_time(g), impact_time(10 * g, lam=10 * LAMBDA)
    ok &= abs(t1 - t2) < 1e-12 and abs(t1 - T_SEED) < 1e-9
    print(f"gap {g:.6e} m: impact at {t1:.9e} s (x10: {t2:.9e} s)")
    # the static stiffness: long after a slow ramp ... the modal sum's static limit
    # sum 4 / (rho A L omega_n^2) = L^3 / (3 EI) (tip compliance of the cantilever)
    comp = np.sum(4.0 / (bm.RHO * bm.A * bm.L * w ** 2))
    e3 = abs(comp - bm.L ** 3 / (3 * bm.E * bm.I)) / (bm.L ** 3 / (3 * bm.E * bm.I))
    ok &= e3 < 1e-9
    print(f"static tip compliance: modal {comp:.12e}, L^3/3EI {bm.L ** 3 / (3 * bm.E * bm.I):.12e}"
          f" (rel {e3:.1e})")
    return ok


def main(argv):
    if argv[1:] == ["--check"]:
        return 0 if check() else 1
    lam, tau = LAMBDA, TAU
    if len(argv) == 4:
        lam, tau, gap = float(argv[1]), float(argv[2]), float(argv[3])
    else:
        gap = gap_for(T_SEED, lam, tau)
        print(f"gap for the seed's first impact at {T_SEED} s: {gap:.6e} m")
    print(f"Lambda {lam} N s over tau {tau} s at the tip, gap {gap:.6e} m: "
          f"impact at {impact_time(gap, lam, tau):.6e} s")
    print(f"linear tip displacement at {T_SEED} s under the seed's Lambda = {bm.IMPULSE} N s: "
          f"{tip_displacement(T_SEED, bm.IMPULSE, tau)[0]:.4f} m")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""Natural frequencies of a clamped-free beam (cantilever), written without any code of
mbsim-run: Euler-Bernoulli bending modes, the axial modes of the bar, a Timoshenko correction
and what a finite-element mesh of the program's kind should give.

The beam: seed 002 sec. 6.1, "Cantilever Beam with Impacts", Table 6.1 (Zander 2008), quoted
as the table reads:
    modulus of elasticity            E        2.2e11 N/m^2
    mass density                     rho      7.8e3 kg/m^3
    rod length                       l        1.0 m
    cross sectional area             A        100.0e-6 m^2
    cross sectional moment of inertia I       8.333e-12 m^4
    excitation impulse               Lambda_ex 10.0 kg m/s
    parameters of theta-time-stepper dt, theta 5e-7 s, 0.5
The table gives no section dimensions; A = 1e-4 m^2 and I = 8.333e-12 m^4 = w h^3 / 12 with
A = w h give h = 1 mm (in the plane of bending) and w = 100 mm: a thin steel strip, which the
decks write as `rectangle: [0.001, 0.1]` with `up` along the bending direction (I3 = w h^3/12 =
8.3333e-12, 4e-5 above the table's rounded value; this script uses the rectangle's). The seed's
system is planar and gravity-free. It gives neither the obstacle's position nor where the
impulse acts (its figure 6.1 only shows them), nor G or Poisson's ratio: nu = 0.3 is our
choice, used only by the Timoshenko correction. The seed reports the first impact at the
obstacle at t ~ 6.67e-3 s (sec. 6.1 "Simulation Results").

Euler-Bernoulli (EI w'''' + rho A w_tt = 0, w = w' = 0 at the root, w'' = w''' = 0 at the tip):
beta_n L are the roots of cos(x) cosh(x) + 1 = 0, found by brentq on cos(x) + 1/cosh(x) (the
same roots without overflow) in [(n - 1/2) pi - 1, (n - 1/2) pi + 1]: 1.8751, 4.6941, 7.8548,
10.9955, ...; f_n = (beta_n L)^2 / (2 pi L^2) sqrt(EI / (rho A)).
Axial (E A u'' = rho A u_tt, u = 0 at the root, u' = 0 at the tip): f_n = (2n - 1) / (4 L)
sqrt(E / rho).

Timoshenko (shear factor kappa = 5/6 of a rectangle, G = E / (2 (1 + nu))): the first-order
correction of the EB frequencies by shear and rotary inertia (timoshenko_frequencies) shows how
far Euler-Bernoulli is for this slenderness (L/r = 3464, r = sqrt(I/A)): 1e-6 to 3e-5 for the
first four modes.

fe_frequencies(order, elements) is the planar linear Timoshenko beam that the director beam
becomes for small motions about the straight state (seed 000 sec. 5: positions and directors
interpolated by the same Lagrange polynomials; the linearised directors carry the section's
rotation, d2 the rotary inertia rho I3): consistent mass matrix (exact integration), stiffness
(axial, shear, bending) with reduced Gauss integration (1 point for linear, 2 for quadratic
elements). It predicts the discretisation error of a mesh of the program's elements under
those assumptions; the test quotes it beside the measurement. midpoint_tip_response runs
that model through the deck's pulse with the implicit midpoint rule (em on a linear motion),
and --check fits its record as the test fits the program's: the frequencies come out as the
mesh's, mapped by atan(pi f dt) / (pi dt), to 1e-6, which validates the measurement itself.

Command line:
    beam_modes.py            the table above, EB / axial / Timoshenko / FE frequencies
    beam_modes.py --check    self-checks (exit status 1 on failure)
"""
import sys

import numpy as np
from scipy.linalg import eigh
from scipy.optimize import brentq

# ---- seed 002 (Zander 2008) sec. 6.1, Table 6.1
E = 2.2e11          # Table 6.1 "modulus of elasticity E 2.2e11 N/m^2"
RHO = 7.8e3         # Table 6.1 "mass density rho 7.8e3 kg/m^3"
L = 1.0             # Table 6.1 "rod length l 1.0 m"
A_TABLE = 100.0e-6  # Table 6.1 "cross sectional area A 100.0e-6 m^2"
I_TABLE = 8.333e-12  # Table 6.1 "cross sectional moment of inertia I 8.333e-12 m^4"
IMPULSE = 10.0      # Table 6.1 "excitation impulse Lambda_ex 10.0 kg m/s"
DT_SEED, THETA_SEED = 5e-7, 0.5  # Table 6.1 "parameters of theta-time-stepper"
T_IMPACT_SEED = 6.67e-3          # sec. 6.1: "the first impact at the obstacle at t ~ 6.67e-3 s"
H = 1.0e-3          # section height in the bending plane (from A and I above)
W = 0.1             # section width
A = W * H           # 1e-4
I = W * H ** 3 / 12  # 8.3333e-12
NU = 0.3            # our choice (not in the seed): only the Timoshenko correction uses it
KAPPA = 5.0 / 6.0   # shear factor of a rectangle


def eb_roots(n=4):
    """beta_n L of the clamped-free beam, n = 1..n"""
    f = lambda x: np.cos(x) + 1.0 / np.cosh(x)  # noqa: E731  (cos cosh + 1 = 0, scaled)
    return np.array([brentq(f, (j - 0.5) * np.pi - 1.0, (j - 0.5) * np.pi + 1.0, xtol=1e-15)
                     for j in range(1, n + 1)])


def eb_frequencies(n=4, e=E, rho=RHO, area=A, inertia=I, length=L):
    """Euler-Bernoulli bending frequencies [Hz]"""
    b = eb_roots(n)
    return b ** 2 / (2 * np.pi * length ** 2) * np.sqrt(e * inertia / (rho * area))


def axial_frequencies(n=1, e=E, rho=RHO, length=L):
    """axial (bar) frequencies [Hz] of the clamped-free bar"""
    j = np.arange(1, n + 1)
    return (2 * j - 1) / (4 * length) * np.sqrt(e / rho)


def trapezoidal_frequency(f, dt):
    """the frequency the implicit midpoint / trapezoidal rule (em and midpoint on a linear
    oscillator) gives to an oscillator of frequency f with step dt: Omega dt = 2 atan(omega
    dt / 2), a relative error of -(omega dt)^2 / 12 to leading order"""
    return 2.0 / dt * np.arctan(np.pi * f * dt) / (2 * np.pi)


# ---- finite elements of the linearised beam
def _gauss(n):
    x, w = np.polynomial.legendre.leggauss(n)
    return x, w


def _lagrange(order, xi):
    """shape functions and xi-derivatives on [-1, 1] at xi, nodes equally spaced"""
    if order == 1:
        return np.array([(1 - xi) / 2, (1 + xi) / 2]), np.array([-0.5, 0.5])
    return (np.array([xi * (xi - 1) / 2, 1 - xi ** 2, xi * (xi + 1) / 2]),
            np.array([xi - 0.5, -2 * xi, xi + 0.5]))


def fe_matrices(order, elements, e=E, rho=RHO, area=A, inertia=I, length=L, nu=NU,
                kappa=KAPPA, axial=False):
    """stiffness and mass matrices of the clamped-free linear Timoshenko beam (bending: w,
    theta per node, w of the tip second to last; axial=True: u per node) with `elements`
    Lagrange elements of `order`, the root node's dofs removed"""
    g = e / (2 * (1 + nu))
    nn = order * elements + 1
    per = 1 if axial else 2
    K = np.zeros((per * nn, per * nn))
    M = np.zeros_like(K)
    he = length / elements
    jac = he / 2
    xm, wm = _gauss(order + 1)       # mass: exact for N_a N_b
    xk, wk = _gauss(order)           # stiffness: reduced
    for el in range(elements):
        idx = np.arange(order * el, order * el + order + 1)
        if axial:
            dofs = idx
            for xi, wt in zip(xm, wm):
                N, _ = _lagrange(order, xi)
                M[np.ix_(dofs, dofs)] += rho * area * np.outer(N, N) * wt * jac
            for xi, wt in zip(xk, wk):
                _, dN = _lagrange(order, xi)
                B = dN / jac
                K[np.ix_(dofs, dofs)] += e * area * np.outer(B, B) * wt * jac
            continue
        dw, dt = 2 * idx, 2 * idx + 1
        dofs = np.concatenate([dw, dt])
        m = order + 1
        for xi, wt in zip(xm, wm):
            N, _ = _lagrange(order, xi)
            Me = np.zeros((2 * m, 2 * m))
            Me[:m, :m] = rho * area * np.outer(N, N)
            Me[m:, m:] = rho * inertia * np.outer(N, N)
            M[np.ix_(dofs, dofs)] += Me * wt * jac
        for xi, wt in zip(xk, wk):
            N, dN = _lagrange(order, xi)
            B = dN / jac
            bend = np.concatenate([np.zeros(m), B])          # kappa = theta'
            shear = np.concatenate([B, -N])                   # gamma = w' - theta
            Ke = e * inertia * np.outer(bend, bend) + kappa * g * area * np.outer(shear, shear)
            K[np.ix_(dofs, dofs)] += Ke * wt * jac
    free = np.arange(per, per * nn)  # clamp the root node
    return K[np.ix_(free, free)], M[np.ix_(free, free)]


def fe_frequencies(order, elements, n=4, axial=False, **section):
    """lowest n frequencies [Hz] of fe_matrices(order, elements, ...)"""
    Kf, Mf = fe_matrices(order, elements, axial=axial, **section)
    # the shear and rotary-inertia modes make K very badly conditioned (1e12): the largest
    # eigenvalues of M x = mu K x (Cholesky of K) give the lowest frequencies to round-off,
    # K x = lambda M x would lose digits in them
    mu = eigh(Mf, Kf, eigvals_only=True, subset_by_index=[len(Mf) - n, len(Mf) - 1])
    return np.sqrt(1.0 / mu[::-1]) / (2 * np.pi)


def midpoint_tip_response(order, elements, force, t_pulse, dt, t_end, axial=False):
    """the tip displacement of fe_matrices' beam at rest, under a tip force `force` for
    0 <= t < t_pulse, integrated by the implicit midpoint rule (the force at each step's
    midpoint, as em applies a window), then free: M (v1 - v0) = dt (f - K (q0 + q1) / 2),
    q1 - q0 = dt (v0 + v1) / 2"""
    K, M = fe_matrices(order, elements, axial=axial)
    n = len(M)
    tip = n - 1 if axial else n - 2
    f = np.zeros(n)
    f[tip] = force
    # eliminate v1: (M + dt^2/4 K) q1 = (M - dt^2/4 K) q0 + dt M v0 + dt^2/2 f
    A = M + dt ** 2 / 4 * K
    Ainv = np.linalg.inv(A)
    q, v = np.zeros(n), np.zeros(n)
    steps = int(round(t_end / dt))
    out = np.zeros(steps + 1)
    for i in range(steps):
        fi = f if (i + 0.5) * dt < t_pulse else 0 * f
        q1 = Ainv @ ((M - dt ** 2 / 4 * K) @ q + dt * (M @ v) + dt ** 2 / 2 * fi)
        v = 2 * (q1 - q) / dt - v
        q = q1
        out[i + 1] = q[tip]
    return np.arange(steps + 1) * dt, out


def eb_mode(beta_l, x, length=L):
    """clamped-free EB mode shape phi and its first three x-derivatives at x"""
    b = beta_l / length
    sg = (np.cosh(beta_l) + np.cos(beta_l)) / (np.sinh(beta_l) + np.sin(beta_l))
    bx = b * x
    ch, cs, sh, sn = np.cosh(bx), np.cos(bx), np.sinh(bx), np.sin(bx)
    return (ch - cs - sg * (sh - sn), b * (sh + sn - sg * (ch - cs)),
            b ** 2 * (ch + cs - sg * (sh + sn)), b ** 3 * (sh - sn - sg * (ch + cs)))


def timoshenko_frequencies(n=4, e=E, rho=RHO, area=A, inertia=I, length=L, nu=NU,
                           kappa=KAPPA):
    """Euler-Bernoulli frequencies with the first-order Timoshenko correction (Rayleigh's
    quotient with the EB mode phi): rotary inertia adds the kinetic energy of rho I phi'^2,
    shear adds the compliance of the shear force Q = -EI phi''' (energy Q^2 / (kappa G A)):
        (omega_T / omega_EB)^2 = 1 - r^2 int phi'^2 / int phi^2
                                   - EI / (kappa G A) int (phi''')^2 / int (phi'')^2
    with r^2 = I / A, correct to first order in (beta r)^2 (the neglected terms are of second
    order, ~1e-10 here). A Timoshenko finite-element mesh cannot resolve this correction: the
    shear modes make its stiffness matrix so badly conditioned (1e12) that its lowest
    frequencies carry ~1e-5 of round-off."""
    g = e / (2 * (1 + nu))
    x, w = np.polynomial.legendre.leggauss(200)
    x = (x + 1) * length / 2
    w = w * length / 2
    out = []
    for bl, f in zip(eb_roots(n), eb_frequencies(n, e, rho, area, inertia, length)):
        p0, p1, p2, p3 = eb_mode(bl, x, length)
        corr = (inertia / area * np.sum(w * p1 ** 2) / np.sum(w * p0 ** 2)
                + e * inertia / (kappa * g * area) * np.sum(w * p3 ** 2) / np.sum(w * p2 ** 2))
        out.append(f * np.sqrt(1 - corr))
    return np.array(out)


def fit_frequencies(t, y, guesses):
    """frequencies [Hz] of a sum of undamped sinusoids y(t) = c + sum_j (a_j cos 2 pi f_j t +
    b_j sin 2 pi f_j t) sampled at equal steps: each guess is first moved to the highest peak
    of the Hann-windowed, 32-fold zero-padded spectrum within 10 % of it (a least-squares fit
    only converges from within a fraction of a cycle over the record), then refined by
    variable projection: for given frequencies the amplitudes are a linear least-squares fit,
    and scipy's least_squares adjusts the frequencies to minimise the residual. List every
    component of appreciable amplitude in `guesses`: one left out biases the others. Returns
    the frequencies and the rms residual relative to the rms of y."""
    from scipy.optimize import least_squares
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    g = np.asarray(guesses, dtype=float).copy()
    n = len(t)
    nfft = 32 * (1 << int(np.ceil(np.log2(n))))
    spec = np.abs(np.fft.rfft((y - y.mean()) * np.hanning(n), nfft))
    freq = np.fft.rfftfreq(nfft, t[1] - t[0])
    for j, gj in enumerate(g):
        band = np.nonzero((freq > 0.9 * gj) & (freq < 1.1 * gj))[0]
        k = band[np.argmax(spec[band])]
        if 0 < k < len(spec) - 1:  # parabola through the peak and its neighbours
            a, b, c = spec[k - 1], spec[k], spec[k + 1]
            g[j] = freq[k] + 0.5 * (a - c) / (a - 2 * b + c) * (freq[1] - freq[0])
        else:
            g[j] = freq[k]

    def basis(f):
        cols = [np.ones_like(t)]
        for fj in f:
            cols += [np.cos(2 * np.pi * fj * t), np.sin(2 * np.pi * fj * t)]
        return np.column_stack(cols)

    def resid(f):
        B = basis(f)
        c = np.linalg.lstsq(B, y, rcond=None)[0]
        return B @ c - y

    sol = least_squares(resid, g, bounds=(0.9 * g, 1.1 * g), x_scale=g, xtol=1e-15,
                        ftol=1e-15, gtol=1e-15, method="trf")
    rms = np.sqrt(np.mean(sol.fun ** 2)) / max(np.sqrt(np.mean((y - y.mean()) ** 2)), 1e-300)
    return sol.x, rms


# ---- self-checks
def check():
    fails = []

    def ok(cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            fails.append(what)

    b = eb_roots(4)
    ok(np.allclose(np.round(b, 4), [1.8751, 4.6941, 7.8548, 10.9955], atol=0, rtol=0),
       "beta_n L = %s (1.8751, 4.6941, 7.8548, 10.9955)" % np.array2string(b, precision=6))
    ok(np.max(np.abs(np.cos(b) * np.cosh(b) + 1)) < 1e-9, "cos cosh + 1 = 0 at the roots")
    # the asymptote beta_n L -> (n - 1/2) pi
    ok(abs(eb_roots(8)[-1] - 7.5 * np.pi) < 1e-6, "beta_8 L = 7.5 pi to 1e-6")
    ok(abs(A - A_TABLE) < 1e-15 and abs(I / I_TABLE - 1) < 5e-5,
       "the 1 mm x 100 mm strip gives Table 6.1's A and I (I to %.1e)" % (I / I_TABLE - 1))
    feb = eb_frequencies()
    ft = timoshenko_frequencies()
    rel = ft / feb - 1
    ok(np.all(rel < 0) and np.all(np.abs(rel) < 1e-4),
       "Timoshenko below EB by %s (relative)" % np.array2string(rel, precision=2))
    # the mode shapes: clamped root, free tip (phi'' = phi''' = 0)
    for bl in eb_roots(4):
        p = eb_mode(bl, np.array([0.0, L]))
        ok(abs(p[0][0]) + abs(p[1][0]) < 1e-12 and abs(p[2][1]) + abs(p[3][1]) < 1e-8 * bl ** 3,
           "EB mode beta L = %.4f: phi(0) = phi'(0) = 0, phi''(L) = phi'''(L) = 0" % bl)
    # the FE mesh converges to EB within the correction and its round-off (~1e-5)
    fe = fe_frequencies(2, 40)
    ok(np.max(np.abs(fe / ft - 1)) < 5e-5, "FE, 40 quadratic elements = Timoshenko to %.1e "
       "<= 5e-5" % np.max(np.abs(fe / ft - 1)))
    fa = axial_frequencies(2)
    fea = fe_frequencies(2, 100, 2, axial=True)
    ok(np.max(np.abs(fea / fa - 1)) < 1e-8, "axial FE (100 quadratic elements) = (2n-1)/(4L) "
       "sqrt(E/rho) to %.1e" % np.max(np.abs(fea / fa - 1)))
    f = 10.0
    ok(abs(trapezoidal_frequency(f, 1e-3) / f - 1 + (2 * np.pi * f * 1e-3) ** 2 / 12) < 1e-6,
       "trapezoidal frequency error -(omega dt)^2/12 to leading order")
    # the fit on a synthetic free vibration of the shipped deck's kind: the tip displacement
    # after a pulse, modes 1..8 with amplitudes ~ 1/f, sampled at dt = 1e-3 over 6 s
    tt = np.arange(0.0, 6.0 + 5e-4, 1e-3)
    fs = np.concatenate([eb_frequencies(8)]) * (1 + 1e-3 * np.arange(8))
    yy = sum(np.sin(2 * np.pi * fj * tt + 0.3 * j) / fj for j, fj in enumerate(fs))
    got, rms = fit_frequencies(tt, yy, eb_frequencies(8))
    ok(np.max(np.abs(got / fs - 1)) < 1e-9 and rms < 1e-9,
       "fit_frequencies recovers 8 synthetic modes to %.1e (rms residual %.1e)"
       % (np.max(np.abs(got / fs - 1)), rms))
    # the test's pipeline on the linear model of the shipped deck: the midpoint rule after the
    # deck's pulse, fitted as the test fits the program's record, gives this mesh's
    # frequencies mapped by atan(pi f dt) / (pi dt)
    t, z = midpoint_tip_response(2, 20, 0.1, 0.01, 1e-3, 3.0)
    after = t >= 0.01 - 1e-12
    fe = fe_frequencies(2, 20, 4)
    got, rms = fit_frequencies(t[after], z[after], trapezoidal_frequency(eb_frequencies(8), 1e-3))
    rel = got[:4] / trapezoidal_frequency(fe, 1e-3) - 1
    ok(np.max(np.abs(rel)) < 1e-5 and rms < 1e-2,
       "deck pulse, 20 quadratic elements, midpoint rule: fitted %s Hz = the mesh's mapped "
       "frequencies to %.1e (fit residual %.1e), tip amplitude %.2e m"
       % (", ".join("%.5f" % f for f in got[:4]), np.max(np.abs(rel)), rms, np.max(np.abs(z))))
    t, x = midpoint_tip_response(2, 20, 100.0, 2e-4, 1e-5, 0.01, axial=True)
    after = t >= 2e-4 - 1e-12
    fa = fe_frequencies(2, 20, 1, axial=True)
    got, rms = fit_frequencies(t[after], x[after],
                               trapezoidal_frequency(axial_frequencies(8), 1e-5))
    rel = got[0] / trapezoidal_frequency(fa[0], 1e-5) - 1
    ok(abs(rel) < 1e-5 and rms < 2e-2,
       "axial pulse, 20 quadratic elements, midpoint rule: fitted %.3f Hz = the mesh's mapped "
       "frequency to %.1e (fit residual %.1e), tip amplitude %.2e m"
       % (got[0], abs(rel), rms, np.max(np.abs(x))))
    print("beam_modes: %d failed" % len(fails))
    return not fails


def main(argv):
    if "--check" in argv:
        return 0 if check() else 1
    print("seed 002 Table 6.1 cantilever: E %.3g Pa, rho %.3g kg/m^3, L %g m, A %.4g m^2, "
          "I %.5g m^4 (h %g m in the bending plane, w %g m), EI %.6g N m^2, rho A %.4g kg/m"
          % (E, RHO, L, A, I, H, W, E * I, RHO * A))
    b = eb_roots(4)
    feb = eb_frequencies()
    ft = timoshenko_frequencies()
    print("%4s %12s %14s %14s %12s" % ("mode", "beta L", "EB [Hz]", "Timoshenko", "rel."))
    for j in range(4):
        print("%4d %12.8f %14.8f %14.8f %12.2e" % (j + 1, b[j], feb[j], ft[j], ft[j] / feb[j] - 1))
    print("axial mode 1: %.6f Hz, mode 2: %.6f Hz" % tuple(axial_frequencies(2)))
    print("FE predictions (consistent mass, reduced integration), relative to EB:")
    for order, nel in ((1, 20), (1, 40), (1, 80), (2, 10), (2, 20)):
        fe = fe_frequencies(order, nel)
        fa = fe_frequencies(order, nel, 1, axial=True)
        print("  order %d, %3d elements: bending %s, axial %.2e"
              % (order, nel, " ".join("%9.2e" % r for r in fe / feb - 1),
                 fa[0] / axial_frequencies(1)[0] - 1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

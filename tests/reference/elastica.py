#!/usr/bin/python3
"""Independent references for a cantilever of inextensible, unshearable elastica (Euler's
elastica), written without any code of mbsim-run: the tip displacements under a dead tip load
and the roll-up under a tip moment.

Geometry and signs. The beam is clamped at s = 0, straight along x at the start, and bends in
the x-z plane; theta(s) is the angle of its tangent against x, measured towards the load.
Arc length is normalised, s in [0, 1] (s = arc length / L).

1. Dead tip load P perpendicular to the undeformed beam (along -z in the decks), k = P L^2/EI.
   The bending moment about the section at s is M(s) = P (x(1) - x(s)), EI theta' = M, so

        theta'' = -k cos(theta),   theta(0) = 0 (clamped),   theta'(1) = 0 (no tip moment),

   and the tip displacements are u/L = 1 - int_0^1 cos(theta) ds (shortening along the
   undeformed axis) and v/L = int_0^1 sin(theta) ds (transverse, in the load's direction).

   (a) bvp(k): scipy's solve_bvp of that problem together with x' = cos(theta),
       z' = sin(theta), x(0) = z(0) = 0, at tolerance 1e-12 (a shooting start from the linear
       solution theta = k (s - s^2/2)).
   (b) closed(k): the closed form by elliptic integrals (Bisshopp and Drucker 1945;
       Mattiasson 1981). Multiplying the equation by theta' and integrating with theta'(1) = 0
       gives theta'^2 = 2 k (sin theta0 - sin theta), theta0 = theta(1) the tip angle. The
       substitution 1 + sin(theta) = 2 p^2 sin^2(phi), with 2 p^2 = 1 + sin(theta0) (phi = pi/2
       at the tip) and sin(phi0) = 1 / (p sqrt 2) at the root, turns ds = dtheta / theta' into
       ds = dphi / (sqrt(k) sqrt(1 - p^2 sin^2 phi)). Integrating over the beam:

            sqrt(k) = K(p) - F(phi0, p)                      (this fixes p, i.e. theta0)
            v / L   = 1 - 2 [E(p) - E(phi0, p)] / sqrt(k)
            u / L   = 1 - sqrt(2 sin(theta0) / k) = 1 - sqrt((4 p^2 - 2) / k)

       (the last from int cos(theta) dtheta / theta' = sqrt(2 sin(theta0) / k) directly), with
       F, E the incomplete and K, E the complete elliptic integrals of the first and second
       kind of modulus p (scipy's parameter m = p^2). p is found by brentq on theta0 in
       (0, pi/2).
   The two agree to 1e-8 for every k checked (--check), and k = 1 gives Mattiasson's u/L =
   0.05643, v/L = 0.30172.

2. Tip moment M (a pure moment about the normal of the bending plane): EI theta' = M, so the
   beam is a circular arc of radius EI/M, Theta = M L / EI the tip rotation, and a point at s
   lies at x/L = sin(Theta s) / Theta, z/L = (1 - cos(Theta s)) / Theta (bending towards +z in
   the decks: a torque along -y). M = pi EI/L: a half circle, the tip at (0, 2L/pi) relative
   to the root, pointing back along -x; M = 2 pi EI/L: a full circle, the tip back at the root.

Command line:
    elastica.py --check            self-checks (exit status 1 on failure)
    elastica.py [k ...]            u/L, v/L, tip angle by both methods (default 0.25 1 3 10)
    elastica.py --rollup [m ...]   tip of the arc for M = m pi EI / L (default 1 2)
"""
import sys

import numpy as np
from scipy.integrate import quad, solve_bvp
from scipy.optimize import brentq
from scipy.special import ellipe, ellipeinc, ellipk, ellipkinc

MATTIASSON_K1 = (0.05643, 0.30172)  # Mattiasson 1981, k = 1: u/L, v/L (five digits)


# ---- (a) the boundary-value problem
def _bvp_one(k, s, y0, tol):
    def f(_, y):
        return np.vstack([y[1], -k * np.cos(y[0]), np.cos(y[0]), np.sin(y[0])])

    def bc(ya, yb):
        return np.array([ya[0], yb[1], ya[2], ya[3]])

    sol = solve_bvp(f, bc, s, y0, tol=tol, max_nodes=100000, bc_tol=1e-13)
    if sol.status != 0:
        raise RuntimeError("solve_bvp failed for k = %g: %s" % (k, sol.message))
    return sol


def bvp(k, tol=1e-10, nodes=201):
    """solve theta'' = -k cos(theta) with x, z: returns the scipy solution (sol.sol(s) gives
    [theta, theta', x/L, z/L] at s in [0, 1]). Continuation in k from the linear solution
    theta = k (s - s^2/2) at k <= 0.5, in steps of a factor 2, each start the last solution.
    solve_bvp's tol bounds the relative residual of the collocation; the solution itself is
    far more accurate (the check compares it with the closed form to 1e-8)."""
    s = np.linspace(0.0, 1.0, nodes)
    k0 = min(k, 0.5)
    th = k0 * (s - s ** 2 / 2)
    y = np.vstack([th, k0 * (1 - s), s - k0 ** 2 * s ** 5 / 40, k0 * (s ** 2 / 2 - s ** 3 / 6)])
    steps = [k0]
    while steps[-1] < k:
        steps.append(min(k, 2 * steps[-1]))
    for kk in steps:
        sol = _bvp_one(kk, s, y, tol)
        s, y = sol.x, sol.y
    return sol


def tip_bvp(k):
    """(u/L, v/L, theta0) by solve_bvp"""
    sol = bvp(k)
    th, _, x, z = sol.sol(1.0)
    return 1.0 - x, z, th


def shape_bvp(k, s):
    """node positions (x/L, z/L) at the normalised arc lengths s, and the tangent angles"""
    sol = bvp(k)
    y = sol.sol(np.asarray(s, dtype=float))
    return y[2], y[3], y[0]


# ---- (b) the closed form by elliptic integrals
def _root_and_tip(theta0):
    """p^2 (scipy's m) and phi0 for the tip angle theta0"""
    m = (1.0 + np.sin(theta0)) / 2.0
    phi0 = np.arcsin(1.0 / np.sqrt(2.0 * m))
    return m, phi0


def closed(k):
    """(u/L, v/L, theta0) by the elliptic-integral closed form"""
    def g(theta0):
        m, phi0 = _root_and_tip(theta0)
        return ellipk(m) - ellipkinc(phi0, m) - np.sqrt(k)

    # g rises from -sqrt(k) at theta0 = 0 to +infinity at pi/2
    theta0 = brentq(g, 1e-300, np.pi / 2 * (1 - 1e-15), xtol=1e-17, rtol=1e-15, maxiter=500)
    m, phi0 = _root_and_tip(theta0)
    v = 1.0 - 2.0 * (ellipe(m) - ellipeinc(phi0, m)) / np.sqrt(k)
    u = 1.0 - np.sqrt(2.0 * np.sin(theta0) / k)
    return u, v, theta0


def closed_quadrature(k):
    """a third route, for the check only: the tip angle from the closed form, then u, v by
    adaptive quadrature of the first integrals (the 1/sqrt singularity at the tip handled by
    quad's algebraic weight)"""
    _, _, theta0 = closed(k)

    # sin(theta0) - sin(theta) = 2 cos((theta0 + theta)/2) sin((theta0 - theta)/2): no
    # cancellation near the tip; weight (theta0 - th)^(-1/2) taken out explicitly
    def weighted(fn):
        def h(th):
            # sqrt(theta0 - th) / theta' with sin(d/2) = (d/2) sinc: finite at the tip
            d = theta0 - th
            return fn(th) / np.sqrt(2 * k * np.cos((th + theta0) / 2) * np.sinc(d / (2 * np.pi)))
        return quad(h, 0.0, theta0, weight="alg", wvar=(0.0, -0.5), epsabs=1e-14,
                    epsrel=1e-13, limit=200)[0]

    x = weighted(np.cos)
    z = weighted(np.sin)
    length = weighted(lambda th: 1.0)
    return 1.0 - x, z, length


# ---- the roll-up under a tip moment
def rollup(m_factor, s=1.0):
    """position (x/L, z/L) of the point at normalised arc length s for a tip moment
    M = m_factor * pi * EI / L (the arc of radius L / (m_factor pi))"""
    theta = m_factor * np.pi
    s = np.asarray(s, dtype=float)
    return np.sin(theta * s) / theta, (1.0 - np.cos(theta * s)) / theta


# ---- self-checks
def check():
    fails = []

    def ok(cond, what):
        print(("ok    " if cond else "FAIL  ") + what)
        if not cond:
            fails.append(what)

    for k in (0.01, 0.25, 1.0, 3.0, 10.0, 30.0):
        ub, vb, tb = tip_bvp(k)
        uc, vc, tc = closed(k)
        d = max(abs(ub - uc), abs(vb - vc), abs(tb - tc))
        ok(d <= 1e-8, "k = %g: bvp (u/L %.10f, v/L %.10f) and closed form (u/L %.10f, v/L "
           "%.10f) agree to %.1e <= 1e-8" % (k, ub, vb, uc, vc, d))
        uq, vq, length = closed_quadrature(k)
        d = max(abs(uq - uc), abs(vq - vc), abs(length - 1.0))
        ok(d <= 1e-9, "k = %g: quadrature of the first integral agrees to %.1e <= 1e-9 "
           "(length %.12f)" % (k, d, length))
    u, v, _ = closed(1.0)
    ok(round(u, 5) == MATTIASSON_K1[0] and round(v, 5) == MATTIASSON_K1[1],
       "k = 1: u/L %.5f, v/L %.5f as Mattiasson 1981 (%.5f, %.5f)" % (u, v, *MATTIASSON_K1))
    # small loads: the linear beam, v/L = k/3, tip angle k/2
    k = 1e-3
    u, v, th = closed(k)
    ok(abs(v - k / 3) <= 1e-6 * k and abs(th - k / 2) <= 1e-6 * k,
       "k = 1e-3: v/L = k/3 and theta0 = k/2 of the linear beam (to 1e-6 k)")
    # second order shortening of the linear shape: u/L = 1/2 int theta^2 = k^2 / 15
    ok(abs(u - k ** 2 / 15) <= 1e-3 * k ** 2, "k = 1e-3: u/L = k^2/15 (%.6e vs %.6e)"
       % (u, k ** 2 / 15))
    x, z = rollup(1.0)
    ok(abs(x) < 1e-15 and abs(z - 2 / np.pi) < 1e-15, "M = pi EI/L: tip at (0, 2/pi) L")
    x, z = rollup(2.0)
    ok(abs(x) < 1e-15 and abs(z) < 1e-15, "M = 2 pi EI/L: tip back at the root")
    # the arc against a bvp of the same kind: theta'' = 0, theta'(1) = M L / EI
    s = np.linspace(0, 1, 11)
    x, z = rollup(1.0, s)
    ok(np.all(np.abs(np.hypot(x, z - 1 / np.pi) - 1 / np.pi) < 1e-15),
       "M = pi EI/L: every point on the circle of radius L/pi about (0, L/pi)")
    print("elastica: %d failed" % len(fails))
    return not fails


def main(argv):
    if "--check" in argv:
        return 0 if check() else 1
    if "--rollup" in argv:
        ms = [float(a) for a in argv if a != "--rollup"] or [1.0, 2.0]
        for m in ms:
            x, z = rollup(m)
            print("M = %g pi EI/L: tip x/L = %.12f, z/L = %.12f" % (m, x, z))
        return 0
    ks = [float(a) for a in argv] or [0.25, 1.0, 3.0, 10.0]
    print("%8s %14s %14s %14s %14s %12s" % ("k", "u/L bvp", "v/L bvp", "u/L closed",
                                          "v/L closed", "tip angle"))
    for k in ks:
        ub, vb, _ = tip_bvp(k)
        uc, vc, tc = closed(k)
        print("%8g %14.10f %14.10f %14.10f %14.10f %12.9f" % (k, ub, vb, uc, vc, tc))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

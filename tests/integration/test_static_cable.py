"""integrator: static on slack structures, with default settings (integrator static, dt and
t_end only), against references computed here with scipy:
- a steel wire (circle r = 5 mm, E = 2e11) hanging between two spherical joints 10 m apart
  and 2 m apart in height, 11.477 m long, starting stress-free as the parabola of that length
  (`sag: parabola`), finds its equilibrium under full gravity: gravity raised with the load
  factor to t = 1 (the default), and in full from the first increment (`solver.static.gravity:
  full`), the same equilibrium. Reference: the extensible elastic rod with the parabola as its
  stress-free curvature (planar Kirchhoff rod: x' = (1 + e) cos th, z' = (1 + e) sin th,
  th' = k0(s) + m / EI, m' = -(1 + e)(V cos th - H sin th), e = (H cos th + V sin th) / EA,
  V = V0 + w s, moment-free pinned ends) by scipy's solve_bvp at 1e-10: every node within
  2e-4 m with 80 elements, the error falling at second order (ratio >= 3.5 per halving);
  its distance to the analytic catenary (its parameter a by brentq) is the rod's own (the
  bending stiffness) to the discretization error; the ends carry the weight;
- a slender cable (A = 1e-3 m^2, I = 1e-10 m^4: EI / (H L^2) = 5e-4) from the same start:
  completes with 40 and 80 elements and converges to its rod reference at second order; its
  load increments adapt (/state/load_increment falls below dt and grows again) while the
  records stay on the grid;
- a straight cable between two spherical joints: its twist about its own axis is free, and the
  run fails at once with a message naming the beam, the node and the remedy; with a revolute
  end instead it completes;
- the 45-degree bend cantilever (decks/beams/bend45.yaml, 64 quadratic elements, defaults):
  completes, the tip at P = 300 and 600 within 0.25 (0.25 % of the radius, the spread of the
  published values) of Simo and Vu-Quoc 1986 (58.84, 22.33, 40.08) and (47.23, 15.79, 53.37)."""
import math

import numpy as np
from scipy.integrate import quad, solve_bvp
from scipy.optimize import brentq

from common import attempt, check, deck, done, run, write_deck

X1, Z1, L = 10.0, 2.0, 11.477
RHO, E, G = 7800.0, 2.0e11, 9.81


def parabola_curvature():
    """the stress-free curvature of the parabola of length L through the ends, by arc length"""
    def arc(d, x):
        return quad(lambda t: math.sqrt(1 + (Z1 / X1 - 4 * d * (X1 - 2 * t) / X1 ** 2) ** 2),
                    0, x, epsabs=1e-13, epsrel=1e-13)[0]
    d = brentq(lambda d: arc(d, X1) - L, 0.0, L, xtol=1e-14)
    xs = np.linspace(0, X1, 4001)
    ss = np.array([arc(d, x) for x in xs])
    zp = Z1 / X1 - 4 * d * (X1 - 2 * xs) / X1 ** 2
    kap = (8 * d / X1 ** 2) / (1 + zp ** 2) ** 1.5
    return lambda s: np.interp(s, ss, kap)


def catenary():
    """the inextensible catenary z = a (cosh((x - c)/a) - cosh(c/a)) of length L"""
    a = brentq(lambda a: 2 * a * math.sinh(X1 / (2 * a)) - math.sqrt(L ** 2 - Z1 ** 2), 0.1, 1e3,
               xtol=1e-15, rtol=1e-15)
    return a, X1 / 2 - a * math.atanh(Z1 / L)


def rod(EA, EI, w, kappa0):
    """the planar extensible rod hanging between the pins (unknowns x, z, th, m over the
    unstretched arc length s; parameters H, V0), from the catenary as the first guess"""
    def f(s, y, p):
        H, V0 = p
        c, sn = np.cos(y[2]), np.sin(y[2])
        V = V0 + w * s
        e = (H * c + V * sn) / EA
        return np.vstack([(1 + e) * c, (1 + e) * sn, kappa0(s) + y[3] / EI,
                          -(1 + e) * (c * V - sn * H)])

    def bc(ya, yb, p):
        return np.array([ya[0], ya[1], ya[3], yb[0] - X1, yb[1] - Z1, yb[3]])
    a, c0 = catenary()
    s = np.linspace(0, L, 2001)
    xg = c0 + a * np.arcsinh(s / a + math.sinh(-c0 / a))
    y0 = np.vstack([xg, a * (np.cosh((xg - c0) / a) - math.cosh(c0 / a)),
                    np.arctan(np.sinh((xg - c0) / a)), 0 * s])
    sol = solve_bvp(f, bc, s, y0, p=[w * a, w * a * math.sinh(-c0 / a)], tol=1e-10,
                    max_nodes=200000)
    check(sol.status == 0, "scipy's solve_bvp converged for the rod reference (EI = %g N m^2): %s"
          % (EI, sol.message))
    return sol


def cable_deck(name, n, A, I, extra=""):
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, -{G}]
beams:
  - name: cable
    from: [0, 0, 0]
    to: [{X1}, 0, {Z1}]
    length: {L}
    sag: parabola
    elements: {n}
    section: {{E: {E}, G: {E / 2.6}, density: {RHO}, A: {A!r}, I2: {I!r}, I3: {I!r}, J: {2 * I!r}}}
joints:
  - {{name: a, type: spherical, bodies: [ground, "cable[0]"], point: [0, 0, 0]}}
  - {{name: b, type: spherical, bodies: [ground, "cable[-1]"], point: [{X1}, 0, {Z1}]}}
solver: {{integrator: static, dt: 0.1, t_end: 1.0{extra}}}
output: {{xdmf: false}}
""")


def node_error(r, sol):
    """the largest distance of a node at t_end from the reference at its arc length (the
    stress-free polygon's, scaled to L: the continuum's parameter)"""
    p = r["beams/cable/position"]
    s = np.concatenate([[0], np.cumsum(np.linalg.norm(np.diff(p[0], axis=0), axis=1))])
    y = sol.sol(s * L / s[-1])
    return np.max(np.hypot(p[-1][:, 0] - y[0], p[-1][:, 2] - y[1])), p


kappa0 = parabola_curvature()
a_cat, c_cat = catenary()

# ---- the steel wire: r = 5 mm ----
R = 0.005
A, I = math.pi * R ** 2, math.pi * R ** 4 / 4
w = RHO * A * G
ref = rod(E * A, E * I, w, kappa0)
errs, last = [], None
for n in (10, 20, 40, 80):
    r = attempt("wire, %d elements, from the parabola (defaults: gravity ramped to t = 1)" % n,
                cable_deck("wire%d.yaml" % n, n, A, I))
    if r is None:
        errs.append(np.inf)
        continue
    e, p = node_error(r, ref)
    errs.append(e)
    last = (r, p)
print("info  wire: node error against the rod reference by elements 10/20/40/80: %s m"
      % ", ".join("%.2e" % e for e in errs))
check(errs[-1] <= 2e-4, "wire, 80 elements: every node within %.2e m of scipy's rod reference "
      "(<= 2e-4)" % errs[-1])
ratios = [errs[i] / errs[i + 1] for i in range(len(errs) - 1)]
check(all(q >= 3.5 for q in ratios), "wire: the error falls at second order with the elements "
      "(ratios %s, each >= 3.5)" % ", ".join("%.2f" % q for q in ratios))
if last is not None:
    r, p = last
    # the catenary: the rod differs from it by its bending stiffness (and stretch); the
    # cable's distance to it is the rod's, to the discretization error
    x = p[-1][:, 0]
    dcat = np.max(np.abs(p[-1][:, 2] - a_cat * (np.cosh((x - c_cat) / a_cat)
                                                 - math.cosh(c_cat / a_cat))))
    xs = np.linspace(0, X1, 2001)
    yr = ref.sol(np.linspace(0, L, 20001))
    zr = np.interp(xs, yr[0], yr[1])
    drod = np.max(np.abs(zr - a_cat * (np.cosh((xs - c_cat) / a_cat) - math.cosh(c_cat / a_cat))))
    check(abs(dcat - drod) <= 2 * errs[-1] + 1e-4,
          "wire, 80 elements: within %.4f m of the analytic catenary (a = %.6f m), as the rod "
          "reference (%.4f m: its bending stiffness EI = %.1f N m^2)" % (dcat, a_cat, drod, E * I))
    fz = r["joints/reaction"][-1][:, 2]
    chords = np.sum(np.linalg.norm(np.diff(p[0], axis=0), axis=1))
    weight = w * chords
    check(abs(np.sum(fz) - weight) <= 1e-9 * weight,
          "wire, 80 elements: the ends carry the weight %.9f N (%.9f N)" % (weight, np.sum(fz)))
    # in full from the first increment: the same equilibrium
    rf = attempt("wire, 80 elements, gravity in full from the first increment",
                 cable_deck("wirefull.yaml", 80, A, I, ", static: {gravity: full}"))
    if rf is not None:
        dif = np.max(np.abs(rf["beams/cable/position"][-1] - p[-1]))
        check(dif <= 1e-8, "wire, 80 elements: gravity in full from the first increment finds the "
              "same equilibrium as the ramp (%.1e m)" % dif)

# ---- a slender cable: EI / (H L^2) = 5e-4 ----
A2, I2 = 1.0e-3, 1.0e-10
ref2 = rod(E * A2, E * I2, RHO * A2 * G, kappa0)
errs2 = []
for n in (40, 80):
    r = attempt("slender cable (I = 1e-10), %d elements, from the parabola" % n,
                cable_deck("slender%d.yaml" % n, n, A2, I2))
    errs2.append(node_error(r, ref2)[0] if r is not None else np.inf)
    if r is not None and n == 40:
        # the load increments adapt: halved where Newton failed or converged slowly, then
        # doubled again after easy increments, the records on the grid of dt = 0.1
        inc = r["state/load_increment"].ravel()[1:]
        k = int(np.argmin(inc))
        check(inc[k] < 0.1 and np.max(inc[k:]) >= 2 * inc[k]
              and np.allclose(r["time"], np.arange(11) * 0.1, rtol=0, atol=1e-12),
              "slender cable, 40 elements: load increments %s (adapting: down to %g, then up "
              "again), the records on the grid" % (" ".join("%g" % x for x in inc), inc[k]))
check(errs2[1] <= 6e-4 and errs2[0] / errs2[1] >= 3.5,
      "slender cable: node errors %.2e, %.2e m against its rod reference with 40, 80 elements "
      "(second order: ratio %.2f)" % (errs2[0], errs2[1], errs2[0] / errs2[1]))

# ---- a free twist: a straight cable between two spherical joints ----
straight = """mbsim: 1
gravity: [0, 0, -9.81]
beams:
  - name: rope
    from: [0, 0, 0]
    to: [10.0, 0, 0]
    elements: 10
    section: {E: 2.0e11, nu: 0.3, density: 7800.0, circle: 0.005}
joints:
  - {name: a, type: %s, bodies: [ground, "rope[0]"], point: [0, 0, 0]%s}
  - {name: b, type: spherical, bodies: [ground, "rope[-1]"], point: [10, 0, 0]}
solver: {integrator: static, dt: 0.1, t_end: 1.0}
"""
rc, _, err, _ = run(write_deck("twist.yaml", straight % ("spherical", "")), check=False)
check(rc == 2 and "the rotation of beam 'rope' about its own axis, a twist, at its node 'rope["
      in err and "revolute, universal or fixed joint at one end" in err
      and "singular at the start" in err,
      "a straight cable between two spherical joints: exit %d, the free twist named: %s"
      % (rc, err.strip()[:420]))
attempt("the same cable with a revolute end (its axis across the cable)",
        write_deck("notwist.yaml", straight % ("revolute", ", axis: [0, 1, 0]")))

# ---- the 45-degree bend (Bathe and Bolourchi 1979; Simo and Vu-Quoc 1986) ----
r = attempt("bend45.yaml (64 quadratic elements, defaults)", deck("beams/bend45.yaml"))
if r is not None:
    t, tip = r["time"], r["beams/bend/position"][:, -1, :]
    for P, want in ((300.0, (58.84, 22.33, 40.08)), (600.0, (47.23, 15.79, 53.37))):
        i = int(np.argmin(np.abs(t - P / 600.0)))
        d = np.max(np.abs(tip[i] - want))
        check(abs(t[i] - P / 600.0) < 1e-12 and d <= 0.25,
              "bend45: the tip at P = %g (%.3f, %.3f, %.3f), Simo and Vu-Quoc (%.2f, %.2f, %.2f): "
              "%.3f (<= 0.25)" % (P, *tip[i], *want, d))
done()

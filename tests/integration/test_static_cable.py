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
- a slack rope (A = 7.85e-5 m^2, I = 1e-12 m^4: EA L^2 / EI = 1e10), whose tension once buckled
  the elements (beam.c) at 4.7 % of the load: from the parabola with 20, 40 and 80 elements
  against its rod reference (solve_bvp at 1e-8), second order, within 5e-5 m with 80; against
  Irvine's elastic catenary (the closed form of a perfectly flexible extensible cable, H and
  V0 by fsolve) within the discretization error plus the rod's own distance to it (its
  bending boundary layers); the horizontal pull against Irvine's H and the rod's (1e-4); from
  the catenary (against the rod stress-free on the catenary) and from the straight chord (a
  taut rope, a revolute end holding its twist: Irvine's catenary of the chord's length, to
  1e-3 of its sag);
- the wire and the rope, 20 elements, their far end on a slider raised 1 m by a prismatic
  joint's motion after gravity (the audit stalled there at a residual of 1.9e-9): complete
  with defaults, each equilibrium (t = 1, 2) within 1e-3 m of the rod reference;
- a straight cable between two spherical joints: its twist about its own axis is free, and the
  run fails at once with a message naming the beam, the node and the remedy; with a revolute
  end instead it completes;
- the 45-degree bend cantilever (decks/beams/bend45.yaml, 64 quadratic elements, defaults):
  completes, the tip at P = 300 and 600 within 0.25 (0.25 % of the radius, the spread of the
  published values) of Simo and Vu-Quoc 1986 (58.84, 22.33, 40.08) and (47.23, 15.79, 53.37)."""
import math

import numpy as np
from scipy.integrate import quad, solve_bvp
from scipy.optimize import brentq, fsolve

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


def catenary(z1=Z1):
    """the inextensible catenary z = a (cosh((x - c)/a) - cosh(c/a)) of length L"""
    a = brentq(lambda a: 2 * a * math.sinh(X1 / (2 * a)) - math.sqrt(L ** 2 - z1 ** 2), 0.1, 1e3,
               xtol=1e-15, rtol=1e-15)
    return a, X1 / 2 - a * math.atanh(z1 / L)


def rod(EA, EI, w, kappa0, z1=Z1, tol=1e-10):
    """the planar extensible rod hanging between the pins (0, 0) and (X1, z1) (unknowns x, z,
    th, m over the unstretched arc length s; parameters H, V0), from the catenary as the
    first guess"""
    def f(s, y, p):
        H, V0 = p
        c, sn = np.cos(y[2]), np.sin(y[2])
        V = V0 + w * s
        e = (H * c + V * sn) / EA
        return np.vstack([(1 + e) * c, (1 + e) * sn, kappa0(s) + y[3] / EI,
                          -(1 + e) * (c * V - sn * H)])

    def bc(ya, yb, p):
        return np.array([ya[0], ya[1], ya[3], yb[0] - X1, yb[1] - z1, yb[3]])
    a, c0 = catenary(z1)
    s = np.linspace(0, L, 2001)
    xg = c0 + a * np.arcsinh(s / a + math.sinh(-c0 / a))
    y0 = np.vstack([xg, a * (np.cosh((xg - c0) / a) - math.cosh(c0 / a)),
                    np.arctan(np.sinh((xg - c0) / a)), 0 * s])
    sol = solve_bvp(f, bc, s, y0, p=[w * a, w * a * math.sinh(-c0 / a)], tol=tol,
                    max_nodes=200000)
    check(sol.status == 0, "scipy's solve_bvp converged for the rod reference (EI = %g N m^2): %s"
          % (EI, sol.message))
    return sol


def cable_deck(name, n, A, I, extra="", start="parabola", end_a="spherical"):
    """the cable from (0, 0, 0) to (X1, 0, Z1) between spherical joints (or joint end_a at
    (0, 0, 0)), its stress-free start the parabola or the catenary of length L (start), or
    the straight chord (None)"""
    shape = f"length: {L}\n    sag: {start}\n    " if start else ""
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, -{G}]
beams:
  - name: cable
    from: [0, 0, 0]
    to: [{X1}, 0, {Z1}]
    {shape}elements: {n}
    section: {{E: {E}, G: {E / 2.6}, density: {RHO}, A: {A!r}, I2: {I!r}, I3: {I!r}, J: {2 * I!r}}}
joints:
  - {{name: a, type: {end_a}, bodies: [ground, "cable[0]"], point: [0, 0, 0]}}
  - {{name: b, type: spherical, bodies: [ground, "cable[-1]"], point: [{X1}, 0, {Z1}]}}
solver: {{integrator: static, dt: 0.1, t_end: 1.0{extra}}}
output: {{xdmf: false}}
""")


def node_error(r, ref, k=-1, l0=L):
    """the largest distance of a node at record k (t_end) from the reference ref(s) (x, z at
    the unstretched arc length s) at its arc length (the stress-free polygon's, scaled to
    l0: the continuum's parameter)"""
    p = r["beams/cable/position"]
    s = np.concatenate([[0], np.cumsum(np.linalg.norm(np.diff(p[0], axis=0), axis=1))])
    y = ref(s * l0 / s[-1])
    return np.max(np.hypot(p[k][:, 0] - y[0], p[k][:, 2] - y[1])), p


def irvine(EA, w, l0, z1=Z1):
    """Irvine's elastic catenary (Irvine 1981, Cable Structures, sec. 2.2): a perfectly
    flexible cable of unstretched length l0 and weight w per unstretched length between
    (0, 0) and (X1, z1), at the unstretched arc length s
        x(s) = H s / EA + H / w (asinh((V0 + w s) / H) - asinh(V0 / H)),
        z(s) = (w s^2 / 2 + V0 s) / EA + H / w (sqrt(1 + ((V0 + w s) / H)^2)
                                                - sqrt(1 + (V0 / H)^2)),
    H the horizontal tension and V0 the vertical one at (0, 0), from the far end's position
    by scipy's fsolve. Returns H, V0 and the function s -> (x, z)"""
    def xz(s, H, V0):
        T = V0 + w * s
        return (H * s / EA + H / w * (np.arcsinh(T / H) - np.arcsinh(V0 / H)),
                (0.5 * w * s * s + V0 * s) / EA
                + H / w * (np.sqrt(1 + (T / H) ** 2) - np.sqrt(1 + (V0 / H) ** 2)))
    a, c0 = catenary(z1) if l0 > math.hypot(X1, z1) * (1 + 1e-6) else (1e3, X1 / 2)
    p, info, ier, msg = fsolve(lambda p: np.array(xz(l0, p[0], p[1])) - [X1, z1],
                               [w * a, w * a * math.sinh(-c0 / a)], xtol=1e-13,
                               full_output=True)
    miss = np.max(np.abs(np.array(xz(l0, *p)) - [X1, z1]))
    check(miss <= 1e-9, "Irvine's elastic catenary (l0 = %.4f m) solved: its end within %.1e m"
          % (l0, miss))
    return p[0], p[1], lambda s: xz(s, p[0], p[1])


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
    e, p = node_error(r, ref.sol)
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
    errs2.append(node_error(r, ref2.sol)[0] if r is not None else np.inf)
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

# ---- a slack rope: I = 1e-12 (EA L^2 / EI = 1e10), the audit's cable ----
# Its tension (55 N at the top) once buckled the elements in a zigzag of their nodal
# directors (beam.c: above 4 EI / h^2, 2.4 N with 20 elements, at 4.7 % of the weight);
# with the axial strain's length correction it follows the rod to the end. The rod with
# EI = 0.2 N m^2 is nearly Irvine's elastic catenary (9e-5 m apart: its bending boundary
# layers, sqrt(EI / T) = 6 cm at the pins)
A3, I3 = 7.85e-5, 1.0e-12
w3 = RHO * A3 * G
ref3 = rod(E * A3, E * I3, w3, kappa0, tol=1e-8)
H3, V03, irv3 = irvine(E * A3, w3, L)
ss = np.linspace(0, L, 4001)
yr = ref3.sol(ss)
d_ri = np.max(np.hypot(*(np.array(irv3(ss)) - yr[:2])))
errs3, erri3 = [], []
for n in (20, 40, 80):
    r = attempt("rope (I = 1e-12), %d elements, from the parabola (defaults)" % n,
                cable_deck("rope%d.yaml" % n, n, A3, I3))
    if r is None:
        errs3.append(np.inf)
        erri3.append(np.inf)
        continue
    errs3.append(node_error(r, ref3.sol)[0])
    erri3.append(node_error(r, irv3)[0])
    if n == 80:
        fx = r["joints/reaction"][-1][:, 0]
        check(abs(abs(fx[0]) - H3) <= 1e-4 * H3 and abs(ref3.p[0] - H3) <= 1e-4 * H3,
              "rope, 80 elements: the horizontal pull %.5f N, Irvine's H = %.5f N, the rod's "
              "%.5f N (1e-4)" % (abs(fx[0]), H3, ref3.p[0]))
print("info  rope: node errors against the rod reference (20/40/80 elements) %s m, against "
      "Irvine's elastic catenary %s m; rod to Irvine %.1e m"
      % (", ".join("%.2e" % e for e in errs3), ", ".join("%.2e" % e for e in erri3), d_ri))
check(errs3[2] <= 5e-5 and errs3[0] / errs3[1] >= 3.5 and errs3[1] / errs3[2] >= 3.5,
      "rope: node errors %.2e, %.2e, %.2e m against its rod reference with 20, 40, 80 "
      "elements (second order: ratios %.2f, %.2f)"
      % (*errs3, errs3[0] / errs3[1], errs3[1] / errs3[2]))
check(all(ei <= er + d_ri * 1.01 for ei, er in zip(erri3, errs3)),
      "rope: against Irvine's elastic catenary %s m, within the discretization error plus "
      "the rod's own distance to it (%.1e m)" % (", ".join("%.2e" % e for e in erri3), d_ri))
# from the catenary and from the straight chord (a taut rope stretched by its weight: the
# elastic catenary of the chord's length; a revolute end across the plane holds the straight
# rope's twist, which nothing else resists)
r = attempt("rope, 80 elements, from the catenary (defaults)",
            cable_deck("ropecat.yaml", 80, A3, I3, start="catenary"))
if r is not None:
    # the rod stress-free on the catenary: curvature a / (a^2 + u^2), u the arc length from
    # the lowest point
    u0 = a_cat * math.sinh(-c_cat / a_cat)
    refc = rod(E * A3, E * I3, w3, lambda s: a_cat / (a_cat ** 2 + (u0 + s) ** 2), tol=1e-8)
    e = node_error(r, refc.sol)[0]
    check(e <= 1.5 * errs3[2], "rope from the catenary, 80 elements: every node within %.2e m "
          "of its rod reference (from the parabola: %.2e m)" % (e, errs3[2]))
chord = math.hypot(X1, Z1)
_, _, irvc = irvine(E * A3, w3, chord)
r = attempt("rope, 20 elements, from the straight chord (defaults)",
            cable_deck("ropechord.yaml", 20, A3, I3, start=None,
                       end_a="revolute, axis: [0, 1, 0]"))
if r is not None:
    e, p = node_error(r, irvc, l0=chord)
    sag = np.max(np.abs(p[-1][:, 2] - Z1 / X1 * p[-1][:, 0]))
    check(e <= 1e-3 * sag, "rope from the straight chord, 20 elements: sags %.4f m, every node "
          "within %.1e m of Irvine's elastic catenary of the chord's length" % (sag, e))

# ---- raising one end by a motion (the audit stalled at a residual of 1.9e-9) ----
# a slider on a vertical prismatic joint carries the far end: gravity to t = 1, then the
# slider raised by 1 m to t = 2; each equilibrium against the rod between the pins then
raise_deck = """mbsim: 1
gravity: [0, 0, -%g]
bodies:
  - {name: slider, mass: 1.0, inertia: [0.01, 0.01, 0.01], position: [%g, 0, %g]}
beams:
  - name: cable
    from: [0, 0, 0]
    to: [%g, 0, %g]
    length: %g
    sag: parabola
    elements: 20
    section: {E: %g, G: %g, density: %g, A: %r, I2: %r, I3: %r, J: %r}
joints:
  - {name: a, type: spherical, bodies: [ground, "cable[0]"], point: [0, 0, 0]}
  - {name: rail, type: prismatic, bodies: [ground, slider], point: [%g, 0, %g], axis: [0, 0, 1],
     motion: {value: 1.0, profile: {ramp: [1, 2]}}}
  - {name: b, type: spherical, bodies: [slider, "cable[-1]"], point: [%g, 0, %g]}
solver: {integrator: static, dt: 0.1, t_end: 2.0}
output: {xdmf: false}
"""
for what, Ar, Ir, refs in (("wire", A, I, (ref, rod(E * A, E * I, w, kappa0, Z1 + 1.0))),
                           ("rope", A3, I3, (ref3, rod(E * A3, E * I3, w3, kappa0, Z1 + 1.0,
                                                       tol=1e-8)))):
    r = attempt("%s, 20 elements, its far end raised by 1 m after gravity (defaults)" % what,
                write_deck("raise_%s.yaml" % what, raise_deck % (
                    G, X1, Z1, X1, Z1, L, E, E / 2.6, RHO, Ar, Ir, Ir, 2 * Ir, X1, Z1, X1, Z1)))
    if r is not None:
        t = r["time"]
        k1 = int(np.argmin(np.abs(t - 1.0)))
        e1, e2 = node_error(r, refs[0].sol, k1)[0], node_error(r, refs[1].sol)[0]
        check(abs(t[-1] - 2.0) < 1e-12 and max(e1, e2) <= 1e-3,
              "%s raised, 20 elements: every node within %.1e m (t = 1) and %.1e m (t = 2, "
              "the end 1 m higher) of the rod reference (1e-3)" % (what, e1, e2))

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

"""slide_on_beam's `param: absolute` in space (two rows D_a(s*) . (P - r(s*)), a = 2, 3, with
the beam's directors at the foot point s*; orient's three rows at s*) against `param:
relative` and closed forms we did not write, under em:
  - a bead on a stiff straight rod inclined out of every coordinate plane (4 quadratic
    elements clamped at both ends): s(t) = s0 + (g . u) t^2 / 2 in both forms, energy
    conserved, constraint drift below 1e-12 m, the two trajectories equal to the Newton
    tolerance;
  - a bead on a circular arc (8 quadratic elements) in a plane tilted out of every
    coordinate plane, gravity in it, swinging 25 degrees: the period against
    4 sqrt(R/g) K(sin(theta0/2)); with `orient: true` (the body turning with the arc) against
    the physical pendulum's 4 sqrt((m R^2 + J)/(m g R)) K(...); both forms, energy, drift,
    the two trajectories equal;
  - a bead around a free flexible ring in space past its closure: energy and drift in both,
    the two trajectories within the two discrete gradients' O(dt^2) difference."""
import numpy as np
from scipy.special import ellipk

from common import balance, bead_ring_deck, check, crossings, done, load, run, write_deck

G = 9.81


def guide_s(r):
    names = [x.decode() for x in r["joints/names"]]
    return r["joints/coordinates"][:, names.index("guide"), 0]


def drift_energy(r, what):
    dE, scale = balance(r)
    viol = np.max(r["constraints/violation"])
    check(dE < 1e-10 * scale and viol < 1e-12, "%s: energy balance %.1e of %.3g J, constraint "
          "drift %.1e m" % (what, dE, scale, viol))


def vec(v):
    return "[%.17g, %.17g, %.17g]" % tuple(v)


# ---- a straight rod out of every coordinate plane ----
d = np.array([2.0, -1.0, -1.5])
u = d / np.linalg.norm(d)
A, B = -0.05 * d, 0.7 * d
INCLINE = """mbsim: 1
title: bead on a rod in space
gravity: [0, 0, -9.81]
bodies:
  - {name: bead, mass: 0.01, inertia: [1.0e-6, 1.0e-6, 1.0e-6], position: [0, 0, 0]}
beams:
  - name: rod
    from: %(A)s
    to: %(B)s
    elements: 4
    order: 2
    up: [0, 0, 1]
    section: {E: 2.1e13, nu: 0.3, density: 100.0, circle: 0.02}
joints:
  - {name: a, type: fixed, bodies: [ground, "rod[0]"], point: %(A)s}
  - {name: b, type: fixed, bodies: [ground, "rod[-1]"], point: %(B)s}
  - {name: guide, type: slide_on_beam, bodies: [bead, rod], point: [0, 0, 0], param: %%s}
solver: {integrator: em, dt: 2.0e-3, t_end: 0.6}
output: {every: 1, xdmf: false}
""" % {"A": vec(A), "B": vec(B)}

acc = G * 1.5 / np.linalg.norm(d)  # g . u
res = {}
for param in ("relative", "absolute"):
    r = res[param] = load(run(write_deck("incline_%s.yaml" % param, INCLINE % param))[3])
    t, s = r["time"], guide_s(r)
    err = np.max(np.abs(s - (0.05 * np.linalg.norm(d) + 0.5 * acc * t ** 2)))
    check(err < 1e-6, "incline, %s: s(t) = s0 + (g . u) t^2/2 to %.1e m over %.3f m"
          % (param, err, s[-1] - s[0]))
    drift_energy(r, "incline, %s" % param)
check(not any(x.endswith("guide.s") for x in res["absolute"]["q_names"]),
      "absolute: no coordinate s among the unknowns")
dx = np.max(np.abs(res["absolute"]["bodies/position"] - res["relative"]["bodies/position"]))
check(dx < 1e-8, "incline: the two parametrizations' bead positions agree to %.1e m" % dx)


# ---- a circular arc in a tilted plane ----
def rotation(axis, angle):
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


ROT = rotation([1, 2, 3], 0.7)
R, TH0, M, J = 0.5, np.radians(25.0), 0.1, 0.005
ang = np.radians(np.linspace(-50.0, 50.0, 17))
pts = [ROT @ [R * np.sin(a), R - R * np.cos(a), 0.0] for a in ang]
ARC = """mbsim: 1
title: bead on a circle in a tilted plane
gravity: %(g)s
bodies:
  - {name: bead, mass: %(m)g, inertia: [%(J)g, %(J)g, %(J)g], position: %(p)s}
beams:
  - name: arc
    nodes: [%(nodes)s]
    order: 2
    up: %(up)s
    section: {E: 2.1e13, nu: 0.3, density: 100.0, circle: 0.02}
joints:
  - {name: a, type: fixed, bodies: [ground, "arc[0]"], point: %(n0)s}
  - {name: b, type: fixed, bodies: [ground, "arc[-1]"], point: %(n1)s}
  - {name: guide, type: slide_on_beam, bodies: [bead, arc], point: [0, 0, 0], param: %%s%%s}
solver: {integrator: em, dt: 5.0e-3, t_end: 1.4}
output: {every: 1, xdmf: false}
""" % {"g": vec(-G * ROT[:, 1]), "m": M, "J": J,
       "p": vec(ROT @ [R * np.sin(TH0), R - R * np.cos(TH0), 0.0]),
       "nodes": ", ".join(vec(p) for p in pts), "up": vec(ROT[:, 2]), "n0": vec(pts[0]),
       "n1": vec(pts[-1])}

K = ellipk(np.sin(TH0 / 2.0) ** 2)
for orient, T_ref in (("", 4.0 * np.sqrt(R / G) * K),
                      (", orient: true", 4.0 * np.sqrt((M * R * R + J) / (M * G * R)) * K)):
    for param in ("relative", "absolute"):
        what = "arc%s, %s" % (" with orient" if orient else "", param)
        r = res[param] = load(run(write_deck("arc.yaml", ARC % (param, orient)))[3])
        x = r["bodies/position"][:, 0, :] @ ROT[:, 0]  # along the plane's local x
        tc = crossings(r["time"], x)
        T = 2.0 * (tc[1] - tc[0])
        check(abs(T - T_ref) < 1e-3 * T_ref, "%s: period %.5f s against the closed form %.5f s "
              "(%.1e)" % (what, T, T_ref, abs(T - T_ref) / T_ref))
        off = np.max(np.abs(r["bodies/position"][:, 0, :] @ ROT[:, 2]))
        check(off < 1e-9, "%s: the bead stays in the tilted plane (%.1e m)" % (what, off))
        drift_energy(r, what)
    dx = np.max(np.abs(res["absolute"]["bodies/position"] - res["relative"]["bodies/position"]))
    ds = np.max(np.abs(guide_s(res["absolute"]) - guide_s(res["relative"])))
    check(dx < 1e-8 and ds < 1e-8, "arc%s: the two parametrizations agree to %.1e m "
          "(positions), %.1e m (s and the foot point)" % (" with orient" if orient else "", dx, ds))
    if orient:
        dR = np.max(np.abs(res["absolute"]["bodies/orientation"]
                           - res["relative"]["bodies/orientation"]))
        check(dR < 1e-8, "arc with orient: the two parametrizations' orientations agree to %.1e"
              % dR)

# ---- a bead around a free flexible ring in space, past its closure ----
RING = bead_ring_deck(13, 0.1, planar=False, extra=", param: %s")[0]
for param in ("relative", "absolute"):
    r = res[param] = load(run(write_deck("ring_%s.yaml" % param, RING % param))[3])
    drift_energy(r, "ring, %s" % param)
s_rel = guide_s(res["relative"])
dx = np.max(np.abs(res["absolute"]["bodies/position"] - res["relative"]["bodies/position"]))
check(s_rel[-1] > s_rel[0] + 0.25 and dx < 1e-4, "ring: past the closure (s from %.3f to %.3f m) "
      "the two parametrizations agree to %.1e m (the schemes' own difference)"
      % (s_rel[0], s_rel[-1], dx))
done()

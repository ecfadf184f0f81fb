"""slide_on_beam's two parametrizations (Zander 2008 sec. 4.1.2 and 6.5): `param: relative`
(the material coordinate s a coordinate of the joint) and `param: absolute` (no s: the body's
point held on the centre line by its normal distance, the foot point found by projection),
in a plane, under em, against closed forms we did not write:
  - a bead on an inclined rod (a stiff beam of 4 quadratic elements clamped at both ends):
    s(t) = s0 + g sin(a) t^2 / 2 in both, the two trajectories equal to the Newton
    tolerance, the constraint drift of each below 1e-10 m, energy conserved;
  - a bead on a circular arc (8 quadratic elements through points of a circle of radius R)
    swinging 25 degrees: its period against 4 sqrt(R/g) K(sin(theta0/2)) in both, the two
    trajectories equal, each one's drift, energy conserved;
  - a bead running around a free flexible ring past its closure: energy conserved in both,
    the two trajectories within the schemes' O(dt^2) difference;
  - bad decks: an unknown parametrization, `param` on another joint type: each refused at the
    file, line and column (the absolute form in space: test_slide_absolute_space.py)."""
import numpy as np
from scipy.special import ellipk

from common import balance, bead_ring_deck, check, crossings, done, load, run, write_deck

G = 9.81
INCLINE = """mbsim: 1
title: bead on an inclined rod
planar: {normal: [0, 0, 1]}
gravity: [0, -9.81, 0]
bodies:
  - {name: bead, mass: 0.01, inertia: [1.0e-6, 1.0e-6, 1.0e-6], position: [0, 0, 0]}
beams:
  - name: rod
    from: [-0.1, 0.05, 0]
    to: [1.9, -0.95, 0]
    elements: 4
    order: 2
    up: [0, 0, 1]
    section: {E: 2.1e13, nu: 0.3, density: 100.0, circle: 0.02}
joints:
  - {name: a, type: fixed, bodies: [ground, "rod[0]"], point: [-0.1, 0.05, 0]}
  - {name: b, type: fixed, bodies: [ground, "rod[-1]"], point: [1.9, -0.95, 0]}
  - {name: guide, type: slide_on_beam, bodies: [bead, rod], point: [0, 0, 0], param: %s}
solver: {integrator: em, dt: 2.0e-3, t_end: 0.8}
output: {every: 1, xdmf: false}
"""


def guide_s(r):
    names = [x.decode() for x in r["joints/names"]]
    return r["joints/coordinates"][:, names.index("guide"), 0]


sin_a = 1.0 / np.sqrt(5.0)
res = {}
for param in ("relative", "absolute"):
    r = res[param] = load(run(write_deck("incline_%s.yaml" % param, INCLINE % param))[3])
    t, s = r["time"], guide_s(r)
    err = np.max(np.abs(s - (0.05 * np.sqrt(5.0) + 0.5 * G * sin_a * t ** 2)))
    check(err < 1e-6, "incline, %s: s(t) = s0 + g sin(a) t^2/2 to %.1e m over %.3f m"
          % (param, err, s[-1] - s[0]))
    dE, scale = balance(r)
    viol = np.max(r["constraints/violation"])
    check(dE < 1e-9 * scale and viol < 1e-10, "incline, %s: energy balance %.1e of %.3g J, "
          "constraint drift %.1e" % (param, dE, scale, viol))
check(not any(x.endswith("guide.s") for x in res["absolute"]["q_names"]),
      "absolute: no coordinate s among the unknowns")
dx = np.max(np.abs(res["absolute"]["bodies/position"] - res["relative"]["bodies/position"]))
check(dx < 1e-8, "incline: the two parametrizations' bead positions agree to %.1e m" % dx)

# ---- circular arc: a pendulum ----
R, TH0 = 0.5, np.radians(25.0)
ang = np.radians(np.linspace(-50.0, 50.0, 17))
nodes = ", ".join("[%.17g, %.17g, 0]" % (R * np.sin(a), R - R * np.cos(a)) for a in ang)
ARC = """mbsim: 1
title: bead on a circle
planar: {normal: [0, 0, 1]}
gravity: [0, -9.81, 0]
bodies:
  - {name: bead, mass: 0.1, inertia: [1.0e-6, 1.0e-6, 1.0e-6], position: [%(px).17g, %(py).17g, 0]}
beams:
  - name: arc
    nodes: [%(nodes)s]
    order: 2
    up: [0, 0, 1]
    section: {E: 2.1e13, nu: 0.3, density: 100.0, circle: 0.02}
joints:
  - {name: a, type: fixed, bodies: [ground, "arc[0]"], point: %(n0)s}
  - {name: b, type: fixed, bodies: [ground, "arc[-1]"], point: %(n1)s}
  - {name: guide, type: slide_on_beam, bodies: [bead, arc], point: [0, 0, 0], param: %%s}
solver: {integrator: em, dt: 5.0e-3, t_end: 1.4}
output: {every: 1, xdmf: false}
""" % {"px": R * np.sin(TH0), "py": R - R * np.cos(TH0), "nodes": nodes,
       "n0": "[%.17g, %.17g, 0]" % (R * np.sin(ang[0]), R - R * np.cos(ang[0])),
       "n1": "[%.17g, %.17g, 0]" % (R * np.sin(ang[-1]), R - R * np.cos(ang[-1]))}


T_ref = 4.0 * np.sqrt(R / G) * ellipk(np.sin(TH0 / 2.0) ** 2)
for param in ("relative", "absolute"):
    r = res[param] = load(run(write_deck("arc_%s.yaml" % param, ARC % param))[3])
    tc = crossings(r["time"], r["bodies/position"][:, 0, 0])
    T = 2.0 * (tc[1] - tc[0])
    check(abs(T - T_ref) < 1e-3 * T_ref, "arc, %s: period %.5f s against 4 sqrt(R/g) K = %.5f s "
          "(%.1e)" % (param, T, T_ref, abs(T - T_ref) / T_ref))
    dE, scale = balance(r)
    viol = np.max(r["constraints/violation"])
    check(dE < 1e-9 * scale and viol < 1e-10, "arc, %s: energy balance %.1e of %.3g J, "
          "constraint drift %.1e" % (param, dE, scale, viol))
dx = np.max(np.abs(res["absolute"]["bodies/position"] - res["relative"]["bodies/position"]))
ds = np.max(np.abs(guide_s(res["absolute"]) - guide_s(res["relative"])))
check(dx < 1e-8 and ds < 1e-8, "arc: the two parametrizations agree to %.1e m (positions), "
      "%.1e m (s and the foot point)" % (dx, ds))

# ---- a bead around a free flexible ring, past its closure ----
# from a mid node 3/16 of the way before the closure, in the plane for both forms
RING = bead_ring_deck(13, 0.1, planar=True, extra=", param: %s")[0]
for param in ("relative", "absolute"):
    r = res[param] = load(run(write_deck("ring_%s.yaml" % param, RING % param))[3])
    dE, scale = balance(r)
    viol = np.max(r["constraints/violation"])
    check(dE < 1e-9 * scale and viol < 1e-10, "ring, %s: energy balance %.1e of %.3g J, "
          "constraint drift %.1e" % (param, dE, scale, viol))
s_rel = guide_s(res["relative"])
dx = np.max(np.abs(res["absolute"]["bodies/position"] - res["relative"]["bodies/position"]))
# the ring moves: the two forms' discrete gradients differ (each exact), so do their steps,
# by O(dt^2) (5.4e-5, 3.3e-5, 6.0e-6 m at dt = 1e-3, 5e-4, 2.5e-4 s)
check(s_rel[-1] > s_rel[0] + 0.25 and dx < 1e-4, "ring: past the closure (s from %.3f to %.3f m) "
      "the two parametrizations agree to %.1e m (the schemes' own difference)"
      % (s_rel[0], s_rel[-1], dx))

# ---- bad decks ----
BAD = INCLINE % "absolute"
cases = [
    ("param: absolute", "param: absolut", "parametrization 'absolut' is not supported"),
    ("point: [-0.1, 0.05, 0]}\n  - {name: b", "point: [-0.1, 0.05, 0], param: relative}\n  - {name: b",
     "takes no 'param'"),
]
for old, new, want in cases:
    assert old in BAD, old
    path = write_deck("bad.yaml", BAD.replace(old, new, 1))
    rc, _, err, _ = run(path, check=False)
    first = err.strip().splitlines()[0] if err.strip() else ""
    check(rc == 1 and want in err and (path + ":") in first,
          "refused with a position: %s" % first[first.find(path) + len(path):][:150])
done()

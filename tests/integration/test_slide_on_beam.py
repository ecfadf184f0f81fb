"""slide_on_beam joints (a rigid body's point slides along a beam's centre line, its material
coordinate s a coordinate of the joint; Zander 2008 sec. 4.1.2), against closed forms and
conservation laws:
  - a bead on an inclined rod (a stiff beam clamped at both ends, 8 linear elements, and 4
    quadratic ones) slides down as s(t) = s0 + g sin(a) t^2 / 2, passing element boundaries
    as on a rigid rod; the mean normal reaction is m g cos(a);
  - a bead on a circular arc (a stiff clamped beam of quadratic elements through points of a
    circle of radius R) swings as a pendulum of amplitude 25 degrees: its period against
    4 sqrt(R/g) K(sin(theta0/2)); with `orient: true` the body turns with the arc's directors,
    and its moment of inertia J enters as in a physical pendulum, 4 sqrt((m R^2 + J) / (m g
    R)) K(...), the body's angle equal to the bead's angle on the circle;
  - a bead on a free flexible ring (the last node at the first, closed by a fixed joint)
    runs around it past the closure: s continuous beyond the circumference, energy (em) to
    round-off, linear momentum constant, the point on the centre line;
  - a point that slides beyond the elements its `reach` covers: the step fails naming the
    joint and the remedy;
  - bad decks: each refused at the file, line and column of the value."""
import numpy as np
from scipy.special import ellipk

from common import balance, bead_ring_deck, check, crossings, done, load, run, write_deck

G = 9.81

# ---- inclined rod ----
INCLINE = """mbsim: 1
title: bead on an inclined rod
gravity: [0, 0, -9.81]
bodies:
  - {name: bead, mass: 0.01, inertia: [1.0e-6, 1.0e-6, 1.0e-6], position: [0, 0, 0]}
beams:
  - name: rod
    from: [-0.1, 0, 0.05]
    to: [1.9, 0, -0.95]
    elements: %(n)d
    order: %(order)d
    up: [0, 1, 0]
    section: {E: 2.1e13, nu: 0.3, density: 100.0, circle: 0.02}
joints:
  - {name: a, type: fixed, bodies: [ground, "rod[0]"], point: [-0.1, 0, 0.05]}
  - {name: b, type: fixed, bodies: [ground, "rod[-1]"], point: [1.9, 0, -0.95]}
  - {name: guide, type: slide_on_beam, bodies: [bead, rod], point: [0, 0, 0]}
solver: {integrator: em, dt: 2.0e-3, t_end: 0.8}
output: {every: 1, xdmf: false}
"""
sin_a = 1.0 / np.sqrt(5.0)
for n, order in ((8, 1), (4, 2)):
    r = load(run(write_deck("incline%d.yaml" % order, INCLINE % {"n": n, "order": order}))[3])
    t = r["time"]
    names = [x.decode() for x in r["joints/names"]]
    j = names.index("guide")
    s = r["joints/coordinates"][:, j, 0]
    s_ref = 0.05 * np.sqrt(5.0) + 0.5 * G * sin_a * t ** 2
    L_el = 2.0 * np.sqrt(5.0) / n
    crossed = int(s[-1] // L_el) - int(s[0] // L_el)
    err = np.max(np.abs(s - s_ref))
    check(crossed >= (2 if order == 1 else 1) and err < 1e-6,
          "order %d: s(t) = s0 + g sin(a) t^2/2 across %d element boundaries (max error %.2e m "
          "of %.3f m)" % (order, crossed, err, s[-1] - s[0]))
    nrm = np.array([1.0, 0.0, 2.0]) / np.sqrt(5.0)
    rn = r["joints/reaction"][1:, j, :3] @ nrm
    want = 0.01 * G * 2.0 / np.sqrt(5.0)
    check(abs(np.mean(rn) - want) < 2e-3 * want,
          "order %d: mean normal reaction on the bead %.6f N = m g cos(a) %.6f N"
          % (order, np.mean(rn), want))
    dE, scale = balance(r)
    viol = np.max(r["constraints/violation"])
    check(dE < 1e-9 * scale and viol < 1e-10,
          "order %d: energy balance %.1e of %.3g J, constraint violation %.1e"
          % (order, dE, scale, viol))
    check(any(x.endswith("guide.s") for x in r["q_names"]), "the coordinate is named guide.s")

# ---- circular arc: a pendulum ----
R, TH0 = 0.5, np.radians(25.0)


def arc_deck(orient, J):
    # 8 quadratic elements on +-50 degrees about the bottom of a circle of radius R centred at
    # (0, 0, R): nodes every 6.25 degrees, the bead at the node of 25 degrees
    ang = np.radians(np.linspace(-50.0, 50.0, 17))
    nodes = ", ".join("[%.17g, 0, %.17g]" % (R * np.sin(a), R - R * np.cos(a)) for a in ang)
    p = (R * np.sin(TH0), R - R * np.cos(TH0))
    return """mbsim: 1
title: bead on a circle
gravity: [0, 0, -9.81]
bodies:
  - {name: bead, mass: 0.1, inertia: [%(J)r, %(J)r, %(J)r], position: [%(px).17g, 0, %(pz).17g]}
beams:
  - name: arc
    nodes: [%(nodes)s]
    order: 2
    up: [0, 1, 0]
    section: {E: 2.1e13, nu: 0.3, density: 100.0, circle: 0.02}
joints:
  - {name: a, type: fixed, bodies: [ground, "arc[0]"], point: %(n0)s}
  - {name: b, type: fixed, bodies: [ground, "arc[-1]"], point: %(n1)s}
  - {name: guide, type: slide_on_beam, bodies: [bead, arc], point: [0, 0, 0], orient: %(orient)s}
solver: {integrator: em, dt: 5.0e-3, t_end: 1.4}
output: {every: 1, xdmf: false}
""" % {"J": J, "px": p[0], "pz": p[1], "nodes": nodes, "orient": orient,
       "n0": "[%.17g, 0, %.17g]" % (R * np.sin(ang[0]), R - R * np.cos(ang[0])),
       "n1": "[%.17g, 0, %.17g]" % (R * np.sin(ang[-1]), R - R * np.cos(ang[-1]))}


K = ellipk(np.sin(TH0 / 2.0) ** 2)
for orient, J in (("false", 1e-6), ("true", 0.1 * R * R * 0.5)):
    r = load(run(write_deck("arc_%s.yaml" % orient, arc_deck(orient, J)))[3])
    t = r["time"]
    x = r["bodies/position"][:, 0, 0]
    tc = crossings(t, x)
    T = 2.0 * (tc[1] - tc[0])
    m = 0.1
    Jeff = J if orient == "true" else 0.0
    T_ref = 4.0 * np.sqrt((m * R * R + Jeff) / (m * G * R)) * K
    check(abs(T - T_ref) < 1e-3 * T_ref,
          "orient %s: period %.5f s against 4 sqrt((m R^2 + J)/(m g R)) K = %.5f s (%.1e)"
          % (orient, T, T_ref, abs(T - T_ref) / T_ref))
    dE, scale = balance(r)
    check(dE < 1e-9 * scale, "orient %s: energy balance %.1e of %.3g J" % (orient, dE, scale))
    if orient == "true":
        # the angle of the body's first axis in the x-z plane (column 0 of /bodies/orientation),
        # which turns with the tangent, against
        # the bead's angle on the circle, atan2(x, R - z)
        z = r["bodies/position"][:, 0, 2]
        th = np.arctan2(x, R - z)
        d1 = r["bodies/orientation"][:, 0, :, 0]
        phi = np.arctan2(d1[:, 2], d1[:, 0])
        dev = np.max(np.abs((phi - phi[0]) - (th - th[0])))
        check(dev < 1e-6, "orient true: the body turns with the arc (angle off by %.1e rad, "
              "swing %.3f rad)" % (dev, np.ptp(th)))

# ---- a bead around a free flexible ring ----
# from a mid node: the tangent there is the circle's
RING, ring_nodes = bead_ring_deck(5, 0.25)
r = load(run(write_deck("ring.yaml", RING))[3])
names = [x.decode() for x in r["joints/names"]]
s = r["joints/coordinates"][:, names.index("guide"), 0]
Lring = np.sum(np.hypot(np.diff([p[0] for p in ring_nodes]), np.diff([p[1] for p in ring_nodes])))
check(s[-1] > s[0] + 1.05 * (Lring - s[0]) and np.max(np.abs(np.diff(s))) < 0.01,
      "s runs past the closure continuously: %.3f m to %.3f m (circumference %.3f m, largest "
      "step %.4f m)" % (s[0], s[-1], Lring, np.max(np.abs(np.diff(s)))))
dE, scale = balance(r)
check(dE < 1e-9 * scale, "ring: energy balance %.1e of %.3g J" % (dE, scale))
p = r["momentum/linear"]
dp = np.max(np.abs(p - p[0]))
check(dp < 1e-10, "ring: linear momentum constant to %.1e N s (|p| = %.3f)" % (dp, np.linalg.norm(p[0])))
viol = np.max(r["constraints/violation"])
check(viol < 1e-10, "ring: constraint violation %.1e" % viol)

# ---- bad decks ----
BAD = INCLINE % {"n": 2, "order": 1}
cases = [
    ("bodies: [bead, rod]", "bodies: [bead, rood]", "'rood' is not a beam"),
    ("bodies: [bead, rod]", "bodies: [ground, rod]", "is the ground"),
    ("point: [0, 0, 0]}\nsolver", "orient: true}\nsolver", "missing required key 'point'"),
    ("point: [0, 0, 0]}\nsolver", "point: [0, 0, 0.1]}\nsolver", "off the centre line"),
    ("point: [0, 0, 0]}\nsolver", "point: [0, 0, 0], orient: 2}\nsolver", "orient"),
    ("point: [0, 0, 0]}\nsolver", "point: [0, 0, 0], axis: [1, 0, 0]}\nsolver", "takes no 'axis'"),
    ("point: [-0.1, 0, 0.05]}\n  - {name: b", "point: [-0.1, 0, 0.05], orient: true}\n  - {name: b",
     "takes no 'orient'"),
]
for old, new, want in cases:
    assert old in BAD, old
    path = write_deck("bad.yaml", BAD.replace(old, new, 1))
    rc, _, err, _ = run(path, check=False)
    first = err.strip().splitlines()[0] if err.strip() else ""
    check(rc != 0 and want in err and (path + ":") in first,
          "refused with a position: %s" % first[first.find(path) + len(path):][:150])
# a point that slides beyond the elements its `reach` covers (its rows NaN there): the step
# fails naming that joint and the remedy, not a singular matrix at whatever row came last
# (the guide listed before the ring's closing joint)
far = RING.replace("point: [0, 0, 0]}", "point: [0, 0, 0], reach: 1}").replace(
    "t_end: 0.25", "t_end: 0.1")
lines = far.splitlines()
gi = next(i for i, l in enumerate(lines) if "name: guide" in l)
lines.insert(lines.index("joints:") + 1, lines.pop(gi))
rc, _, err, _ = run(write_deck("ring_reach.yaml", "\n".join(lines) + "\n"), check=False)
check(rc != 0 and "joint 'guide' (slide_on_beam" in err and "|g| = nan" in err
      and "larger `reach`" in err,
      "a point beyond its reach: the failure names the joint and the remedy: %s"
      % err[err.find("worst"):][:150])
ring_open = RING.replace("  - {name: close, type: fixed", "  - {name: close, type: spherical")
rc, _, err, _ = run(write_deck("ring_ok.yaml", ring_open.replace("t_end: 0.25", "t_end: 0.001")),
                    check=False)
check(rc == 0, "a ring closed by a spherical joint is accepted")
no_close = "\n".join(l for l in RING.splitlines() if "name: close" not in l) + "\n"
path = write_deck("ring_open.yaml", no_close)
rc, _, err, _ = run(path, check=False)
check(rc != 0 and "close the ring" in err, "a ring without its closing joint is refused: %s"
      % err.strip()[:160])
done()

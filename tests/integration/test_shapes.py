"""/shapes (docs/output.md): the evaluated shapes of bodies, beam nodes and the ground, for
viewers that must not read the deck. A deck written here gives every kind of row, its sizes as
expressions of parameters, offsets and orientations; each row is checked against the deck's
numbers worked out here by hand (not by the program):
- a body's drawn `shape` (role 0): box with the sizes "0.8 * $a" ..., sphere, cylinder
  (radius, length), centred on the centre of mass, body axes;
- contact shapes (role 1): a rigid body's default box and a capsule with an offset and an
  orientation on a body whose reference point is not its centre (offsets are about the centre
  of mass, body axes), a point mass's sphere, a fixed body's box (given in its axes, so
  rotated with it), the ground's plane (its point and the normal as axis 3), box and points
  (/shapes/points), and the sphere of each node and the capsule of each segment of beams
  (owner nbody + node over all beams, as in /contacts/table);
- beam sections (role 2): a rectangle [h, w] and a circle's diameter, with the beam's length;
- the world placement a viewer computes from a row and the owner's frame in the record (a
  body's centre and directors) puts a shape where the deck put it at t = 0, and a run without
  shapes still has the (empty) datasets;
- /joints/bodies and /joints/points: each joint's two sides (owners as in /shapes) and its
  point on each in that side's frame: a ground point in the world, a distance joint's two ends
  (their distance stays the rod's length through the run), a default distance joint's centres
  of mass, a beam node."""
import h5py
import numpy as np

from common import check, done, load, run, write_deck

A = 0.3
DECK = """
mbsim: 1
title: every kind of shape
parameters:
  a: %g
gravity: [0, 0, 0]
bodies:
  - name: crate
    shape: {box: ["0.8 * $a", "$a / 2", $a]}
    density: 100
    position: [0, 0, 1]
    reference_point: [0.05, 0, 0]
    orientation: {axis: [0, 0, 1], angle_deg: 30}
    angular_velocity: [0, 0, 2]
    collision:
      - {box: ["0.8 * $a", "$a / 2", $a]}
      - {capsule: {radius: 0.02, length: "$a"}, offset: [0.1, 0.2, 0.3],
         orientation: {axis: [1, 0, 0], angle_deg: 90}}
  - name: ball
    shape: {sphere: "$a / 3"}
    density: 100
    position: [2, 0, 1]
  - name: drum
    shape: {cylinder: {radius: 0.1, length: 0.4}}
    density: 100
    position: [4, 0, 1]
    velocity: [0, 1, 0.5]
  - name: bead
    type: point
    mass: 1
    position: [6, 0, 1]
    collision: [{sphere: 0.05}]
  - name: shelf
    fixed: true
    mass: 1
    inertia: [1, 1, 1]
    position: [8, 0, 1]
    orientation: {axis: [0, 1, 0], angle_deg: 90}
    collision: [{box: [0.1, 0.2, 0.3], offset: [0.05, 0, 0]}]
beams:
  - name: rope
    from: [0, 3, 1]
    to: [1, 3, 1]
    elements: 2
    section: {E: 1.0e9, nu: 0.3, density: 1000, rectangle: [0.02, 0.01]}
    collision: {capsule: 0.01}
  - name: cord
    from: [0, 5, 1]
    to: [0.6, 5, 1]
    elements: 3
    section: {E: 1.0e9, nu: 0.3, density: 1000, circle: 0.004}
    collision: {sphere: 0.006}
joints:
  - {name: hang, type: spherical, bodies: [ground, ball], point: [2, 0, 1.5]}
  - {name: rod, type: distance, bodies: [crate, drum], points: [[0.1, 0, 1], [4, 0, 1.2]]}
  - {name: tether, type: distance, bodies: [shelf, bead]}
  - {name: tie, type: spherical, bodies: [ground, "rope[0]"], point: [0, 3, 1]}
ground:
  collision:
    - {name: floor, plane: {point: [0, 0, -1], normal: [0, 1, 1]}}
    - {name: step, box: [1, 2, 0.5], offset: [3, 8, 0.25],
       orientation: {axis: [0, 0, 1], angle_deg: 45}}
    - {name: pins, points: [[0, 0, 0], [0.1, 0.2, 0.3]], offset: [5, 8, 0]}
initial: {project_velocities: true}
solver: {dt: 0.001, t_end: 0.05}
output: {every: 10}
""" % A


def rot(axis, deg):
    """rotation matrix about a unit axis"""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    t = np.radians(deg)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(t) * K + (1 - np.cos(t)) * K @ K


path = write_deck("shapes.yaml", DECK)
_, _, _, out = run(path)
r = load(out)
table = r["shapes/table"]
names = [n.decode() if isinstance(n, bytes) else n for n in r["shapes/names"]]
with h5py.File(out, "r") as f:
    attrs = {k: list(f["shapes/table"].attrs[k]) for k in ("columns", "kinds", "roles")}
cols = [c.decode() if isinstance(c, bytes) else c for c in attrs["columns"]]
kinds = [c.decode() if isinstance(c, bytes) else c for c in attrs["kinds"]]
roles = [c.decode() if isinstance(c, bytes) else c for c in attrs["roles"]]
check(table.shape[1] == 21 and cols[:3] == ["owner", "role", "kind"] and
      cols[-3:] == ["points_first", "points_count", "segment"],
      "/shapes/table has 21 columns: %s" % cols)
check(kinds == ["sphere", "box", "capsule", "points", "plane", "cylinder", "ring", "patch"] and
      roles == ["shape", "collision", "beam section"], "kinds %s, roles %s" % (kinds, roles))
K = {k: i for i, k in enumerate(kinds)}
bodies = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
nbody = len(bodies)
B = {n: i for i, n in enumerate(bodies)}


def rows(name, role):
    return [table[i] for i in range(len(names)) if names[i] == name and table[i, 1] == role]


def row(name, role):
    got = rows(name, role)
    check(len(got) == 1, "one role-%d row named %s (got %d)" % (role, name, len(got)))
    return got[0] if got else np.full(21, np.nan)


def placed(rw, size, offset, axes, owner, kind, what, tol=1e-12):
    ok = (rw[0] == owner and rw[2] == K[kind] and np.allclose(rw[3:6], size, atol=tol, rtol=0)
          and np.allclose(rw[6:9], offset, atol=tol, rtol=0)
          and np.allclose(rw[9:18].reshape(3, 3), axes, atol=tol, rtol=0))
    check(ok, "%s: owner %d %s size %s offset %s axes %s (got owner %g kind %s size %s "
          "offset %s axes %s)" % (what, owner, kind, np.round(size, 6), np.round(offset, 6),
                                  np.round(np.asarray(axes).ravel(), 6), rw[0],
                                  kinds[int(rw[2])] if np.isfinite(rw[2]) else "?",
                                  np.round(rw[3:6], 6), np.round(rw[6:9], 6),
                                  np.round(rw[9:18], 6)))


I3 = np.eye(3)
# drawn shapes: the deck's `shape`, sizes evaluated
placed(row("crate", 0), [0.8 * A, A / 2, A], [0, 0, 0], I3, B["crate"], "box",
       "crate's shape: box [0.8 a, a/2, a]")
placed(row("ball", 0), [A / 3, 0, 0], [0, 0, 0], I3, B["ball"], "sphere", "ball's shape: sphere")
placed(row("drum", 0), [0.1, 0.4, 0], [0, 0, 0], I3, B["drum"], "cylinder",
       "drum's shape: cylinder radius, length")
check(not rows("bead", 0) and not rows("shelf", 0), "no drawn shape where the deck gives none")
# contact shapes of bodies: about the centre of mass in body axes, whatever reference_point
placed(row("crate", 1), [0.8 * A, A / 2, A], [0, 0, 0], I3, B["crate"], "box",
       "crate's first collision box")
placed(row("crate#2", 1), [0.02, A, 0], [0.1, 0.2, 0.3], rot([1, 0, 0], 90), B["crate"],
       "capsule", "crate#2: capsule radius, length, offset and orientation")
placed(row("bead", 1), [0.05, 0, 0], [0, 0, 0], I3, B["bead"], "sphere", "point mass's sphere")
placed(row("shelf", 1), [0.1, 0.2, 0.3], [0.05, 0, 0], I3, B["shelf"], "box",
       "fixed body's box, in its own axes")
placed(row("ball", 1), [A / 3, 0, 0], [0, 0, 0], I3, B["ball"], "sphere",
       "ball's default collision: its sphere `shape`")
check(not rows("drum", 1), "a cylinder `shape` gives no collision shape")
# the ground: world
n = np.array([0, 1, 1]) / np.sqrt(2)
fl = row("floor", 1)
check(fl[0] == -1 and fl[2] == K["plane"] and np.allclose(fl[6:9], [0, 0, -1]) and
      np.allclose(fl[9:18].reshape(3, 3)[:, 2], n, atol=1e-15) and
      np.allclose(fl[9:18].reshape(3, 3).T @ fl[9:18].reshape(3, 3), I3, atol=1e-15),
      "floor: owner -1, a point of the plane, normal as axis 3 of orthonormal axes")
placed(row("step", 1), [1, 2, 0.5], [3, 8, 0.25], rot([0, 0, 1], 45), -1, "box",
       "ground box: world offset and orientation")
pins = row("pins", 1)
pts = r["shapes/points"]
first, count = int(pins[18]), int(pins[19])
check(pins[2] == K["points"] and count == 2 and np.allclose(pins[6:9], [5, 8, 0]) and
      np.allclose(pts[first:first + count], [[0, 0, 0], [0.1, 0.2, 0.3]]),
      "ground points: /shapes/points rows %d..%d, offset" % (first, first + count - 1))
# beams: node spheres and segment capsules, owner nbody + node over all beams
nrope, ncord = 3, 4
for k in range(nrope - 1):
    seg = row("rope[%d..%d]" % (k, k + 1), 1)
    check(seg[0] == nbody + k and seg[2] == K["capsule"] and seg[20] == 1 and
          np.isclose(seg[3], 0.01) and np.isclose(seg[4], 0.5),
          "rope segment %d: capsule r 0.01 along 0.5 m from node %d" % (k, nbody + k))
for k in range(ncord):
    sp = row("cord[%d]" % k, 1)
    check(sp[0] == nbody + nrope + k and sp[2] == K["sphere"] and sp[20] == 0 and
          np.isclose(sp[3], 0.006), "cord node %d: sphere r 0.006" % k)
rope, cord = row("rope", 2), row("cord", 2)
check(rope[0] == nbody and rope[2] == K["box"] and np.allclose(rope[3:6], [1.0, 0.02, 0.01]),
      "rope's section: box [length 1, h 0.02, w 0.01] from node %d" % nbody)
check(cord[0] == nbody + nrope and cord[2] == K["cylinder"] and
      np.allclose(cord[3:5], [0.004, 0.6], rtol=1e-12),
      "cord's section: cylinder [radius 0.004, length 0.6]")
check(len(names) == len(table) == 3 + 5 + 3 + (nrope - 1) + ncord + 2,
      "%d rows: 3 drawn shapes, 5 contact shapes of bodies, 3 of the ground, 6 of beams, "
      "2 sections" % len(table))

# where a viewer puts them: centre = x + R offset, axes R C, at t = 0 and later
x, R = r["bodies/position"], r["bodies/orientation"]
b = B["crate"]
cap = row("crate#2", 1)
Rc = rot([0, 0, 1], 30)
want = np.array([0, 0, 1]) + Rc @ np.array([0.1, 0.2, 0.3])
got = x[0, b] + R[0, b] @ cap[6:9]
check(np.allclose(got, want, atol=1e-12), "crate#2 at t = 0: %s (deck: %s)" % (got, want))
check(np.allclose(R[0, b] @ cap[9:18].reshape(3, 3), Rc @ rot([1, 0, 0], 90), atol=1e-12),
      "crate#2's axes at t = 0: R_body R_shape")
sb = B["shelf"]
got = x[-1, sb] + R[-1, sb] @ row("shelf", 1)[6:9]
check(np.allclose(got, [8, 0, 1 - 0.05], atol=1e-12),
      "shelf's box stays at [8, 0, 0.95] (turned 90 deg about y): %s" % got)

# joints: the two sides' owners and points in their frames
jb, jp = r["joints/bodies"], r["joints/points"]
check(jb.dtype.kind == "i" and jb.tolist() == [[-1, B["ball"]], [B["crate"], B["drum"]],
                                               [B["shelf"], B["bead"]], [-1, nbody]],
      "/joints/bodies: ground -1, bodies, beam node nbody + 0: %s" % jb.tolist())
want = [[2, 0, 1.5, 0, 0, 0.5], list(Rc.T @ [0.1, 0, 0]) + [0, 0, 0.2],
        [0, 0, 0, 0, 0, 0], [0, 3, 1, 0, 0, 0]]
check(np.allclose(jp, want, atol=1e-12), "/joints/points in the sides' frames (ground: world; "
      "crate: turned 30 deg): %s" % np.round(jp, 6).tolist())
# both ends of the crate-drum rod in the world at every record: |p2 - p1| = the rod's length
ends = [x[:, B["crate"]] + np.einsum("kij,j->ki", R[:, B["crate"]], jp[1, :3]),
        x[:, B["drum"]] + np.einsum("kij,j->ki", R[:, B["drum"]], jp[1, 3:])]
L = np.linalg.norm(ends[1] - ends[0], axis=1)
moved = np.linalg.norm(ends[1][-1] - ends[1][0])
check(moved > 0.01 and np.allclose(L, np.linalg.norm([3.9, 0, 0.2]), atol=1e-9) and
      np.allclose(ends[1], r["joints/position"][:, 1], atol=1e-12),
      "the rod's ends from /joints/points: length %.9f throughout (its end moved %.3f m), the "
      "second end is /joints/position" % (L[-1], moved))

# a run without shapes: the datasets exist, empty
_, _, _, plain = run(write_deck("plain.yaml", """
mbsim: 1
bodies:
  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}
solver: {dt: 0.01, t_end: 0.02}
"""))
p = load(plain)
check(p["shapes/table"].shape == (0, 21) and p["shapes/points"].shape == (0, 3) and
      len(p["shapes/names"]) == 0 and p["joints/bodies"].shape == (0, 2) and
      p["joints/points"].shape == (0, 6),
      "no shapes, no joints: /shapes/table [0, 21], points [0, 3], names [0], /joints/bodies "
      "[0, 2], /joints/points [0, 6]")
done()

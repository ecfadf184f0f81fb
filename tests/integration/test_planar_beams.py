"""Planar beams (`planar: {normal: n}` on a beam, or at the top of the deck for every beam and
rigid body): a pendulum beam on a spherical joint swinging under gravity in the x-z plane.
  - in-plane motion: the planar beam follows the unconstrained one (which stays in the plane
    by symmetry) to round-off, so the generated joints add no force in the plane;
  - an out-of-plane push at the tip: the free beam leaves the plane (a tip displacement of
    the order of F t^2 / (2 m_eff)), the planar beam stays in it exactly, its joints carrying
    the push (their y reactions add up to -F at every record: the beam's momentum along y
    stays zero), its directors still turn only about y;
  - the model's option gives the same motion as the beam's, and also holds a rigid body;
  - decks the option cannot hold are refused at the key: a node off the plane, a point mass
    under the model's option."""
import numpy as np

from common import balance, check, done, load, run, write_deck

DECK = """mbsim: 1
title: pendulum beam
parameters:
  fy: 0.0
%(model)s
beams:
  - name: b
    from: [0, 0, 0]
    to: [1, 0, %(z1)s]
    elements: 4
    order: 2
    up: [0, 0, 1]
    section: {E: 2.0e7, nu: 0.3, density: 1000, rectangle: [0.02, 0.02]}
%(beam)s
%(bodies)s
gravity: [0, 0, -9.81]
joints:
  - {name: pin, type: spherical, bodies: [ground, "b[0]"], point: [0, 0, 0]}
loads:
  - {name: push, type: force, body: "b[-1]", value: [0, $fy, 0]}
solver: {integrator: em, dt: 1.0e-3, t_end: 0.4}
output: {every: 10, xdmf: false}
"""
PLANAR = "    planar: {normal: [0, 1, 0]}"


def deck_text(model="", beam="", bodies="", z1="0"):
    return DECK % {"model": model, "beam": beam, "bodies": bodies, "z1": z1}


free = write_deck("free.yaml", deck_text())
planar = write_deck("planar.yaml", deck_text(beam=PLANAR))
model = write_deck("model.yaml", deck_text(model="planar: {normal: [0, 1, 0]}"))

rf, rp = load(run(free)[3]), load(run(planar)[3])
xf, xp = rf["beams/b/position"], rp["beams/b/position"]
check(np.max(np.abs(xf[-1] - xf[0])) > 0.3, "the pendulum swings (tip moved %.3f m)"
      % np.max(np.abs(xf[-1] - xf[0])))
d = np.max(np.abs(xp - xf))
check(d < 1e-12, "in-plane motion: planar beam = unconstrained beam (max difference %.2e m)" % d)
names = [n.decode() for n in rp["joints/names"]]
check(names == ["pin"] + ["planar:b[%d]" % i for i in range(9)],
      "one generated joint per node, named planar:b[i] (%s)" % names[:3])

F = 1e-3
rf = load(run(free, "--set", "parameters.fy=%g" % F)[3])
rp = load(run(planar, "--set", "parameters.fy=%g" % F)[3])
yf = np.max(np.abs(rf["beams/b/position"][..., 1]))
yp = np.max(np.abs(rp["beams/b/position"][..., 1]))
check(yf > 1e-4, "out-of-plane push: the free beam leaves the plane (max |y| %.2e m)" % yf)
check(yp == 0.0, "out-of-plane push: the planar beam stays in it (max |y| %.1e m)" % yp)
D = rp["beams/b/directors"]  # [records, nodes, 3, 3]: column i is director d_i
ry = rp["joints/reaction"][:, :, 1].sum(axis=1)
check(np.max(np.abs(ry + F)) < 1e-12 * F + 1e-15,
      "the joints carry the push: sum of y reactions + F = %.1e N" % np.max(np.abs(ry + F)))
# d1 and d2 (the section's in-plane axes, up = z) have no y component; |d3 . y| = 1
ylen = np.abs(D[..., 1, :])
check(np.max(np.sort(ylen, axis=-1)[..., :2]) < 1e-12 and np.min(np.max(ylen, axis=-1)) > 1 - 1e-12,
      "the directors turn about y only (in-plane components %.1e)"
      % np.max(np.sort(ylen, axis=-1)[..., :2]))
err, scale = balance(rp)
check(err < 1e-10 * scale, "energy balance of the planar beam: %.1e J of %.2f J" % (err, scale))

# the model's option: same as the beam's, and it also holds a rigid body
rm = load(run(model, "--set", "parameters.fy=%g" % F)[3])
d = np.max(np.abs(rm["beams/b/position"] - rp["beams/b/position"]))
check(d == 0.0, "model option = beam option (difference %.1e m)" % d)
withbody = deck_text(model="planar: {normal: [0, 1, 0]}",
                     bodies="bodies:\n  - {name: bob, mass: 1.0, inertia: [0.01, 0.01, 0.01], "
                     "position: [1.5, 0, 0]}")
withbody = withbody.replace(
    "joints:\n", "joints:\n  - {name: weld, type: spherical, bodies: [\"b[-1]\", bob], "
    "point: [1, 0, 0]}\n").replace('body: "b[-1]"', "body: bob, point: [1.5, 0, 0]")
rb = load(run(write_deck("body.yaml", withbody), "--set", "parameters.fy=%g" % F)[3])
yb = max(np.max(np.abs(rb["beams/b/position"][..., 1])), np.max(np.abs(rb["bodies/position"][..., 1])))
check(yb == 0.0 and "planar:bob" in [n.decode() for n in rb["joints/names"]],
      "model option: beam and rigid body pushed out of the plane stay in it (max |y| %.1e m)" % yb)

# refused at the key
rc, _, err, _ = run(write_deck("off.yaml", deck_text(beam=PLANAR, z1="0.1").replace(
    "normal: [0, 1, 0]", "normal: [0, 0, 1]")), check=False)
check(rc != 0 and "off.yaml:14:" in err and "off the plane" in err,
      "a node off the plane is refused at `planar`: %s" % err.strip()[:160])
pm = deck_text(model="planar: {normal: [0, 1, 0]}",
               bodies="bodies:\n  - {name: dot, type: point, mass: 1.0, position: [2, 0, 0]}")
rc, _, err, _ = run(write_deck("pm.yaml", pm), check=False)
check(rc != 0 and "pm.yaml:5:" in err and "point mass" in err,
      "a point mass under the model's option is refused: %s" % err.strip()[:160])
done()

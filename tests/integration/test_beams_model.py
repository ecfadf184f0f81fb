"""Beams from the deck to the output file, checked on what does not depend on the beam's
stiffness: the nodes and directors at t = 0 (against numpy's own frame), free fall (every node
x0 + v0 t + g t^2/2, directors unchanged, no strain: a rigid translation), the beam's mass
(rho A L, from the linear momentum), the momenta and the energy balance of the free fall against
closed forms, a distributed_force (uniform acceleration f L / m, its work, its /loads/force row),
a spherical joint holding node 0 (no violation), the output's shapes and units and the sidecar's
polylines."""
import os

import h5py
import numpy as np

from common import check, done, load, run, write_deck

G = np.array([0.0, -1.0, -9.81])
RHO, H, W = 7800.0, 0.02, 0.01


def beam_deck(order, elements, integrator, extra="", gravity=G, t_end=0.2):
    return """mbsim: 1
gravity: [%r, %r, %r]
beams:
  - name: cable
    from: [0, 0, 1]
    to: [1, 1, 2]
    elements: %d
    order: %d
    up: [0, 0, 1]
    section: {E: 2.0e7, nu: 0.3, density: %r, rectangle: [%r, %r]}
    velocity: [0.5, -0.2, 1.0]
%s
solver: {integrator: %s, dt: 0.01, t_end: %r}
""" % (gravity[0], gravity[1], gravity[2], elements, order, RHO, H, W, extra, integrator, t_end)


def frame0():
    """d1 the axis, d2 = up made normal to it, d3 = d1 x d2 (columns)"""
    d1 = np.array([1.0, 1.0, 1.0]) / np.sqrt(3.0)
    up = np.array([0.0, 0.0, 1.0])
    d2 = up - up.dot(d1) * d1
    d2 /= np.linalg.norm(d2)
    return np.column_stack([d1, d2, np.cross(d1, d2)])


L = np.sqrt(3.0)
MASS = RHO * H * W * L
X0 = np.array([0.0, 0.0, 1.0])
V0 = np.array([0.5, -0.2, 1.0])

# ---- free fall: em, both orders ----
for order, elements in ((1, 5), (2, 3)):
    what = "order %d" % order
    path = write_deck("fall%d.yaml" % order, beam_deck(order, elements, "em"))
    _, _, _, out = run(path)
    r = load(out)
    nn = order * elements + 1
    t = r["time"]
    pos, dirs, strain = r["beams/cable/position"], r["beams/cable/directors"], r["beams/cable/strain"]
    check(pos.shape == (len(t), nn, 3) and dirs.shape == (len(t), nn, 3, 3)
          and strain.shape == (len(t), elements, 6) and r["energy/strain"].shape == (len(t),),
          "%s: dataset shapes [N,%d,3], [N,%d,3,3], [N,%d,6], [N]" % (what, nn, nn, elements))
    s = np.linspace(0.0, 1.0, nn)
    nodes0 = X0 + s[:, None] * np.array([1.0, 1.0, 1.0])
    check(np.allclose(pos[0], nodes0, atol=1e-14), "%s: nodes at t = 0 evenly along from-to" % what)
    R0 = frame0()
    check(np.allclose(dirs[0], R0[None], atol=1e-14),
          "%s: directors at t = 0: tangent, up made normal, d1 x d2" % what)
    # every node: x0 + v0 t + g t^2 / 2, directors unchanged (midpoint rule: exact)
    want = nodes0[None] + t[:, None, None] * V0 + 0.5 * t[:, None, None] ** 2 * G
    err = np.max(np.abs(pos - want))
    check(err < 1e-11, "%s: free fall of every node (max error %.2e m)" % (what, err))
    derr = np.max(np.abs(dirs - R0[None, None]))
    check(derr < 1e-12, "%s: directors unchanged in free fall (%.2e)" % (what, derr))
    check(np.max(np.abs(strain)) < 1e-9, "%s: no strain in a rigid translation (%.2e)"
          % (what, np.max(np.abs(strain))))
    check(np.max(np.abs(r["energy/strain"])) < 1e-9,
          "%s: no strain energy (%.2e J)" % (what, np.max(np.abs(r["energy/strain"]))))
    # mass rho A L and the momenta: L = m v, J = m x_c x v about the origin
    xc = X0 + 0.5 * np.array([1.0, 1.0, 1.0]) + t[:, None] * V0 + 0.5 * t[:, None] ** 2 * G
    vc = V0 + t[:, None] * G
    lin = r["momentum/linear"]
    check(np.allclose(lin[0], MASS * V0, rtol=1e-13, atol=0),
          "%s: linear momentum at t = 0 is rho A L v0 (mass %.6g kg)" % (what, lin[0][0] / V0[0]))
    check(np.allclose(lin, MASS * vc, rtol=1e-11, atol=1e-12), "%s: linear momentum m (v0 + g t)"
          % what)
    ang = r["momentum/angular"]
    check(np.allclose(ang, MASS * np.cross(xc, vc), rtol=1e-10, atol=1e-11),
          "%s: angular momentum m x_c x v_c (max error %.2e)"
          % (what, np.max(np.abs(ang - MASS * np.cross(xc, vc)))))
    # energies: T = m v^2 / 2, V = -m g . x_c, total conserved
    check(np.allclose(r["energy/kinetic"], 0.5 * MASS * np.sum(vc * vc, axis=1), rtol=1e-11),
          "%s: kinetic energy m |v|^2 / 2" % what)
    check(np.allclose(r["energy/potential"], -MASS * xc.dot(G), rtol=1e-11, atol=1e-11),
          "%s: potential energy -m g . x_c (consistent gravity loads)" % what)
    etot = r["energy/total"]
    check(np.max(np.abs(etot - etot[0])) < 1e-12 * abs(etot[0]) + 1e-13,
          "%s: em conserves the total energy (%.2e J)" % (what, np.max(np.abs(etot - etot[0]))))
    with h5py.File(out, "r") as f:
        units = [f["beams/cable/" + k].attrs["units"] for k in ("position", "directors", "strain")]
        units = [u.decode() if isinstance(u, bytes) else u for u in units]
        eu = f["energy/strain"].attrs["units"]
    check(units[0] == "m" and units[1] == "1" and units[2].startswith("1 (axial")
          and (eu.decode() if isinstance(eu, bytes) else eu) == "J", "%s: units" % what)
    check("cable[%d].phi.x" % (nn - 1) in r["q_names"] and "cable[0].d3.z" in r["q_names"],
          "%s: coordinate names cable[i].phi.x" % what)
    xmf = out[:-3] + ".xmf"
    text = open(xmf).read() if os.path.exists(xmf) else ""
    check('Name="beam_cable"' in text and "Polyline" in text and "/beams/cable/directors" in text,
          "%s: the sidecar draws the beam as a polyline with its directors" % what)

# ---- other integrators: the nodes fall together, the directors stay ----
for integ in ("midpoint", "genalpha", "euler", "moreau"):
    path = write_deck("fall_%s.yaml" % integ, beam_deck(2, 2, integ))
    rc, _, err, out = run(path, check=False)
    if rc != 0:
        check(False, "%s: runs a free beam (%s)" % (integ, err.strip()))
        continue
    r = load(out)
    pos, dirs, t = r["beams/cable/position"], r["beams/cable/directors"], r["time"]
    rel = pos - pos[:, :1]
    check(np.max(np.abs(rel - rel[:1])) < 1e-10 and np.max(np.abs(dirs - dirs[:1])) < 1e-10,
          "%s: a free-falling beam translates rigidly (d1 has no mass: the rigidity rows fix it)"
          % integ)
    if integ == "moreau":
        continue
    # implicit Euler under a constant force: x_n = x0 + v0 t + g t^2/2 + g dt t/2 exactly
    want = pos[0, 0] + t[:, None] * V0 + 0.5 * t[:, None] ** 2 * G
    if integ == "euler":
        want += 0.5 * 0.01 * t[:, None] * G
    e = np.max(np.abs(pos[:, 0] - want))
    check(e < 1e-10, "%s: node 0 falls as x0 + v0 t + g t^2/2%s (error %.2e m)"
          % (integ, " + g dt t/2" if integ == "euler" else "", e))

# ---- distributed_force without gravity: uniform acceleration f L / m ----
f = np.array([0.0, 0.0, 2.0])
extra = """loads:
  - {name: wind, type: distributed_force, beam: cable, value: [%r, %r, %r]}""" % tuple(f)
path = write_deck("wind.yaml", beam_deck(2, 2, "em", extra, gravity=np.zeros(3)))
_, _, _, out = run(path)
r = load(out)
t, pos = r["time"], r["beams/cable/position"]
a = f * L / MASS
want = pos[0][None] + t[:, None, None] * V0 + 0.5 * t[:, None, None] ** 2 * a
err = np.max(np.abs(pos - want))
check(err < 1e-11, "distributed_force: every node accelerates by f L / m (error %.2e m)" % err)
check(np.allclose(r["energy/external_work"], r["energy/kinetic"] - r["energy/kinetic"][0],
                  rtol=1e-10, atol=1e-12),
      "distributed_force: its work (/energy/external_work) is the kinetic energy gained")
lf = r["loads/force"][:, 0]
axis = (pos[:, -1] - pos[:, 0])
torque = np.cross(0.5 * axis, f * L)
check(np.allclose(lf[:, :3], f * L, atol=1e-12) and np.allclose(lf[:, 3:], torque, atol=1e-11),
      "distributed_force: /loads/force is f L with the torque about node 0")

# ---- a restart continues the beam bit for bit ----
path = write_deck("restart.yaml", beam_deck(2, 2, "em", t_end=0.1))
_, _, _, first = run(path)
_, _, _, cont = run(path, "--restart", first, "--t-end", "0.2")
_, _, _, whole = run(path, "--t-end", "0.2")
a, b = load(cont), load(whole)
check(np.array_equal(a["beams/cable/position"][-1], b["beams/cable/position"][-1]) and
      np.array_equal(a["beams/cable/directors"][-1], b["beams/cable/directors"][-1]),
      "a restarted beam run ends where the uninterrupted one does, bit for bit")

# ---- a spherical joint at node 0: it holds ----
extra = """joints:
  - {name: pin, type: spherical, bodies: [ground, "cable[0]"], point: [0, 0, 1]}"""
path = write_deck("pin.yaml", beam_deck(1, 4, "em", extra, t_end=0.05).replace(
    "velocity: [0.5, -0.2, 1.0]", "velocity: [0, 0, 0]"))
_, _, _, out = run(path)
r = load(out)
check(np.max(r["constraints/violation"]) < 1e-9 and
      np.allclose(r["beams/cable/position"][:, 0], [0, 0, 1], atol=1e-9) and
      np.allclose(r["joints/position"][:, 0], [0, 0, 1], atol=1e-9),
      "a spherical joint holds node 0 (violation %.2e)" % np.max(r["constraints/violation"]))
done()

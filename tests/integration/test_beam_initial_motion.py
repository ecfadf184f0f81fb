"""A beam's initial motion (docs/decks.md "Beams": velocity, angular_velocity, about,
node_velocities) against closed forms of a rigid rod, at the first record and over the run:
- a steel rod of circular section (L = 1 m, r = 10 mm) spinning at w = 2 rad/s about the
  normal through its centre while its centre moves at v: the kinetic energy
  1/2 m |v|^2 + 1/2 w^2 (m L^2 / 12 + rho I L) (the directors' rotary part rho I L: the
  rigid rotation turns them with w x d_i), the momentum m v and the angular momentum about
  the origin I_c w + m x_c x v, to round-off; em then conserves both momenta (no loads) to
  round-off and the centre moves at v;
- the same rotation `about` one end (the end at rest): the centre's velocity w x (L/2, 0, 0),
  so the momentum m w L / 2;
- `node_velocities`: the momentum of the linear interpolation of the given nodal velocities,
  sum over elements of rho A l_e (v_a + v_b) / 2 (two-node elements), the directors at rest;
- errors at file:line:column: node_velocities with a rigid motion, a wrong count, `about`
  without `angular_velocity`."""
import math

import numpy as np

from common import attempt, check, done, run, write_deck

RHO, R, L, W = 7800.0, 0.01, 1.0, 2.0
A, I = math.pi * R ** 2, math.pi * R ** 4 / 4
M = RHO * A * L


def rod(name, motion, elements=4):
    return write_deck(name, f"""mbsim: 1
beams:
  - name: rod
    from: [0, 0, 0]
    to: [{L}, 0, 0]
    elements: {elements}
    section: {{E: 2.0e11, nu: 0.3, density: {RHO}, circle: {R}}}
{motion}
solver: {{dt: 0.001, t_end: 0.05}}
output: {{xdmf: false}}
""")


v = np.array([0.5, -0.2, 0.1])
what = "spin about the centre"
r = attempt(what, rod("spin.yaml", f"    angular_velocity: [0, 0, {W}]\n"
                                   f"    velocity: [{v[0]}, {v[1]}, {v[2]}]"))
if r is not None:
    Ic = M * L ** 2 / 12 + RHO * I * L
    ke = 0.5 * M * v @ v + 0.5 * W ** 2 * Ic
    k0 = r["energy/kinetic"][0]
    check(abs(k0 - ke) <= 1e-13 * ke, "%s: kinetic energy %.15g J, closed form %.15g J (1e-13)"
          % (what, k0, ke))
    p0 = r["momentum/linear"][0]
    check(np.max(np.abs(p0 - M * v)) <= 1e-13 * M, "%s: momentum %s = m v (1e-13)" % (what, p0))
    xc = np.array([L / 2, 0, 0])
    h_ref = np.array([0, 0, Ic * W]) + M * np.cross(xc, v)
    h0 = r["momentum/angular"][0]
    check(np.max(np.abs(h0 - h_ref)) <= 1e-13 * Ic * W,
          "%s: angular momentum %s = I_c w + m x_c x v = %s (1e-13)" % (what, h0, h_ref))
    dp = np.max(np.abs(r["momentum/linear"] - p0))
    dh = np.max(np.abs(r["momentum/angular"] - h0))
    check(dp <= 1e-12 * M and dh <= 1e-12 * Ic * W,
          "%s: em conserves both momenta over the run (%.1e, %.1e)" % (what, dp, dh))
    c = np.mean(r["beams/rod/position"][-1], axis=0)
    ref = xc + v * r["time"][-1]
    check(np.max(np.abs(c - ref)) <= 1e-9, "%s: the centre moves at v: %s vs %s (1e-9 m)"
          % (what, c, ref))

what = "spin about one end"
r = attempt(what, rod("spin_end.yaml", f"    angular_velocity: [0, 0, {W}]\n"
                                       "    about: [0, 0, 0]"))
if r is not None:
    p0 = r["momentum/linear"][0]
    ref = np.array([0, M * W * L / 2, 0])
    check(np.max(np.abs(p0 - ref)) <= 1e-13 * M * W, "%s: momentum %s = m w L / 2 along y (1e-13)"
          % (what, p0))

what = "node_velocities"
nv = np.array([[0, 0, 0], [0.1, 0, 0.3], [0.2, -0.1, 0], [0.4, 0, 0.1], [0, 0, -0.5]])
r = attempt(what, rod("nodes.yaml", "    node_velocities: %s" % nv.tolist()))
if r is not None:
    le = L / 4
    ref = sum(RHO * A * le * (nv[k] + nv[k + 1]) / 2 for k in range(4))
    p0 = r["momentum/linear"][0]
    check(np.max(np.abs(p0 - ref)) <= 1e-13 * M, "%s: momentum %s = sum rho A l_e (v_a + v_b) / 2 "
          "= %s (1e-13)" % (what, p0, ref))

for name, motion, where, msg in (
        ("bad1.yaml", "    node_velocities: [[0, 0, 0]]\n    velocity: [1, 0, 0]", ":9:15:",
         "give node_velocities or a rigid motion"),
        ("bad2.yaml", "    node_velocities: [[0, 0, 0]]", ":8:22:",
         "node_velocities: expected a list of 5 velocities"),
        ("bad3.yaml", "    about: [0, 0, 0]", ":8:12:",
         "about: the point of a rigid motion needs 'angular_velocity'")):
    rc, _, err, _ = run(rod(name, motion), check=False)
    check(rc == 1 and where in err and msg in err, "%s: exit 1 at %s with '%s' (got %d: %s)"
          % (name, where, msg, rc, err.strip()))
done()

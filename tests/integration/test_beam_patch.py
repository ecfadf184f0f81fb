"""A deformable contact surface over beam nodes (docs/decks.md "Surfaces"): bilinear patches
whose corners are the centreline points phi of two parallel beams' nodes (Zander 2008
sec. 3.3, eq. 3.48-3.49: node i takes N_i of a contact's impulse on its phi). Checked against
things computed here from the deck's constants:
- a ball (0.5 kg) dropped with 1 m/s onto two free beams (no gravity, no supports,
  restitution 0; the beams' nodes carry spheres of their own, which never touch the patches
  they are corners of, so that a contacts entry between everything runs): in every step the ball's momentum change is the opposite of the beams',
  sum over the nodes of the row sums of the beams' mass matrix (rho A h / 2 at the ends,
  rho A h inside) times the node's velocity, to round-off; the energy balance closes;
- a die (0.1 m) pressed by a dead load W = 0.981 N at x_G = 0.6 m, y_G = 0.12 m onto two
  cantilevers (clamped at x = 0, 1 m long, 4 quadratic elements each, damped to rest, no
  gravity): the corners' forces on the patch (from /contacts/table) sum to -W; shared by
  N_i(xi, eta) of each corner, beam a takes (1 - eta_G) W and beam b eta_G W (the moment
  balance of the die: N_i is linear across the beams) to 1e-4 W; under those nodal loads
  Euler-Bernoulli's cantilever (with Timoshenko's shear term P x / kappa G A) gives each
  node's deflection, the nodes between the clamp and the loads to 1e-5 (quadratic elements
  are exact there), the others to 2e-3 (measured 3.7e-4). The die off the centre line rests
  on three corners: the patch between two beams that deflect differently is twisted, so the
  nodal loads are N_i of the corners' forces, not N_i of W at the die's centre."""
import numpy as np

from common import attempt, balance, check, contact_rows, done, write_deck

SECTION = "{E: 2.1e9, nu: 0.3, density: %g, rectangle: [0.02, 0.02]}"


def nodes_list(n):
    return ", ".join(['"a[%d]"' % i for i in range(n)] + ['"b[%d]"' % i for i in range(n)])


# ---- impact: momentum exchanged between a ball and two free beams
RHO, AREA, L, NE = 1000.0, 0.02 * 0.02, 1.0, 4
MB, V0 = 0.5, 1.0
impact = write_deck("beam_patch_impact.yaml", f"""mbsim: 1
gravity: [0, 0, 0]
bodies:
  - {{name: ball, mass: {MB}, inertia: [1.0e-3, 1.0e-3, 1.0e-3], position: [0.3, 0.15, 0.06],
     velocity: [0, 0, {-V0}], collision: [{{sphere: 0.05}}]}}
beams:
  - {{name: a, from: [0, 0, 0], to: [{L}, 0, 0], elements: {NE}, up: [0, 0, 1],
     section: {SECTION % RHO}, collision: {{sphere: 0.01}}}}
  - {{name: b, from: [0, 0.4, 0], to: [{L}, 0.4, 0], elements: {NE}, up: [0, 0, 1],
     section: {SECTION % RHO}, collision: {{sphere: 0.01}}}}
surfaces:
  - {{name: sheet, nodes: [{nodes_list(NE + 1)}], grid: [2, {NE + 1}]}}
contacts:
  - {{name: all, between: ["*", "*"], restitution: 0, friction: 0.3}}
solver: {{dt: 1.0e-4, t_end: 0.04}}
output: {{every: 1, xdmf: false}}
""")
what = "ball on a patch over two free beams' nodes"
r = attempt(what, impact)
if r is not None:
    names = r["q_names"]
    v = r["state/v"]
    h = L / NE
    lumped = np.full(NE + 1, RHO * AREA * h)
    lumped[0] = lumped[-1] = RHO * AREA * h / 2
    pb = np.zeros((len(r["time"]), 3))
    for beam in "ab":
        for i in range(NE + 1):
            idx = [names.index("%s[%d].phi.%s" % (beam, i, c)) for c in "xyz"]
            pb += lumped[i] * v[:, idx]
    ball = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]].index("ball")
    pball = MB * r["bodies/velocity"][:, ball]
    cnt = r["contacts/count"]
    exch = np.max(np.abs(np.diff(pball, axis=0) + np.diff(pb, axis=0)))
    gain = pb[-1, 2]
    check(np.sum(cnt > 0) >= 5 and gain < -0.1 and exch <= 1e-14,
          "%s: the ball's momentum change is the opposite of the beams' (sum of rho A h-row "
          "sums times the nodes' velocities) in every step, %d of them in contact (error "
          "%.1e N s, 1e-14; the beams took %.4f N s)" % (what, np.sum(cnt > 0), exch, gain))
    err, scale = balance(r)
    check(err <= 1e-6 * scale, "%s: energy balance %.1e J of %.3g J (1e-6)" % (what, err, scale))

# ---- a die at rest on a patch over two cantilevers: Euler-Bernoulli under N_i of its loads
E, NU, W, XG, YG, WIDTH = 2.1e9, 0.3, 0.981, 0.6, 0.12, 0.4
NQ = 2 * NE + 1          # nodes of NE quadratic elements
rest = write_deck("beam_patch_rest.yaml", f"""mbsim: 1
gravity: [0, 0, 0]
bodies:
  - {{name: die, mass: 0.1, shape: {{box: [0.1, 0.1, 0.1]}}, position: [{XG}, {YG}, 0.05]}}
loads:
  - {{name: weight, type: force, body: die, value: [0, 0, {-W}]}}
beams:
  - {{name: a, from: [0, 0, 0], to: [{L}, 0, 0], elements: {NE}, order: 2, up: [0, 0, 1],
     damping: 0.03, section: {SECTION % 100}}}
  - {{name: b, from: [0, {WIDTH}, 0], to: [{L}, {WIDTH}, 0], elements: {NE}, order: 2,
     up: [0, 0, 1], damping: 0.03, section: {SECTION % 100}}}
joints:
  - {{name: clamp_a, type: fixed, bodies: [ground, "a[0]"], point: [0, 0, 0]}}
  - {{name: clamp_b, type: fixed, bodies: [ground, "b[0]"], point: [0, {WIDTH}, 0]}}
surfaces:
  - {{name: sheet, nodes: [{nodes_list(NQ)}], grid: [2, {NQ}]}}
contacts:
  - {{name: die_sheet, between: [die, sheet], restitution: 0, friction: 0.3}}
solver: {{dt: 1.0e-3, t_end: 0.6}}
output: {{every: 50, xdmf: false}}
""")
what = "die at rest on a patch over two cantilevers' nodes"
r = attempt(what, rest)
if r is not None:
    names = r["q_names"]
    k = len(r["time"]) - 1
    q, v = r["state/q"][k], r["state/v"][k]
    EI = E * 0.02 ** 4 / 12
    KGA = 5.0 / 6.0 * E / (2 * (1 + NU)) * AREA
    x = np.linspace(0.0, L, NQ)
    h = L / (NQ - 1)
    # each corner's force on the patch (its impulse over the step, along n, t1 and t2 =
    # n x t1), shared by N_i at its (xi, eta) on the flat patch it started as
    rows = contact_rows(r, k)
    off = r["contacts/offsets"][k]
    t1 = r["contacts/tangent1"][off:off + len(rows)]
    nodal = {"a": np.zeros(NQ), "b": np.zeros(NQ)}
    fz = 0.0
    for row, ta in zip(rows, t1):
        n = row[6:9]
        f = (row[10] * n + row[11] * ta + row[12] * np.cross(n, ta)) / 1.0e-3
        fz += f[2]
        j = min(int(row[3] // h), NQ - 2)
        xi, eta = row[3] / h - j, row[4] / WIDTH
        for beam, we in (("a", 1 - eta), ("b", eta)):
            nodal[beam][j] += (1 - xi) * we * f[2]
            nodal[beam][j + 1] += xi * we * f[2]
    check(len(rows) >= 3 and abs(fz + W) <= 1e-5 * W,
          "%s: the die rests on %d corners whose forces on the patch sum to %.9f N (-W = "
          "%.3f N, 1e-5 W)" % (what, len(rows), fz, -W))

    def cantilever(P, a):
        """Euler-Bernoulli deflection under P at a, plus Timoshenko's shear term"""
        return np.where(x <= a, P * x ** 2 * (3 * a - x) / (6 * EI) + P * x / KGA,
                        P * a ** 2 * (3 * x - a) / (6 * EI) + P * a / KGA)

    eta_g = r["bodies/position"][k, 0, 1] / WIDTH
    for beam, share in (("a", 1 - eta_g), ("b", eta_g)):
        z = np.array([q[names.index("%s[%d].phi.z" % (beam, i))] for i in range(NQ)])
        loaded = np.nonzero(nodal[beam])[0]
        ref = sum(cantilever(P, x[i]) for i, P in enumerate(nodal[beam]) if P != 0.0)
        near = np.max(np.abs(z[:loaded[0] + 1] - ref[:loaded[0] + 1])) / np.max(np.abs(ref))
        far = np.max(np.abs(z - ref)) / np.max(np.abs(ref))
        total = -np.sum(nodal[beam])
        check(abs(total - share * W) <= 1e-4 * W and near <= 1e-5 and far <= 2e-3,
              "%s: beam %s carries %.5f N (the share %.4f of W across the beams: %.5f N) on "
              "nodes %s and deflects as Euler-Bernoulli's cantilever under those loads: tip "
              "%.6e m (closed form %.6e m); nodes up to the loads off by %.1e (1e-5), all by "
              "%.1e (2e-3) of the largest" % (what, beam, total, share, share * W,
                                              list(loaded), -z[-1], -ref[-1], near, far))
    vmax = np.max(np.abs(v))
    check(vmax <= 1e-3, "%s: at rest, largest velocity %.1e (1e-3)" % (what, vmax))
done()

"""Deformable contact surfaces (docs/decks.md "Surfaces"): bilinear patches over point masses
(Zander 2008 sec. 3.3, eq. 3.48-3.49), the impulse of a contact shared by the patch's four
nodes with the interpolation weights N_i. Checked against closed forms computed here from
the deck's constants (nothing uses the program's contact code):
- a sphere (mass m) dropped with v0 onto a free 2 x 2 surface (nodes of mass m_n, no springs,
  no gravity) off centre, at (xi, eta) = (0.3, 0.6): the patch's point has the effective mass
  M = 1 / sum_i (N_i^2 / m_n), and the two-body impact gives the impulse
  P = (1 + e) m M v0 / (m + M), the sphere's velocity v0 - P / m and node i's N_i P / m_n,
  for e = 1 and e = 0; momentum m v + sum m_n v_i = m v0 and, at e = 1, the kinetic energy
  kept; the energy balance E - E0 - W + D at round-off;
- a die (0.1 m, 0.1 kg) set down off centre, at x = 0.3, on a 2 x 2 surface whose nodes hang on
  zero-length springs k (damped, so that it comes to rest): at rest node i is deflected by
  (m_n g + m_d g N_i(x_G, y_G)) / k, its weight shared by the weights at the die's centre of
  mass (the resultant of its four corners' loads, which N_i, bilinear, shares exactly as
  the resultant when the corners are symmetric about it), the vertical velocities below
  1e-8 m/s, the die sticking; the same with the penalty law (its friction regularized: the
  die creeps below 1e-5 m/s);
- a tilted die dropped onto a 2 x 2 surface whose nodes hang on undamped zero-length springs
  k, under gravity, and a ball dropped onto a sprung point mass (sphere-sphere): in every
  step the momentum of all bodies changes by the gravity impulse plus the springs' impulse
  -k dt (x_theta - x_rest) at the theta method's evaluation point x_theta = x0 + theta dt
  ((1 - theta) v0 + theta v1), to round-off, also in the steps where a contact and a spring
  act on one node. The recorded positions do not give that point: a step that projects a
  penetration out moves x1 off the scheme's path x0 + dt ((1 - theta) v0 + theta v1) and
  keeps the velocities (docs/integrators.md), so k dt (x0 + x1) / 2 misses the springs'
  impulse by k dt theta times the projection's shift;
- a node pushed up into a die's face: a 3 x 3 surface of sprung, damped nodes (spacing 0.5 m)
  whose centre node takes an upward force F = 20 N lifts a die (0.1 m, 0.1 kg) off the
  patches on its bottom face alone (the node-box contact: the die's corners clear the tent
  the node raises): at rest the centre node is at (F - (m_n + m_d) g) / k, the die's centre
  0.05 m above it, the others at -m_n g / k, and one contact, die on that node, carries
  m_d g dt per step;
- a die across a ridge between its nodes: a roof of two patches (2 x 3 nodes on stiff damped
  springs, the ridge's nodes at x = 1 and y = 0, 1, the eaves 0.2 m lower) and a die turned by
  0.3 rad about the vertical set down over the ridge's middle: it rests on the two points
  where its bottom edges cross the ridge (box edge against patch edge), at y = 0.5 -+ 0.05 /
  cos 0.3, each with half its weight (m_d g dt / 2 per step), its centre 0.05 m above the
  ridge's nodes, which sink by (m_n + m_d / 2) g / k (the eaves by m_n g / k); without the
  edge points it sank 6.7 mm onto its vertices on the slopes."""
import numpy as np

from common import attempt, balance, check, contact_rows, done, write_deck

# ---- impact: a ball on a free patch
MS, MN, V0, RAD = 0.5, 1.0, 1.0, 0.05
XI, ETA = 0.3, 0.6
NODES = ["n00", "n01", "n10", "n11"]           # row by row: (0, 0), (0, 1), (1, 0), (1, 1)
POS = {"n00": (0, 0), "n01": (1, 0), "n10": (0, 1), "n11": (1, 1)}   # x along the columns


def weights(xi, eta):
    """N_i of the nodes in NODES order (corner (x, y) = (xi, eta) of the unit patch)"""
    return np.array([(1 - xi) * (1 - eta), xi * (1 - eta), (1 - xi) * eta, xi * eta])


def surface_text(z, spring=None):
    bodies = "".join("  - {name: %s, type: point, mass: %g, position: [%g, %g, %.17g]}\n"
                     % (n, MN, POS[n][0], POS[n][1], z[i]) for i, n in enumerate(NODES))
    loads = ""
    if spring:
        k, c = spring
        loads = "loads:\n" + "".join(
            "  - {name: s_%s, type: spring, bodies: [ground, %s], points: [[%g, %g, 0], "
            "[%g, %g, %.17g]], stiffness: %g, damping: %g, rest_length: 0}\n"
            % (n, n, POS[n][0], POS[n][1], POS[n][0], POS[n][1], z[i], k, c)
            for i, n in enumerate(NODES))
    return bodies, loads


def impact_deck(name, e):
    bodies, _ = surface_text([0.0] * 4)
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, 0]
bodies:
{bodies}  - {{name: ball, mass: {MS}, inertia: [1.0e-3, 1.0e-3, 1.0e-3],
     position: [{XI}, {ETA}, 0.1], velocity: [0, 0, {-V0}], collision: [{{sphere: {RAD}}}]}}
surfaces:
  - {{name: sheet, nodes: [n00, n01, n10, n11], grid: [2, 2], patches: bilinear}}
contacts:
  - {{name: ball_sheet, between: [ball, sheet], restitution: {e}, friction: 0.3}}
solver:
  dt: 1.0e-3
  t_end: 0.08
output: {{every: 1, xdmf: false}}
""")


def body_index(r, body):
    names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
    return names.index(body)


def vel(r, body):
    """[N, 3] the centre of mass velocity of a body"""
    return r["bodies/velocity"][:, body_index(r, body)]


N = weights(XI, ETA)
M = 1.0 / np.sum(N ** 2 / MN)
for e in (1.0, 0.0):
    what = "ball on a free patch, e = %g" % e
    r = attempt(what, impact_deck("impact%d.yaml" % e, e))
    if r is None:
        continue
    vb = vel(r, "ball")
    vn = np.stack([vel(r, n) for n in NODES], axis=1)          # [N, 4, 3]
    P = (1 + e) * MS * M * V0 / (MS + M)
    k = int(np.argmax(vb[:, 2] > -V0 + 1e-12))                 # the record after the impact
    err_b = abs(vb[k, 2] - (-V0 + P / MS))
    err_n = np.max(np.abs(vn[k, :, 2] - (-N * P / MN)))
    check(k > 0 and err_b <= 1e-12 and err_n <= 1e-12,
          "%s: impulse P = (1 + e) m M v0 / (m + M) = %.6f N s with M = 1 / sum N_i^2 / m_n = "
          "%.4f kg: ball %.12f m/s (error %.1e), nodes -N_i P / m_n (error %.1e; 1e-12)"
          % (what, P, M, vb[k, 2], err_b, err_n))
    mom = MS * vb[:, :] + MN * vn.sum(axis=1)
    dmom = np.max(np.abs(mom - np.array([0, 0, -MS * V0])))
    check(dmom <= 1e-13, "%s: momentum m v + sum m_n v_i = m v0 throughout (error %.1e N s)"
          % (what, dmom))
    tang = np.max(np.abs(vn[k, :, :2])) + np.max(np.abs(vb[k, :2]))
    check(tang <= 1e-13, "%s: no tangential impulse on a normal hit (%.1e m/s)" % (what, tang))
    T = r["energy/kinetic"]
    if e == 1.0:
        check(abs(T[-1] - T[0]) <= 1e-12 * T[0],
              "%s: the kinetic energy kept: %.15f J -> %.15f J" % (what, T[0], T[-1]))
    else:
        lost = MS * V0 ** 2 / 2 * M / (MS + M)
        check(abs(T[0] - T[-1] - lost) <= 1e-12,
              "%s: the impact took m M v0^2 / (2 (m + M)) = %.12f J (%.12f J)"
              % (what, lost, T[0] - T[-1]))
    err, scale = balance(r)
    check(err <= 1e-12 * scale, "%s: energy balance |E - E0 - W + D| = %.1e J" % (what, err))

# ---- a die at rest off centre on a sprung patch
K, C, MD, G, XD, YD, A = 750.0, 40.0, 0.1, 9.81, 0.3, 0.5, 0.1


def rest_deck(name, law=""):
    bodies, loads = surface_text([0.0] * 4, (K, C))
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, {-G}]
bodies:
{bodies}  - {{name: die, shape: {{box: [{A}, {A}, {A}]}}, mass: {MD}, position: [{XD}, {YD}, {A / 2 + 1e-3}]}}
{loads}surfaces:
  - {{name: sheet, nodes: [n00, n01, n10, n11], grid: [2, 2]}}
contacts:
  - {{name: die_sheet, between: [die, sheet], friction: 0.3{law}}}
solver:
  dt: 1.0e-3
  t_end: 1.5
output: {{every: 50, xdmf: false}}
""")


for law in ("", ", law: penalty, stiffness: 1.0e4, damping: 20"):
    what = "die at rest on a sprung patch%s" % (", penalty law" if law else "")
    r = attempt(what, rest_deck("rest%d.yaml" % len(law), law))
    if r is None:
        continue
    pos, v = r["bodies/position"][-1], r["bodies/velocity"][-1]
    zn = np.array([pos[body_index(r, n), 2] for n in NODES])
    g = pos[body_index(r, "die")]
    # the nodes' x, y move by friction's share only (~1e-7 m): the unit patch's (xi, eta)
    delta = (MN * G + MD * G * weights(g[0], g[1])) / K
    err = np.max(np.abs(-zn - delta))
    check(err <= 1e-6 * np.max(delta),
          "%s: node deflections %s m = (m_n g + m_d g N_i(x_G, y_G)) / k %s (x_G = %.6f m; "
          "error %.1e m, 1e-6 relative)" % (what, np.array2string(-zn, precision=7),
                                            np.array2string(delta, precision=7), g[0], err))
    # the dampers act along the zero-length springs, vertical here: the sway along x that
    # the landing's friction started (~6e-6 m/s) is undamped, the die sticking as it sways
    # (the penalty law's friction is regularized below friction_velocity, 1e-3 m/s: the die
    # creeps there as it sways, measured 2.4e-6 m/s)
    vz, slip = np.max(np.abs(v[:, 2])), np.max(np.abs(v[:, :2] - v[0, :2]))
    tol = 1e-5 if law else 1e-8
    check(vz <= 1e-8 and slip <= tol,
          "%s: at rest vertically, |v_z| = %.1e m/s (1e-8), and %s: the die and the nodes "
          "sway together (velocities %.1e m/s apart; %g)"
          % (what, vz, "creeping" if law else "sticking", slip, tol))
    rows = contact_rows(r, len(r["time"]) - 1)
    check(len(rows) == 4, "%s: on its four bottom corners (%d contacts)" % (what, len(rows)))

# ---- momentum with springs on contacted nodes
Q_DIE = "[0.99283054114822522, 0.088629904397189194, -0.03293436609817442, -0.073127177845030741]"


def sprung_deck(name, kind):
    if kind == "patch":
        bodies, loads = surface_text([0.0] * 4, (K, 0.0))
        return write_deck(name, f"""mbsim: 1
gravity: [0, 0, {-G}]
bodies:
{bodies}  - {{name: die, shape: {{box: [{A}, {A}, {A}]}}, mass: {MD}, position: [0.3, 0.6, 0.08],
     velocity: [0, 0, -1], orientation: {{quaternion: {Q_DIE}}}}}
{loads}surfaces:
  - {{name: sheet, nodes: [n00, n01, n10, n11], grid: [2, 2]}}
contacts:
  - {{name: die_sheet, between: [die, sheet], friction: 0.3}}
solver: {{dt: 1.0e-3, t_end: 0.3, moreau: {{theta: THETA}}}}
output: {{every: 1, xdmf: false}}
""")
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, {-G}]
bodies:
  - {{name: n00, type: point, mass: {MN}, position: [0, 0, 0], collision: [{{sphere: 0.05}}]}}
  - {{name: die, mass: {MD}, inertia: [1.0e-4, 1.0e-4, 1.0e-4], position: [0.02, 0.01, 0.13],
     velocity: [0, 0, -1], collision: [{{sphere: 0.05}}]}}
loads:
  - {{name: s_n00, type: spring, bodies: [ground, n00], points: [[0, 0, 0], [0, 0, 0]],
     stiffness: {K}, rest_length: 0}}
contacts:
  - {{name: ball_node, between: [die, n00], restitution: 0, friction: 0.3}}
solver: {{dt: 1.0e-3, t_end: 0.2, moreau: {{theta: THETA}}}}
output: {{every: 1, xdmf: false}}
""")


# ---- a node pushed up into a die's face
F_PUSH = 20.0


def sprung_nodes(rows, cols, place, k, c):
    """point masses n<i><j> at place(i, j) = (x, y, z), each on a spring (stiffness k,
    damping c, rest length 0) to ground at its own place: deck text of the bodies and the
    loads, and the node names row by row"""
    bodies = loads = ""
    names = []
    for i in range(rows):
        for j in range(cols):
            n, (x, y, z) = "n%d%d" % (i, j), place(i, j)
            names.append(n)
            bodies += "  - {name: %s, type: point, mass: %g, position: [%g, %g, %g]}\n" % (
                n, MN, x, y, z)
            loads += ("  - {name: k_%s, type: spring, bodies: [ground, %s], points: [[%g, %g, %g],"
                      " [%g, %g, %g]], stiffness: %g, damping: %g, rest_length: 0}\n"
                      % (n, n, x, y, z, x, y, z, k, c))
    return bodies, loads, names


def peak_deck(name):
    bodies, loads, names = sprung_nodes(
        3, 3, lambda i, j: ((j - 1) * 0.5, (i - 1) * 0.5, 0.0), K, C)
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, {-G}]
bodies:
{bodies}  - {{name: die, shape: {{box: [{A}, {A}, {A}]}}, mass: {MD}, position: [0, 0, {A / 2}]}}
loads:
{loads}  - {{name: push, type: force, body: n11, value: [0, 0, {F_PUSH}]}}
surfaces:
  - {{name: sheet, nodes: [{", ".join(names)}], grid: [3, 3]}}
contacts:
  - {{name: die_sheet, between: [die, sheet], friction: 0.3}}
solver: {{dt: 1.0e-3, t_end: 1.5}}
output: {{every: 50, xdmf: false}}
""")


what = "node pushed up into a die's face"
r = attempt(what, peak_deck("peak.yaml"))
if r is not None:
    k = len(r["time"]) - 1
    z = {n: r["bodies/position"][k, body_index(r, n), 2] for n in
         ["n%d%d" % (i, j) for i in range(3) for j in range(3)] + ["die"]}
    z11 = (F_PUSH - (MN + MD) * G) / K
    err = max(abs(z["n11"] - z11), abs(z["die"] - z11 - A / 2),
              max(abs(z[n] + MN * G / K) for n in z if n not in ("n11", "die")))
    rows = contact_rows(r, k)
    one = (len(rows) == 1 and int(rows[0][1]) == body_index(r, "die") and
           int(rows[0][2]) == body_index(r, "n11"))
    check(one and err <= 1e-9 and abs(rows[0][10] - MD * G * 1e-3) <= 1e-12,
          "%s: at rest the node at (F - (m_n + m_d) g) / k = %.9f m (%.9f), the die's centre "
          "0.05 m above it, the others at -m_n g / k (largest error %.1e m, 1e-9); %d "
          "contact(s) at the end, %s, normal impulse %.6e N s (m_d g dt = %.6e)"
          % (what, z11, z["n11"], err, len(rows),
             "die on the node" if one else "not die on the node alone",
             rows[0][10] if len(rows) else 0.0, MD * G * 1e-3))

# ---- a die across a ridge between its nodes
K_R, C_R, PHI = 1.0e5, 100.0, 0.3


def ridge_deck(name):
    bodies, loads, names = sprung_nodes(
        2, 3, lambda i, j: (float(j), float(i), 0.0 if j == 1 else -0.2), K_R, C_R)
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, {-G}]
bodies:
{bodies}  - {{name: die, shape: {{box: [{A}, {A}, {A}]}}, mass: {MD}, position: [1, 0.5, {A / 2 + 1e-3}],
     orientation: {{axis: [0, 0, 1], angle: {PHI}}}}}
loads:
{loads}surfaces:
  - {{name: roof, nodes: [{", ".join(names)}], grid: [2, 3]}}
contacts:
  - {{name: die_roof, between: [die, roof], friction: 0.5}}
solver: {{dt: 1.0e-3, t_end: 0.5}}
output: {{every: 50, xdmf: false}}
""")


what = "die across a ridge between its nodes"
r = attempt(what, ridge_deck("ridge.yaml"))
if r is not None:
    k = len(r["time"]) - 1
    z = {n: r["bodies/position"][k, body_index(r, n), 2] for n in
         ["n%d%d" % (i, j) for i in range(2) for j in range(3)] + ["die"]}
    zr = -(MN + MD / 2) * G / K_R
    err = max(abs(z["n01"] - zr), abs(z["n11"] - zr), abs(z["die"] - zr - A / 2),
              max(abs(z[n] + 0.2 + MN * G / K_R) for n in z if n[0] == "n" and n[2] != "1"))
    rows = contact_rows(r, k)
    ys = sorted(row[4] for row in rows)
    dy = A / 2 / np.cos(PHI)
    where = (len(rows) == 2 and max(abs(row[3] - 1.0) for row in rows) <= 1e-9 and
             abs(ys[0] - 0.5 + dy) <= 1e-6 and abs(ys[1] - 0.5 - dy) <= 1e-6)
    imp = max(abs(row[10] - MD * G * 1e-3 / 2) for row in rows) if len(rows) else np.inf
    gmin = min(row[9] for row in rows) if len(rows) else -np.inf
    check(where and err <= 1e-9 and imp <= 1e-12 and gmin >= -1e-9,
          "%s: %d contact(s) at the end (two at the ridge's y = 0.5 -+ %.6f: %s), each normal "
          "impulse m_d g dt / 2 (largest error %.1e N s, 1e-12), smallest gap %.1e m (-1e-9); "
          "the ridge's nodes at -(m_n + m_d / 2) g / k = %.4e m, the die's centre 0.05 m above "
          "them, the eaves at -m_n g / k (largest error %.1e m, 1e-9)"
          % (what, len(rows), dy, ["%.6f" % y for y in ys], imp, gmin, zr, err))

for kind, theta in (("patch", 0.5), ("patch", 0.7), ("sphere", 0.5)):
    what = ("tilted die on a sprung patch" if kind == "patch" else
            "ball on a sprung point mass") + ", theta = %g" % theta
    path = sprung_deck("mom_%s.yaml" % kind, kind)
    with open(path) as fh:
        text = fh.read().replace("THETA", repr(theta))
    with open(path, "w") as fh:
        fh.write(text)
    r = attempt(what, path)
    if r is None:
        continue
    names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
    nodes = [i for i, n in enumerate(names) if n.startswith("n")]
    mass = np.array([MN if n.startswith("n") else MD for n in names])
    x, v, dt = r["bodies/position"], r["bodies/velocity"], np.diff(r["time"])[:, None]
    P = np.einsum("i,kij->kj", mass, v)
    rest = x[0, nodes]
    xn, vn = x[:, nodes], v[:, nodes]
    x_theta = xn[:-1] + theta * dt[:, :, None] * ((1 - theta) * vn[:-1] + theta * vn[1:])
    gravity = mass.sum() * np.array([0.0, 0.0, -G]) * dt
    res = np.diff(P, axis=0) - gravity + K * dt * (x_theta - rest).sum(axis=1)
    naive = np.diff(P, axis=0) - gravity + K * dt * ((xn[:-1] + xn[1:]) / 2 - rest).sum(axis=1)
    cnt = r["contacts/count"][1:]
    err, err_naive = np.max(np.abs(res)), np.max(np.abs(naive))
    check(np.sum(cnt > 0) >= 20 and err <= 1e-13,
          "%s: momentum change = gravity + springs' impulse at x_theta in every step, %d of "
          "them in contact (error %.1e N s, 1e-13; with the recorded (x0 + x1) / 2 instead: "
          "%.1e N s)" % (what, np.sum(cnt > 0), err, err_naive))
done()

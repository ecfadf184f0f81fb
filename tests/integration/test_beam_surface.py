"""Contact on a beam's surface (docs/decks.md "Beams", `collision: {capsule: r, surface: true}`):
the contact point is the material point of the section's perimeter under the contact, fixed
to the nodes' directors, so a tangential impulse has its moment r x F on them. Checked
against closed forms and a momentum balance computed here from the deck's constants (nothing
uses the program's contact code):
- a short stiff beam of circular section (radius r, a solid cylinder) lying across the floor,
  launched sliding with v0 normal to its axis and no spin, Coulomb mu: with `surface: true`
  friction spins it up until it rolls, at t = (v0 - v) / (mu g) with v = v0 / (1 + J / (m
  r^2)), m and J the beam's mass and rotary inertia about its axis from density and section
  (rho A and rho (I2 + I3) per length: v = 2/3 v0, t = v0 / (3 mu g) for the circle), then
  rolls on (omega r = v), the rolling speed's error falling as dt^2; friction took m v0^2 / 6
  (the kinetic energy lost); the energy balance closes. With `surface: false` (points on the axis) it slides at -mu g until it
  stops at v0 / (mu g), its directors unchanged;
- a cantilever of circular section whose tip segment is struck from above by a ball moving
  along y (friction, e = 0): the free nodes' angular momentum about the beam's axis (the
  consistent mass matrix's rows of the free nodes, from /state/q and /state/v) after the
  impact equals the contact's angular impulse about the axis, (-r n) x P_t with the friction
  impulse P_t on the beam and the lever -r n to the perimeter (3e-3), negative for a ball
  moving along +y on top of a beam along +x, and the struck element twists that way (K1 <
  0); the clamped node's row is left out, since the consistent mass couples it to the others
  and the clamp takes an impulse of its own. Without `surface` the same strike gives no
  angular momentum about the axis and no twist."""
import numpy as np

from common import attempt, balance, check, done, write_deck

G = 9.81

# ---- rolling: a 0.1 m steel rod of radius 10 mm across the floor
R, LEN, RHO, MU, V0, DT = 0.01, 0.1, 7800.0, 0.3, 0.5, 1.0e-3


def roll_deck(name, surface, dt=DT):
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, -9.81]
beams:
  - name: rod
    from: [0, 0, {R}]
    to: [{LEN}, 0, {R}]
    elements: 2
    up: [0, 0, 1]
    section: {{E: 2.0e11, nu: 0.3, density: {RHO}, circle: {R}}}
    collision: {{capsule: {R}, surface: {surface}}}
    velocity: [0, {V0}, 0]
ground:
  collision:
    - {{name: floor, plane: {{point: [0, 0, 0], normal: [0, 0, 1]}}}}
contacts:
  - {{name: rod_floor, between: [rod, ground], friction: {MU}}}
solver:
  dt: {dt}
  t_end: 0.2
output:
  xdmf: false
""")


def node_fields(r, beam, nnode, field, what="state/q"):
    """[N, nnode, 3] of coordinate block `field` (phi, d1, d2, d3) of every node"""
    names = r["q_names"]
    cols = [[names.index("%s[%d].%s.%s" % (beam, i, field, c)) for c in "xyz"]
            for i in range(nnode)]
    return r[what][:, cols]


area, ip = np.pi * R ** 2, np.pi * R ** 4 / 2  # A and I2 + I3 of the circle
mass, spin = RHO * area * LEN, RHO * ip * LEN
v_roll = V0 / (1 + spin / (mass * R ** 2))
t_roll = (V0 - v_roll) / (MU * G)

what = "rolling rod, surface: true"
r = attempt(what, roll_deck("roll.yaml", "true"))
if r is not None:
    t = r["time"]
    vy = np.mean(node_fields(r, "rod", 3, "phi", "state/v")[:, :, 1], axis=1)
    d2, d3 = node_fields(r, "rod", 3, "d2"), node_fields(r, "rod", 3, "d3")
    w2, w3 = node_fields(r, "rod", 3, "d2", "state/v"), node_fields(r, "rod", 3, "d3", "state/v")
    # omega = 1/2 sum_i d_i x d_i' (d1 along the axis gives no spin about it)
    omega = 0.5 * np.mean(np.cross(d2, w2) + np.cross(d3, w3), axis=1)[:, 0]
    rolling = np.abs(vy + omega * R) <= 1e-6 * V0
    k = int(np.argmax(rolling))
    check(k > 0 and np.all(rolling[k:]) and abs(t[k] - t_roll) <= DT,
          "%s: rolls from t = %.4f s, (v0 - v) / (mu g) = %.4f s = v0 / (3 mu g) (dt)"
          % (what, t[k], t_roll))
    late = slice(int(round(0.1 / DT)), None)
    dv = np.max(np.abs(vy[late] - v_roll)) / v_roll
    slip = np.max(np.abs(vy[late] + omega[late] * R)) / v_roll
    check(dv <= 1e-4 and slip <= 1e-6,
          "%s: then rolls at v0 / (1 + J / (m r^2)) = %.6f m/s = 2/3 v0 (max deviation %.1e, "
          "1e-4), omega r = -v about x (slip %.1e of v, 1e-6)" % (what, v_roll, dv, slip))
    Df = r["energy/friction_dissipated"][-1]
    check(abs(Df - mass * V0 ** 2 / 6) <= 1e-4 * mass * V0 ** 2,
          "%s: friction took %.9f J, m v0^2 / 6 = %.9f J (1e-4 of m v0^2)"
          % (what, Df, mass * V0 ** 2 / 6))
    err, scale = balance(r)
    check(err <= 1e-8 * scale, "%s: energy balance |E - E0 - W + D| = %.2e J <= 1e-8 x %.4g J"
          % (what, err, scale))

    # the rolling speed's error falls as dt^2 (the onset step's share of slip and roll):
    # measured -6.17e-5, -1.54e-5, -3.86e-6 relative at dt = 2e-3, 1e-3, 5e-4
    r2 = attempt(what + ", dt = 2e-3", roll_deck("roll2.yaml", "true", 2 * DT))
    if r2 is not None:
        vy2 = np.mean(node_fields(r2, "rod", 3, "phi", "state/v")[:, :, 1], axis=1)
        e1, e2 = abs(vy2[-1] / v_roll - 1), abs(vy[-1] / v_roll - 1)
        check(e2 <= 5e-5 and 3.0 <= e1 / e2 <= 5.0,
              "%s: the rolling speed's error %.2e at dt = 2e-3, %.2e at 1e-3 (ratio %.2f: order "
              "2)" % (what, e1, e2, e1 / e2))

what = "sliding rod, surface: false"
r = attempt(what, roll_deck("slide.yaml", "false"))
if r is not None:
    t = r["time"]
    vy = np.mean(node_fields(r, "rod", 3, "phi", "state/v")[:, :, 1], axis=1)
    k = int(np.argmax(vy <= 1e-9))
    check(k > 0 and abs(t[k] - V0 / (MU * G)) <= DT,
          "%s: slides until t = %.4f s, v0 / (mu g) = %.4f s (dt)" % (what, t[k], V0 / (MU * G)))
    mid = int(round(0.1 / DT))
    check(abs(vy[mid] - (V0 - MU * G * t[mid])) <= 1e-9,
          "%s: at %.2f s v = %.9f m/s, v0 - mu g t = %.9f (1e-9)"
          % (what, t[mid], vy[mid], V0 - MU * G * t[mid]))
    d2 = node_fields(r, "rod", 3, "d2")
    tilt = np.max(np.abs(d2 - d2[0]))
    check(tilt <= 1e-10, "%s: no spin, the directors d2 unchanged to %.1e (1e-10)"
          % (what, tilt))

# ---- the eccentric strike on a clamped soft rod (two elements, 0.5 m, radius 10 mm): a ball
# moving along +y and down hits the top of the tip segment
RS, LS, RHOS, NE = 0.01, 0.5, 1000.0, 2


def strike_deck(name, surface):
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, 0]
bodies:
  - {{name: ball, mass: 0.01, inertia: [4.0e-7, 4.0e-7, 4.0e-7], position: [0.49, 0, 0.03],
     velocity: [0, 0.2, -1.0], collision: [{{sphere: 0.01}}]}}
beams:
  - name: arm
    from: [0, 0, 0]
    to: [{LS}, 0, 0]
    elements: {NE}
    up: [0, 0, 1]
    section: {{E: 2.0e6, nu: 0.3, density: {RHOS}, circle: {RS}}}
    collision: {{capsule: {RS}, surface: {surface}}}
joints:
  - {{name: clamp, type: fixed, bodies: [ground, "arm[0]"], point: [0, 0, 0]}}
contacts:
  - {{name: strike, between: [ball, arm], friction: 0.5}}
solver:
  dt: 1.0e-4
  t_end: 0.0105
output:
  xdmf: false
""")


def free_spin(r, k):
    """the angular momentum about x (the parts of phi and of the directors) of the rows of the free nodes 1, 2 of the consistent mass
    (rho A on phi, rho I on d2 and d3, M^ab = rho l / 6 [[2, 1], [1, 2]] per element)"""
    nn, l = NE + 1, LS / NE
    M = np.zeros((nn, nn))
    for e in range(NE):
        M[e:e + 2, e:e + 2] += l / 6 * np.array([[2.0, 1.0], [1.0, 2.0]])
    a_, i_ = RHOS * np.pi * RS ** 2, RHOS * np.pi * RS ** 4 / 4
    out = np.zeros(2)  # phi's part, the directors' part
    for field, w in (("phi", a_), ("d2", i_), ("d3", i_)):
        x = node_fields(r, "arm", nn, field)[k]
        v = node_fields(r, "arm", nn, field, "state/v")[k]
        for a in range(1, nn):
            for b in range(nn):
                out[int(field != "phi")] += M[a, b] * w * np.cross(x[a], v[b])[0]
    return out


spun = {}
for surface in ("true", "false"):
    what = "struck cantilever, surface: %s" % surface
    r = attempt(what, strike_deck("strike_%s.yaml" % surface, surface))
    if r is None:
        continue
    tab, off, cnt = r["contacts/table"], r["contacts/offsets"], r["contacts/count"]
    imp = r["contacts/impulse_since_record"]
    hit = [k for k in range(len(r["time"])) if np.any(tab[off[k]:off[k] + cnt[k], 10] > 0)]
    if not hit:
        check(False, "%s: the ball strikes the arm" % what)
        continue
    k = hit[0]
    row, P = tab[off[k]], imp[off[k]]
    n = row[6:9]  # from the ball (body 0, a) to the arm's segment (b)
    Pt = P - np.dot(P, n) * n
    moment = np.cross(-RS * n, Pt)[0]
    spun[surface] = (free_spin(r, k), moment, r["beams/arm/strain"][k, -1, 3])
    if surface == "true":
        Lx = np.sum(spun[surface][0])
        check(moment < 0 and abs(Lx - moment) <= 3e-3 * abs(moment),
              "%s: the free nodes' angular momentum about the axis %.6e N m s after the impact, "
              "the friction impulse's moment (-r n) x P_t = %.6e N m s (3e-3, < 0)"
              % (what, Lx, moment))
        check(spun[surface][2] < 0, "%s: the struck element twists negatively about x: K1 = "
              "%.3e 1/m" % (what, spun[surface][2]))
    err, scale = balance(r)
    check(err <= 1e-8 * scale, "%s: energy balance |E - E0 - W + D| = %.2e J <= 1e-8 x %.4g J"
          % (what, err, scale))
if "true" in spun and "false" in spun:
    Ls, K1 = spun["false"][0][1], spun["false"][2]
    check(abs(Ls) <= 1e-9 * abs(spun["true"][0][1]) and abs(K1) <= 1e-9 * abs(spun["true"][2]),
          "struck cantilever, surface: false: no spin about the axis (the directors' angular "
          "momentum %.1e N m s) and no twist (K1 = %.1e 1/m)" % (Ls, K1))


# ---- a sleeve on a pole: a body with two rings (`{ring: R}`, bores of radius R 0.2 mm wider
# than the pole's r, 6 mm apart along it) hanging on a horizontal pole clamped at both ends
# (a beam with `surface: true`, damped so that its own sag settles)
RR, RP, MS, MUS = 0.0102, 0.01, 0.005, 0.3


def sleeve_deck(name, v0):
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - name: sleeve
    mass: {MS}
    inertia: [1.25e-7, 1.25e-7, 1.25e-7]
    position: [0.5, 0, {-(RR - RP)}]
    velocity: [{v0}, 0, 0]
    collision:
      - {{ring: {RR}, offset: [-0.003, 0, 0], orientation: {{axis: [0, 1, 0], angle_deg: 90}}}}
      - {{ring: {RR}, offset: [0.003, 0, 0], orientation: {{axis: [0, 1, 0], angle_deg: 90}}}}
beams:
  - name: pole
    from: [0, 0, 0]
    to: [1, 0, 0]
    elements: 4
    up: [0, 0, 1]
    section: {{E: 2.0e11, nu: 0.3, density: 7800, circle: {RP}}}
    collision: {{capsule: {RP}, surface: true}}
    damping: 2.0e-3
joints:
  - {{name: left, type: fixed, bodies: [ground, "pole[0]"], point: [0, 0, 0]}}
  - {{name: right, type: fixed, bodies: [ground, "pole[-1]"], point: [1, 0, 0]}}
contacts:
  - {{name: bore, between: [sleeve, pole], friction: {MUS}}}
solver:
  dt: 1.0e-3
  t_end: {0.3 if v0 == 0 else 0.1}
output:
  xdmf: false
""")


what = "sleeve hanging on a pole"
r = attempt(what, sleeve_deck("sleeve_rest.yaml", 0))
if r is not None:
    # each ring's centre c (world: x + R offset) against the pole's chord (the capsule's axis)
    # between the nodes around it: the axis crosses the ring's plane (normal to the axis, to
    # the sleeve's tilt) at X, and the bore's gap is R - r - |X - c|
    xs, rot = r["bodies/position"][-1, 0], r["bodies/orientation"][-1, 0]
    nodes = r["beams/pole/position"][-1]
    gaps = []
    for off in (-0.003, 0.003):
        c = xs + rot @ np.array([off, 0.0, 0.0])
        i = int(np.clip(np.searchsorted(nodes[:, 0], c[0]) - 1, 0, len(nodes) - 2))
        a, u = nodes[i], nodes[i + 1] - nodes[i]
        ax = rot[:, 0]  # the ring's axis 3 = the body's axis 1
        X = a + np.dot(c - a, ax) / np.dot(u, ax) * u
        gaps.append(RR - RP - np.linalg.norm(X - c))
    check(min(gaps) >= -1e-9 and min(gaps) <= 1e-9,
          "%s: it hangs with a bore's gap R - r - |X - c| closed (%.2e m and %.2e m at the two "
          "rings, the smaller within 1e-9 m of 0), R - r = %.1f mm" % (what, gaps[0], gaps[1],
                                                                     (RR - RP) * 1e3))
    k = len(r["time"]) - 1
    imp = r["contacts/impulse_since_record"][r["contacts/offsets"][k]:][:r["contacts/count"][k]]
    fz = -np.sum(imp[:, 2]) / (r["time"][k] - r["time"][k - 1])  # on the pole (b): minus
    check(abs(fz - MS * G) <= 1e-3 * MS * G,
          "%s: the bores carry its weight, %.6f N, m g = %.6f N (1e-3)" % (what, fz, MS * G))
what = "sleeve sliding along the pole"
r = attempt(what, sleeve_deck("sleeve_slide.yaml", 0.2))
if r is not None:
    x = r["bodies/position"][:, 0, 0]
    k = int(np.argmax(np.diff(x) <= 0))
    d_ref = 0.2 ** 2 / (2 * MUS * G)
    check(k > 0 and abs(x[k] - x[0] - d_ref) <= 1e-3 * d_ref,
          "%s: stops after %.4f mm, v0^2 / (2 mu g) = %.4f mm (1e-3)"
          % (what, (x[k] - x[0]) * 1e3, d_ref * 1e3))
    # the sleeve hangs from the bore like a pendulum and rocks after it stopped: the balance
    # closes to 1.5e-6 of its (small) energy scale, as with `surface: false`
    err, scale = balance(r)
    check(err <= 1e-5 * scale, "%s: energy balance |E - E0 - W + D| = %.2e J <= 1e-5 x %.4g J"
          % (what, err, scale))

done()

"""`chains:` (Denavit-Hartenberg tables expanded into bodies and joints) against forward
kinematics computed here in numpy from the DH matrices, independently of mbsim-run:
- standard and modified convention, a row with all four parameters nonzero, a prismatic row,
  a base frame placed by origin + orientation on a rotated fixed body (or the ground), links
  with their centre of mass off the frame origin: every link's frame (directors) and centre
  of mass at t = 0 (the offsets) and along prescribed joint motions (set with `motion:` on
  the rows) against FK(offsets + the prescribed coordinates), and /joints/coordinates
  against the prescribed values (the sign of the joint coordinates);
- a planar 2R arm written as a chain and body by body swings under gravity along identical
  trajectories;
- the expanded bodies and joints are usable by name (a load, another joint) and listed by
  --check; bad rows are errors at file:line:column, `alpha: 90` (radians) warns."""
import re

import numpy as np

from common import check, done, load, run, write_deck


def rot(axis, t):
    c, s = np.cos(t), np.sin(t)
    R = np.eye(4)
    i, j = {"x": (1, 2), "z": (0, 1)}[axis]
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def trans(axis, d):
    T = np.eye(4)
    T["xyz".index(axis), 3] = d
    return T


def fk(rows, q, base, convention):
    """world frames (4x4) of the links: rows (a, alpha, d, theta, type), joint coordinates q"""
    F, out = base.copy(), []
    for (a, alpha, d, theta, typ), qi in zip(rows, q):
        th = theta + (qi if typ == "revolute" else 0.0)
        dd = d + (qi if typ == "prismatic" else 0.0)
        if convention == "standard":
            T = rot("z", th) @ trans("z", dd) @ trans("x", a) @ rot("x", alpha)
        else:
            T = rot("x", alpha) @ trans("x", a) @ rot("z", th) @ trans("z", dd)
        F = F @ T
        out.append(F.copy())
    return out


# rows: a [m], alpha [rad], d [m], theta [rad], type; written with alpha_deg where the
# table is in degrees
ROWS = [(0.0, np.pi / 2, 0.31, 0.0, "revolute"),
        (0.4, -0.7, 0.12, 0.5, "revolute"),          # all four parameters nonzero
        (0.05, np.pi / 2, 0.2, -0.3, "prismatic"),    # a prismatic row
        (0.3, 0.0, -0.08, 1.1, "revolute")]
COMS = [[0.0, -0.1, 0.0], [-0.2, 0.01, 0.02], [0.0, 0.0, -0.05], [-0.15, 0.0, 0.0]]
AMP = [0.9, -1.3, 0.15, 2.0]  # prescribed coordinate changes [rad or m] over 1 s
ROW_TEXT = [
    "{a: 0, alpha_deg: 90, d: 0.31, theta: 0, type: revolute,\n"
    "         body: {mass: 2.7, shape: {cylinder: {radius: 0.06, length: 0.3}}, "
    "center_of_mass: %s},\n"
    "         motion: {value: %r, profile: {expression: \"smoothstep(0, 1, t)\"}}}",
    "{a: 0.4, alpha: -0.7, d: 0.12, theta: 0.5, type: revolute,\n"
    "         body: {mass: 1.5, inertia: [0.002, 0.03, 0.031], center_of_mass: %s},\n"
    "         motion: {value: %r, profile: {expression: \"smoothstep(0, 1, t)\"}}}",
    "{a: 0.05, alpha: \"pi / 2\", d: 0.2, theta_deg: -17.188733853924695, type: prismatic,\n"
    "         body: {mass: 0.8, shape: {box: [0.05, 0.05, 0.2]}, center_of_mass: %s},\n"
    "         motion: {value: %r, profile: {expression: \"smoothstep(0, 1, t)\"}}}",
    "{a: 0.3, alpha: 0, d: -0.08, theta: 1.1, type: revolute,\n"
    "         body: {mass: 0.5, shape: {box: [0.3, 0.04, 0.04]}, center_of_mass: %s},\n"
    "         motion: {value: %r, profile: {expression: \"smoothstep(0, 1, t)\"}}}",
]

CHAIN = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: pedestal, mass: 10, inertia: [1, 1, 1], position: [0.2, -0.1, 0.5], fixed: true,
     orientation: {axis: [1, 1, 0], angle_deg: 30}}
chains:
  - name: arm
    base: %s
    origin: [0.1, 0.05, 0.2]
    orientation: {axis: [0, 1, 1], angle_deg: 40}
    convention: %s
    links:
%s
solver: {dt: 0.01, t_end: 1.0}
output: {xdmf: false}
"""


def base_frame(on_body):
    def axis_angle(k, deg):
        k = np.asarray(k, float) / np.linalg.norm(k)
        t = np.radians(deg)
        K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        return np.eye(3) + np.sin(t) * K + (1 - np.cos(t)) * K @ K
    B0 = np.eye(4)
    B0[:3, :3] = axis_angle([0, 1, 1], 40)
    B0[:3, 3] = [0.1, 0.05, 0.2]
    if not on_body:
        return B0
    P = np.eye(4)
    P[:3, :3] = axis_angle([1, 1, 0], 30)
    P[:3, 3] = [0.2, -0.1, 0.5]
    return P @ B0


def smoothstep(t):
    u = np.clip(t, 0, 1)
    return 3 * u ** 2 - 2 * u ** 3


for convention in ("standard", "modified"):
    for base in ("ground", "pedestal"):
        what = "%s DH on %s" % (convention, base)
        links = "\n".join("      - " + ROW_TEXT[i] % (COMS[i], AMP[i]) for i in range(4))
        path = write_deck("chain_%s_%s.yaml" % (convention, base),
                          CHAIN % (base, convention, links))
        rc, _, err, out = run(path, check=False)
        check(rc == 0, "%s runs (exit %d%s)" % (what, rc, ": " + err[-300:] if rc else ""))
        if rc != 0:
            continue
        r = load(out)
        names = [n.decode() for n in r["bodies/names"]]
        jnames = [n.decode() for n in r["joints/names"]]
        idx = [names.index("arm.link%d" % (i + 1)) for i in range(4)]
        check(jnames[:4] == ["arm.joint%d" % (i + 1) for i in range(4)],
              "%s: joints named arm.joint1..4, first in /joints/names (%s)" % (what, jnames))
        B = base_frame(base == "pedestal")
        t = r["time"]
        worst_x = worst_R = worst_q = 0.0
        for k in range(len(t)):
            q = [a * smoothstep(t[k]) for a in AMP]
            frames = fk(ROWS, q, B, convention)
            for i, F in enumerate(frames):
                x = F[:3, :3] @ COMS[i] + F[:3, 3]
                worst_x = max(worst_x, np.max(np.abs(r["bodies/position"][k, idx[i]] - x)))
                worst_R = max(worst_R, np.max(np.abs(r["bodies/orientation"][k, idx[i]] -
                                                     F[:3, :3])))
                worst_q = max(worst_q, abs(r["joints/coordinates"][k, i, 0] - q[i]))
        check(worst_x < 1e-9 and worst_R < 1e-9,
              "%s: every link's centre of mass and directors at t = 0 and along the motions "
              "equal numpy's forward kinematics from the DH matrices (worst %.2g m, %.2g)"
              % (what, worst_x, worst_R))
        check(worst_q < 1e-9, "%s: /joints/coordinates are the prescribed coordinates "
              "(theta - offset, d - offset): worst %.2g" % (what, worst_q))
        check(abs(t[-1] - 1.0) < 1e-12 and np.max(np.abs(r["constraints/violation"])) < 1e-10,
              "%s: to t = 1 with the joints held (violation %.2g)"
              % (what, np.max(r["constraints/violation"])))

# ---- a planar 2R arm: DH chain and body by body, identical trajectories ----
L1, L2, M1, M2, T1, T2 = 0.8, 0.6, 1.2, 0.7, 0.4, -0.9
I1 = [0.001, M1 * L1 ** 2 / 12, M1 * L1 ** 2 / 12]
I2 = [0.001, M2 * L2 ** 2 / 12, M2 * L2 ** 2 / 12]
TAIL = """loads:
  - {name: push, type: joint_torque, joint: %s, value: 0.5, profile: {window: [0, 0.3]}}
solver: {dt: 0.005, t_end: 1.5}
output: {xdmf: false}
"""
DH2 = ("""mbsim: 1
gravity: [0, -9.81, 0]
chains:
  - name: arm
    base: ground
    convention: standard
    links:
      - {a: %r, alpha: 0, d: 0, theta: %r, type: revolute,
         body: {mass: %r, inertia: %r, center_of_mass: [%r, 0, 0]}}
      - {a: %r, alpha: 0, d: 0, theta: %r, type: revolute,
         body: {mass: %r, inertia: %r, center_of_mass: [%r, 0, 0]}}
""" % (L1, T1, M1, I1, -L1 / 2, L2, T2, M2, I2, -L2 / 2)) + TAIL % "arm.joint2"
e1 = np.array([np.cos(T1), np.sin(T1), 0])
e2 = np.array([np.cos(T1 + T2), np.sin(T1 + T2), 0])
elbow = L1 * e1
BB2 = ("""mbsim: 1
gravity: [0, -9.81, 0]
bodies:
  - {name: l1, mass: %r, inertia: %r, position: %r, orientation: {axis: [0, 0, 1], angle: %r}}
  - {name: l2, mass: %r, inertia: %r, position: %r, orientation: {axis: [0, 0, 1], angle: %r}}
joints:
  - {name: j1, type: revolute, bodies: [ground, l1], point: [0, 0, 0], axis: [0, 0, 1]}
  - {name: j2, type: revolute, bodies: [l1, l2], point: %r, axis: [0, 0, 1]}
""" % (M1, I1, list(L1 / 2 * e1), T1, M2, I2, list(elbow + L2 / 2 * e2), T1 + T2,
       list(elbow))) + TAIL % "j2"
rc1, _, err1, out1 = run(write_deck("arm_dh.yaml", DH2), check=False)
rc2, _, err2, out2 = run(write_deck("arm_bodies.yaml", BB2), check=False)
check(rc1 == 0 and rc2 == 0, "planar 2R arm: both decks run (%s%s)" % (err1[-200:], err2[-200:]))
if rc1 == 0 and rc2 == 0:
    a, b = load(out1), load(out2)
    dx = np.max(np.abs(a["bodies/position"] - b["bodies/position"]))
    dR = np.max(np.abs(a["bodies/orientation"] - b["bodies/orientation"]))
    dq = np.max(np.abs(a["joints/coordinates"][:, :, 0] - b["joints/coordinates"][:, :, 0]))
    swing = np.ptp(a["joints/coordinates"][:, 0, 0])
    check(dx < 1e-9 and dR < 1e-9 and dq < 1e-9 and swing > 0.5,
          "planar 2R arm: the DH chain and the body-by-body arm swing along identical "
          "trajectories (positions %.2g m, directors %.2g, joint angles %.2g apart; the shoulder "
          "swings %.2f rad)" % (dx, dR, dq, swing))
    dE = np.max(np.abs(a["energy/total"] - b["energy/total"]))
    check(dE < 1e-9, "planar 2R arm: the same energies (%.2g J apart)" % dE)

# ---- a chain on a moving base with motions that start at a rate: the links start in the
# base's velocity field plus the motions' rates, so the joints' velocity constraints hold at
# t = 0 without projection (a deck whose velocities violate a joint is refused) ----
VEL = """mbsim: 1
bodies:
  - {name: cart, mass: 2, inertia: [1, 1, 1], position: [0.3, 0.1, 0], velocity: [0.5, 0, 0.2],
     angular_velocity: [0.1, 0.3, -0.2]}
chains:
  - name: c
    base: cart
    origin: [0.1, 0, 0.05]
    convention: standard
    links:
      - {a: 0.3, alpha_deg: 30, d: 0.1, theta: 0.2, type: revolute,
         body: {mass: 1, inertia: [0.1, 0.1, 0.1]},
         motion: {value: 0.5, profile: {table: [[0, 0], [1, 1]]}}}
      - {a: 0.2, alpha: 0, d: 0.1, theta: 0, type: prismatic,
         body: {mass: 1, inertia: [0.1, 0.1, 0.1], center_of_mass: [0.1, 0.05, 0]},
         motion: {value: 0.3, profile: {expression: "t"}}}
      - {a: 0.2, alpha: 1, d: 0.1, theta: 0, type: revolute,
         body: {mass: 1, inertia: [0.1, 0.1, 0.1], center_of_mass: [0.1, 0, 0.02]}}
solver: {t_end: 0.02, dt: 0.01}
output: {xdmf: false}
"""
rc, _, err, out = run(write_deck("vel.yaml", VEL), check=False)
ok = rc == 0
if ok:
    r = load(out)
    vv = r["constraints/velocity_violation"][0]
    rates = r["joints/rates"][0, :2, 0]
    ok = vv < 1e-12 and np.allclose(rates, [0.5, 0.3], atol=1e-12)
check(ok, "a chain on a moving base whose motions start at a rate: its links' initial "
      "velocities satisfy the joints (exit %d%s)" % (rc, "" if rc else ", velocity violation "
                                                   "%.2g, joint rates %s" % (vv, rates)))

# ---- usable by name, --check lists them ----
USE = """mbsim: 1
bodies:
  - {name: plug, mass: 0.1, shape: {box: [0.02, 0.02, 0.02]}, position: [0.7, 0, 0.5]}
chains:
  - name: lwr
    base: ground
    convention: modified
    links:
      - {a: 0, alpha: 0, d: 0.3, theta: 0, type: revolute, body: {mass: 1, shape: {sphere: 0.05}}}
      - {a: 0, alpha_deg: -90, d: 0, theta: 0, type: revolute,
         body: {mass: 1, shape: {box: [0.1, 0.1, 0.4]}}}
joints:
  - {name: grip, type: fixed, bodies: [lwr.link2, plug], point: [0.7, 0, 0.5]}
loads:
  - {name: tau, type: joint_torque, joint: lwr.joint1, value: 0.3}
  - {name: f, type: force, body: lwr.link2, value: [0, 0, 1]}
ground: {collision: [{plane: {point: [0, 0, -1], normal: [0, 0, 1]}}]}
contacts:
  - {between: [lwr.link1, ground]}
solver: {t_end: 0.01}
"""
p = write_deck("use.yaml", USE)
rc, so, err, _ = run(p, "--check", check=False)
listed = all(s in so for s in ("lwr: modified convention, base ground, 2 links: bodies "
                               "lwr.link1 .. lwr.link2, joints lwr.joint1 .. lwr.joint2",
                               "  lwr.link1: rigid, mass 1 kg", "  lwr.link2: rigid, mass 1 kg",
                               "  lwr.joint1: revolute, ground - lwr.link1, point [0, 0, 0] m, "
                               "axis [0, 0, 1]",
                               "  lwr.joint2: revolute, lwr.link1 - lwr.link2, point [0, 0, 0.3] "
                               "m, axis [0, 1, ",
                               "  grip: fixed, lwr.link2 - plug",
                               "tau: joint_torque on joint lwr.joint1",
                               "f: force on lwr.link2"))
check(rc == 0 and listed, "--check lists the chain, its bodies and joints, and the joint, loads "
      "and contact that name them (exit %d)%s" % (rc, "" if listed else ":\n" + so + err))
m = re.search(r"lwr\.link2: rigid, mass 1 kg, .* at \[([^\]]*)\]", so)
check(m is not None and np.allclose([float(v) for v in m.group(1).split(",")], [0, 0, 0.3]),
      "--check: lwr.link2's centre at its modified-DH frame origin [0, 0, 0.3] (%s)"
      % (m.group(1) if m else None))

# ---- errors at file:line:column, the degrees warning ----
BAD = """mbsim: 1
bodies:
  - {name: b, mass: 1, inertia: [1, 1, 1], position: [0, 0, 0]}
chains:
  - name: c
    base: %s
    convention: %s
    links:
      - {a: 0, alpha: 0, d: 0, theta: 0, type: revolute, body: {mass: 1, inertia: [1, 1, 1]}}
      - %s
"""
GOOD_ROW = "{a: 0.1, alpha: 0, d: 0, theta: 0, type: revolute, body: {mass: 1, inertia: [1, 1, 1]}}"
cases = [
    ("ground", "standard", "{a: 0.1, d: 0, theta: 0, type: revolute, body: {mass: 1}}",
     r":10:9: chains\[0\] 'c' links\[1\]: missing required key 'alpha'"),
    ("ground", "standard", "{a: 0.1, alpha: 0, alpha_deg: 0, d: 0, theta: 0, type: revolute}",
     r":10:39: .*give alpha \(radians\) or alpha_deg \(degrees\), not both"),
    ("ground", "standard", "{a: 0.1, alpha: 0, d: 0, theta: 0, type: hinge, body: {mass: 1}}",
     r":10:50: .*chain joint type 'hinge' is not supported; valid: revolute, prismatic"),
    ("ground", "standard", "{a: 0.1, alpha: 0, d: 0, theta: 0, type: revolute, "
     "body: {mass: 1, inertia: [1, 1, 1], colour: red}}", r":10:\d+: .*colour"),
    ("ground", "standard", "{a: 0.1, alpha: 0, d: 0, theta: 0, type: revolute, lenght: 2, "
     "body: {mass: 1}}", r":10:\d+: .*lenght"),
    ("ground", "standard", "{a: 0.1, alpha: 0, d: 0, theta: 0, type: revolute}",
     r":10:9: .*missing required key 'body'"),
    ("ground", "standard", "{a: x, alpha: 0, d: 0, theta: 0, type: revolute}", r":10:13: .*a"),
    ("ground", "standard", "{a: 0.1, alpha: 0, d: 0, theta: 0, type: revolute, "
     "body: {mass: 1, inertia: [1, 1, 5]}}", r":10:\d+: .*triangle"),
    ("gruond", "standard", GOOD_ROW, r":6:11: .*base: body 'gruond' is not defined"),
    ("ground", "craig", GOOD_ROW, r":7:17: .*convention"),
]
for base, conv, row, want in cases:
    p = write_deck("bad.yaml", BAD % (base, conv, row))
    rc, so, err, out = run(p, check=False)
    ok = rc == 1 and re.search(want, err) is not None
    check(ok, "bad chain row %r: exit 1 and an error matching %r (%s)" % (row[:50], want,
                                                                        err.strip()[:200]))
p = write_deck("deg.yaml", BAD % ("b", "standard", GOOD_ROW.replace("alpha: 0", "alpha: 90")))
rc, so, err, out = run(p, "--check", check=False)
check(rc == 0 and re.search(r"deg.yaml:10:\d+: chains\[0\] 'c' links\[1\]: alpha 90 rad is more "
                            r"than a turn .*did you mean alpha_deg: 90\?", err) is not None,
      "alpha: 90 (radians) warns: degrees meant? (%s)" % err.strip()[:200])
DUP = BAD % ("ground", "standard", GOOD_ROW) + """joints:
  - {name: c.joint2, type: fixed, bodies: [b, c.link2], point: [0, 0, 0]}
"""
rc, so, err, out = run(write_deck("dup.yaml", DUP), check=False)
check(rc == 1 and re.search(r":12:12: .*duplicate joint name 'c.joint2' \(first at 10:9\)", err),
      "a joint named like a chain's joint is a duplicate (%s)" % err.strip()[:200])
DUPB = BAD.replace("name: b,", "name: c.link1,") % ("ground", "standard", GOOD_ROW)
rc, so, err, out = run(write_deck("dupb.yaml", DUPB), check=False)
check(rc == 1 and re.search(r":9:9: .*'c.link1' is taken by the body at 3:5", err),
      "a body named like a chain's link is refused at the row (%s)" % err.strip()[:200])

done()

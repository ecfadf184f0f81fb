"""initial.assemble: the positions at t = 0 moved onto the joints, the nearest configuration in
the metric of the mass matrix.
- decks/four_bar_assembled.yaml (the four-bar by its link lengths, `body_points`, coupler and
  rocker placed 5 and 8 degrees off): the assembled coupler and rocker angles solve the
  loop-closure (Freudenstein) equation, solved here by scipy's brentq, to 1e-12; the link ends
  meet; the run equals decks/four_bar.yaml (positions computed by hand) to round-off; the joint
  coordinates start at zero.
- Two point masses m1 = 1, m2 = 3 on a distance joint of `length` 2 placed 1 apart: the nearest
  configuration in the mass metric keeps the centre of mass and stretches the line between
  them (x1 = xc - m2/M L e, x2 = xc + m1/M L e), to 1e-14.
- A rod on a hinge whose body point is 5 cm off, with a rotational spring and a spring with the
  default rest length: the hinge holds after assembling, the joint angle, the rotational
  spring's torque and the spring's force are zero at t = 0 (measured from the assembled
  configuration), initial_rate sets its rate; a restart continues the run exactly.
- Refusals (exit 1, nothing written): joints that do not hold without initial.assemble (located
  at the joint, naming the key), a loop that cannot close, `point` with `body_points`,
  `length` on a revolute joint, a negative length, a non-boolean assemble, velocities that do
  not follow the joints after the assembly, a beam that would have to be strained."""
import os
import re
import subprocess

import numpy as np
from scipy.optimize import brentq

from common import MBSIM, TMP, check, deck, done, load, run, write_deck

# ---- the four-bar by its link lengths
p = subprocess.run([MBSIM, deck("four_bar_assembled.yaml"), "-o", os.path.join(TMP, "fb.h5"),
                    "--t-end", "0.2"], capture_output=True, text=True)
check(p.returncode == 0 and "initial:      positions assembled onto the joints" in p.stdout,
      "four_bar_assembled.yaml runs; the summary says it assembled (%s)"
      % [ln for ln in p.stdout.splitlines() if ln.startswith("initial:")])
r = load(os.path.join(TMP, "fb.h5"))
names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
a, b, c, dd = 0.4, 1.2, 1.0, 1.0
th2 = np.pi / 2
K1, K2, K3 = dd / a, dd / c, (a * a - b * b + c * c + dd * dd) / (2 * a * c)
th4 = brentq(lambda t4: K1 * np.cos(t4) - K2 * np.cos(th2) + K3 - np.cos(th2 - t4), 1.0, 2.0,
             xtol=1e-15)
B = a * np.array([np.cos(th2), np.sin(th2)])
C = np.array([dd, 0.0]) + c * np.array([np.cos(th4), np.sin(th4)])
th3 = np.arctan2(C[1] - B[1], C[0] - B[0])


def angle_of(i):
    """the angle of the body's first director (column 0 of its orientation) in the xy plane"""
    o = r["bodies/orientation"][0, i]
    return np.arctan2(o[1][0], o[0][0]), r["bodies/position"][0, i]


t3, x3 = angle_of(names.index("coupler"))
t4, x4 = angle_of(names.index("rocker"))
e_ang = max(abs(t3 - th3), abs(t4 - th4))
e_pos = max(np.max(np.abs(x3[:2] - (B + C) / 2)), np.max(np.abs(x4[:2] - (C + [dd, 0]) / 2)))
turned = dict((k, float(v)) for k, v in re.findall(r"^ +(\w+): centre moved [0-9.e-]+ m, "
                                                 r"turned ([0-9.e-]+) deg$", p.stdout, re.M))
check(set(turned) == {"coupler", "rocker"} and
      abs(turned["coupler"] - abs(35 - np.degrees(th3))) <= 1e-3 and
      abs(turned["rocker"] - abs(80 - np.degrees(th4))) <= 1e-3,
      "the summary lists the bodies that moved and how far they turned (%s; 35 and 80 deg "
      "in the deck)" % turned)
check(e_ang <= 1e-12 and e_pos <= 1e-12,
      "assembled: coupler %.10f rad, rocker %.10f rad solve Freudenstein's equation (brentq: "
      "%.10f, %.10f): %.1e rad, centres %.1e m" % (t3, t4, th3, th4, e_ang, e_pos))
check(np.max(np.abs(r["constraints/violation"])) <= 1e-12,
      "the joints hold at every record (%.1e)" % np.max(np.abs(r["constraints/violation"])))
check(np.max(np.abs(r["joints/coordinates"][0, :, 0])) <= 1e-14,
      "joint angles start at zero (measured from the assembled configuration)")
_, _, _, ref = run(deck("four_bar.yaml"), "--t-end", "0.2")
ref = load(ref)
dq = max(np.max(np.abs(ref["bodies/position"] - r["bodies/position"])),
         np.max(np.abs(ref["bodies/velocity"] - r["bodies/velocity"])),
         np.max(np.abs(ref["joints/coordinates"][:, :, 0] - r["joints/coordinates"][:, :, 0])))
check(dq <= 1e-12, "the run equals four_bar.yaml's (positions and velocities by hand): "
      "positions, velocities, joint angles to %.1e" % dq)

# ---- two point masses on a distance joint: the nearest configuration in the mass metric
PM = """mbsim: 1
gravity: [0, 0, 0]
bodies:
  - {name: p1, type: point, mass: 1.0, position: [0.3, 0.2, 0.1]}
  - {name: p2, type: point, mass: 3.0, position: [0.9, 1.0, 0.1]}
joints:
  - {name: link, type: distance, bodies: [p1, p2], length: 2.0}
initial: {assemble: true}
solver: {integrator: em, dt: 1.0e-3, t_end: 0.001}
output: {xdmf: false}
"""
_, out, _, res = run(write_deck("pm.yaml", PM))
r = load(res)
x1, x2 = np.array([0.3, 0.2, 0.1]), np.array([0.9, 1.0, 0.1])
xc = (1.0 * x1 + 3.0 * x2) / 4.0
e = (x2 - x1) / np.linalg.norm(x2 - x1)
want1, want2 = xc - 0.75 * 2.0 * e, xc + 0.25 * 2.0 * e
got = r["bodies/position"][0]
err = max(np.max(np.abs(got[0] - want1)), np.max(np.abs(got[1] - want2)))
check(err <= 1e-14, "point masses 1 and 3 kg stretched from 1 m to length 2: centre of mass kept, "
      "moved along their line in the ratio 3:1 (%.1e)" % err)

# ---- a rod on a hinge whose point is off, with springs measured from t = 0
ROD = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: rod, mass: 1.0, inertia: [1.0e-4, 0.03, 0.03], position: [0.31, 0, -0.05],
     orientation: {axis: [0, 1, 0], angle_deg: 10}}
joints:
  - {name: hinge, type: revolute, bodies: [ground, rod], body_points: [[0, 0, 0], [-0.3, 0, 0]],
     axis: [0, 1, 0]%s}
loads:
  - {name: tspring, type: rotational_spring, joint: hinge, stiffness: 5.0}
  - {name: lspring, type: spring, bodies: [ground, rod], points: [[1, 0, 0], [0.6, 0, 0]],
     stiffness: 10.0}
%s
solver: {integrator: em, dt: 1.0e-3, t_end: 0.01}
output: {xdmf: false}
"""
rc, so, se, res = run(write_deck("rod.yaml", ROD % (", initial_rate: 2.0",
                                                   "initial: {assemble: true, "
                                                   "project_velocities: true}")))
r = load(res)
lnames = [n.decode() if isinstance(n, bytes) else n for n in r["loads/names"]]
x = r["bodies/position"][0, 0]
o = r["bodies/orientation"][0, 0]
check(np.max(np.abs(r["constraints/violation"])) <= 1e-13 and
      abs(np.linalg.norm(x) - 0.3) <= 1e-13,
      "rod: the hinge holds after assembling, the centre 0.3 m from the pivot (%.16f)"
      % np.linalg.norm(x))
check(abs(r["joints/coordinates"][0, 0, 0]) <= 1e-14 and
      abs(r["joints/rates"][0, 0, 0] - 2.0) <= 1e-12,
      "rod: joint angle 0 at t = 0, rate 2 rad/s (initial_rate)")
fl = r["loads/force"][0]
check(np.max(np.abs(fl[lnames.index("tspring")])) <= 1e-12 and
      np.max(np.abs(fl[lnames.index("lspring")])) <= 1e-12,
      "rod: the rotational spring's torque and the spring's force (default rest length) are 0 "
      "at t = 0 (%.1e, %.1e)" % (np.max(np.abs(fl[lnames.index("tspring")])),
                                 np.max(np.abs(fl[lnames.index("lspring")]))))

# a restart assembles too: its joint angles and spring torques are measured from the same
# configuration, so it continues the uninterrupted run exactly
rod = write_deck("rod_r.yaml", ROD % (", initial_rate: 2.0",
                                      "initial: {assemble: true, project_velocities: true}"))
FULL = ("--set", "solver.newton.reuse=false")
_, _, _, full = run(rod, "--t-end", "0.02", *FULL)
_, _, _, half = run(rod, "--t-end", "0.01", *FULL)
_, _, _, rest = run(rod, "--restart", half, "--t-end", "0.02", *FULL)
a, b = load(full), load(rest)
diff = max(np.max(np.abs(a[k][-1] - b[k][-1])) for k in
           ("state/q", "joints/coordinates", "loads/force"))
check(diff == 0.0, "rod: a restart at t = 0.01 ends where the uninterrupted run does, joint "
      "angle and spring torques included (%.1e)" % diff)


def refused(name, txt, want, line):
    pth = write_deck(name, txt)
    if os.path.exists(os.path.join(TMP, "no.h5")):
        os.remove(os.path.join(TMP, "no.h5"))
    q = subprocess.run([MBSIM, pth, "-o", os.path.join(TMP, "no.h5")], capture_output=True,
                       text=True)
    loc = ("%s:%d:" % (name, line)) in q.stderr if line else True
    check(q.returncode == 1 and want in q.stderr and loc and
          not os.path.exists(os.path.join(TMP, "no.h5")),
          "refused: %s (%s)" % (want, q.stderr.strip()[-220:]))


refused("no_assemble.yaml", ROD % ("", ""), "joint 'hinge' does not hold at t = 0", 7)
refused("no_assemble.yaml", ROD % ("", ""), "`initial: {assemble: true}`", 7)
refused("pm_no_assemble.yaml", PM.replace("initial: {assemble: true}\n", ""),
        "joint 'link' does not hold at t = 0", 7)
fb = open(deck("four_bar_assembled.yaml")).read()
short = fb.replace("  b: 1.2      # coupler", "  b: 0.05     # coupler")
refused("open_loop.yaml", short, "initial.assemble: the joints cannot all hold",
        short.splitlines().index("  - name: rocker_pin") + 1)
# a coupler too short to close the loop by more: the joint left furthest off is named at its
# line, never a body's rigidity (before: "leaves rigidity of body 'coupler' off by 0.486")
shorter = fb.replace("  b: 1.2      # coupler", "  b: 0.1      # coupler")
refused("short_coupler.yaml", shorter,
        "leaves joint 'rocker_pin' (revolute, row 1) off by 0.486",
        shorter.splitlines().index("  - name: rocker_pin") + 1)
# a distance joint whose points coincide where the assembly starts has no direction: named
# at its line (before: an unlocated "the Newton matrix is singular")
COINCIDE = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: a, type: point, mass: 1.0, position: [0, 0, 0]}
  - {name: b, type: point, mass: 1.0, position: [0, 0, 0]}
joints:
  - {name: anchor, type: spherical, bodies: [ground, a], point: [0, 0, 0]}
  - {name: rod, type: distance, bodies: [a, b], length: 1.0}
initial: {assemble: true}
solver: {dt: 1.0e-3, t_end: 0.01}
"""
refused("coinciding.yaml", COINCIDE,
        "initial.assemble: joint 'rod' (distance, row 1) has no gradient", 8)
refused("both.yaml", ROD.replace("body_points: [[0, 0, 0], [-0.3, 0, 0]]",
                                 "point: [0, 0, 0], body_points: [[0, 0, 0], [-0.3, 0, 0]]")
        % ("", "initial: {assemble: true}"), "give either 'point' or 'body_points'", 7)
refused("length_rev.yaml", ROD % (", length: 1.0", "initial: {assemble: true}"),
        "a revolute joint takes no 'length'", 8)
refused("length_neg.yaml", PM.replace("length: 2.0", "length: -1"),
        "length: expected a positive length", 7)
refused("assemble_word.yaml", PM.replace("{assemble: true}", "{assemble: maybe}"),
        "initial.assemble", 8)
refused("velocity.yaml", ROD.replace("position: [0.31, 0, -0.05],",
                                     "position: [0.31, 0, -0.05], velocity: [0, 0, 1.0],")
        % ("", "initial: {assemble: true}"),
        "the initial velocities violate the joint", 0)
arm = open(deck("beams/flexible_arm.yaml")).read()
arm = arm.replace("    point: [0.1, 0, 0]", "    body_points: [[0.12, 0, 0], [0, 0, 0]]").replace(
    "\nsolver:", "\ninitial: {assemble: true}\nsolver:")
refused("arm.yaml", arm, "initial.assemble would move beam node 'arm[0]' (by 0.02), straining", 0)
done()

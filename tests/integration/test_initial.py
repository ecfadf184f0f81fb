"""initial.project_velocities and a joint's initial_rate: the velocities at t = 0 projected onto
the joints (mass metric), with the given joint rates kept.
- The shipped four-bar without any velocities: the projected angular velocities of coupler and
  rocker equal those of the loop's velocity equations (the derivative of the loop closure
  a e^{i th2} + b e^{i th3} - c e^{i th4} - d = 0, solved here with numpy) to 1e-12, and the
  run then matches the shipped deck (whose velocities were computed by hand) to round-off.
- A pendulum given no velocity and initial_rate 2 rad/s turns at 2 rad/s at t = 0.
- Refusals: initial_rate without project_velocities, on a joint with a motion, on a spherical
  joint, rates that conflict with the loop (exit 1, located). initial.assemble:
  test_assemble.py."""
import os
import re
import subprocess

import numpy as np

from common import MBSIM, TMP, check, deck, done, load, run, write_deck

# the shipped decks/four_bar_projected.yaml: decks/four_bar.yaml without its velocities
bare = open(deck("four_bar_projected.yaml")).read()
plain = re.sub(r"\n    (velocity|angular_velocity): \[[^\]]*\][^\n]*", "",
               open(deck("four_bar.yaml")).read())
lines = [ln for ln in plain.splitlines() if ln.strip() and not ln.startswith("#")
         and not ln.startswith("title:")]
check("velocity" not in bare.split("joints:")[0].split("bodies:")[1] and
      all(ln in bare.splitlines() for ln in lines),
      "four_bar_projected.yaml is four_bar.yaml without velocities")
path = deck("four_bar_projected.yaml")
p = subprocess.run([MBSIM, path, "-o", os.path.join(TMP, "bare.h5"), "--t-end", "0.1"],
                   capture_output=True, text=True)
check(p.returncode == 0 and "initial:      velocities projected onto the joints" in p.stdout,
      "projected: the summary says so (%s)" % (p.stdout + p.stderr)[-300:])
r = load(os.path.join(TMP, "bare.h5"))
names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
w = r["bodies/angular_velocity"][0]
# the loop's velocity equations at t = 0
a, b, c = 0.4, 1.2, 1.0
th2, th3, th4, w2 = np.pi / 2, 0.5228409229217487, 1.5311010051727896, 2 * np.pi
A = np.array([[-b * np.sin(th3), c * np.sin(th4)], [b * np.cos(th3), -c * np.cos(th4)]])
rhs = np.array([a * w2 * np.sin(th2), -a * w2 * np.cos(th2)])
w3, w4 = np.linalg.solve(A, rhs)
e = max(abs(w[names.index("coupler"), 2] - w3), abs(w[names.index("rocker"), 2] - w4),
        abs(w[names.index("crank"), 2] - w2))
check(e <= 1e-12, "four-bar: projected omega2, omega3, omega4 = %.8f, %.8f, %.8f equal the loop's "
      "velocity equations (%.1e)" % (w[0, 2], w[1, 2], w[2, 2], e))
check(np.max(r["constraints/velocity_violation"]) <= 1e-12, "velocity constraints hold")
_, _, _, ref = run(deck("four_bar.yaml"), "--t-end", "0.1")
ref = load(ref)
dq = np.max(np.abs(ref["state/q"] - r["state/q"]))
check(dq <= 1e-9, "the run equals the shipped deck's (hand-computed velocities) to %.1e" % dq)

PEND = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: rod, mass: 1.0, inertia: [1.0e-4, 0.03, 0.03], position: [0, 0, -0.3],
     orientation: {axis: [0, 1, 0], angle_deg: 90}}
joints:
  - {name: hinge, type: revolute, bodies: [ground, rod], point: [0, 0, 0], axis: [0, 1, 0]%s}
%s
solver: {dt: 1.0e-3, t_end: 0.01}
output: {xdmf: false}
"""


pp = write_deck("pend.yaml", PEND % (", initial_rate: 2.0", "initial: {project_velocities: true}"))
_, _, _, out = run(pp)
r = load(out)
check(abs(r["joints/rates"][0, 0, 0] - 2.0) <= 1e-12 and
      abs(r["bodies/velocity"][0, 0, 0] - (-0.6)) <= 1e-12,
      "initial_rate 2 rad/s: the rod turns at %.15g rad/s, its centre at %.15g m/s (-0.6)"
      % (r["joints/rates"][0, 0, 0], r["bodies/velocity"][0, 0, 0]))


def refused(name, txt, want, line):
    pth = write_deck(name, txt)
    q = subprocess.run([MBSIM, pth, "-o", os.path.join(TMP, "no.h5")], capture_output=True,
                       text=True)
    check(q.returncode == 1 and want in q.stderr and ("%s:%d:" % (name, line)) in q.stderr and
          not os.path.exists(os.path.join(TMP, "no.h5")),
          "refused: %s (%s)" % (want, q.stderr.strip()[-200:]))


refused("no_project.yaml", PEND % (", initial_rate: 2.0", ""),
        "initial_rate sets the joint's rate by projecting the velocities", 7)
refused("motion_rate.yaml", PEND % (", initial_rate: 2.0, motion: {value: 1, profile: {ramp: "
                                    "[0, 1]}}", "initial: {project_velocities: true}"),
        "takes no 'initial_rate'", 7)
refused("spherical_rate.yaml",
        PEND.replace("type: revolute", "type: spherical").replace(", axis: [0, 1, 0]", "")
        % (", initial_rate: 2.0",
                                                            "initial: {project_velocities: true}"),
        "a spherical joint takes no 'initial_rate'", 7)
conflict = bare.replace("    axis: [0, 0, 1]\n  - name: rocker_pivot",
                        "    axis: [0, 0, 1]\n    initial_rate: 1.0\n  - name: rocker_pivot")
refused("conflict.yaml", conflict, "conflict with the constraints or each other",
        conflict.splitlines().index("  - name: rocker_pin") + 1)
done()

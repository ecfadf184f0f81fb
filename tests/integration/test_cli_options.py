"""Command-line details: --opt=value is --opt value for every option that takes a value; the
summary and the `integrator_reason` attribute say where the integrator came from (deck,
command line or auto); --check prints the model's masses, inertias, gravity, joints and
loads."""
import os
import re
import subprocess

import h5py
import numpy as np

from common import MBSIM, TMP, check, deck, done


def mbsim(*args):
    return subprocess.run([MBSIM] + list(args), capture_output=True, text=True, timeout=120)


# --opt=value: the same run as --opt value (identical q), for each option with a value
quick = deck("quickstart.yaml")
base = os.path.join(TMP, "spaced.h5")
p = mbsim(quick, "-o", base, "--quiet", "--t-end", "0.05", "--dt", "5e-3", "--integrator",
          "midpoint", "--set", "bodies.link2.density=3000")
check(p.returncode == 0, "the reference run with '--opt value' (exit %d: %s)" % (p.returncode, p.stderr))
joined = os.path.join(TMP, "joined.h5")
p = mbsim(quick, "--output=" + joined, "--quiet", "--t-end=0.05", "--dt=5e-3",
          "--integrator=midpoint", "--set=bodies.link2.density=3000")
check(p.returncode == 0 and os.path.exists(joined),
      "--output= --t-end= --dt= --integrator= --set= accepted (exit %d: %s)" % (p.returncode, p.stderr))
if p.returncode == 0:
    with h5py.File(base, "r") as a, h5py.File(joined, "r") as b:
        check(a["state/q"].shape == b["state/q"].shape and
              np.array_equal(a["state/q"][()], b["state/q"][()]) and
              b.attrs["integrator"] in (b"midpoint", "midpoint") and
              abs(b.attrs["dt"] - 5e-3) < 1e-18 and abs(b.attrs["t_end"] - 0.05) < 1e-18,
              "--opt=value gives the same run as --opt value")
        check(b"density: 3000" in (b.attrs["deck"] if isinstance(b.attrs["deck"], bytes)
                                   else b.attrs["deck"].encode()),
              "--set=KEY=VALUE splits at the first '=' only")
# --restart=RUN.h5 continues like --restart RUN.h5
cont = os.path.join(TMP, "cont.h5")
p = mbsim(quick, "-o", cont, "--quiet", "--t-end=0.1", "--dt=5e-3", "--integrator=midpoint",
          "--set=bodies.link2.density=3000", "--restart=" + base)
ok = p.returncode == 0
if ok:
    with h5py.File(cont, "r") as f:
        ok = abs(f["time"][0] - 0.05) < 1e-12 and abs(f["time"][-1] - 0.1) < 1e-12
check(ok, "--restart=RUN.h5 continues from RUN.h5 (exit %d: %s)" % (p.returncode, p.stderr.strip()))
# a bad value given inline is reported like a spaced one: exit 1, nothing written
bad = os.path.join(TMP, "bad.h5")
p = mbsim(quick, "-o", bad, "--dt=-1")
check(p.returncode == 1 and "dt" in p.stderr and not os.path.exists(bad),
      "--dt=-1: exit 1 naming dt, nothing written (%s)" % p.stderr.strip())
p = mbsim(quick, "-o", bad, "--integrator=rk4")
check(p.returncode == 1 and "rk4" in p.stderr and not os.path.exists(bad),
      "--integrator=rk4: exit 1 naming the word (%s)" % p.stderr.strip())
# flags take no value, unknown options stay unknown
for opt in ("--quiet=1", "--check=yes", "--bogus=3"):
    p = mbsim(quick, "-o", bad, opt)
    check(p.returncode == 1 and ("'%s'" % opt) in p.stderr and not os.path.exists(bad),
          "%s: exit 1, refused by name" % opt)
p = mbsim(quick, "--check", "--dt=")
check(p.returncode == 1, "--dt= (an empty value): exit 1")

# where the integrator came from: auto, the deck, --integrator, --set solver.integrator=
dp = deck("double_pendulum.yaml")  # solver.integrator: em in the file
cases = [
    (quick, [], "auto:"),
    (dp, [], "chosen in the deck"),
    (dp, ["--integrator", "midpoint"], "chosen on the command line: --integrator midpoint"),
    (quick, ["--integrator=euler"], "chosen on the command line: --integrator euler"),
    (dp, ["--set", "solver.integrator=genalpha"],
     "chosen on the command line: --set solver.integrator=genalpha"),
    # another override of the solver does not make the deck's choice a command-line one
    (dp, ["--set", "solver.dt=2e-3"], "chosen in the deck"),
]
for i, (d, extra, want) in enumerate(cases):
    p = mbsim(d, "--check", *extra)
    line = [l for l in p.stdout.splitlines() if l.startswith("integrator:")]
    check(p.returncode == 0 and len(line) == 1 and ("(" + want) in line[0],
          "--check %s: integrator line says '%s' (%s)" % (" ".join(extra), want, line))
    out = os.path.join(TMP, "reason%d.h5" % i)
    p = mbsim(d, "-o", out, "--t-end", "0.01", *extra)
    with h5py.File(out, "r") as f:
        r = f.attrs["integrator_reason"]
        r = r.decode() if isinstance(r, bytes) else str(r)
    check(p.returncode == 0 and r.startswith(want) and ("(" + want) in p.stdout,
          "run %s: summary and integrator_reason say '%s' (%s)" % (" ".join(extra), want, r))
# --check lists the model: gravity, masses and principal moments (against a box's closed form
# and numpy's eigenvalues of a full inertia tensor), joints with bodies, point, axes, loads
J = [[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.0]]
CHECK_DECK = """mbsim: 1
gravity: [0, -1.62, 0]
bodies:
  - {name: box, shape: {box: [0.4, 0.2, 0.1]}, density: 1000, position: [1, 0, 0]}
  - {name: tensor, mass: 3, inertia: %r, position: [2, 0, 0]}
  - {name: bob, type: point, mass: 0.5, position: [0, 0, -2]}
joints:
  - {name: hinge, type: revolute, bodies: [ground, box], point: [0.8, 0, 0], axis: [0, 0, 2]}
  - {name: cross, type: universal, bodies: [box, tensor], point: [1.5, 0, 0],
     axes: [[0, 1, 0], [0, 0, 1]]}
  - {name: rod, type: distance, bodies: [ground, bob], points: [[0, 0, 1], [0, 0, -2]]}
loads:
  - {name: spring, type: spring, bodies: [ground, tensor], points: [[2, 3, 4], [2, 0, 0]],
     stiffness: 40, damping: 0.5}
  - {name: motor, type: joint_torque, joint: hinge, value: 1.25}
  - {name: push, type: force, body: tensor, value: [0, 0, 7]}
""" % (J,)
cpath = os.path.join(TMP, "check_listing.yaml")
with open(cpath, "w") as f:
    f.write(CHECK_DECK)
p = mbsim(cpath, "--check")
out = p.stdout
check(p.returncode == 0 and "time:         dt = " in out and "dof:" in out,
      "--check on the listing deck: exit 0, the summary lines kept (%s)" % p.stderr.strip())
NUM = r"([-0-9.e+]+)"


def line_of(prefix):
    ls = [l for l in out.splitlines() if l.startswith(prefix)]
    return ls[0] if len(ls) == 1 else ""


g = re.search(r"gravity: +\[%s, %s, %s\] m/s\^2" % (NUM, NUM, NUM), line_of("gravity:"))
check(g is not None and [float(x) for x in g.groups()] == [0, -1.62, 0], "--check: gravity")
m, a, b, c = 1000 * 0.4 * 0.2 * 0.1, 0.4, 0.2, 0.1
box_I = sorted([m / 12 * (b * b + c * c), m / 12 * (a * a + c * c), m / 12 * (a * a + b * b)])
for name, mass, moments in (("box", m, box_I), ("tensor", 3.0, list(np.linalg.eigvalsh(J)))):
    r = re.search(r"rigid, mass %s kg, inertia %s, %s, %s kg m\^2, at \[" % (NUM, NUM, NUM, NUM),
                  line_of("  %s: " % name))
    ok = r is not None and abs(float(r.group(1)) / mass - 1) < 1e-5 and all(
        abs(float(x) - y) <= 1e-5 * max(moments) for x, y in zip(r.groups()[1:], moments))
    check(ok, "--check: %s's mass and principal moments %s (%s)" % (name, moments, line_of("  %s: " % name)))
check("bob: point, mass 0.5 kg, at [0, 0, -2] m" in out, "--check: a point mass, no inertia")
check(line_of("  hinge: ") == "  hinge: revolute, ground - box, point [0.8, 0, 0] m, axis [0, 0, 1]",
      "--check: the revolute joint, axis normalised (%s)" % line_of("  hinge: "))
check(line_of("  cross: ") == "  cross: universal, box - tensor, point [1.5, 0, 0] m, axes [0, 1, 0] and [0, 0, 1]",
      "--check: the universal joint's two axes (%s)" % line_of("  cross: "))
check(line_of("  rod: ").endswith("points [0, 0, 1] and [0, 0, -2] m, length 3 m"),
      "--check: the distance joint's points and length (%s)" % line_of("  rod: "))
check(line_of("  spring: ") == "  spring: spring, ground - tensor, points [2, 3, 4] and [2, 0, 0] m, "
      "stiffness 40 N/m, damping 0.5 N s/m, rest length 5 m",
      "--check: the spring, rest length the distance at t = 0 (%s)" % line_of("  spring: "))
check(line_of("  motor: ") == "  motor: joint_torque on joint hinge, 1.25 N m" and
      line_of("  push: ") == "  push: force on tensor, [0, 0, 7] N (world frame)",
      "--check: the joint torque and the force (%s; %s)" % (line_of("  motor: "), line_of("  push: ")))
done()

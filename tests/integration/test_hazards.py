"""Physics hazards (tests/hazards/): redundant constraints, initial conditions that violate a
joint, a step far too large, loads that blow the system up and energies that are not finite.
Each fails clearly: exit 1 for a model that cannot run (nothing written), exit 2 for a run
that fails (status "failed: ..." naming time, step, residual and worst constraint), and no
NaN or infinity is ever written as a result."""
import os
import re
import subprocess

import h5py
import numpy as np

from common import MBSIM, ROOT, TMP, check, done

HAZ = os.path.join(ROOT, "tests", "hazards")


def run(name, *extra):
    out = os.path.join(TMP, name + ".h5")
    p = subprocess.run([MBSIM, os.path.join(HAZ, name + ".yaml"), "-o", out, "--quiet"] +
                       list(extra), capture_output=True, text=True, timeout=600)
    return p, out


def all_finite(path):
    """every float value of every time series in the file is finite (the joint coordinates
    beyond each joint's count are NaN by definition: those must be NaN in every record, the
    others finite)"""
    bad = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f" and \
                    name not in ("state/multipliers", "joints/position"):
                x = obj[()]
                if name in ("joints/coordinates", "joints/rates") and x.size:
                    pad = np.isnan(x[0])
                    if not (np.all(np.isnan(x[:, pad])) and np.all(np.isfinite(x[:, ~pad]))):
                        bad.append(name)
                elif not np.all(np.isfinite(x)):
                    bad.append(name)
        f.visititems(visit)
    return bad


# redundant constraints: a planar four-bar of four revolute joints in 3D (3 of its 20 joint
# equations repeat the others) runs with the repeated rows dropped and named, also beside a
# free body where the count of equations does not show it
for name, dof in (("four_bar_revolute", 1), ("four_bar_with_free_body", 7)):
    s = subprocess.run([MBSIM, os.path.join(HAZ, name + ".yaml"), "--check"],
                       capture_output=True, text=True)
    check(s.returncode == 0 and "redundant:    dropped 3 equations that repeat the others: "
          "joint 'D' rows 3, 4, 5" in s.stdout,
          "%s: the summary names the 3 dropped rows (%s)" % (name, s.stderr.strip()))
    p, out = run(name, "--t-end", "0.05")
    check(p.returncode == 0, "%s: runs (%s)" % (name, p.stderr.strip()))
    with h5py.File(out, "r") as f:
        check(f.attrs["n_dof"] == dof and np.max(f["constraints/violation"][()]) < 1e-9,
              "%s: %d degree%s of freedom, the kept constraints held"
              % (name, dof, "" if dof == 1 else "s"))
        check(f.attrs["redundant_rows"] == "joint 'D' rows 3, 4, 5",
              "%s: the root attribute redundant_rows names them" % name)
# both ends of the loop driven: the second motion repeats what the loop fixes, refused
p, out = run("four_bar_two_motions")
err = p.stderr
check(p.returncode == 1 and not os.path.exists(out), "four_bar_two_motions: exit 1, nothing written")
check("four_bar_two_motions.yaml:14:5: the constraints are redundant" in err and
      all("'%s' (revolute)" % j in err for j in "ABCD") and "4 of the 22 joint equations" in err
      and "The prescribed motion of joint 'D' is one of them" in err and
      "Remove the motion of 'D'" in err,
      "four_bar_two_motions: the message names the loop, counts the repeated equations and "
      "says which motion to remove")
# the parallelogram laid flat (a change point): a row that repeats the others only there
p, out = run("four_bar_flat")
check(p.returncode == 1 and not os.path.exists(out) and "four_bar_flat.yaml:19:5: the "
      "constraints are redundant only here: joint 'D' row 1 repeats the others at t = 0 but not "
      "once the loop moves" in p.stderr and "singular position" in p.stderr,
      "four_bar_flat: a loop at a singular position is refused, naming the row")
p, out = run("four_bar_spherical_cylindrical")
check(p.returncode == 0, "the four-bar with the suggested joints runs (%s)" % p.stderr.strip())
with h5py.File(out, "r") as f:
    viol = np.max(f["constraints/violation"][()])
    # measured 8.9e-16
    check(f.attrs["n_dof"] == 1 and viol < 5e-15,
          "... with one degree of freedom and its constraints held (%.1e)" % viol)
    check(f.attrs["redundant_rows"] == "", "... and nothing dropped (redundant_rows empty)")

# a joint violated at t = 0 (a point mass away from its joint point), and initial velocities
# that violate a joint (tests/bad/velocity_violates_joint.yaml)
p, out = run("point_joint_offset")
check(p.returncode == 1 and "joint 'pin'" in p.stderr and "must be at its position" in p.stderr
      and "point_joint_offset.yaml:10:5" in p.stderr, "a joint violated at t = 0 is refused")
bad_v = os.path.join(ROOT, "tests", "bad", "velocity_violates_joint.yaml")
q = subprocess.run([MBSIM, bad_v, "-o", os.path.join(TMP, "v.h5"), "--quiet"],
                   capture_output=True, text=True)
check(q.returncode == 1 and "the initial velocities violate the joint" in q.stderr,
      "initial velocities that violate a joint are refused")

# a step far too large, without step control: exit 2 and a status that says where and why
p, out = run("dt_too_large")
with h5py.File(out, "r") as f:
    status = f.attrs["status"]
    t = f["time"][()]
check(p.returncode == 2, "dt far too large: exit 2 (got %d)" % p.returncode)
# the pendulum is chaotic: which step fails is not ours to fix, only that the status names it,
# that it is consistent with the records and that it comes before t_end
m = re.search(r"at t = ([0-9.e+-]+) \(step ([0-9]+), dt = ([0-9.e+-]+), em\)", status)
t_fail, step, dt_fail = (float(m.group(1)), int(m.group(2)), float(m.group(3))) if m else \
    (np.nan, -1, np.nan)
check(status.startswith("failed: Newton did not converge") and m is not None and
      "residual" in status and "worst constraint: joint 'rod" in status and
      "smaller dt" in status, "dt far too large: status names time, step, residual, worst "
      "constraint and the remedy ('%s...')" % status[:80])
check(dt_fail == 2.0 and 0 < step < 20 and t_fail == (step - 1) * dt_fail,
      "dt far too large: the failing step %d starts at t = %g = (step - 1) dt" % (step, t_fail))
check(len(t) == step and t[-1] == t_fail and all_finite(out) == [],
      "dt far too large: the records before the failure are kept (%d, the last at t = %g), "
      "all finite" % (len(t), t[-1]))
p, out = run("dt_too_large", "--set", "solver.max_halvings=10", "--t-end", "20")
with h5py.File(out, "r") as f:
    check(p.returncode == 0 and f.attrs["status"] == "completed" and
          np.min(f["solver/step_size"][1:]) < 2.0,
          "with step control the same deck completes on halved steps")

# a load that blows a pendulum up (from t = 0.5): exit 2, status failed, only finite records
p, out = run("blowup_pendulum")
with h5py.File(out, "r") as f:
    status = f.attrs["status"]
    t = f["time"][()]
check(p.returncode == 2 and status.startswith("failed: the residual is not finite") and
      "at t = 0.5" in status and "worst constraint: joint 'rod'" in status,
      "a runaway load: exit 2, status '%s...'" % status[:70])
check(abs(t[-1] - 0.5) < 1e-12 and all_finite(out) == [],
      "a runaway load: records up to t = 0.5 kept, no NaN or infinity written (%s)" %
      all_finite(out))

# a free mass pushed by 1e300 N: the kinetic energy overflows after one step
p, out = run("blowup_load")
with h5py.File(out, "r") as f:
    status = f.attrs["status"]
    n = f["time"].shape[0]
check(p.returncode == 2 and "non-finite value" in status and "/energy/kinetic" in status and
      "t = 0.001" in status, "an overflowing energy: exit 2, status '%s...'" % status[:70])
check(n == 1 and all_finite(out) == [], "an overflowing energy is never written")

# initial energy not finite (a spring of 1e300 N/m stretched by 1e5 m): not even the initial
# state is written
p, out = run("infinite_energy")
check(p.returncode == 2 and "non-finite value (inf) in /energy/potential" in p.stderr and
      not os.path.exists(out),
      "an infinite initial energy: exit 2, nothing written")
done()

"""The command line: --help, --version, --check, --set, the summary, determinism, the
output layout of docs/output.md."""
import glob
import os
import subprocess

import h5py
import numpy as np

from common import MBSIM, ROOT, TMP, check, deck, done, load, run

p = subprocess.run([MBSIM, "--help"], capture_output=True, text=True)
check(p.returncode == 0 and "usage: mbsim-run" in p.stdout and "--check" in p.stdout,
      "--help prints the usage and exits 0")
p = subprocess.run([MBSIM, "--version"], capture_output=True, text=True)
check(p.returncode == 0 and p.stdout.startswith("mbsim-run "), "--version")

# --check: model summary, nothing written
out = os.path.join(TMP, "check.h5")
p = subprocess.run([MBSIM, deck("quickstart.yaml"), "--check", "-o", out], capture_output=True,
                   text=True)
check(p.returncode == 0, "--check exits 0")
for want in ("bodies:       2 (2 rigid", "coordinates:  24", "constraints:  18", "dof:          6",
             "integrator:   em (auto"):
    check(want in p.stdout, "--check prints '%s'" % want)
check(not os.path.exists(out), "--check writes nothing")

# every shipped deck's --check: each "key:" line once, and no heading ("...:" ending a line)
# without entries under it
for path in sorted(glob.glob(os.path.join(ROOT, "decks", "*.yaml")) +
                   glob.glob(os.path.join(ROOT, "decks", "*", "*.yaml"))):
    if os.sep + "sweeps" + os.sep in path:
        continue  # sweep files, not decks
    p = subprocess.run([MBSIM, path, "--check"], capture_output=True, text=True)
    lines = p.stdout.splitlines()
    keys = [ln.split(":")[0] for ln in lines if ln and not ln.startswith(" ") and ":" in ln]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    empty = [ln for i, ln in enumerate(lines) if ln.endswith(":") and
             (i + 1 == len(lines) or not lines[i + 1].startswith("  "))]
    check(p.returncode == 0 and not dup and not empty,
          "--check of %s: no section twice (%s), no empty heading (%s)"
          % (os.path.relpath(path, ROOT), dup, empty))

# a full run with its summary
out = os.path.join(TMP, "quick.h5")
p = subprocess.run([MBSIM, deck("quickstart.yaml"), "-o", out], capture_output=True, text=True)
check(p.returncode == 0, "quickstart runs (exit %d: %s)" % (p.returncode, p.stderr.strip()))
for want in ("steps:", "newton:", "constraints:  max violation", "energy:       relative error",
             "wall time:", "status:       completed"):
    check(want in p.stdout, "summary shows '%s'" % want.strip())

# the output layout of docs/output.md
with h5py.File(out, "r") as f:
    a = f.attrs
    check(a["format"] == "mbsim-run/1", "format attribute")
    for k in ("version", "title", "deck", "integrator", "dt", "t_end", "status",
              "n_coordinates", "n_constraints", "n_dof"):
        check(k in a, "root attribute %s" % k)
    check(a["integrator"] == "em" and a["n_coordinates"] == 24 and a["n_dof"] == 6,
          "integrator and sizes")
    N = f["time"].shape[0]
    check(N == 501, "every 10th of 5000 steps plus t = 0: %d records" % N)
    shapes = {"energy/kinetic": (N,), "energy/potential": (N,), "energy/total": (N,),
              "energy/external_work": (N,), "energy/dissipated": (N,),
              "momentum/linear": (N, 3), "momentum/angular": (N, 3),
              "constraints/violation": (N,), "solver/iterations": (N,), "state/q": (N, 24),
              "state/v": (N, 24), "bodies/names": (2,), "bodies/position": (N, 2, 3),
              "bodies/orientation": (N, 2, 3, 3), "bodies/velocity": (N, 2, 3),
              "bodies/angular_velocity": (N, 2, 3)}
    for name, shape in shapes.items():
        check(name in f and f[name].shape == shape, "dataset /%s has shape %s" % (name, shape))
    check(f["solver/iterations"].dtype == np.int32, "/solver/iterations is int32")
    check(f["state/q"].compression == "gzip" and f["state/q"].shuffle and
          f["state/q"].maxshape[0] is None, "/state/q is chunked, shuffled, gzip, unlimited")
    names = [n.decode() if isinstance(n, bytes) else n for n in f["state/q"].attrs["names"]]
    check(names[3:6] == ["link1.d1.x", "link1.d1.y", "link1.d1.z"], "coordinate names")
    ds = [n.decode() if isinstance(n, bytes) else n for n in f["state/names"][()]]
    check(ds == names, "/state/names holds the same coordinate names as the attribute")
    check(abs(f["time"][-1] - 5.0) < 1e-12, "last record at t_end")
check(os.path.exists(out[:-3] + ".xmf"), "XDMF sidecar written")

# --set changes the run, and the deck attribute records the override
_, _, _, o1 = run(deck("quickstart.yaml"), "--t-end", "0.5", "--set", "bodies.link2.density=3000")
with h5py.File(o1, "r") as f:
    text = f.attrs["deck"]
    check("3000" in text, "deck attribute holds the overridden value")
    m1 = f["state/q"][-1]
_, _, _, o2 = run(deck("quickstart.yaml"), "--t-end", "0.5")
_, _, _, o3 = run(deck("quickstart.yaml"), "--t-end", "0.5")
r2, r3 = load(o2), load(o3)
check(np.array_equal(r2["state/q"], r3["state/q"]) and np.array_equal(r2["state/v"], r3["state/v"]),
      "deterministic: two runs give the same bytes of state")
check(not np.allclose(m1, r2["state/q"][-1]), "--set bodies.link2.density changes the motion")

# --set with a list: the Moon's gravity moves the pendulum as slowly as sqrt(1.62 / 9.81)
# predicts for small swings (linear in g); the file's deck holds the list
_, _, _, om = run(deck("double_pendulum.yaml"), "--t-end", "0.2", "--set",
                  "gravity=[0, 0, -1.62]", "--set", "output.every=1")
_, _, _, oe = run(deck("double_pendulum.yaml"), "--t-end", "0.2", "--set", "output.every=1")
rm, re_ = load(om), load(oe)
check("gravity: [0, 0, -1.62]" in rm["attrs"]["deck"], "--set gravity=[0, 0, -1.62] in the deck")
# from rest, x(t) - x(0) = -g c t^2 / 2 + O(t^4): the early displacements scale with g
dm = rm["state/q"][1:6] - rm["state/q"][0]
de = re_["state/q"][1:6] - re_["state/q"][0]
ratio = np.max(np.abs(dm)) / np.max(np.abs(de))
# measured 2.8e-17: the largest early displacement (bob2's z) scales with g to round-off
check(abs(ratio - 1.62 / 9.81) <= 1e-14, "--set gravity as a list: early motion scales with g "
      "(ratio %.8f, g ratio %.8f, difference %.1e)" % (ratio, 1.62 / 9.81, ratio - 1.62 / 9.81))
p = subprocess.run([MBSIM, deck("double_pendulum.yaml"), "--check", "--set", "gravity=[0, 0"],
                   capture_output=True, text=True)
check(p.returncode == 1 and "is not a valid YAML list" in p.stderr,
      "--set with a broken list: exit 1 and a clear message")

# --integrator and --dt
for integ in ("midpoint", "euler"):
    _, _, _, o = run(deck("quickstart.yaml"), "--t-end", "0.2", "--integrator", integ,
                     "--dt", "2e-3")
    r = load(o)
    check(r["attrs"]["integrator"] == integ and abs(r["attrs"]["dt"] - 2e-3) < 1e-15 and
          r["attrs"]["status"] == "completed", "--integrator %s --dt 2e-3 runs" % integ)
done()

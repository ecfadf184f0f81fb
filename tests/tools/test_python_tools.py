"""The Python tools: scripts/mbsim.py loads a run (arrays, metadata, deck), mbsim-plot writes
its four PNG plots, mbsim-compare says equal for two runs of the same deck (bit-identical)
and different after a --set change, with exit status 0, 1 and 2, in time and with --exact."""
import os
import subprocess
import sys

import h5py
import matplotlib.image as mpimg
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from common import ROOT, TMP, check, deck, done, run  # noqa: E402

PYTHON = os.environ.get("PYTHON", sys.executable)
SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)
import mbsim  # noqa: E402

DP = deck("double_pendulum.yaml")
_, _, _, a = run(DP, "--t-end", "2")
_, _, _, b = run(DP, "--t-end", "2")
_, _, _, c = run(DP, "--t-end", "2", "--set", "parameters.m2=1.5")

# mbsim.load
r = mbsim.load(a)
with h5py.File(a, "r") as f:
    check(np.array_equal(r.time, f["time"][()]) and np.array_equal(r.q, f["state/q"][()]),
          "load: time and q as numpy arrays")
    check(r.deck == f.attrs["deck"] and "Planar double pendulum" in r.deck, "load: the deck text")
    check(r.attrs["integrator"] == "em" and r.status == "completed" and
          r.attrs["n_coordinates"] == 6, "load: root attributes")
    E = f["energy/total"][()] - f["energy/external_work"][()] + f["energy/dissipated"][()]
    ref = np.max(np.abs(E - E[0])) / max(abs(E[0]), np.max(f["energy/kinetic"][()]))
check(abs(r.energy_error() - ref) <= 1e-15 * max(ref, 1.0), "load: the summary's energy error")
check(r.bodies["names"] == ["bob1", "bob2"] and r.joints["names"] == ["rod1", "rod2"],
      "load: body and joint names as str")
qi = 3
check(np.array_equal(r.body("bob2")["position"], r["bodies/position"][:, 1]) and
      np.array_equal(r.coordinate(r.coordinate_names[qi])[0], r.q[:, qi]),
      "load: body(), coordinate() and dataset access by path")
check(r.multipliers.shape == (len(r), 2) and r.joint("rod1")["position"].shape == (len(r), 3),
      "load: multipliers and joint positions")
check(r.acceleration is None, "load: an em run has no accelerations")
_, _, _, ga = run(DP, "--t-end", "0.5", "--integrator", "genalpha")
rg = mbsim.load(ga)
check(rg.acceleration is not None and rg.acceleration.shape == rg.q.shape,
      "load: a genalpha run's accelerations [N, n]")

# mbsim-plot
out = os.path.join(TMP, "plots")
p = subprocess.run([PYTHON, os.path.join(SCRIPTS, "mbsim-plot"), a, "-o", out],
                   capture_output=True, text=True, timeout=300)
pngs = ["energy.png", "momentum.png", "constraints.png", "newton.png"]
check(p.returncode == 0, "mbsim-plot runs (%s)" % p.stderr.strip()[-300:])
for name in pngs:
    path = os.path.join(out, name)
    ok = os.path.isfile(path)
    if ok:
        img = mpimg.imread(path)
        ok = img.shape[0] > 300 and img.shape[1] > 600 and np.std(img[:, :, :3]) > 0.05
    check(ok, "mbsim-plot wrote %s with content" % name)
p = subprocess.run([PYTHON, os.path.join(SCRIPTS, "mbsim-plot"), os.path.join(TMP, "no.h5")],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "cannot read" in p.stderr, "mbsim-plot of a missing file: exit 2")


# mbsim-compare
def compare(*args):
    p = subprocess.run([PYTHON, os.path.join(SCRIPTS, "mbsim-compare")] + list(args),
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


code, out_, _ = compare(a, b)
check(code == 0 and out_.splitlines()[-1].startswith("equal:") and
      "times: the same 201 records" in out_, "same deck twice: equal, exit 0 (%s)" %
      out_.strip())
code, out_, _ = compare(a, b, "--exact")
check(code == 0 and out_.startswith("equal:"), "--exact: same deck twice: equal, exit 0 (%s)" %
      out_.strip())
code, out_, _ = compare(a, c)
check(code == 1 and "/state/q[bob1.phi.x]:" in out_ and "/bodies/position[bob2]:" in out_ and
      "different:" in out_, "after --set parameters.m2=1.5: different, exit 1, by entity")
check("/bodies/names" not in out_ and "/time:" not in out_,
      "only the datasets that differ are listed")
code, out_, _ = compare(a, c, "--exact")
check(code == 1 and "/state/q:" in out_ and "/bodies/position:" in out_ and
      "different:" in out_ and "/time:" not in out_,
      "--exact after --set parameters.m2=1.5: different, exit 1")
code, out_, _ = compare(a, c, "--rtol", "1", "--atol", "100")
check(code == 0, "within generous tolerances: equal")
code, out_, _ = compare(a, c, "--atol", "1e-3", "--exclude", "solver/*")
check(code == 1 and "/solver/iterations" not in out_, "--exclude skips datasets")
_, _, _, short = run(DP, "--t-end", "1")
code, out_, _ = compare(a, short)
check(code == 1 and "/time: A covers [0, 2] s, B [0, 1] s" in out_,
      "different lengths: different time spans (%s)" % out_.strip()[-200:])
code, out_, _ = compare(a, short, "--exact")
check(code == 1 and "shapes differ" in out_, "--exact: different lengths: different shapes")
extra = os.path.join(TMP, "extra.h5")
with h5py.File(a, "r") as f, h5py.File(extra, "w") as g:
    for k in ("time", "state", "energy"):
        f.copy(k, g)
code, out_, _ = compare(a, extra)
check(code == 1 and "only in %s" % a in out_, "a dataset in one file only: different")
code, out_, _ = compare(a, extra, "--exact")
check(code == 1 and "only in %s" % a in out_, "--exact: a dataset in one file only: different")
code, _, err = compare(a)
check(code == 2, "one file only: usage error, exit 2")
code, _, err = compare(a, os.path.join(TMP, "missing.h5"))
check(code == 2 and "cannot read" in err, "missing file: exit 2")
done()

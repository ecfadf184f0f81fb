"""--restart: a run of [0, 10] equals a run of [0, 5] restarted to 10; the restarted file
starts with the restart record and continues the time grid and the output records; a
restart from another model, onto its own file or past t_end is refused."""
import os
import subprocess

import h5py
import numpy as np

from common import MBSIM, QUICK, TMP, check, deck, done, load, run

T_END = 2.0 if QUICK else 10.0
T_HALF = T_END / 2

# full Newton (no reused factorization): the restarted run takes exactly the steps of the
# uninterrupted one (the default modified Newton is checked below)
DP = deck("double_pendulum.yaml")
FULL = ("--set", "solver.newton.reuse=false")
_, _, _, full = run(DP, "--t-end", str(T_END), *FULL)
_, _, _, half = run(DP, "--t-end", str(T_HALF), *FULL)
rest = os.path.join(TMP, "restarted.h5")
p = subprocess.run([MBSIM, DP, "--restart", half, "--t-end", str(T_END), "-o", rest] +
                   list(FULL), capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "restart runs (exit %d: %s)" % (p.returncode, p.stderr.strip()))
check("mbsim-run" in p.stdout and "status:       completed" in p.stdout,
      "the restarted run prints its summary")
a, b, h = load(full), load(rest), load(half)
check(b["attrs"]["status"] == "completed", "restarted file: status completed")
src, _, t_src = b["attrs"]["restart_from"].partition(" at t=")
check(src == half and float(t_src) == h["time"][-1],
      "restarted file names where it came from: %s" % b["attrs"]["restart_from"])
check(abs(b["time"][-1] - T_END) < 1e-12 and abs(b["time"][0] - T_HALF) < 1e-12,
      "restarted file spans [%g, %g]" % (b["time"][0], b["time"][-1]))

# the final record equals the uninterrupted run's
for name in ("state/q", "state/v", "state/multipliers", "energy/total", "energy/kinetic",
             "momentum/angular", "bodies/position", "bodies/velocity", "joints/position",
             "joints/reaction"):
    diff = np.max(np.abs(a[name][-1] - b[name][-1]))
    check(diff == 0.0, "final %s equal to the uninterrupted run, bit for bit (max diff %.1e)"
          % (name, diff))

# every record after the restart: same times (the same grid and output steps), same state
i0 = int(np.searchsorted(a["time"], b["time"][0]))
check(np.array_equal(a["time"][i0:], b["time"]), "records at the same times as the full run")
check(np.array_equal(a["state/q"][i0:], b["state/q"]),
      "every record of q equal to the full run, bit for bit")

# the first record repeats the restart record
for name in ("state/q", "state/v", "energy/total", "energy/external_work", "energy/dissipated",
             "bodies/position", "joints/reaction", "solver/iterations"):
    check(np.array_equal(h[name][-1], b[name][0]), "first record: %s of the restart record" % name)
check(np.allclose(h["state/multipliers"][-1], b["state/multipliers"][0], rtol=1e-14, atol=0),
      "first record: the multipliers of the restart record")

# the multipliers are lambda: the distance rod's tension balances gravity on the bob at
# rest (t = 0 has none); the joint points follow their second body
lam = a["state/multipliers"]
check(lam.shape == (len(a["time"]), 2) and np.all(lam[0] == 0) and np.all(np.isfinite(lam)),
      "/state/multipliers [N, n_constraints], zero at t = 0")
check(np.allclose(a["joints/position"][:, 0, :], a["bodies/position"][:, 0, :], atol=1e-12) and
      np.allclose(a["joints/position"][:, 1, :], a["bodies/position"][:, 1, :], atol=1e-12),
      "/joints/position: the point on each joint's second body")

# with the default modified Newton too: the step after every output record starts with a
# fresh factorization, in the uninterrupted run as in the restart, so both take the same
# steps
_, _, _, full_d = run(DP, "--t-end", str(T_END))
_, _, _, half_d = run(DP, "--t-end", str(T_HALF))
rest_d = os.path.join(TMP, "restarted_default.h5")
p = subprocess.run([MBSIM, DP, "--restart", half_d, "--t-end", str(T_END), "-o", rest_d,
                    "--quiet"], capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "restart with the default Newton runs")
# steps (and the multipliers mu = dt^2 lambda the next step starts from are those a restart
# rebuilds from the written lambda): every record after the restart is the same, bit for bit
with h5py.File(full_d, "r") as f, h5py.File(rest_d, "r") as g:
    i0 = int(np.searchsorted(f["time"][()], g["time"][0]))
    diff = max(np.max(np.abs(f[k][i0:] - g[k][()]))
               for k in ("state/q", "state/v", "state/multipliers"))
check(diff == 0.0, "default Newton: every record after the restart equals the uninterrupted "
      "run bit for bit (max diff %.1e)" % diff)

# genalpha carries its accelerations from step to step: they are written
# (/state/acceleration, /state/algorithmic_acceleration) and a restart goes on with them,
# so it repeats the uninterrupted run exactly; the accelerations are those of the motion
GA = ("--integrator", "genalpha")
_, _, _, gfull = run(DP, "--t-end", str(T_END), *GA)
_, _, _, ghalf = run(DP, "--t-end", str(T_HALF), *GA)
grest = os.path.join(TMP, "restarted_genalpha.h5")
p = subprocess.run([MBSIM, DP, "--restart", ghalf, "--t-end", str(T_END), "-o", grest,
                    "--quiet"] + list(GA), capture_output=True, text=True, timeout=600)
check(p.returncode == 0 and "consistent accelerations" not in p.stderr,
      "genalpha restart runs from the written accelerations (%s)" % p.stderr.strip())
with h5py.File(gfull, "r") as f, h5py.File(grest, "r") as g:
    i0 = int(np.searchsorted(f["time"][()], g["time"][0]))
    diff = max(np.max(np.abs(f[k][i0:] - g[k][()]))
               for k in ("state/q", "state/v", "state/multipliers", "state/acceleration",
                         "state/algorithmic_acceleration"))
    check(diff == 0.0, "genalpha: every record after the restart equals the uninterrupted run "
          "bit for bit (max diff %.1e)" % diff)

# midpoint predicts each step from the velocities of the last two steps: the earlier one is
# written (/state/previous_velocity) and a restart goes on with it, bit for bit; a file
# without it restarts with the constant-velocity predictor, and says so
MP = ("--integrator", "midpoint")
_, _, _, mfull = run(DP, "--t-end", str(T_END), *MP)
_, _, _, mhalf = run(DP, "--t-end", str(T_HALF), *MP)
mrest = os.path.join(TMP, "restarted_midpoint.h5")
p = subprocess.run([MBSIM, DP, "--restart", mhalf, "--t-end", str(T_END), "-o", mrest,
                    "--quiet"] + list(MP), capture_output=True, text=True, timeout=600)
with h5py.File(mfull, "r") as f, h5py.File(mrest, "r") as g:
    i0 = int(np.searchsorted(f["time"][()], g["time"][0]))
    diff = max(np.max(np.abs(f[k][i0:] - g[k][()]))
               for k in ("state/q", "state/v", "state/multipliers", "state/previous_velocity"))
check(p.returncode == 0 and "previous_velocity" not in p.stderr and diff == 0.0,
      "midpoint: every record after the restart equals the uninterrupted run bit for bit "
      "(max diff %.1e)" % diff)
with h5py.File(mhalf, "r+") as f:
    del f["state/previous_velocity"]
mrest2 = os.path.join(TMP, "restarted_midpoint2.h5")
p = subprocess.run([MBSIM, DP, "--restart", mhalf, "--t-end", str(T_END), "-o", mrest2,
                    "--quiet"] + list(MP), capture_output=True, text=True, timeout=600)
with h5py.File(mfull, "r") as f, h5py.File(mrest2, "r") as g:
    diff2 = np.max(np.abs(f["state/q"][-1] - g["state/q"][-1]))
check(p.returncode == 0 and "previous_velocity" in p.stderr and 0.0 < diff2 <= 1e-8,
      "midpoint from a file without /state/previous_velocity: says so, and ends %.1e from the "
      "uninterrupted run (the steps' round-off)" % diff2)

_, _, _, gevery = run(DP, "--t-end", "1", "--set", "output.every=1", *GA)
with h5py.File(gevery, "r") as f:
    t, v, a = f["time"][()], f["state/v"][()], f["state/acceleration"][()]
    fd = (v[2:] - v[:-2]) / (t[2:] - t[:-2])[:, None]
    rel = np.max(np.abs(a[1:-1] - fd)) / np.max(np.abs(a))
    # measured 5.3e-5 (the O(dt^2) error of the central differences)
    check(np.all(np.isfinite(a)) and rel <= 1.6e-4,
          "/state/acceleration matches central differences of /state/v to %.1e relative "
          "(every record finite, t = 0 included)" % rel)
with h5py.File(full_d, "r") as f:
    check("state/acceleration" not in f, "em runs write no accelerations")

# a restart of a rigid-body model with spherical joints (quickstart), bit for bit
QS = deck("quickstart.yaml")
tq = 1.0 if QUICK else 2.0
_, _, _, qfull = run(QS, "--t-end", str(tq), *FULL)
_, _, _, qhalf = run(QS, "--t-end", str(tq / 2), *FULL)
qrest = os.path.join(TMP, "quick_restarted.h5")
p = subprocess.run([MBSIM, QS, "--restart", qhalf, "-o", qrest, "--quiet", "--t-end", str(tq)] +
                   list(FULL), capture_output=True, text=True, timeout=600)
with h5py.File(qfull, "r") as f, h5py.File(qrest, "r") as g:
    diff = max(np.max(np.abs(f[k][-1] - g[k][-1])) for k in ("state/q", "state/v"))
check(p.returncode == 0 and diff == 0.0, "quickstart restarted: final state equal, bit for bit "
      "(%.1e)" % diff)


# refusals: exit 1, a clear message, nothing written
def refused(args, want, what):
    out = os.path.join(TMP, "refused.h5")
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([MBSIM, "-o", out] + args,
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 1 and want in r.stderr and not os.path.exists(out),
          "%s: exit 1, '%s' (got %d: %s)" % (what, want, r.returncode, r.stderr.strip()))


refused([deck("free_body.yaml"), "--restart", half], "belongs to another model",
        "restart of another model")
renamed = os.path.join(TMP, "renamed.yaml")
with open(DP) as f, open(renamed, "w") as g:
    g.write(f.read().replace("bob2", "mass2"))
refused([renamed, "--restart", half], "in the file and 'mass2.",
        "same sizes, other coordinate names")
refused([DP, "--restart", half, "--t-end", str(T_HALF)], "not before t_end",
        "t_end at the restart time")
refused([DP, "--restart", os.path.join(TMP, "missing.h5")], "missing.h5", "missing restart file")
refused([DP, "--restart"], "needs a value", "--restart without a file")
before = os.path.getmtime(half), os.path.getsize(half)
r = subprocess.run([MBSIM, DP, "--restart", half, "-o", half, "--t-end", str(T_END)],
                   capture_output=True, text=True, timeout=120)
check(r.returncode == 1 and "restart file itself" in r.stderr and
      (os.path.getmtime(half), os.path.getsize(half)) == before,
      "output onto the restart file is refused and leaves it untouched")

# the restarted run's summary measures its energy balance from the restart record, with the
# work and dissipation carried over (it printed 0.39 where the file says 2.5e-12), and agrees
# with scripts/mbsim.py on the restarted file
import sys  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(DP), "..", "scripts"))
import mbsim  # noqa: E402
TP = deck("torque_profile.yaml")
_, _, _, thalf = run(TP, "--t-end", "0.5")
trest = os.path.join(TMP, "torque_restarted.h5")
p = subprocess.run([MBSIM, TP, "--restart", thalf, "-o", trest], capture_output=True, text=True,
                   timeout=600)
line = [l for l in p.stdout.splitlines() if l.startswith("energy:")][0]
summary = float(line.split()[3])
py = mbsim.load(trest).energy_error()
W = mbsim.load(trest).energy["external_work"]
check(p.returncode == 0 and W[0] != 0.0 and summary <= 1e-12 and abs(summary - py) <= 1e-13,
      "restarted run with external work (W = %.3f J at the restart): summary's relative energy "
      "error %.2e = mbsim.py's %.2e" % (W[0], summary, py))
done()

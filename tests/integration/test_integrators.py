"""The integrator family (issue 4): observed orders of convergence, step control that
halves and grows the step, and a clean failure when Newton cannot converge."""
import os
import subprocess
import sys

import h5py
import numpy as np

from common import MBSIM, ROOT, TMP, check, deck, done, energy_error, load, run, QUICK

PY = os.environ.get("PYTHON", "/usr/bin/python3")
env = dict(os.environ, MBSIM=MBSIM)

# orders on a smooth deck with joints (scripts/convergence, overkill em reference)
p = subprocess.run([PY, os.path.join(ROOT, "scripts", "convergence"),
                    deck("double_spherical_pendulum.yaml"), "--t-end", "1",
                    "--expect", "em=2,midpoint=2,euler=1,genalpha=2"],
                   capture_output=True, text=True, env=env)
print(p.stdout.strip())
check(p.returncode == 0, "double spherical pendulum: orders euler 1, midpoint/em/genalpha 2 "
      "within 0.2 (%s)" % p.stdout.strip().splitlines()[-1])

# and on a deck driven by a torque with a sine profile
p = subprocess.run([PY, os.path.join(ROOT, "scripts", "convergence"),
                    deck("torque_profile.yaml"), "--expect", "em=2,midpoint=2,euler=1,genalpha=2"],
                   capture_output=True, text=True, env=env)
print(p.stdout.strip())
check(p.returncode == 0, "torque profile: orders euler 1, midpoint/em/genalpha 2 within 0.2 "
      "(%s)" % p.stdout.strip().splitlines()[-1])

# genalpha with rho_inf = 1 has no numerical damping; rho_inf < 1 damps
_, _, _, out = run(deck("double_spherical_pendulum.yaml"), "--t-end", "5", "--integrator",
                   "genalpha", "--set", "solver.genalpha.rho_inf=1")
e1 = energy_error(load(out))
# measured 7.3e-6
check(e1 < 2e-5, "genalpha rho_inf = 1: energy error below 2e-5 (%.2e)" % e1)

# step control: a sudden large load forces halving, the run completes on the output grid
rc, so, se, out = run(deck("step_halving.yaml"), check=False)
r = load(out)
check(rc == 0 and r["attrs"]["status"] == "completed", "step_halving.yaml completes")
with_summary = subprocess.run([MBSIM, deck("step_halving.yaml"), "-o",
                               os.path.join(TMP, "sh.h5")], capture_output=True, text=True)
line = [l for l in with_summary.stdout.splitlines() if l.startswith("step control:")]
nrej = int(line[0].split()[2]) if line else 0
check(nrej > 0, "the summary counts rejected steps (%d)" % nrej)
dtime = np.max(np.abs(r["time"] - np.arange(11) * 0.05))
check(dtime <= 1e-15, "records stay on the 0.05 s grid (%.1e)" % dtime)
# measured: energy 1.6e-15, violation 1.1e-16
check(energy_error(r) <= 1e-14, "em energy balance with the load's work (%.2e)" %
      energy_error(r))
check(np.max(r["constraints/violation"]) <= 1e-15, "constraints hold after halving (%.1e)"
      % np.max(r["constraints/violation"]))

# Newton cannot converge even at the smallest step: failed, exit 2, records kept
out = os.path.join(TMP, "nc.h5")
p = subprocess.run([MBSIM, os.path.join(ROOT, "tests", "solver", "no_convergence.yaml"), "-o",
                    out], capture_output=True, text=True)
check(p.returncode == 2, "no convergence: exit status 2 (got %d)" % p.returncode)
with h5py.File(out, "r") as f:
    status = f.attrs["status"]
    n = f["time"].shape[0]
check(status.startswith("failed: Newton did not converge") and "at t = " in status and
      "residual" in status and "worst constraint: joint 'rod'" in status and
      "halving the step 4 times" in status, "status names time, residual, worst constraint")
check(n == 1, "the record of t = 0 is kept (%d records)" % n)
check("error: Newton did not converge" in p.stderr, "stderr says why")

# auto says which integrator and why, also in the output
_, _, _, out = run(deck("quickstart.yaml"), "--t-end", "0.01")
with h5py.File(out, "r") as f:
    check(f.attrs["integrator"] == "em" and "conserves" in f.attrs["integrator_reason"],
          "auto picks em and records why")

# factorizations and solves: in the summary and, per record, in /solver/*
out = os.path.join(TMP, "counts.h5")
p = subprocess.run([MBSIM, deck("quickstart.yaml"), "-o", out, "--t-end", "1"],
                   capture_output=True, text=True)
line = [l for l in p.stdout.splitlines() if l.startswith("newton:")][0].split()
nfact, nsolve = int(line[6]), int(line[8])
with h5py.File(out, "r") as f:
    fact, solves = f["solver/factorizations"][()], f["solver/solves"][()]
check(fact.sum() == nfact and solves.sum() == nsolve and nfact < nsolve,
      "summary and /solver/factorizations, /solver/solves agree (%d factorizations, %d solves: "
      "the factorization is reused)" % (nfact, nsolve))


def newton_counts(*extra):
    """(iterations, factorizations, solves, steps, records) from the summary of a run"""
    o = os.path.join(TMP, "counts2.h5")
    q = subprocess.run([MBSIM, deck("quickstart.yaml"), "-o", o, "--t-end", "1", "--overwrite"]
                       + list(extra), capture_output=True, text=True)
    nl = [l for l in q.stdout.splitlines() if l.startswith("newton:")][0].split()
    sl = [l for l in q.stdout.splitlines() if l.startswith("steps:")][0].split()
    with h5py.File(o, "r") as f:
        nrec = len(f["time"])
    return int(nl[1]), int(nl[6]), int(nl[8]), int(sl[1]), nrec


# every record adds one factorization (its consistent state: velocities projected onto the
# constraints, reactions from the index-1 equations) to those of the Newton iterations
its, fact, solves, steps, nrec = newton_counts("--set", "solver.newton.reuse=false")
check(fact == its + nrec, "newton.reuse: false refactors at every iteration (%d factorizations "
      "= %d iterations + %d records)" % (fact, its, nrec))
its, fact, solves, steps, nrec = newton_counts()
check(fact == steps + nrec and its > steps,
      "newton.reuse: true factors once per step (%d factorizations = %d steps + %d records, "
      "%d iterations)" % (fact, steps, nrec, its))

# a damper makes auto pick genalpha, and say why
damped = os.path.join(TMP, "damped.yaml")
with open(damped, "w") as f:
    f.write("""mbsim: 1
bodies:
  - {name: m1, type: point, mass: 1.0, position: [1.0, 0, 0]}
loads:
  - {name: damper, type: spring, bodies: [ground, m1], points: [[0, 0, 0], [1, 0, 0]],
     stiffness: 10, damping: 0.5, rest_length: 0.9}
solver: {dt: 1.0e-3, t_end: 0.1}
""")
_, _, _, out = run(damped)
with h5py.File(out, "r") as f:
    check(f.attrs["integrator"] == "em" and "dampers such as 'damper'" in
          f.attrs["integrator_reason"], "auto picks em for a damper and records why")
    E = f["energy/total"][()]
    D = f["energy/dissipated"][()]
    check(np.all(np.diff(D) >= 0.0) and D[-1] > 0.0 and
          np.max(np.abs(E - E[0] + D)) < 1e-12 * max(abs(E[0]), 1.0),
          "em with a damper: /energy/dissipated grows and E + D is conserved to 1e-12 (%.1e)"
          % np.max(np.abs(E - E[0] + D)))
done()

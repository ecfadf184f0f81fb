"""Newton on a long chain and the records' factorizations (the chain of scripts/bench/chain:
N box links on ball joints, em, dt = 1e-3).

- em conserves the energy of the falling 500-link chain to round-off (no loads but gravity,
  no dissipation: E - E0 is the conservation law itself), on the KKT matrix's pivot order
  pinned at t = 0 for every step.
- From 256 unknowns em predicts each step by second-order Adams-Bashforth: at most 3 Newton
  iterations per step on the 500-link chain after the first two steps (4-6 from dt v), and a
  restart goes on bit for bit (its predictor's velocity is written); a restart file whose
  predictor history is not finite is refused.
- A record is an observation: its KKT factorization has storage of its own, so a run with a
  record every step takes the same steps, bit for bit, with the same Newton iterations, and
  costs exactly one factorization more per record than a run without records.
- midpoint starts each step's Newton iteration from a second-order Adams-Bashforth
  predictor: the 50-link chain takes at most 3.2 iterations per step over 300 steps (3.95
  from the constant-velocity predictor dt v), and the steps are those of full Newton (a
  fresh factorization every iteration) to 1e-12.
- On the 2000-link chain (200 m long), from the fifth step on (the predictor then extrapolates
  the last four steps' increments and the multipliers), at most 3 Newton iterations per step.
- On the 2000-link chain the chord iteration of em reaches round-off on the
  step's one factorization: at most one factorization per step (plus 3 at the start), where
  evaluating the joints' rows at the stored q1 (rounding of q, 2e-14 here) fed noise
  through the stale matrix, held the residual above its floor and cost 9 more factorizations
  in 20 steps (32); and the energy is conserved to round-off.
- The predictor's degree grows with the steps known up to 6 (onestep.c predict_history): on
  the 1000-link chain over 200 steps the fold that runs down the chain made the quartic's
  error 5e-6 and the chord iteration needed a third solve in most steps (2.76 iterations per
  step); now at most 2.2 per step, and the energy is conserved to round-off."""
import re
import os

import numpy as np

from common import ROOT, check, done, load, load_script, run, write_deck


CHAIN = load_script(os.path.join(ROOT, "scripts", "bench", "chain"), "bench_chain")


def chain_deck(n, steps, dt, every):
    """the chain of scripts/bench/chain under em, a record every `every` steps"""
    return CHAIN.chain_deck(n, steps, dt, output="output: {every: %d, xdmf: false}" % every)


def counts(r):
    """Newton iterations of the last step, factorizations of the whole run (the dataset counts
    those since the previous record)"""
    return int(r["solver/iterations"][-1]), int(np.sum(r["solver/factorizations"]))


STEPS = 10
path = write_deck("chain500.yaml", chain_deck(500, STEPS, 1e-3, 1))
_, _, _, h1 = run(path, "--set", "output.every=1")
_, _, _, hn = run(path, "--set", "output.every=%d" % (10 * STEPS))
a, b = load(h1), load(hn)
E = a["energy/total"]
T = a["energy/kinetic"]
rel = np.max(np.abs(E - E[0])) / max(abs(E[0]), np.max(T))
check(a["attrs"]["status"] == "completed" and rel <= 1e-12,
      "500-link chain, em: energy conserved to %.1e relative over %d steps" % (rel, STEPS))
check(np.array_equal(a["state/q"][-1], b["state/q"][-1]) and
      np.array_equal(a["state/v"][-1], b["state/v"][-1]),
      "a record every step leaves the final state as without records, bit for bit")
# from 256 unknowns em predicts each step by second-order Adams-Bashforth (onestep.c): the
# chord iteration from dt v took 4-6 per step here
its = a["solver/iterations"][3:]
check(np.max(its) <= 3,
      "500-link chain, em: at most 3 Newton iterations per step after the first two (%s)"
      % its.tolist())
i1, f1 = counts(a)
i2, f2 = counts(b)
records1, records2 = len(a["time"]), len(b["time"])
check(i1 == i2 and f1 - f2 == records1 - records2,
      "records add one factorization each and no Newton iteration (last step: %d and %d, "
      "factorizations %d and %d, records %d and %d)" % (i1, i2, f1, f2, records1, records2))

# em's predictor on a chain of 256 unknowns or more uses the velocity at the start of the
# step before, written as /state/previous_velocity: a restart goes on bit for bit
path = write_deck("chain30.yaml", chain_deck(30, 40, 1e-3, 10))
_, _, _, whole = run(path)
_, _, _, half = run(path, "--t-end", "0.02")
_, _, _, rest = run(path, "--restart", half)
w, h, r = load(whole), load(half), load(rest)
diff = max(np.max(np.abs(w["state/" + k][-1] - r["state/" + k][-1]))
           for k in ("q", "v", "previous_velocity"))
check(r["attrs"]["status"] == "completed" and "state/previous_velocity" in h and diff == 0.0,
      "30-link chain, em, restarted at 0.02 s: the end equals the uninterrupted run's bit for "
      "bit (max diff %.1e)" % diff)

# the predictor's history is checked when it is read: a non-finite increment refuses the
# restart and writes nothing
import shutil

import h5py

bad = half.replace(".h5", "_bad.h5")
shutil.copy(half, bad)
with h5py.File(bad, "r+") as f:
    f["state/previous_increments"][-1, 7] = np.nan
out_bad = bad.replace(".h5", "_out.h5")
rc, _, err_text, _ = run(path, "--restart", bad, out=out_bad, check=False)
check(rc == 1 and "previous_increments" in err_text and not os.path.exists(out_bad),
      "a restart file with a non-finite /state/previous_increments: exit %d, nothing written "
      "(%s)" % (rc, err_text.strip()[-160:]))

path = write_deck("chain50.yaml", chain_deck(50, 300, 1e-3, 1))
_, _, _, h50 = run(path, "--integrator", "midpoint")
_, _, _, f50 = run(path, "--integrator", "midpoint", "--set", "solver.newton.reuse=false",
                   "--set", "output.every=300")
c, f = load(h50), load(f50)
per_step = np.sum(c["solver/iterations"][1:]) / 300.0
dq = np.max(np.abs(c["state/q"][-1] - f["state/q"][-1]))
check(c["attrs"]["status"] == "completed" and per_step <= 3.2 and dq <= 1e-12,
      "midpoint, 50-link chain, 300 steps: %.2f Newton iterations per step (<= 3.2), final q "
      "%.1e from full Newton's" % (per_step, dq))

STEPS = 20
path = write_deck("chain2000.yaml", chain_deck(2000, STEPS, 1e-3, 1))
_, _, _, h2k = run(path)
c = load(h2k)
# each record adds one factorization of its own (checked above)
nfact = int(np.sum(c["solver/factorizations"])) - len(c["time"])
E, T = c["energy/total"], c["energy/kinetic"]
rel = np.max(np.abs(E - E[0])) / max(abs(E[0]), np.max(T))
check(c["attrs"]["status"] == "completed" and nfact <= STEPS + 3 and rel <= 1e-12,
      "2000-link chain, em, %d steps: %d factorizations (<= %d: the chord iteration converges "
      "on each step's one), energy to %.1e relative" % (STEPS, nfact, STEPS + 3, rel))
# from the fifth step the predictor extrapolates the last four steps' increments and the
# multipliers (onestep.c predict_history): the second-order predictor took 4 iterations in
# most steps of this chain (3.9 per step over 200 steps)
its = c["solver/iterations"][1:]
check(np.max(its[5:]) <= 3 and np.mean(its[5:]) <= 3.0,
      "2000-link chain, em: at most 3 Newton iterations in every step from the sixth (%s)"
      % its.tolist())

STEPS = 200
path = write_deck("chain1000.yaml", chain_deck(1000, STEPS, 1e-3, STEPS))
_, out, _, h1k = run(path, quiet=False)
c = load(h1k)
m = re.search(r"newton:\s+(\d+) iterations", out)
per_step = int(m.group(1)) / STEPS if m else float("inf")
E, T = c["energy/total"], c["energy/kinetic"]
rel = np.max(np.abs(E - E[0])) / max(abs(E[0]), np.max(T))
check(c["attrs"]["status"] == "completed" and per_step <= 2.2 and rel <= 1e-12,
      "1000-link chain, em, %d steps: %.2f Newton iterations per step (<= 2.2; 2.76 from the "
      "quartic predictor), energy to %.1e relative" % (STEPS, per_step, rel))
done()

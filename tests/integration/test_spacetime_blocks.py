"""integrator: spacetime, blocks of several elements (solver.spacetime.elements_per_block) on a
100-link chain of boxes on ball joints, degree 2:
- no equation of an element involves a later one, so a block of 10 elements is the same
  solution as 10 blocks of 1: the states at t_end agree to the Newton tolerance;
- energy conserved at the nodes (gravity linear, the joints' and directors' rows at most
  quadratic) to round-off with blocks of 10;
- at most 6.9 Newton iterations per element (7.3 before: the stall test waited for round-off
  noise to stop falling, and the multipliers' predictor was constant);
- a block's memory and cost are linear in its elements: a block of 10 takes about the peak
  memory (max RSS) and CPU time of blocks of 1 (before the block was solved one element after
  the other, its whole system factored at once: 3.0 times the peak memory and 4.9 times the
  CPU of blocks of 1 here)."""
import os
import subprocess

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from common import MBSIM, ROOT, TMP, check, done, energy_error, load, load_script, write_deck


CHAIN = load_script(os.path.join(ROOT, "scripts", "bench", "chain"), "bench_chain")


def chain_deck(n, dt, steps, ne):
    """the chain of scripts/bench/chain under spacetime degree 2 in blocks of ne elements"""
    solver = ("solver: {integrator: spacetime, dt: %.17g, t_end: %.17g, spacetime: {degree: 2, "
              "elements_per_block: %d}}" % (dt, steps * dt, ne))
    return CHAIN.chain_deck(n, steps, dt, solver=solver)


def measured_run(deck_path, out):
    """(CPU seconds, max RSS in kB) of one run, from the child's own rusage"""
    p = subprocess.Popen([MBSIM, deck_path, "-o", out, "--overwrite", "--quiet"])
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    check(p.returncode == 0, "%s runs (exit %d)" % (os.path.basename(deck_path), p.returncode))
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


runs = {}
for ne in (1, 10):
    path = write_deck("chain_blocks_%d.yaml" % ne, chain_deck(100, 0.01, 10, ne))
    out = os.path.join(TMP, "chain_blocks_%d.h5" % ne)
    cpu, rss = measured_run(path, out)
    runs[ne] = (cpu, rss, load(out))

r1, r10 = runs[1][2], runs[10][2]
dq = np.max(np.abs(r1["state/q"][-1] - r10["state/q"][-1]))
vmax = np.max(np.abs(r1["state/v"][-1]))
dv = np.max(np.abs(r1["state/v"][-1] - r10["state/v"][-1])) / vmax
# measured 3e-14 in q, 3e-13 of the velocities' scale (before, the whole block in one Newton
# iteration: 2e-14, 9e-13; the Newton tolerance is 1e-10)
check(dq <= 1e-11 and dv <= 1e-10,
      "a block of 10 elements is 10 blocks of 1: q within %.1e, v within %.1e of its scale"
      % (dq, dv))
e = energy_error(r10)
check(e <= 1e-12, "blocks of 10: energy conserved at the nodes (%.1e)" % e)
# Newton iterations per element (each element's iteration driven to round-off): measured 6.5
# (blocks of 1) and 6.3 (blocks of 10); 7.3 for both before the residual norms were floored at
# their round-off and the multipliers' predictor continued the element before's line
for ne in (1, 10):
    its = float(np.sum(runs[ne][2]["solver/iterations"])) / 10
    check(its <= 6.9, "blocks of %d: %.1f Newton iterations per element (at most 6.9)" % (ne, its))
rss_ratio = runs[10][1] / runs[1][1]
cpu_ratio = runs[10][0] / max(runs[1][0], 1e-3)
# measured 1.11 and 0.97 (before: 3.0 and 4.9)
check(rss_ratio <= 1.25, "a block of 10 takes the peak memory of blocks of 1 (max RSS %d kB "
      "against %d kB: %.2f)" % (runs[10][1], runs[1][1], rss_ratio))
check(cpu_ratio <= 2.0, "a block of 10 costs about what 10 blocks of 1 cost (CPU %.2f s against "
      "%.2f s: %.2f)" % (runs[10][0], runs[1][0], cpu_ratio))
done()

"""scripts/bench/peers without its peers: the search of the largest tolerance on the grid
5, 2, 1 x 10^-j (against an error law we set), the chain deck it writes (mbsim-run --check
reads N bodies and N spherical joints), and a short mbsim-run of a 3-link chain under error
control and on fixed steps (each link end stays 1 m from the one before, the two settings
agree, the summary's step count is read). Also the step search against an error law (from
below, from above, across failed runs), the default plan's cells, a run stopped at its CPU
limit and the table row of a peer whose model did not load. Runs in a few seconds; neither
Simbody nor MuJoCo is needed."""
import io
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from common import MBSIM, ROOT, TMP, check, done, load_script  # noqa: E402

peers = load_script(os.path.join(ROOT, "scripts", "bench", "peers"), "bench_peers")

# the tolerance search: error = tol^(2/3) (the law of a second-order scheme under error
# control), cost = tol^(-1/3); the threshold 1e-3 is met from tol = 10^-4.5 = 3.16e-5 down, so
# the largest grid point is 2e-5 (5e-5 misses, 1e-5 meets but is smaller)
tried = []


def law(tol):
    tried.append(tol)
    return tol ** (2.0 / 3.0), tol ** (-1.0 / 3.0), "steps"


tol, r = peers.tolerance_search(law, 1e-3, max_cpu=1e9)
check(tol is not None and abs(tol - 2e-5) < 1e-18 and abs(r[0] - 2e-5 ** (2.0 / 3)) < 1e-15,
      "tolerance_search: 2e-5 for error tol^(2/3) <= 1e-3 (got %r)" % tol)
check(tried[:5] == [10.0**-j for j in range(1, 6)] and len(tried) == 7,
      "tolerance_search: decades to the first met, then 5 and 2 x it (tried %r)" % tried)
tried.clear()
tol, r = peers.tolerance_search(law, 1e-3, max_cpu=15.0)
check(tol is None and r is None and tried == [0.1, 0.01, 1e-3, 1e-4],
      "tolerance_search: stops after the first run above max_cpu (tried %r)" % tried)
tol, r = peers.tolerance_search(lambda t: (0.0, 0.0, 1), 1e-3, max_cpu=1.0)
check(tol == 0.1, "tolerance_search: 0.1 met at once is kept (the largest solver.tolerance)")
# started at a later decade (a smaller N's result), above or below the answer: the same 2e-5
for first in (3, 6):
    tried.clear()
    tol, r = peers.tolerance_search(law, 1e-3, max_cpu=1e9, first=first)
    check(tol is not None and abs(tol - 2e-5) < 1e-18,
          "tolerance_search from 1e-%d: 2e-5 (got %r, tried %r)" % (first, tol, tried))
check(tried == [1e-6, 1e-5, 1e-4, 5e-5, 2e-5],
      "tolerance_search from 1e-6 (met): up the decades to 1e-5, then 5 and 2 x it (tried %r)"
      % tried)

# the step search: error 1e-3 (100/k)^3 meets 1e-3 from k = 100 on; the k found meets and is
# within the rule's resolution max(1, k // 50) of 100, from below (doubling from 16) and from
# above (halving from 300), in fewer runs than doubling and bisecting (9 from 16); a run
# costs k/10 s
runs = []


def cubic(k):
    runs.append(k)
    return 1e-3 * (100.0 / k) ** 3, k / 10.0


for k0 in (16, 300, 97):
    runs.clear()
    k, cpu = peers.search(cubic, 1e-3, max_cpu=1e9, k0=k0)
    check(k is not None and 100 <= k <= 102 and cpu == k / 10.0 and len(runs) <= 7,
          "search from k0 = %d: k = %r in [100, 102] (runs %r)" % (k0, k, runs))
runs.clear()
k, cpu = peers.search(cubic, 1e-3, max_cpu=5.0)
check(k is None and runs == [16, 32, 64], "search stops after a run above max_cpu (%r)" % runs)
# failed runs (no error) below k = 150: nothing to interpolate, bisection finds it
k, cpu = peers.search(lambda k: (None if k < 150 else 1e-3 * (150.0 / k) ** 8, 1.0), 1e-3,
                      max_cpu=1e9)
check(k is not None and 150 <= k <= 153, "search across failed runs: k = %r in [150, 153]" % k)

# the default plan covers every cell of the default table; --mbsim and --max-cpu replace it
for n in (10, 50, 200, 1000):
    for thr in (1e-3, 1e-6):
        check((n, thr) in peers.PLAN, "the plan has N = %d, %g" % (n, thr))
check(peers.cell_plan(1000, 1e-6, None, None)[0][0] == "spacetime2-tol"
      and peers.cell_plan(1000, 1e-6, "em", 5.0) == (["em"], 5.0)
      and peers.cell_plan(7, 1e-3, None, None) == (peers.ALL.split(","), 60.0),
      "cell_plan: the plan's, the options', all settings outside the plan")

# a run is stopped once it has used its CPU limit
p, cpu = peers.cpu_of([sys.executable, "-c", "while True: pass"], cpu_limit=1.0)
check(p.returncode != 0 and 0.9 < cpu < 3.0, "cpu_of stops a run at its limit (%d, %.2f s)"
      % (p.returncode, cpu))

# the deck: mbsim-run reads N bodies and N joints
deck = os.path.join(TMP, "chain3.yaml")
peers.mbsim_deck(3, deck)
p = subprocess.run([MBSIM, "--check", deck], capture_output=True, text=True)
check(p.returncode == 0, "the chain deck passes --check: %s" % p.stderr.strip()[-200:])

# a 3-link chain to 0.2 s: under error control (em, tol 1e-6) and on fixed steps of 1/2000 s
out = os.path.join(TMP, "chain3.h5")
ends_tol, cpu, steps = peers.run_mbsim(MBSIM, deck, out, "em-tol", 1e-6, t_end=0.2)
check(ends_tol is not None and isinstance(steps, int) and 5 < steps < 2000,
      "em-tol run completes and its summary gives the steps (%r)" % steps)
ends_fix, _, steps_fix = peers.run_mbsim(MBSIM, deck, out, "em", 2000, t_end=0.2)
check(ends_fix is not None and steps_fix == 400, "em, dt 1/2000: 400 steps to 0.2 s (%r)"
      % steps_fix)
links = np.linalg.norm(np.diff(np.vstack([np.zeros(3), ends_fix]), axis=0), axis=1)
check(np.allclose(links, 1.0, atol=1e-9), "link ends 1 m apart (%r)" % links)
check(ends_fix[-1, 2] < -0.05, "the chain has fallen (last end z = %.3g)" % ends_fix[-1, 2])
d = float(np.max(np.linalg.norm(ends_tol - ends_fix, axis=1)))
check(d < 1e-3, "error control and fixed steps agree to 1 mm at 0.2 s (%.2g m)" % d)

# the table row: a peer whose model did not load says so, and has no ratio
buf = io.StringIO()
peers.print_row({"n": 200, "thr": 1e-3, "mbsim": (2.0, "em, tol 5e-07, 184 steps"),
                 "simbody": (0.5, "RKM 0.0005, 30 steps"), "mujoco": "not loaded"}, file=buf)
check(buf.getvalue().strip() == "| 200 | 0.001 | 2 s (em, tol 5e-07, 184 steps) | 0.5 s (RKM "
      "0.0005, 30 steps) | not loaded | 4 | - |", "table row: %s" % buf.getvalue().strip())
done()

"""The how-to "A parameter sweep and its comparison" (docs/howto/sweep.md): the sweep file
decks/sweeps/sliding_box.yaml over decks/howto/sliding_box.yaml as shipped (default
settings), run case by case with `mbsim-sweep --case I` (what a Slurm array task runs; no GNU
parallel needed) and summarised with `--summary`. Checked against the closed form:
- every case completed, and the summary's final x of the box is the sliding distance
  v0^2 / (2 mu g) of a box decelerating at mu g (2e-5 relative: measured 4.7e-8 .. 2.0e-6);
- the distances fall as 1/mu: d(mu) mu is the same for every case (1e-4);
- the summary's max(bodies/velocity[box, x]) is v0;
- mbsim-compare between mu = 0.2 and 0.4 finds the largest position difference at the end,
  v0^2 / (2 g) (1/0.2 - 1/0.4) (1e-4), and says the runs differ (exit 1)."""
import csv
import os
import re
import subprocess
import time

from common import MBSIM, PYTHON_BIN, ROOT, TMP, check, done

SWEEP = os.path.join(ROOT, "decks", "sweeps", "sliding_box.yaml")
TOOL = os.path.join(ROOT, "scripts", "mbsim-sweep")
V0, G = 2.0, 9.81
OUT = os.path.join(TMP, "sweep")
env = dict(os.environ, MBSIM=MBSIM)


def sweep(*args):
    return subprocess.run([PYTHON_BIN, TOOL, SWEEP, "-o", OUT] + list(args),
                          capture_output=True, text=True, env=env, timeout=600)


t0 = time.time()
p = sweep("--list")
n = len([ln for ln in p.stdout.splitlines() if re.match(r"^\s*\d+\s", ln)])
check(p.returncode == 0 and n == 4, "the sweep lists 4 cases (exit %d): %s"
      % (p.returncode, p.stdout.strip()[-300:]))
for i in range(4):
    p = sweep("--case", str(i))
    check(p.returncode == 0, "case %d runs (exit %d) %s" % (i, p.returncode, p.stderr[-200:]))
p = sweep("--summary")
check(p.returncode == 0, "the summary: exit %d %s" % (p.returncode, p.stderr[-300:]))
print("      (the four cases and the summary took %.2f s)" % (time.time() - t0))
with open(os.path.join(OUT, "summary.csv")) as f:
    rows = list(csv.DictReader(f))
check(len(rows) == 4 and all(r["status"] == "completed" for r in rows),
      "4 rows, all completed: %s" % [r["status"] for r in rows])
prod = []
for r in rows:
    mu = float(r["parameters.mu"])
    d = float(r["bodies/position[box,x]"])
    want = V0 ** 2 / (2 * mu * G)
    check(abs(d - want) <= 2e-5 * want, "mu = %g: slides %.6f m, v0^2 / (2 mu g) = %.6f m (%.1e)"
          % (mu, d, want, abs(d - want) / want))
    vmax = float(r["max(bodies/velocity[box,x])"])
    check(abs(vmax - V0) <= 1e-12, "mu = %g: the summary's max speed is v0 = %g m/s" % (mu, vmax))
    prod.append(d * mu)
check(max(prod) - min(prod) <= 1e-4 * max(prod), "the distance falls as 1/mu: d mu = %.6f .. "
      "%.6f m" % (min(prod), max(prod)))

files = {float(r["parameters.mu"]): os.path.join(OUT, os.path.basename(r["file"])) for r in rows}
p = subprocess.run([PYTHON_BIN, os.path.join(ROOT, "scripts", "mbsim-compare"), files[0.2],
                    files[0.4], "--exclude", "contacts/*", "--exclude", "solver/*",
                    "--exclude", "state/*"], capture_output=True, text=True, env=env)
m = re.search(r"/bodies/position\[box\]: max \|a - b\| = ([0-9.e+-]+) m \(x\) at t = ([0-9.]+) s",
              p.stdout)
want = V0 ** 2 / (2 * G) * (1 / 0.2 - 1 / 0.4)
check(p.returncode == 1 and m is not None and abs(float(m.group(1)) - want) <= 1e-4 * want,
      "mbsim-compare mu = 0.2 against 0.4: exit %d, the box's largest difference %s m in x "
      "(closed form %.6f m)" % (p.returncode, m.group(1) if m else p.stdout[-300:], want))
done()

"""The Python package's examples (python/examples/), small:
- identify_damper.py: scipy.optimize finds the damping of a noisy trace made with a known
  value (c = 0.5 and 0.8 N s/m) to within 1 %;
- sweep.py: the cases run in worker processes (multiprocessing) give the states of the same
  cases run here, bit for bit, and each case's fitted energy decay rate is the closed form
  c / m of a lightly damped oscillator to 1 %."""
import contextlib
import io
import os
import re
import sys

import numpy as np

from common import ROOT, check, done, python_package

python_package("the Python examples")
sys.path.insert(0, os.path.join(ROOT, "python", "examples"))
import identify_damper  # noqa: E402
import sweep  # noqa: E402



def main():
    for c_true in (0.5, 0.8):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            identify_damper.main(["--c-true", str(c_true), "--t-end", "1.5"])
        m = re.search(r"c = ([0-9.]+) N s/m", buf.getvalue())
        c = float(m.group(1)) if m else float("nan")
        check(abs(c - c_true) < 0.01 * c_true,
              "identify_damper: c = %.5f from a noisy trace of c = %.2f" % (c, c_true))

    with contextlib.redirect_stdout(io.StringIO()):
        results = sweep.main(["--cases", "3", "--t-end", "2"])
    serial = [sweep.case((c, 2.0)) for c, _, _, _ in results]
    check(all(np.array_equal(r[3], s[3]) and r[1] == s[1] for r, s in zip(results, serial)),
          "sweep: %d cases in worker processes equal the same cases run here, bit for bit"
          % len(results))
    worst = max(abs(rate - c / sweep.MASS) / (c / sweep.MASS) for c, _, rate, _ in results)
    check(worst < 0.01, "sweep: energy decay rates are c/m to %.1e (closed form)" % worst)
    done()


# the sweep's workers are spawned: they import this file, which must not run the test again
if __name__ == "__main__":
    main()

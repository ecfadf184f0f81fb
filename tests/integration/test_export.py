"""mbsim-export --csv and mbsim-plot PATH...: the CSV holds every component of the chosen
datasets, labelled with names and units, and reads back to the HDF5 values exactly; the plots
are written; bad arguments exit 2. `make install` installs the Python tools, which then run
from the install prefix."""
import csv
import io
import os
import subprocess

import h5py
import numpy as np

from common import MBSIM, PYTHON_BIN, ROOT, TMP, check, deck, done, run

EXPORT = os.path.join(ROOT, "scripts", "mbsim-export")
PLOT = os.path.join(ROOT, "scripts", "mbsim-plot")
_, _, _, out = run(deck("slider_crank.yaml"), "--t-end", "0.2")
p = subprocess.run([PYTHON_BIN, EXPORT, out, "--csv", "joints/reaction", "energy/total",
                    "bodies/position"], capture_output=True, text=True)
rows = list(csv.reader(io.StringIO(p.stdout)))
head, data = rows[0], np.array(rows[1:], dtype=float)
with h5py.File(out, "r") as f:
    t, E = f["time"][()], f["energy/total"][()]
    R, X = f["joints/reaction"][()], f["bodies/position"][()]
    jn = [n.decode() for n in f["joints/names"][()]]
    bn = [n.decode() for n in f["bodies/names"][()]]
col = {h: i for i, h in enumerate(head)}
k = col["joints/reaction[%s].Mz [N m]" % jn[0]]
kx = col["bodies/position[%s].x [m]" % bn[2]]
check(p.returncode == 0 and head[0] == "time [s]" and len(head) == 1 + 6 * len(jn) + 1 + 3 * len(bn),
      "CSV header: time, every component with name and units (%d columns)" % len(head))
check(np.array_equal(data[:, 0], t) and np.array_equal(data[:, col["energy/total [J]"]], E) and
      np.array_equal(data[:, k], R[:, 0, 5]) and np.array_equal(data[:, kx], X[:, 2, 0]),
      "CSV values equal the HDF5 values exactly (17 digits)")
p = subprocess.run([PYTHON_BIN, EXPORT, out, "--csv", "no/such"], capture_output=True, text=True)
check(p.returncode == 2 and "no time series 'no/such'" in p.stderr, "unknown dataset: exit 2")
plots = os.path.join(TMP, "plots")
p = subprocess.run([PYTHON_BIN, PLOT, out, "joints/coordinates", "joints/reaction", "-o", plots],
                   capture_output=True, text=True)
png = os.path.join(plots, "joints_coordinates.png")
check(p.returncode == 0 and os.path.getsize(png) > 1000 and
      open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "mbsim-plot PATH writes a PNG per dataset")

# make install puts the tools and mbsim.py under the prefix; they run from there
prefix = os.path.join(TMP, "prefix")
p = subprocess.run(["make", "-s", "-C", ROOT, "install", "PREFIX=" + prefix,
                    "BUILD=" + os.path.dirname(MBSIM)], capture_output=True, text=True)
inst = os.path.join(prefix, "bin", "mbsim-export")
q = subprocess.run([PYTHON_BIN, inst, out, "--csv", "energy/total"], capture_output=True,
                   text=True, cwd=TMP)
check(p.returncode == 0 and q.returncode == 0 and q.stdout.startswith('"time [s]"') and
      os.path.exists(os.path.join(prefix, "share", "mbsim-run", "python", "mbsim.py")),
      "make install: the Python tools run from the prefix (%s)" % (p.stderr + q.stderr)[-200:])
done()

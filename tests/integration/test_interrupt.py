"""SIGINT and SIGTERM in the middle of a run: exit 3, a file h5py opens, status
'interrupted at t=...', every record up to the last flush."""
import os
import signal
import subprocess
import time

import h5py
import numpy as np

from common import MBSIM, TMP, check, deck, done

for sig in (signal.SIGINT, signal.SIGTERM):
    out = os.path.join(TMP, "interrupted_%d.h5" % sig)
    p = subprocess.Popen([MBSIM, deck("double_spherical_pendulum.yaml"), "-o", out, "--quiet",
                          "--t-end", "1e6", "--set", "output.every=1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3.0)   # past the first automatic flush (every 2 s of wall time)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    check(p.returncode == 3, "signal %d: exit status 3 (got %d)" % (sig, p.returncode))
    with h5py.File(out, "r") as f:
        status = f.attrs["status"]
        t = f["time"][()]
        q = f["state/q"][()]
        check(status.startswith("interrupted at t="), "status '%s'" % status)
        t_int = float(status.split("=")[1])
        check(len(t) > 100 and abs(t[-1] - t_int) < 1e-9,
              "%d records, the last at the interruption time %.4g" % (len(t), t_int))
        check(np.all(np.diff(t) > 0) and q.shape[0] == len(t) and np.all(np.isfinite(q)),
              "records are consecutive and finite")
    check("interrupted" in err, "stderr says it was interrupted")
done()

"""Damaged HDF5 files never crash or hang mbsim-run: byte-flip mutants of a real result
(a fixed, seeded set) given to --restart and left at the -o path. HDF5 itself crashes,
loops or overflows on some of them, so the program reads such a file only in a child
process with a time and memory limit; mbsim-run must end every time with exit status 0 (a
correct run) or 1 (a message, nothing written, the file at -o untouched), never by a
signal or a timeout. The fuzz regressions of the restart reader (tests/fuzz/restart-
regressions/) are replayed the same way."""
import collections
import glob
import os
import random
import shutil
import subprocess
import time

import h5py
import numpy as np

from common import MBSIM, QUICK, ROOT, TMP, check, deck, done, run

DP = deck("double_pendulum.yaml")
_, _, _, base = run(DP, "--t-end", "0.05")
data = open(base, "rb").read()
N = 30 if QUICK else 75
# a hang is cut at this many seconds of the child (the default is 20)
ENV = dict(os.environ, MBSIM_INSPECT_SECONDS="2")
rng = random.Random(20261122)
NOT_RESULT = "not an mbsim-run result"


def mutant(i):
    """a copy of the result with 1 to 8 bytes changed; every other one near the start, where
    the superblock and the root group's object header are"""
    b = bytearray(data)
    span = len(b) if i % 2 else min(len(b), 4096)
    for _ in range(rng.randint(1, 8)):
        k = rng.randrange(span)
        b[k] ^= rng.randrange(1, 256)
    path = os.path.join(TMP, "mutant.h5")
    with open(path, "wb") as f:
        f.write(b)
    return path, bytes(b)


def result_ok(path, t_end):
    """a finished result of this deck: status completed, times up to t_end, finite state"""
    try:
        with h5py.File(path, "r") as f:
            q, t = f["state/q"][()], f["time"][()]
            return (f.attrs["status"] == "completed" and abs(t[-1] - t_end) < 1e-12 and
                    np.all(np.isfinite(q)) and np.all(np.isfinite(f["state/v"][()])))
    except Exception:
        return False


def run_case(args, timeout=60):
    t = time.time()
    try:
        p = subprocess.run([MBSIM, DP, "--quiet"] + args, capture_output=True, timeout=timeout,
                           env=ENV)
        return p.returncode, p.stderr.decode("utf-8", "replace"), time.time() - t
    except subprocess.TimeoutExpired:
        return "timeout", "", time.time() - t


stats = {"restart": collections.Counter(), "output": collections.Counter()}
bad = []
out = os.path.join(TMP, "out.h5")
t_all = time.time()
worst = 0.0
for i in range(N):
    # --restart MUTANT
    path, _ = mutant(i)
    if os.path.exists(out):
        os.remove(out)
    rc, err, secs = run_case(["--restart", path, "-o", out, "--t-end", "0.06"])
    worst = max(worst, secs)
    if rc == 0 and result_ok(out, 0.06):
        stats["restart"]["exit 0, a correct run"] += 1
    elif rc == 1 and "mbsim-run: error:" in err and not os.path.exists(out):
        reason = ("the child crashed" if "crashed" in err or "read it failed" in err else
                  "the child hung" if "did not finish" in err or "CPU time" in err else
                  "refused with a message")
        stats["restart"]["exit 1, " + reason] += 1
    else:
        bad.append("restart mutant %d: exit %s: %s" % (i, rc, err.strip()[-300:]))

    # a mutant at the -o path (without --overwrite: inspected before it is replaced)
    path, before = mutant(i + N)
    rc, err, secs = run_case(["-o", path, "--t-end", "0.01"])
    worst = max(worst, secs)
    after = open(path, "rb").read() if os.path.exists(path) else b""
    for side in (path[:-3] + ".xmf",):
        if os.path.exists(side):
            os.remove(side)
    if rc == 0 and result_ok(path, 0.01):
        stats["output"]["exit 0, replaced by a correct run"] += 1
    elif rc == 1 and "not an mbsim-run result" in err and after == before:
        reason = ("the child crashed" if "crashed" in err or "read it failed" in err else
                  "the child hung" if "did not finish" in err or "CPU time" in err else
                  "refused")
        stats["output"]["exit 1 (file untouched), " + reason] += 1
    else:
        bad.append("-o mutant %d: exit %s: %s" % (i, rc, err.strip()[-300:]))

for what, c in stats.items():
    print("      %s: %s" % (what, ", ".join("%d %s" % (n, k) for k, n in sorted(c.items()))))
check(not bad, "%d mutants at --restart and %d at -o in %.1f s (slowest %.2f s): every one "
      "exit 0 with a correct run or exit 1 with a message, no signal, no hang%s" %
      (N, N, time.time() - t_all, worst, "" if not bad else ": " + "; ".join(bad[:5])))
check(stats["restart"]["exit 0, a correct run"] + sum(stats["restart"].values()) > 0 and
      sum(n for k, n in stats["restart"].items() if k.startswith("exit 1")) > 0,
      "the mutants include files that are refused")

# the inputs that crashed or hung HDF5 (tests/fuzz/restart-regressions/), at --restart and
# at -o: refused, each saying how the reading ended
regs = sorted(glob.glob(os.path.join(ROOT, "tests", "fuzz", "restart-regressions", "*.h5")))
check(len(regs) >= 4, "%d fuzz regressions of the restart reader" % len(regs))
damaged = crashed = 0
for r in regs:
    if os.path.exists(out):
        os.remove(out)
    rc, err, secs = run_case(["--restart", r, "-o", out, "--t-end", "0.06"])
    check(rc == 1 and not os.path.exists(out) and NOT_RESULT in err,
          "%s at --restart: exit 1, not an mbsim-run result (got %s in %.2f s: %s)"
          % (os.path.basename(r), rc, secs, err.strip()[-160:]))
    # (under AddressSanitizer the child reports and exits with status 1 instead of a signal)
    crashed += any(w in err for w in ("crashed the process", "did not finish", "CPU time",
                                      "the process that read it failed"))
    at_o = os.path.join(TMP, "at_o.h5")
    shutil.copy(r, at_o)
    rc, err, secs = run_case(["-o", at_o, "--t-end", "0.01"])
    same = open(at_o, "rb").read() == open(r, "rb").read()
    damaged += rc == 1 and "damaged HDF5 file" in err
    check((rc == 1 and same and NOT_RESULT in err) or (rc == 0 and result_ok(at_o, 0.01)),
          "%s at -o: exit 1 with the file untouched, or replaced by a correct run (got %s: %s)"
          % (os.path.basename(r), rc, err.strip()[-160:]))
check(crashed >= 3 and damaged >= 1, "%d of them crash or hang HDF5 in the reading process at "
      "--restart, %d in the look at the file at -o, which refuses it as a damaged HDF5 file" %
      (crashed, damaged))
done()

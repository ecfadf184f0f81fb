"""/state/history_repeats: a record every step writes the predictor's history rows that repeat
the previous record's as zeros and marks them, and a restart follows the marks back
(docs/output.md). On the 30-link chain of scripts/bench/chain (em, dt = 1e-3, 630 unknowns:
the extrapolating predictor with its history):

- with a record every step every record but the first is marked 7 (all three parts repeat,
  as the writer checked bit for bit), its repeated rows are zeros, and each resolved row
  (followed back in Python, independently of the C reader) holds the increments of q over
  the four steps before the record;
- with a record every 2 steps nothing repeats: no mark, the rows as they are;
- a restart from a marked record goes on bit for bit: every record of q and v equals the
  uninterrupted run's; it equals (scripts/mbsim-compare --exact) a restart from the same
  file with the history written out in full and the marks removed (the format before the
  marks), and differs from one whose marks were removed but the zeros left (so the marks
  are what the restart reads); a restart from a restarted run two steps after its first
  (unmarked) record, whose history reaches back past that record, also ends bit for bit
  with the uninterrupted run;
- a marked row that is not zero where the mark says it repeats is refused, nothing written."""
import os
import shutil
import subprocess

import h5py
import numpy as np

from common import PYTHON_BIN, ROOT, TMP, check, done, load_script, run, write_deck

CHAIN = load_script(os.path.join(ROOT, "scripts", "bench", "chain"), "bench_chain")
N, STEPS, DT = 30, 40, 1e-3
T_END, T_HALF = STEPS * DT, STEPS * DT / 2


def deck_every(every):
    return write_deck("chain_every%d.yaml" % every, CHAIN.chain_deck(
        N, STEPS, DT, output="output: {every: %d, xdmf: false}" % every))


def resolved(f, k):
    """the history of record k with the marks followed back (Python's own reading)"""
    nq = f["state/q"].shape[1]
    mark = f["state/history_repeats"][:]
    inc = np.array(f["state/previous_increments"][k])
    nblk = inc.size // nq
    for b in range(1, nblk):
        r, bb = k, b
        while bb > 0 and mark[r] & 1:
            r, bb = r - 1, bb - 1
        inc[b * nq:(b + 1) * nq] = f["state/previous_increments"][r, bb * nq:(bb + 1) * nq]
    pv = f["state/scheme_velocity"][k - 1] if mark[k] & 2 else f["state/previous_velocity"][k]
    pm = f["state/multipliers"][k - 1] if mark[k] & 4 else f["state/previous_multipliers"][k]
    return inc, np.array(pv), np.array(pm)


d1 = deck_every(1)
_, _, _, full = run(d1)
with h5py.File(full, "r") as f:
    mark = f["state/history_repeats"][:]
    nq = f["state/q"].shape[1]
    inc = f["state/previous_increments"][:]
    check(mark[0] == 0 and np.all(mark[1:] == 7) and len(mark) == STEPS + 1,
          "a record every step: every record but the first marked 7 (%s)" % np.unique(mark))
    zeros = (np.all(inc[1:, nq:] == 0) and np.all(f["state/previous_velocity"][1:] == 0)
             and np.all(f["state/previous_multipliers"][1:] == 0))
    check(zeros and np.all(np.any(inc[2:, :nq] != 0, axis=1)),
          "marked rows stored as zeros, block 0 of the increments stored")
    # block b of record k's history is the increment of q over step k - b (to round-off:
    # the increment is not the difference of the rounded q rows bit for bit)
    q = f["state/q"][:]
    err = 0.0
    for k in range(4, STEPS + 1):
        hk, pv, pm = resolved(f, k)
        for b in range(4):
            err = max(err, np.max(np.abs(hk[b * nq:(b + 1) * nq] - (q[k - b] - q[k - b - 1]))))
    check(err <= 1e-13, "resolved histories: block b of record k is q[k - b] - q[k - b - 1] "
          "(max diff %.1e)" % err)

_, _, _, two = run(deck_every(2))
with h5py.File(two, "r") as f:
    check(np.all(f["state/history_repeats"][:] == 0)
          and np.any(f["state/previous_increments"][-1, nq:] != 0),
          "a record every 2 steps: nothing repeats, nothing marked")

# restarts from the marked last record of the first half
_, _, _, half = run(d1, "--t-end", str(T_HALF))


def restart(src, name, *extra, ok=True):
    out = os.path.join(TMP, name)
    p = subprocess.run([os.environ.get("MBSIM", os.path.join(ROOT, "build", "mbsim-run")), d1,
                        "--restart", src, "-o", out, "--quiet"] + list(extra),
                       capture_output=True, text=True, timeout=300)
    check((p.returncode == 0) == ok, "restart from %s: exit %d %s" % (
        os.path.basename(src), p.returncode, p.stderr.strip()[-200:]))
    return out, p


rest, _ = restart(half, "rest.h5")
with h5py.File(half, "r") as h:
    check(h["state/history_repeats"][-1] == 7, "the restart record is marked")
with h5py.File(rest, "r") as r, h5py.File(full, "r") as f:
    k = len(r["time"])
    same = all(np.array_equal(r[n][:], f[n][-k:]) for n in ("state/q", "state/v",
                                                             "state/multipliers"))
    check(same and r["time"][-1] == f["time"][-1],
          "restart from a marked record: every record of q, v and the multipliers equals the "
          "uninterrupted run's, bit for bit")

# the same history written out in full, without marks (the format before them)
plain = os.path.join(TMP, "plain.h5")
zeroed = os.path.join(TMP, "zeroed.h5")
shutil.copy(half, plain)
shutil.copy(half, zeroed)
with h5py.File(plain, "r+") as f:
    k = len(f["time"]) - 1
    hk, pv, pm = resolved(f, k)
    f["state/previous_increments"][k] = hk
    f["state/previous_velocity"][k] = pv
    f["state/previous_multipliers"][k] = pm
    del f["state/history_repeats"]
with h5py.File(zeroed, "r+") as f:
    del f["state/history_repeats"]
rest_plain, _ = restart(plain, "rest_plain.h5")
rest_zero, _ = restart(zeroed, "rest_zero.h5")
compare = os.path.join(ROOT, "scripts", "mbsim-compare")
same = subprocess.run([PYTHON_BIN, compare, rest, rest_plain, "--exact", "--quiet"],
                      capture_output=True, text=True, timeout=120)
differ = subprocess.run([PYTHON_BIN, compare, rest, rest_zero, "--exact", "--quiet",
                         "--exclude", "state/previous_*", "--exclude", "state/history_repeats"],
                        capture_output=True, text=True, timeout=120)
check(same.returncode == 0 and differ.returncode == 1,
      "mbsim-compare --exact: equal to the restart from the history in full (exit %d), "
      "different from the one that read the zeros as history (exit %d)"
      % (same.returncode, differ.returncode))

# a restart from a restarted run two steps after its first record: the history of its last
# record reaches back past that unmarked record
_, _, _, short = run(d1, "--restart", half, "--t-end", str(T_HALF + 2 * DT))
with h5py.File(short, "r") as f:
    check(list(f["state/history_repeats"][:]) == [0, 7, 7], "the restarted run's marks [0, 7, 7]")
rest2, _ = restart(short, "rest2.h5")
with h5py.File(rest2, "r") as r, h5py.File(full, "r") as f:
    check(np.array_equal(r["state/q"][-1], f["state/q"][-1])
          and np.array_equal(r["state/v"][-1], f["state/v"][-1]),
          "restart of a restart two steps on: ends bit for bit with the uninterrupted run")

# a marked row that holds a value where it repeats is refused, nothing written
bad = os.path.join(TMP, "bad.h5")
shutil.copy(half, bad)
with h5py.File(bad, "r+") as f:
    f["state/previous_increments"][-1, nq + 3] = 1e-3
out_bad, p = restart(bad, "bad_out.h5", ok=False)
check(p.returncode == 1 and "previous_increments" in p.stderr and "history_repeats" in p.stderr
      and not os.path.exists(out_bad),
      "a marked row that is not zero: refused, nothing written (%s)" % p.stderr.strip()[-160:])
done()

"""output.compression: off writes the time series without filters, a level 1..9 (default 1)
with shuffle + deflate at that level; every reader (h5py here) gets the same values from
either, bit for bit, and deflate makes the file smaller; a restart continues from a file of
either kind with the same records."""
import os

import h5py
import numpy as np

from common import TMP, check, deck, done, run

DECK = deck("double_pendulum.yaml")
files = {}
for c in ("off", "1", "6"):
    _, _, _, out = run(DECK, "--set", "output.compression=" + c, "--set", "output.xdmf=false",
                       out=os.path.join(TMP, "c%s.h5" % c))
    files[c] = out

_, _, _, plain = run(DECK, "--set", "output.xdmf=false", out=os.path.join(TMP, "default.h5"))


def series(path):
    """the time series (first dimension the records) and their filters"""
    res = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.maxshape and obj.maxshape[0] is None:
                res[name] = (obj[()], obj.compression, obj.compression_opts, obj.shuffle)
        f.visititems(visit)
    return res


s = {c: series(p) for c, p in files.items()}
d = series(plain)
check(len(s["off"]) >= 20, "at least 20 time series (%d)" % len(s["off"]))
check(all(v[1] == "gzip" and v[2] == 1 and v[3] for v in d.values()),
      "default: every series shuffled and deflated at level 1")
check(all(v[1] is None and not v[3] for v in s["off"].values()),
      "compression: off: no series has a filter")
for c in ("1", "6"):
    check(all(v[1] == "gzip" and v[2] == int(c) and v[3] for v in s[c].values()),
          "compression: %s: every series shuffled and deflated at level %s" % (c, c))
for c in ("1", "6"):
    same = [n for n in s["off"] if n in s[c] and s["off"][n][0].dtype == s[c][n][0].dtype and
            np.array_equal(s["off"][n][0].view(np.uint8), s[c][n][0].view(np.uint8))]
    check(len(same) == len(s["off"]) == len(s[c]),
          "level %s reads back the same bits as off in every series (%d of %d)" %
          (c, len(same), len(s["off"])))
size = {c: os.path.getsize(p) for c, p in files.items()}
check(size["1"] < 0.8 * size["off"] and size["6"] <= size["1"],
      "deflate makes the file smaller: off %d, level 1 %d, level 6 %d bytes" %
      (size["off"], size["1"], size["6"]))

# a restart from a compressed file into an uncompressed one (and back) continues bit for bit
with h5py.File(files["1"], "r") as f:
    t = f["time"][()]
    q = f["state/q"][()]
half = float(t[len(t) // 2])
_, _, _, first = run(DECK, "--set", "output.compression=1", "--set", "output.xdmf=false",
                     "--t-end", "%.17g" % half, out=os.path.join(TMP, "first.h5"))
_, _, _, more = run(DECK, "--set", "output.compression=off", "--set", "output.xdmf=false",
                    "--restart", first,
                    out=os.path.join(TMP, "more.h5"))
with h5py.File(more, "r") as f:
    q2 = f["state/q"][()]
    comp = f["state/q"].compression
check(comp is None and q2.shape[0] >= 2 and np.array_equal(q2[-1], q[-1]),
      "restart from a deflated file into an uncompressed one ends on the same bits")
done()

"""--restart with hostile result files (crafted with h5py from a real result): attributes of
the wrong shape, type or size, datasets of the wrong shape, links out of the file, sizes
that would allocate gigabytes, non-finite, off-grid or inconsistent states, a FIFO, and
terminal escape sequences in names and paths. Each is refused with exit status 1 and a
message that names what is wrong, nothing is written, no signal, no hang, and no raw
control character reaches the terminal."""
import os
import shutil
import subprocess
import time

import h5py
import numpy as np

from common import MBSIM, TMP, check, deck, done, run

DP = deck("double_pendulum.yaml")
T0 = 0.05
_, _, _, base = run(DP, "--t-end", str(T0))
_, _, _, base_ga = run(DP, "--t-end", str(T0), "--integrator", "genalpha")
with h5py.File(base, "r") as f:
    NQ = int(f.attrs["n_coordinates"])
    N_LAST = f["time"].shape[0] - 1
OUT = os.path.join(TMP, "restarted.h5")


def craft(name, edit, src=None):
    """a copy of the base result changed by edit(h5py.File)"""
    path = os.path.join(TMP, name + ".h5")
    shutil.copy(src or base, path)
    with h5py.File(path, "r+") as f:
        edit(f)
    return path


def restart(path, *extra, out=OUT):
    if os.path.exists(out):
        os.remove(out)
    t = time.time()
    p = subprocess.run([MBSIM, DP, "--restart", path, "-o", out, "--t-end", "0.1", "--quiet"] +
                       list(extra), capture_output=True, timeout=120)
    return p.returncode, p.stderr.decode("utf-8", "replace"), p.stderr, time.time() - t


def refused(path, want, what, *extra):
    rc, err, raw, secs = restart(path, *extra)
    ok = (rc == 1 and all(w in err for w in want) and not os.path.exists(OUT) and
          b"\x1b" not in raw)
    check(ok, "%s: exit 1, %s, nothing written (got %d in %.2f s: %s)" %
          (what, " + ".join("'%s'" % w for w in want), rc, secs, err.strip()))


def set_attr(name, value, dtype=None):
    def edit(f):
        del f.attrs[name]
        if dtype is None:
            f.attrs[name] = value
        else:
            f.attrs.create(name, value, dtype=dtype)
    return edit


def set_last(path, index, value):
    def edit(f):
        d = f[path]
        row = d[N_LAST]
        if np.ndim(row) == 0:
            d[N_LAST] = value
        else:
            row = np.array(row)
            row.flat[index] = value
            d[N_LAST] = row
    return edit


BAD = "bad restart file"
NOT = "not an mbsim-run result"

# item 1: the memory corruption of the first reader; every attribute checked before reading
ATT = np.frombuffer(b"A" * 8, dtype="<f8")[0]
refused(craft("dt600", set_attr("dt", np.full(600, ATT))),
        [BAD, NOT, "root attribute 'dt' holds 600 values, expected one"],
        "a 600-element dt attribute (was: the stack overwritten, return address from the file)")
refused(craft("format2", set_attr("format", ["mbsim-run/1", "mbsim-run/1"],
                                  dtype=h5py.string_dtype())),
        [NOT, "root attribute 'format' holds 2 values"],
        "a 2-element format attribute (was: a heap overflow and exit 0)")
refused(craft("status2", set_attr("status", ["completed"] * 3, dtype=h5py.string_dtype())),
        [NOT, "'status' holds 3 values"], "a 3-element status attribute")
refused(craft("ncoord2", set_attr("n_coordinates", np.array([NQ, NQ], dtype="i4"))),
        [NOT, "'n_coordinates' holds 2 values"], "a 2-element n_coordinates attribute")
refused(craft("dtstr", set_attr("dt", "0.001")),
        [NOT, "root attribute 'dt' is not a floating-point number"], "dt as a string")
refused(craft("ncfloat", set_attr("n_constraints", 2.0)),
        [NOT, "'n_constraints' is not an integer"], "n_constraints as a float")
refused(craft("fmtint", set_attr("format", 1)),
        [NOT, "root attribute 'format' is not a string"], "format as an integer")
refused(craft("fmthuge", set_attr("format", "x" * 3000000, dtype=h5py.string_dtype())),
        [NOT, "root attribute 'format' is longer than 65536 bytes"],
        "a 3 MB variable-length format string")
refused(craft("statushuge", set_attr("status", "y" * 3000000, dtype=h5py.string_dtype())),
        [NOT, "root attribute 'status' is longer than 65536 bytes"],
        "a 3 MB variable-length status string")
refused(craft("fmtfixed", set_attr("format", np.bytes_(b"z" * 60000))),
        [NOT, "root attribute 'format' is not 'mbsim-run/1'"], "a 60 kB fixed-length format")
refused(craft("dtnan", set_attr("dt", np.nan)), [NOT, "'dt' is nan, not a positive number"],
        "dt = NaN")

# sizes: compared with the model before anything of the file's size is allocated (the
# first reader allocated 1.6 GB for a 97 kB file)
refused(craft("nq200m", set_attr("n_coordinates", np.int32(200000000))),
        ["belongs to another model", "200000000 coordinates"],
        "n_coordinates = 200,000,000")


def huge_q(f):
    del f["state/q"]
    f.create_dataset("state/q", shape=(N_LAST + 1, 200000000), maxshape=(None, None),
                     chunks=(1, 4096), dtype="f8")


refused(craft("qhuge", huge_q),
        [NOT, "dataset /state/q has 200000000 values in dimension 2, expected %d" % NQ],
        "a /state/q dataset claiming 200,000,000 coordinates (sparse, 1.6 GB a row)")


def q_as_int(f):
    q = f["state/q"][()]
    names = f["state/q"].attrs["names"]
    del f["state/q"]
    f.create_dataset("state/q", data=q.astype("i8"))
    f["state/q"].attrs["names"] = names


refused(craft("qint", q_as_int), [NOT, "dataset /state/q does not hold floating-point"],
        "/state/q of integers")


def v_rank3(f):
    v = f["state/v"][()]
    del f["state/v"]
    f.create_dataset("state/v", data=v[:, :, None])


refused(craft("vrank3", v_rank3), [NOT, "dataset /state/v is not of rank 2"], "/state/v of rank 3")


def set_names(names):
    """the coordinate names replaced where the restart reader takes them from (the dataset
    /state/names), and in the attribute `names` of /state/q"""
    def edit(f):
        del f["state/names"]
        f.create_dataset("state/names", data=names, dtype=h5py.string_dtype())
        f["state/q"].attrs["names"] = names
    return edit


refused(craft("names3", set_names(["a", "b", "c"])),
        [NOT, "/state/names holds 3 names for %d coordinates" % NQ],
        "three coordinate names for six coordinates")
refused(craft("nameslong", set_names(["n" * 100000] * NQ)),
        [NOT, "coordinate name 1 is longer than 255 bytes"], "a coordinate name of 100 kB")

# links and storage outside the file: never followed (HDF5 would open what they name)
fifo = os.path.join(TMP, "fifo")
os.mkfifo(fifo)


def external_link(f):
    del f["state/v"]
    f["state/v"] = h5py.ExternalLink(fifo, "/state/v")


refused(craft("extlink", external_link), [NOT, "/state/v is an external link"],
        "/state/v an external link to a FIFO (would block)")


def soft_link(f):
    del f["state/v"]
    f["state/v"] = h5py.SoftLink("/state/q")


refused(craft("softlink", soft_link), [NOT, "/state/v is a soft link"], "/state/v a soft link")


def external_storage(f):
    t = f["time"][()]
    del f["time"]
    f.create_dataset("time", data=None, shape=t.shape, dtype="f8", external=[(fifo, 0, 8 * len(t))])


refused(craft("extstore", external_storage), [NOT, "dataset /time is stored in external files"],
        "/time stored in an external file that is a FIFO")

# item 8: the state. The time: finite, >= 0, on the earlier run's grid, before t_end
refused(craft("tneg", set_last("time", 0, -1e6)), [BAD, "t = -1000000"],
        "/time = -1e6 (was: 1e9 steps)")
refused(craft("tneg300", set_last("time", 0, -1e300)), [BAD, "t = -1.0000000000000001e+300"],
        "/time = -1e300 (was: a long overflowed)")
refused(craft("tnan", set_last("time", 0, np.nan)), [BAD, "never holds in /time"], "/time = NaN")
refused(craft("toff", set_last("time", 0, 0.0123456)),
        [BAD, "t = 0.0123456", "not a time the earlier run"], "/time off the dt grid")
refused(craft("tbig", set_last("time", 0, 1e300)), [BAD, "not a time the earlier run"],
        "/time = 1e300 (1e303 steps)")
refused(craft("tpast", set_last("time", 0, 0.5)), ["not before t_end = 0.1"], "/time after t_end")
# finiteness: NaN and Inf are a bad file (exit 1), not a blown-up run (exit 2)
refused(craft("qinf", set_last("state/q", 2, np.inf)), [BAD, "/state/q (entry 3)"], "Inf in q")
refused(craft("vnan", set_last("state/v", 4, np.nan)), [BAD, "/state/v (entry 5)"], "NaN in v")
refused(craft("munan", set_last("state/multipliers", 1, np.nan)),
        [BAD, "/state/multipliers (entry 2)"], "one NaN multiplier (all NaN means none)")
refused(craft("muinf", set_last("state/multipliers", 0, -np.inf)),
        [BAD, "/state/multipliers (entry 1)"], "an infinite multiplier")
refused(craft("accinf", set_last("state/acceleration", 3, np.inf), src=base_ga),
        [BAD, "/state/acceleration (entry 4)"], "Inf in a genalpha acceleration",
        "--integrator", "genalpha")
refused(craft("workinf", set_last("energy/external_work", 0, np.inf)),
        [BAD, "/energy/external_work"], "Inf external work")
refused(craft("stepbig", set_last("solver/step_size", 0, 1e300)),
        [BAD, "step size 1.0000000000000001e+300 is larger than its dt"], "step size 1e300")
# consistency with the model: q on the rods, v with no energy the run cannot have
def move_bob1(f):
    q = f["state/q"]
    q[N_LAST] = q[N_LAST] + np.array([0.3, 0, 0, 0, 0, 0])


refused(craft("qoff", move_bob1), [BAD, "position q violates joint 'rod", "tolerance"],
        "bob1 0.3 m off its rod")
with h5py.File(base, "r") as f:
    q_last = f["state/q"][N_LAST]
radial = q_last[0:3] / np.linalg.norm(q_last[0:3])
refused(craft("vbad", lambda f: f["state/v"].__setitem__(
    N_LAST, f["state/v"][N_LAST] + 100.0 * np.concatenate([radial, radial]))),
    [BAD, "energy", "exceeds E0 + W_ext - D"],
    "v of both bobs 100 m/s along the first rod (was: exit 0, energy from 0 to 1e4 J)")
refused(craft("vscaled", lambda f: f["state/v"].__setitem__(N_LAST, 1e3 * f["state/v"][N_LAST])),
        [BAD, "energy"], "v scaled by 1000 (tangent to the rods, energy 1e6 times)")

# a FIFO (nobody writes to it) and a directory as restart file: refused without opening
refused(fifo, [BAD, "not a regular file (a FIFO)"], "a FIFO as restart file (was: a hang)")
refused(TMP, [BAD, "not a regular file (a directory)"], "a directory as restart file")

# item 15: escape sequences from the file or its name are printed escaped
ESC = "\x1b]0;owned\x07\x1b[2J\x1b[31m"


def evil_names(f):
    names = [n.decode() if isinstance(n, bytes) else n for n in f["state/q"].attrs["names"]]
    names[0] = ESC + "bob1.x"
    set_names(names)(f)


refused(craft("escnames", evil_names),
        ["belongs to another model", "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mbob1.x"],
        "escape sequences in a coordinate name")
refused(craft("escformat", set_attr("format", ESC + "mbsim-run/1")),
        [NOT, "is not 'mbsim-run/1'"], "escape sequences in the format attribute")
evil_path = os.path.join(TMP, "evil\x1b[2J\u202e.h5")
shutil.copy(craft("tneg_for_path", set_last("time", 0, -1.0)), evil_path)
refused(evil_path, [BAD, "evil\\x1b[2J\\u202e.h5"], "escape sequences and a bidi override "
        "in the restart file's name")
# an HDF5 file of another format at -o: its format string is printed escaped
other = os.path.join(TMP, "other.h5")
with h5py.File(other, "w") as f:
    f.attrs["format"] = ESC + "x"
p = subprocess.run([MBSIM, DP, "-o", other, "--quiet", "--t-end", "0.01"], capture_output=True,
                   timeout=120)
check(p.returncode == 1 and b"\x1b" not in p.stderr and b"\\x1b]0;owned" in p.stderr,
      "-o onto an HDF5 file whose format holds escape sequences: exit 1, printed escaped (%s)"
      % p.stderr.decode("utf-8", "replace").strip())

# and the base file itself still restarts
rc, err, _, _ = restart(base)
check(rc == 0 and os.path.exists(OUT), "the unmodified file restarts (exit %d %s)" % (rc, err))
done()

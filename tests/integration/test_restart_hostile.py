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
_, _, _, base_mp = run(DP, "--t-end", str(T0), "--integrator", "midpoint")
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
def set_names(names, dataset=True):
    """the coordinate names of the file: in the dataset /state/names (today's files), or, with
    dataset=False, only in the attribute of /state/q (older files, the dataset removed)"""
    def edit(f):
        del f["state/names"]
        if dataset:
            f.create_dataset("state/names", data=names, dtype=h5py.string_dtype())
        else:
            f["state/q"].attrs["names"] = names
    return edit


refused(craft("names3", set_names(["a", "b", "c"])),
        [NOT, "dataset /state/names holds 3 names for %d coordinates" % NQ],
        "three coordinate names for six coordinates (/state/names)")
refused(craft("names3attr", set_names(["a", "b", "c"], dataset=False)),
        [NOT, "attribute 'names' of /state/q holds 3 names for %d coordinates" % NQ],
        "three coordinate names for six coordinates (an older file's attribute)")
refused(craft("nameslong", set_names(["n" * 100000] * NQ)),
        [NOT, "coordinate name 1 is longer than 255 bytes"], "a coordinate name of 100 kB")
refused(craft("nameslongattr", set_names(["n" * 100000] * NQ, dataset=False)),
        [NOT, "coordinate name 1 is longer than 255 bytes"],
        "a coordinate name of 100 kB (an older file's attribute)")

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
        [BAD, "t = 0.0123456", "not a step end of the earlier run"], "/time off the dt grid")
refused(craft("tbig", set_last("time", 0, 1e300)), [BAD, "not a step end of the earlier run"],
        "/time = 1e300 (1e303 steps)")
refused(craft("tpast", set_last("time", 0, 0.5)), ["not before t_end = 0.1"], "/time after t_end")
# finiteness: NaN and Inf are a bad file (exit 1), not a blown-up run (exit 2)
refused(craft("qinf", set_last("state/q", 2, np.inf)), [BAD, "/state/q (entry 3)"], "Inf in q")
refused(craft("vnan", set_last("state/v", 4, np.nan)), [BAD, "/state/v (entry 5)"], "NaN in v")
refused(craft("munan", set_last("state/multipliers", 1, np.nan)),
        [BAD, "/state/multipliers (entry 2)"], "one NaN multiplier (all NaN means none)")
refused(craft("muinf", set_last("state/multipliers", 0, -np.inf)),
        [BAD, "/state/multipliers (entry 1)"], "an infinite multiplier")
refused(craft("pvinf", set_last("state/previous_velocity", 2, np.inf), src=base_mp),
        [BAD, "/state/previous_velocity (entry 3)"], "Inf in midpoint's previous velocity",
        "--integrator", "midpoint")
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


# the accumulated work and dissipation (every /energy scalar that accumulates): finite, no
# negative dissipation, a part at most its whole, balanced against the record's energy
refused(craft("dneg", set_last("energy/dissipated", 0, -1e300)),
        [BAD, "/energy/dissipated = -1e+300", "negative dissipation"],
        "dissipation -1e300 (was: accepted, the instability check disarmed)")
refused(craft("dneg_fast", lambda f: (set_last("energy/dissipated", 0, -1e300)(f),
                                      f["state/v"].__setitem__(N_LAST, 1e6 * f["state/v"][N_LAST]))),
        [BAD, "/energy/dissipated = -1e+300"],
        "dissipation -1e300 and the bobs at 1e6 times their speed (was: completed)")
refused(craft("wbig", set_last("energy/external_work", 0, 1e300)),
        [BAD, "work and dissipation of 1e+300 J", "round-off"],
        "external work 1e300 (was: accepted)")
refused(craft("wdbig", lambda f: (set_last("energy/external_work", 0, 1e300)(f),
                                  set_last("energy/dissipated", 0, 1e300)(f))),
        [BAD, "work and dissipation of 2e+300 J"],
        "work and dissipation 1e300 each, balancing each other")
refused(craft("wunbal", set_last("energy/external_work", 0, 1000.0)),
        [BAD, "does not balance its energy", "/energy/external_work 1000"],
        "an external work of 1000 J that no energy of the record shows")
rc, err, _, _ = restart(craft("dround", set_last("energy/dissipated", 0, -1e-14)))
check(rc == 0, "a dissipation of -1e-14 J (round-off) restarts (exit %d %s)" % (rc, err.strip()))

# the contact part of the dissipation, on the bouncing ball after its first impact
BALL = deck(os.path.join("contacts", "bouncing_ball.yaml"))
_, _, _, ball_hit = run(BALL, "--t-end", "0.6", out=os.path.join(TMP, "ball_hit.h5"))


def refused_ball(path, want, what):
    if os.path.exists(OUT):
        os.remove(OUT)
    p = subprocess.run([MBSIM, BALL, "--restart", path, "-o", OUT, "--t-end", "1", "--quiet"],
                       capture_output=True, timeout=120)
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 1 and all(w in err for w in want) and not os.path.exists(OUT),
          "%s: exit 1, %s, nothing written (got %d: %s)" % (what, " + ".join(want),
                                                            p.returncode, err.strip()))


def set_final(path, value):
    def edit(f):
        f[path][f[path].shape[0] - 1] = value
    return edit


refused_ball(craft("cdneg", set_final("energy/contact_dissipated", -2.0), src=ball_hit),
             [BAD, "/energy/contact_dissipated = -2", "negative dissipation"],
             "a negative part of the dissipation")
refused_ball(craft("cdpart", set_final("energy/contact_dissipated", 50.0), src=ball_hit),
             [BAD, "/energy/contact_dissipated = 50", "more than the whole dissipation"],
             "a part of the dissipation larger than the whole")
p = subprocess.run([MBSIM, BALL, "--restart", ball_hit, "-o", OUT, "--t-end", "1", "--quiet"],
                   capture_output=True, timeout=120)
check(p.returncode == 0, "the ball after its impact restarts (exit %d %s)"
      % (p.returncode, p.stderr.decode("utf-8", "replace").strip()))

# a restart into a deck whose shapes cut into the state is refused as at t = 0: the
# bouncing ball falling at t = 0.3 (lowest point 0.559 m up), the floor raised to 0.6 m
_, _, _, ball = run(BALL, "--t-end", "0.3", out=os.path.join(TMP, "ball.h5"))
RAISED = "--set=ground.collision.floor.plane.point=[0, 0, 0.6]"
if os.path.exists(OUT):
    os.remove(OUT)
p = subprocess.run([MBSIM, BALL, RAISED, "--restart", ball, "-o", OUT, "--t-end", "1",
                    "--quiet"], capture_output=True, timeout=120)
err = p.stderr.decode("utf-8", "replace")
check(p.returncode == 1 and "'ball' (sphere) and 'floor' (plane) overlap by 0.0414" in err
      and "at t = 0.3" in err and "ball_floor" in err and "bouncing_ball.yaml:" in err
      and not os.path.exists(OUT),
      "a restart whose floor cuts the ball: exit 1 naming the pair and the depth, nothing "
      "written (was: completed, the overlap booked as negative dissipation) (%d: %s)"
      % (p.returncode, err.strip()))
p = subprocess.run([MBSIM, BALL, "--set=ground.collision.floor.plane.point=[0, 0, 0.5]",
                    "--restart", ball, "-o", OUT, "--t-end", "0.5", "--quiet"],
                   capture_output=True, timeout=120)
check(p.returncode == 0, "the same restart with the floor below the ball runs (exit %d %s)"
      % (p.returncode, p.stderr.decode("utf-8", "replace").strip()))

# a FIFO (nobody writes to it) and a directory as restart file: refused without opening
refused(fifo, [BAD, "not a regular file (a FIFO)"], "a FIFO as restart file (was: a hang)")
refused(TMP, [BAD, "not a regular file (a directory)"], "a directory as restart file")

# item 15: escape sequences from the file or its name are printed escaped
ESC = "\x1b]0;owned\x07\x1b[2J\x1b[31m"


def evil_names(f):
    names = [n.decode() if isinstance(n, bytes) else n for n in f["state/names"][()]]
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

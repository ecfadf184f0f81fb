"""Faults: kill -9 in the middle of a run (the file opens with h5py and holds every record up
to the last flush, bit for bit the records of an uninterrupted run), a full disk (a 1 MB
tmpfs: clear error, exit 2; the records of the last flush intact; status "failed: ..." when
the file can still be updated, else the "running" of its last flush) and the output path (something that is not an
mbsim-run result is refused unless --overwrite; an earlier result is replaced only once the
new run has written its first record; devices and directories never)."""
import os
import shutil
import signal
import stat
import subprocess
import time

import h5py
import numpy as np

from common import MBSIM, QUICK, ROOT, TMP, check, deck, done, skip

DECK = deck("double_spherical_pendulum.yaml")
SERIES = ("time", "energy/kinetic", "energy/total", "momentum/angular", "state/q", "state/v",
          "bodies/position", "bodies/orientation", "joints/reaction", "solver/iterations")


def series(path, n=None):
    """the time series of a result (the first n records), and its status"""
    with h5py.File(path, "r") as f:
        out = {k: f[k][()] if n is None else f[k][:n] for k in SERIES}
        return out, f.attrs["status"]


def leftovers(directory):
    return [e for e in os.listdir(directory) if ".tmp-" in e]


# ---- kill -9: every record up to the last flush, exactly as an uninterrupted run has them

kills = (2.6,) if QUICK else (2.6, 3.4, 4.5)
for k, wait in enumerate(kills):
    d = os.path.join(TMP, "kill%d" % k)
    os.makedirs(d)
    out = os.path.join(d, "killed.h5")
    p = subprocess.Popen([MBSIM, DECK, "-o", out, "--quiet", "--t-end", "1e6", "--set",
                          "output.every=1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(wait)  # past the first automatic flush (every 2 s of wall time)
    p.send_signal(signal.SIGKILL)
    p.wait()
    check(p.returncode == -signal.SIGKILL, "kill -9 after %.1f s: the run was killed" % wait)
    try:
        got, status = series(out)
    except OSError as e:
        check(False, "kill -9 after %.1f s: the file opens with h5py (%s)" % (wait, e))
        continue
    n = len(got["time"])
    check(status == "running", "kill -9 after %.1f s: status 'running' (got '%s')" % (wait, status))
    check(n > 100 and all(len(v) == n for v in got.values()),
          "kill -9 after %.1f s: %d records, the same number in every dataset" % (wait, n))
    check(all(np.all(np.isfinite(v)) for v in got.values()) and np.all(np.diff(got["time"]) > 0),
          "kill -9 after %.1f s: records finite, times increasing" % wait)
    # the same run, uninterrupted to the last record's time: identical records
    t_last = float(got["time"][-1])
    ref = os.path.join(d, "reference.h5")
    subprocess.run([MBSIM, DECK, "-o", ref, "--quiet", "--t-end", repr(t_last), "--set",
                    "output.every=1"], check=True)
    want, _ = series(ref)
    same = all(np.array_equal(got[key], want[key][:n]) for key in SERIES)
    check(same and len(want["time"]) == n,
          "kill -9 after %.1f s: every record up to t = %.4g equals the uninterrupted run's" %
          (wait, t_last))
    check(leftovers(d) == [], "kill -9 after %.1f s: no temporary file left (%s)" %
          (wait, leftovers(d)))

# ---- a full disk: a 1 MB tmpfs
full = os.path.join(TMP, "full")
os.makedirs(full)
mnt = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", full],
                     capture_output=True, text=True)
if mnt.returncode != 0:
    skip("full disk (HDF5 data and XDMF sidecar)", "cannot mount a 1 MB tmpfs here (%s)"
         % (mnt.stderr.strip() or "mount exit %d" % mnt.returncode))
else:
    def full_disk(what, extra, status_ok, status_what):
        out = os.path.join(full, "run.h5")
        t0 = time.time()
        p = subprocess.run([MBSIM, DECK, "-o", out, "--quiet", "--t-end", "1e6", "--set",
                            "output.every=200"] + extra, capture_output=True, text=True,
                           timeout=600)
        lines = p.stderr.strip().splitlines()
        first = ([ln for ln in lines if "warning" not in ln] or [""])[0]
        check(p.returncode == 2, "full disk, %s: exit status 2 (got %d)" % (what, p.returncode))
        # before the run: the output will not fit, and the run says so
        check(lines and "warning: this run writes about" in lines[0] and "free there" in
              lines[0], "full disk, %s: a warning before the run that the output will not fit "
              "(%s)" % (what, (lines or [""])[0][:150]))
        check(("No space left on device" in p.stderr or "file system is full" in p.stderr) and
              "run." in first, "full disk, %s: the error names the file and says the disk is "
              "full (%s)" % (what, first[:150]))
        check(time.time() - t0 < 120, "full disk, %s: the run stops promptly" % what)
        got, status = series(out)
        n = len(got["time"])
        check(status_ok(status, p.stderr), "full disk, %s: %s ('%s')" % (what, status_what,
                                                                         status[:90]))
        # (on a fast machine the disk may fill before the first automatic flush: then the
        # file holds the initial record only)
        ref = os.path.join(TMP, "full_reference.h5")
        t_ref = max(float(got["time"][-1]), 0.2)
        subprocess.run([MBSIM, DECK, "-o", ref, "--quiet", "--t-end", repr(t_ref), "--set",
                        "output.every=200"], check=True)
        want, _ = series(ref)
        check(n > 0 and all(len(v) == n for v in got.values()) and
              all(np.array_equal(got[k], want[k][:n]) for k in SERIES),
              "full disk, %s: the file opens with %d records, each equal to the uninterrupted "
              "run's" % (what, n))
        for e in os.listdir(full):
            os.remove(os.path.join(full, e))

    try:
        # the results fill the disk: the file cannot take another flush, so it keeps its last
        # one (status "running") and the run says so
        full_disk("HDF5 data", ["--set", "output.xdmf=false"],
                  lambda st, err: st == "running" and "keeps the records of its last flush" in
                  err, "the file keeps its last flush, and stderr says so")
        # the sidecar fills the disk first: the HDF5 file can still be updated, so its status
        # says what failed
        # (which of the two fills the disk first depends on how fast the run goes, e.g.
        # under the sanitizers: either outcome must be reported as such)
        full_disk("XDMF sidecar", [],
                  lambda st, err: (st.startswith("failed: ") and "No space left on device" in st)
                  or (st == "running" and "keeps the records of its last flush" in err),
                  "status 'failed: ...', or the last flush kept and stderr says so")
    finally:
        subprocess.run(["umount", full])

# ---- the output path
d = os.path.join(TMP, "paths")
os.makedirs(d)
quick = [deck("double_pendulum.yaml"), "--quiet", "--t-end", "0.05"]


def run(out, *extra):
    return subprocess.run([MBSIM] + quick + ["-o", out] + list(extra), capture_output=True,
                          text=True)


# something else at the path: refused, named, untouched
notes = os.path.join(d, "notes.h5")
with open(notes, "w") as f:
    f.write("my notes\n")
p = run(notes)
check(p.returncode == 1 and notes in p.stderr and "not an mbsim-run result" in p.stderr and
      "--overwrite" in p.stderr, "a text file at the output path is refused, named (%s)" %
      p.stderr.strip()[:160])
check(open(notes).read() == "my notes\n", "the refused file is left as it was")
foreign = os.path.join(d, "foreign.h5")
with h5py.File(foreign, "w") as f:
    f["data"] = np.arange(3)
p = run(foreign)
check(p.returncode == 1 and "without the root attribute format" in p.stderr,
      "an HDF5 file without format = \"mbsim-run/1\" is refused")
with h5py.File(foreign, "r") as f:
    check(list(f["data"][()]) == [0, 1, 2], "the foreign HDF5 file is left as it was")

# --overwrite replaces it
p = run(notes, "--overwrite")
check(p.returncode == 0, "--overwrite replaces a file that is not a result (%s)" % p.stderr)
with h5py.File(notes, "r") as f:
    check(f.attrs["format"] == "mbsim-run/1", "the replaced file is a result now")

# never a directory or a device, not even with --overwrite
p = run(d, "--overwrite")
check(p.returncode == 1 and "is a directory" in p.stderr, "a directory is refused")
p = run("/dev/null", "--overwrite")
check(p.returncode == 1 and "not a regular file" in p.stderr and
      stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is refused and stays a device")

# an earlier result survives a deck that fails to compile, and a run that fails before its
# first record; it is replaced by a run that writes records
good = os.path.join(d, "result.h5")
p = run(good)
check(p.returncode == 0, "a first result")
before = open(good, "rb").read()
bad = os.path.join(ROOT, "tests", "bad", "negative_mass.yaml")
p = subprocess.run([MBSIM, bad, "-o", good, "--quiet"], capture_output=True, text=True)
check(p.returncode == 1 and open(good, "rb").read() == before,
      "a deck that fails to compile leaves the earlier result byte for byte")
boom = os.path.join(ROOT, "tests", "hazards", "infinite_energy.yaml")
p = subprocess.run([MBSIM, boom, "-o", good, "--quiet"], capture_output=True, text=True)
check(p.returncode == 2 and open(good, "rb").read() == before,
      "a run that fails before its first record leaves the earlier result byte for byte")
p = run(good, "--t-end", "0.2")
check(p.returncode == 0, "a new run over the earlier result")
with h5py.File(good, "r") as f:
    check(abs(f["time"][-1] - 0.2) < 1e-12 and f.attrs["status"] == "completed",
          "the earlier result is replaced by the new one")
xmf = open(os.path.join(d, "result.xmf")).read()
check(">result.h5:/bodies/position<" in xmf and ".tmp-" not in xmf,
      "the sidecar names the final file, not the temporary one")
# a new result without a sidecar takes the old result's sidecar with it (it would describe
# records the new file does not have); an .xmf that is not ours stays
p = run(good, "--t-end", "0.1", "--set", "output.xdmf=false")
check(p.returncode == 0 and not os.path.exists(os.path.join(d, "result.xmf")),
      "a run with output.xdmf=false removes the sidecar of the result it replaced")
mine = os.path.join(d, "result.xmf")
with open(mine, "w") as f:
    f.write("<?xml version=\"1.0\" ?>\n<Xdmf Version=\"2.0\"><Domain/></Xdmf>\n")
p = run(good, "--t-end", "0.1", "--set", "output.xdmf=false")
check(p.returncode == 0 and os.path.exists(mine),
      "an .xmf that does not point into the result is left alone")
os.remove(mine)

# while a long run is under way, the earlier result is gone only after its first record
slow = os.path.join(d, "slow.h5")
shutil.copy(good, slow)
p = subprocess.Popen([MBSIM, DECK, "-o", slow, "--quiet", "--t-end", "1e6"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(1.0)
live = os.path.join(TMP, "live_copy.h5")  # HDF5 locks the file being written: read a copy
shutil.copy(slow, live)
with h5py.File(live, "r") as f:
    check(f.attrs["status"] == "running" and "double" in f.attrs["title"].lower(),
          "a second into a run the path holds the new, running result")
p.send_signal(signal.SIGTERM)
p.wait()
check(p.returncode == 3 and leftovers(d) == [], "SIGTERM: exit 3, no temporary file left")
done()

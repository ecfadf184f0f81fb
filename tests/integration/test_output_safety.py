"""The output file under hostile conditions: SIGHUP and SIGPIPE end a run like SIGTERM; a
signal while a large deck loads is handled; two runs on one output (a lock naming the PID;
a stale lock does not block); a long run killed with -9 loses at most the flush interval and
its sidecar lists exactly the HDF5 file's records; a full disk before the first record; the
sidecar's path (a user's file, a directory) checked before anything is replaced; links
planted at temporary names never followed; dangling links and loops at -o refused."""
import os
import re
import signal
import subprocess
import threading
import time
import xml.etree.ElementTree as ET

import h5py

from common import MBSIM, QUICK, ROOT, TMP, check, deck, done

QUICKDECK = [deck("double_pendulum.yaml"), "--quiet", "--t-end", "0.05"]


def status_of(path):
    with h5py.File(path, "r") as f:
        return f.attrs["status"], len(f["time"])


def leftovers(directory):
    return sorted(e for e in os.listdir(directory) if ".tmp-" in e)


def short(out, *extra):
    return subprocess.run([MBSIM] + QUICKDECK + ["-o", out] + list(extra), capture_output=True,
                          text=True, timeout=120)


def long_run(out, *extra, **kw):
    return subprocess.Popen([MBSIM, deck("double_spherical_pendulum.yaml"), "-o", out,
                             "--t-end", "1e6"] + list(extra), **kw)


def wait_for(cond, timeout=30.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if cond():
            return True
        time.sleep(0.01)
    return False


# ---- SIGHUP: like SIGTERM
d = os.path.join(TMP, "signals")
os.makedirs(d)
out = os.path.join(d, "hup.h5")
p = long_run(out, "--quiet", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wait_for(lambda: os.path.exists(out))
time.sleep(0.5)
p.send_signal(signal.SIGHUP)
_, err = p.communicate(timeout=60)
st, n = status_of(out)
check(p.returncode == 3 and st.startswith("interrupted at t=") and n > 1,
      "SIGHUP: exit 3 (got %d), status '%s', %d records" % (p.returncode, st, n))
check("by SIGHUP; output flushed" in err, "SIGHUP: stderr says so (%s)" % err.strip().splitlines()[-1])

# ---- SIGPIPE: `mbsim-run ... --progress 2>&1 | head -1`
out = os.path.join(d, "pipe.h5")
sh = subprocess.run(["bash", "-c", '"$0" "$1" -o "$2" --t-end 1e6 --progress 2>&1 | head -1; '
                     'echo "exit=${PIPESTATUS[0]}"', MBSIM,
                     deck("double_spherical_pendulum.yaml"), out],
                    capture_output=True, text=True, timeout=120)
m = re.search(r"exit=(\d+)", sh.stdout)
code = int(m.group(1)) if m else -1
st, n = status_of(out)
# (head may leave before the first step: then the file holds the initial record)
check(code == 3 and st.startswith("interrupted at t=") and n >= 1,
      "mbsim-run --progress 2>&1 | head -1: exit 3 (got %d), a closed file with status '%s', "
      "%d records" % (code, st, n))

# ---- a signal while a large deck loads: the handlers come first
big = os.path.join(d, "bodies.yaml")
with open(big, "w") as f:
    f.write("mbsim: 1\nbodies:\n")
    for i in range(10000):
        f.write("  - {name: b%d, mass: 1, inertia: [1, 2, 2.5], position: [%d, 0, 0]}\n" % (i, i))
    f.write("solver: {dt: 1.0e-3, t_end: 1.0}\n")
out = os.path.join(d, "early.h5")
r = short(out)
before = open(out, "rb").read()
t0 = time.time()
p = subprocess.Popen([MBSIM, big, "-o", out, "--quiet"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE, text=True)


def catches_sigterm():
    try:
        with open("/proc/%d/status" % p.pid) as f:
            caught = [ln for ln in f if ln.startswith("SigCgt:")]
        return caught and int(caught[0].split()[1], 16) & (1 << (signal.SIGTERM - 1))
    except OSError:
        return False


installed = wait_for(catches_sigterm, 5.0)
latency = time.time() - t0
p.send_signal(signal.SIGTERM)
_, err = p.communicate(timeout=60)
check(installed and latency < 0.35, "the signal handlers are in place %.3f s after the start "
      "(< 0.35 s)" % latency)
check(p.returncode == 3 and "before the run started; nothing written" in err,
      "SIGTERM while a 10,000-body deck loads: exit 3 (got %d), nothing written (%s)" %
      (p.returncode, err.strip()[:120]))
check(open(out, "rb").read() == before and leftovers(d) == [],
      "... the earlier result byte for byte, no temporary file")

# ---- two runs on one output: the second is refused, naming the first one's PID
d = os.path.join(TMP, "lock")
os.makedirs(d)
out = os.path.join(d, "run.h5")
a = long_run(out, "--quiet", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wait_for(lambda: os.path.exists(out))
b = short(out)
check(b.returncode == 1 and ("being written by another mbsim-run (PID %d" % a.pid) in b.stderr,
      "a second run on the same output: exit 1 (got %d) naming PID %d (%s)" %
      (b.returncode, a.pid, b.stderr.strip()[:160]))
# the same file through another spelling of its path
b = short(os.path.join(d, ".", "run.h5"))
check(b.returncode == 1 and "PID %d" % a.pid in b.stderr, "... also as %s/./run.h5" % d)
time.sleep(0.5)
a.send_signal(signal.SIGTERM)
a.wait(timeout=60)
st, n = status_of(out)
check(a.returncode == 3 and st.startswith("interrupted") and n > 1,
      "the first run ends as it would alone (exit %d, status '%s')" % (a.returncode, st))
check(not os.path.exists(os.path.join(d, ".run.h5.lock")), "its lock file is gone")
# two started at once: one writes, the other is refused
pair = [long_run(os.path.join(d, "pair.h5"), "--quiet", stdout=subprocess.DEVNULL,
                 stderr=subprocess.PIPE, text=True) for _ in range(2)]
time.sleep(1.5)
for q in pair:
    if q.poll() is None:
        q.send_signal(signal.SIGTERM)
codes = sorted(q.wait(timeout=60) for q in pair)
errs = [q.stderr.read() for q in pair]
check(codes == [1, 3] and any("being written by another mbsim-run" in e for e in errs),
      "two runs started together on one output: one writes (exit 3 at SIGTERM), the other is "
      "refused (exit 1): %s" % codes)
# a run killed with -9 leaves its lock file; it does not block the next run
k = long_run(out, "--quiet", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wait_for(lambda: os.path.exists(os.path.join(d, ".run.h5.lock")))
time.sleep(0.5)
k.send_signal(signal.SIGKILL)
k.wait()
stale = os.path.exists(os.path.join(d, ".run.h5.lock"))
r = short(out)
check(stale and r.returncode == 0, "a stale lock file of a killed run does not block (exit %d: %s)"
      % (r.returncode, r.stderr.strip()[:120]))

# ---- a long run killed with -9: at most the flush interval (and one record) lost
d = os.path.join(TMP, "long")
os.makedirs(d)
out = os.path.join(d, "long.h5")
run_for = 6.0 if QUICK else 12.0
p = subprocess.Popen([MBSIM, deck("quickstart.yaml"), "-o", out, "--t-end", "1e6", "--progress",
                      "--set", "output.every=20"], stdout=subprocess.DEVNULL,
                     stderr=subprocess.PIPE)
progress = []


def reader():
    buf = b""
    while True:
        c = p.stderr.read(1)
        if not c:
            return
        buf += c
        if c == b"\r":
            m = re.search(rb"(\d+) steps\s+(\d+) steps/s", buf)
            if m:
                progress.append((time.time(), int(m.group(1)), int(m.group(2))))
            buf = b""


th = threading.Thread(target=reader, daemon=True)
th.start()
time.sleep(run_for)
t_kill = time.time()
p.send_signal(signal.SIGKILL)
p.wait()
th.join(timeout=10)
t_p, n_p, rate = progress[-1] if progress else (t_kill, 0, 1)
steps_at_kill = n_p + rate * (t_kill - t_p)
with h5py.File(out, "r") as f:
    nrec = len(f["time"])
    status = f.attrs["status"]
steps_in_file = (nrec - 1) * 20
lost = (steps_at_kill - steps_in_file) / max(rate, 1)
check(status == "running" and nrec > 100, "kill -9 after %.0f s: %d records, status running" %
      (run_for, nrec))
check(lost <= 2.0 + 0.6, "kill -9 after %.0f s: %.2f s of work lost (flush interval 2 s; "
      "%d steps/s)" % (run_for, lost, rate))
try:
    root = ET.parse(out[:-3] + ".xmf").getroot()
    grids = [(g.get("Name"), len(g.findall("Grid"))) for g in root.find("Domain").findall("Grid")]
    dims = root.find("Domain/Grid/Grid/Geometry/DataItem/DataItem[2]").get("Dimensions")
except (ET.ParseError, OSError, AttributeError) as e:
    grids, dims = [], str(e)
check(grids == [("bodies", nrec), ("joints", nrec)] and dims.split()[0] == str(nrec),
      "kill -9: the sidecar parses and lists exactly the %d records (%s, N = %s)" %
      (nrec, grids, dims.split()[0] if dims else None))
check(leftovers(d) == [], "kill -9: no temporary file left (%s)" % leftovers(d))

# ---- a full disk before the first record: the true reason, no temporary file
full = os.path.join(TMP, "full")
os.makedirs(full)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", full],
                  capture_output=True).returncode != 0:
    print("skip  full disk: cannot mount a 1 MB tmpfs here (not root?)")
else:
    try:
        out = os.path.join(full, "run.h5")
        short(out)
        before = open(out, "rb").read()
        try:
            with open(os.path.join(full, "fill"), "wb", buffering=0) as f:
                while True:
                    f.write(b"\0" * 4096)
        except OSError:
            pass
        r = short(out)
        check(r.returncode == 1 and "No space left on device" in r.stderr and
              "another program" not in r.stderr,
              "full disk before the first record: exit 1 (got %d) with the system's reason (%s)"
              % (r.returncode, r.stderr.strip()[:120]))
        check(open(out, "rb").read() == before and leftovers(full) == [],
              "... the earlier result byte for byte, no temporary file (%s)" % leftovers(full))
    finally:
        subprocess.run(["umount", full])

# ---- the sidecar's path, checked before anything is replaced
d = os.path.join(TMP, "sidecar")
os.makedirs(d)
out = os.path.join(d, "run.h5")
xmf = os.path.join(d, "run.xmf")
short(out)
before = open(out, "rb").read()
os.remove(xmf)
mine = '<?xml version="1.0" ?>\n<Xdmf Version="2.0"><Domain/></Xdmf>\n'
with open(xmf, "w") as f:
    f.write(mine)
r = short(out, "--t-end", "0.1")
check(r.returncode == 1 and "not one that mbsim-run wrote" in r.stderr and
      open(xmf).read() == mine and open(out, "rb").read() == before,
      "a user's run.xmf: exit 1 (got %d), it and the earlier result untouched" % r.returncode)
r = short(out, "--t-end", "0.1", "--overwrite")
check(r.returncode == 0 and "record 10" in open(xmf).read(), "--overwrite replaces it")
before = open(out, "rb").read()
os.remove(xmf)
os.mkdir(xmf)
r = short(out, "--t-end", "0.2", "--overwrite")
check(r.returncode == 1 and "is a directory" in r.stderr and open(out, "rb").read() == before
      and os.path.isdir(xmf), "a directory run.xmf: exit 1 before the earlier result is replaced"
      " (%s)" % r.stderr.strip()[:120])
os.rmdir(xmf)

# ---- links planted at temporary names are never followed
victim = os.path.join(d, "victim.txt")
with open(victim, "w") as f:
    f.write("precious\n")
os.symlink(victim, xmf + ".tmp")
sh = subprocess.run(["bash", "-c", 'for k in "" -0 -1; do ln -s "$1" "$2/.run.h5.tmp-$$$k"; done; '
                     'exec "$0" "$3" -o "$2/run.h5" --quiet --t-end 0.05', MBSIM, victim, d,
                     deck("double_pendulum.yaml")], capture_output=True, text=True)
check(sh.returncode == 0 and open(victim).read() == "precious\n" and status_of(out)[0] ==
      "completed", "links at run.xmf.tmp and .run.h5.tmp-PID: the run completes, their target "
      "untouched (%s)" % sh.stderr.strip()[:100])

# ---- dangling links and loops at -o
gone = os.path.join(d, "dangling.h5")
os.symlink(os.path.join(d, "nowhere", "gone.h5"), gone)
r = short(gone)
check(r.returncode == 1 and "dangling" in r.stderr and os.path.islink(gone) and
      not os.path.exists(gone), "a dangling link as -o: exit 1, the link stays (%s)" %
      r.stderr.strip()[:120])
a, b = os.path.join(d, "loop_a.h5"), os.path.join(d, "loop_b.h5")
os.symlink(b, a)
os.symlink(a, b)
r = short(a)
check(r.returncode == 1 and "loop of links" in r.stderr and os.path.islink(a),
      "a loop of links as -o: exit 1 (%s)" % r.stderr.strip()[:120])
done()

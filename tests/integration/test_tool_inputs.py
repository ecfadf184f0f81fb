"""Hostile input to the Python tools, without Slurm or GNU parallel: mbsim-sweep refuses a
sweep file whose values would inject commands into sweep.sbatch or an sbatch command line
(newlines, shell metacharacters) before writing anything, quotes what it accepts (a script
written for an output directory full of shell syntax runs its case and nothing else), and
bounds the work of reading a sweep file (alias bombs, deep nesting, huge grids, long outputs
specs); mbsim-compare exits 2 on damaged files, never 1 with a traceback, and compares the
coordinate names. `sbatch` is a stand-in on PATH that records what it is given."""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import shlex
import signal
import shutil
import stat
import subprocess
import sys
import time
import traceback

import h5py
import yaml

from common import MBSIM, ROOT, TMP, check, deck, done, run

PYTHON = os.environ.get("PYTHON", sys.executable)
SWEEP = os.path.join(ROOT, "scripts", "mbsim-sweep")
COMPARE = os.path.join(ROOT, "scripts", "mbsim-compare")
DP = deck("double_pendulum.yaml")
CANARY = os.path.join(TMP, "CANARY")

# a stand-in sbatch: appends its arguments (and the script it was given) to a log, prints a
# job id; squeue is absent, so --wait returns at once
BIN = os.path.join(TMP, "bin")
os.makedirs(BIN)
SBATCH_LOG = os.path.join(TMP, "sbatch.log")
with open(os.path.join(BIN, "sbatch"), "w") as f:
    f.write("#!%s\nimport json, sys\nwith open(%r, 'a') as f:\n"
            "    f.write(json.dumps(sys.argv[1:]) + '\\n')\nprint('4242')\n" % (PYTHON, SBATCH_LOG))
os.chmod(os.path.join(BIN, "sbatch"), stat.S_IRWXU)
ENV = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))


def sweep_file(name, doc=None, text=None):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        if text is not None:
            f.write(text)
        else:
            yaml.safe_dump(doc, f, sort_keys=False)
    return path


def base(**extra):
    doc = {"sweep": 1, "deck": DP, "set": {"solver.t_end": 0.01},
           "grid": {"parameters.m1": [1.0, 2.0]}}
    doc.update(extra)
    return doc


def load_script(path, name):
    loader = importlib.machinery.SourceFileLoader(name, path)
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(mod)
    return mod


# the scripts run in this process (a Python start with h5py costs 0.4 s a call)
sweep_mod = load_script(SWEEP, "mbsim_sweep")
compare_mod = load_script(COMPARE, "mbsim_compare")
os.environ["PATH"] = ENV["PATH"]


class Result:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def on_alarm(signum, frame):
    raise TimeoutError("no answer in 60 s")


signal.signal(signal.SIGALRM, on_alarm)


def call(mod, argv):
    """main(argv) of a script: its exit status and output; a hang ends after 60 s"""
    out, err = io.StringIO(), io.StringIO()
    signal.alarm(60)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = mod.main(argv)
    except Exception:  # noqa: BLE001: an escaping exception is what the tests look for
        code = "exception"
        err.write(traceback.format_exc())
    finally:
        signal.alarm(0)
    return Result(code, out.getvalue(), err.getvalue())


def sweep(path, *args, timeout=None):
    t0 = time.monotonic()
    p = call(sweep_mod, [path, "--mbsim", MBSIM] + list(args))
    return p, time.monotonic() - t0


def sbatch_calls():
    if not os.path.exists(SBATCH_LOG):
        return []
    import json
    with open(SBATCH_LOG) as f:
        return [json.loads(ln) for ln in f]


# ---------- mbsim-sweep --slurm: values that would become commands are refused ----------
payload = "\ntouch %s\n" % CANARY
shell = "$(touch %s)" % CANARY
hostile = [
    ("partition with a newline", {"slurm": {"partition": "short" + payload}}, [], "slurm.partition"),
    ("partition with $(...)", {"slurm": {"partition": shell}}, [], "slurm.partition"),
    ("extra with a newline", {"slurm": {"extra": ["--exclusive" + payload]}}, [], "slurm.extra"),
    ("extra with ; and a quote", {"slurm": {"extra": ["--comment=x';touch %s;'" % CANARY]}}, [],
     "slurm.extra"),
    ("extra that is not an option", {"slurm": {"extra": ["touch", CANARY]}}, [], "slurm.extra"),
    ("name with a newline", {"name": "x" + payload}, [], "name"),
    ("name with a quote", {"name": "x'; touch %s; '" % CANARY}, [], "name"),
    ("time with ;", {"slurm": {"time": "00:10:00; touch %s" % CANARY}}, [], "slurm.time"),
    ("mem with a newline", {"slurm": {"mem": "1G" + payload}}, [], "slurm.mem"),
    ("account with a blank", {"slurm": {"account": "a b"}}, [], "slurm.account"),
    ("qos with a backquote", {"slurm": {"qos": "`touch %s`" % CANARY}}, [], "slurm.qos"),
    ("max_parallel as text", {"slurm": {"max_parallel": "5" + payload}}, [], "slurm.max_parallel"),
    ("cpus_per_task as text", {"slurm": {"cpus_per_task": "1;touch"}}, [], "slurm.cpus_per_task"),
    ("output with a newline", {"output": os.path.join(TMP, "out" + payload)}, [], "output"),
    ("--partition with a newline", {}, ["--partition", "short" + payload], "--partition"),
    ("--time with $(...)", {}, ["--time", shell], "--time"),
    ("--sbatch-arg with a newline", {}, ["--sbatch-arg=--exclusive" + payload], "--sbatch-arg"),
    ("--max-parallel 0", {}, ["--max-parallel", "0"], "--max-parallel"),
    ("-o with a newline", {}, ["-o", os.path.join(TMP, "o" + payload)], "output"),
]
for i, (what, extra, args, key) in enumerate(hostile):
    out = os.path.join(TMP, "refused%d" % i)
    doc = base(**extra)
    if "output" not in doc and "-o" not in args:
        args = args + ["-o", out]
    path = sweep_file("hostile%d.yaml" % i, doc)
    before = set(os.listdir(TMP))
    p, _ = sweep(path, "--slurm", *args)
    written = set(os.listdir(TMP)) - before
    check(p.returncode == 2 and key in p.stderr and "Traceback" not in p.stderr and
          not written and not sbatch_calls() and not os.path.exists(CANARY),
          "--slurm refuses %s: exit 2 naming %s, nothing written or submitted (%s: %s)" %
          (what, key, p.returncode, p.stderr.strip()[-150:]))

# a sweep file whose own path holds a newline (it goes into the script's comment)
nl_path = sweep_file("sweep\ntouch %s\n.yaml" % CANARY.replace("/", "_"), base())
p, _ = sweep(nl_path, "--slurm", "-o", os.path.join(TMP, "nlpath"))
check(p.returncode == 2 and "control character" in p.stderr and not sbatch_calls() and
      not os.path.exists(os.path.join(TMP, "nlpath")),
      "a sweep file path with a newline: refused (%s)" % p.stderr.strip()[-120:])

# ---------- what is accepted is quoted: the script runs its case and nothing else ----------
weird = os.path.join(TMP, "out dir $(touch %s); `touch %s` 'q\" x" % (CANARY, CANARY))
ok_doc = base(name="a.b+c-d", output=weird,
              slurm={"partition": "short,long", "account": "proj_1", "qos": "normal",
                     "mem": "500M", "cpus_per_task": 1, "max_parallel": 1,
                     "extra": ["--constraint=a&b|c", "--nodelist=node[01-02]", "--exclusive"]})
ok_text = yaml.safe_dump(ok_doc, sort_keys=False) + "  time: 00:10:00\n"   # unquoted: YAML 1.1
ok_path = sweep_file("accepted.yaml", text=ok_text)                           # reads it as 600
p, _ = sweep(ok_path, "--slurm", "--sbatch-arg=--gres=gpu:1")
calls = sbatch_calls()
script = os.path.join(weird, "sweep.sbatch")
check(p.returncode == 0 and len(calls) == 2 and os.path.isfile(script),
      "hostile but valid values: the array and the summary job submitted (%d: %s)" %
      (p.returncode, p.stderr.strip()[-200:]))
lines = open(script).read().splitlines() if os.path.isfile(script) else []
opts = [shlex.split(ln[len("#SBATCH "):]) for ln in lines if ln.startswith("#SBATCH ")]
want = ["--job-name=mbsim-a.b+c-d", "--array=0-1%1", "--ntasks=1",
        "--output=" + os.path.join(weird, "slurm", "case-%a.out"), "--partition=short,long",
        "--time=00:10:00", "--mem=500M", "--account=proj_1", "--qos=normal",
        "--cpus-per-task=1", "--constraint=a&b|c", "--nodelist=node[01-02]", "--exclusive",
        "--gres=gpu:1"]
check(opts == [[w] for w in want],
      "#SBATCH lines: one quoted option each, time 00:10:00 kept as text (%s)" % opts)
check(len(lines) == 2 + len(want) + 2 and lines[-2] == "set -u" and
      lines[-1].startswith("exec ") and all(ln.startswith("#") for ln in lines[:-2]),
      "sweep.sbatch: comments and #SBATCH lines, then set -u and one exec line")
if os.path.isfile(script):
    t = subprocess.run(["bash", script], env=dict(ENV, SLURM_ARRAY_TASK_ID="1"),
                       capture_output=True, text=True, timeout=300)
    check(t.returncode == 0 and os.path.isfile(os.path.join(weird, "case-0001.h5")) and
          not os.path.exists(CANARY),
          "running sweep.sbatch as task 1 runs case 1 in the directory named with shell "
          "syntax, and no injected command (%s)" % t.stderr.strip()[-200:])
if len(calls) == 2:
    wrap = calls[1][calls[1].index("--wrap") + 1]
    t = subprocess.run(["bash", "-c", wrap], capture_output=True, text=True, timeout=300)
    check(os.path.isfile(os.path.join(weird, "summary.csv")) and not os.path.exists(CANARY) and
          all("\n" not in a for a in calls[1]),
          "the summary job's --wrap command writes the summary there, and nothing else")

# ---------- reading a sweep file is bounded ----------
levels = "".join("  a%d: &%s [%s]\n" % (k, chr(97 + k), ", ".join(
    ["1"] * 10 if k == 0 else ["*%s" % chr(96 + k)] * 10)) for k in range(9))
bomb = sweep_file("bomb.yaml", text="sweep: 1\ndeck: %s\nset:\n%s" % (DP, levels))
p, dt = sweep(bomb, "--list", timeout=60)
check(p.returncode == 2 and "aliases (*a) are not allowed" in p.stderr and dt < 10,
      "an alias bomb (10^9 values): exit 2 in %.2f s (%s)" % (dt, p.stderr.strip()[-100:]))
deep = sweep_file("deep.yaml", text="sweep: 1\ndeck: %s\nset: {gravity: %s%s}\n" %
                  (DP, "[" * 100000, "]" * 100000))
p, dt = sweep(deep, "--list", timeout=60)
check(p.returncode == 2 and "nested deeper than 32 levels" in p.stderr and dt < 10,
      "100,000 nested lists: exit 2 in %.2f s" % dt)
big = sweep_file("big.yaml", text="sweep: 1\ndeck: %s\n# %s\n" % (DP, "x" * (1 << 20)))
p, dt = sweep(big, "--list")
check(p.returncode == 2 and "larger than 1048576 bytes" in p.stderr,
      "a sweep file over 1 MiB: exit 2 (%s)" % p.stderr.strip()[-100:])
grid = sweep_file("grid.yaml", base(grid={"parameters.m%d" % k: list(range(1, 11))
                                          for k in range(7)}))
p, dt = sweep(grid, "--list", timeout=60)
check(p.returncode == 2 and "more than 100000 cases" in p.stderr and dt < 10,
      "a grid of 10^7 cases: exit 2 in %.2f s, before building them" % dt)
spaces = sweep_file("spaces.yaml", base(outputs=["energy/total" + " " * 30000 + "x"]))
p, dt = sweep(spaces, "--list", timeout=60)
check(p.returncode == 2 and "longer than 1000 characters" in p.stderr and dt < 10,
      "an outputs entry of 30,000 blanks: exit 2 in %.2f s (it ran for hours)" % dt)

# the longest accepted outputs entry, blanks inside, is parsed in linear time and right
spec = "bodies/position" + " " * 970 + "[bob2, z]"
padded = sweep_file("padded.yaml", base(outputs=[spec], grid={}, output=os.path.join(TMP, "pad")))
p, dt = sweep(padded, "--list", timeout=60)
check(p.returncode == 0 and dt < 10, "a 994-character outputs entry: read in %.2f s (the regular "
      "expression took 3.4 s at 1000 blanks, 28 s at 2000)" % dt)
p, _ = sweep(padded, "--case", "0", timeout=300)
p2, _ = sweep(padded, "--summary")
summary = os.path.join(TMP, "pad", "summary.csv")
if os.path.isfile(summary):
    import csv
    with open(summary) as f:
        row = list(csv.DictReader(f))[0]
    with h5py.File(os.path.join(TMP, "pad", "case-0000.h5"), "r") as f:
        z = f["bodies/position"][-1, 1, 2]
    check(float(row.get("bodies/position[bob2,z]", "nan")) == z,
          "its column bodies/position[bob2,z] is the final z of bob2 (%s)" % z)
else:
    check(False, "the padded sweep wrote a summary (%s %s)" % (p.stderr, p2.stderr))

# ---------- mbsim-compare ----------
def compare(*args):
    p = call(compare_mod, list(args))
    return p.returncode, p.stdout, p.stderr


_, _, _, a = run(DP, "--t-end", "0.2")
b = os.path.join(TMP, "renamed.h5")
shutil.copy(a, b)
with h5py.File(b, "r+") as f:
    names = [n.decode() if isinstance(n, bytes) else n for n in f["state/q"].attrs["names"]]
    names[4] = "bob2.phi.w"
    f["state/q"].attrs["names"] = names
code, out, err = compare(a, a)
# every attribute of every dataset is compared: names, units, column_units, joint_units
nattr = []
with h5py.File(a, "r") as f:
    f.visititems(lambda n, o: nattr.append(len(o.attrs)) if isinstance(o, h5py.Dataset) else None)
check(code == 0 and "names" in h5py.File(a, "r")["state/q"].attrs and
      (" %d attributes" % sum(nattr)) in out,
      "compare: a file with itself, names included (%s; %d dataset attributes)" % (out.strip(), sum(nattr)))
code, out, err = compare(a, b)
check(code == 1 and "/state/q@names: 1 of 6 strings differ, first at 4" in out and
      "/state/v@names" not in out, "compare: a renamed coordinate is a difference (%s)" %
      out.strip())
code, out, err = compare(a, b, "--exclude", "state/q")
check(code == 0, "compare: --exclude state/q skips its names too")

# damaged copies: 8 bytes inverted at 40 places evenly over the file; each gives 0 or 1 when
# h5py still reads it, else 2 with a message, and never a traceback
data = open(a, "rb").read()
mut = os.path.join(TMP, "mutant.h5")
codes = {}
tracebacks = []
for k in range(40):
    off = 64 + k * ((len(data) - 72) // 40)
    m = bytearray(data)
    for i in range(8):
        m[off + i] ^= 0xFF
    with open(mut, "wb") as f:
        f.write(m)
    code, out, err = compare(a, mut)
    codes[code] = codes.get(code, 0) + 1
    if code not in (0, 1, 2) or "Traceback" in err or (code == 2) != ("cannot read" in err):
        tracebacks.append((off, code, err.strip()[-120:]))
check(not tracebacks and codes.get(2, 0) >= 1,
      "compare: 40 damaged copies, exit codes %s, no traceback (%s)" % (codes, tracebacks[:3]))
with open(mut, "wb") as f:
    f.write(data[:len(data) // 2])
code, out, err = compare(a, mut)
check(code == 2 and "cannot read" in err and "Traceback" not in err,
      "compare: a truncated file: exit 2 (%s)" % err.strip()[-100:])
# a case that completes with a warning (the energy monitor) is done: counted as completed
# with a warning, and not run again
warn_dir = os.path.join(TMP, "warned")
warned = sweep_file("warned.yaml", base(**{"output": warn_dir, "set": {
    "solver.t_end": 0.01, "solver.energy_balance.warning": 1e-300}}))
for case in (0, 1):
    p, _ = sweep(warned, "--case", str(case))
p, _ = sweep(warned, "--summary")
check(p.returncode == 0 and "2 completed (2 with warnings), 0 failed" in p.stdout,
      "sweep: cases completed with a warning count as completed (%s)" % p.stdout.strip()[-80:])
p, _ = sweep(warned, "--case", "0")
check(p.returncode == 0 and "completed earlier, skipped" in p.stdout,
      "sweep: a case completed with a warning is not run again")
done()

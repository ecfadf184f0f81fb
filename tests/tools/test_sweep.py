"""mbsim-sweep: the shipped example sweep (3 x 3 masses of the double pendulum) plus one
deliberately failing case runs through GNU parallel, then through a real single-node Slurm
(munged, slurmctld and slurmd started here on localhost, stopped at the end) as one job
array; both summaries (CSV and HDF5) agree, the failed case is listed as failed, and
re-running skips the completed cases."""
import csv
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import h5py
import numpy as np
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from common import MBSIM, ROOT, TMP, check, done  # noqa: E402

PYTHON = os.environ.get("PYTHON", sys.executable)
SWEEP = os.path.join(ROOT, "scripts", "mbsim-sweep")
EXAMPLE = os.path.join(ROOT, "decks", "sweeps", "double_pendulum_masses.yaml")

# the example, shortened, with a failing case (a negative mass: mbsim-run exits 1, no file)
with open(EXAMPLE) as f:
    sw = yaml.safe_load(f)
sw["deck"] = os.path.join(ROOT, "decks", "double_pendulum.yaml")
sw["set"]["solver.t_end"] = 1.0
sw["cases"] = [{"parameters.m1": -1.0}]
del sw["output"]
sweep_file = os.path.join(TMP, "masses.yaml")
with open(sweep_file, "w") as f:
    yaml.safe_dump(sw, f, sort_keys=False)
NCASE = 10


def sweep(*args, env=None, timeout=600):
    p = subprocess.run([PYTHON, SWEEP, sweep_file, "--mbsim", MBSIM] + list(args),
                       capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def comparable(rows):
    """The summary without what differs between two runs of the same cases: wall time."""
    return [{k: v for k, v in r.items() if k != "wall_time"} for r in rows]


p = subprocess.run([PYTHON, SWEEP, sweep_file, "--list"], capture_output=True, text=True)
check(p.returncode == 0 and "10 cases" in p.stdout and "parameters.m1=-1.0" in p.stdout,
      "--list: 9 grid cases and the explicit one")

# list values: a grid over gravity vectors, one case run alone (--case)
moon_file = os.path.join(TMP, "gravity.yaml")
with open(moon_file, "w") as f:
    yaml.safe_dump({"sweep": 1, "deck": os.path.join(ROOT, "decks", "double_pendulum.yaml"),
                    "set": {"solver.t_end": 0.1},
                    "grid": {"gravity": [[0, 0, -9.81], [0, 0, -1.62]]}}, f)
moon_out = os.path.join(TMP, "gravity")
p = subprocess.run([PYTHON, SWEEP, moon_file, "--list"], capture_output=True, text=True)
check(p.returncode == 0 and "2 cases" in p.stdout and "gravity=[0, 0, -1.62]" in p.stdout,
      "--list: list values are passed as [a, b, c] (%s)" % p.stdout.strip()[-200:])
p = subprocess.run([PYTHON, SWEEP, moon_file, "--mbsim", MBSIM, "-o", moon_out, "--case", "1"],
                   capture_output=True, text=True, timeout=300)
case1 = os.path.join(moon_out, "case-0001.h5")
ok_moon = p.returncode == 0 and os.path.isfile(case1)
if ok_moon:
    with h5py.File(case1, "r") as f:
        ok_moon = "gravity: [0, 0, -1.62]" in f.attrs["deck"]
check(ok_moon, "--case 1 runs with gravity = [0, 0, -1.62] (%s)" % p.stderr.strip()[-200:])

# ---------- locally, through GNU parallel ----------
local = os.path.join(TMP, "local")
t0 = time.time()
code, out, err = sweep("-o", local, "--jobs", "2")
check(code == 1, "a failed case: exit 1 (%s)" % err.strip()[-200:])
check("with GNU parallel, 2 at a time" in out, "ran through GNU parallel")
joblog = os.path.join(local, "parallel.log")
check(os.path.isfile(joblog) and len(open(joblog).read().splitlines()) == NCASE + 1,
      "GNU parallel's job log lists %d jobs" % NCASE)
rows = read_csv(os.path.join(local, "summary.csv"))
check(len(rows) == NCASE, "summary.csv: one row per case, the failed one included")
ok = [r for r in rows if r["status"] == "completed"]
bad = [r for r in rows if r["status"].startswith("failed")]
check(len(ok) == 9 and len(bad) == 1 and bad[0]["case"] == "9" and
      "mass must be > 0" in bad[0]["status"] and bad[0]["ok"] == "false" and
      bad[0]["exit_code"] == "1", "the failing case is marked failed with the reason: %s" %
      (bad[0]["status"] if bad else None))
check(all(float(r["t_final"]) == 1.0 and int(r["records"]) == 101 and
          float(r["energy_error"]) < 1e-8 and float(r["max_violation"]) < 1e-9 for r in ok),
      "completed cases: t = 1, 101 records, energy error and violation small")
masses = sorted((float(r["parameters.m1"]), float(r["parameters.m2"])) for r in ok)
check(masses == sorted((a, b) for a in (0.5, 1.0, 2.0) for b in (0.5, 1.0, 2.0)),
      "the grid: every pair of masses once")
# the chosen outputs are the final values of the datasets
with h5py.File(os.path.join(local, "case-0004.h5"), "r") as f:
    e_final = f["energy/total"][-1]
    x_final = f["bodies/position"][-1, 1]
r4 = rows[4]
check(float(r4["energy/total"]) == e_final and
      [float(r4["bodies/position[bob2,%d]" % i]) for i in range(3)] == list(x_final),
      "outputs: final energy/total and bodies/position[bob2] of case 4")
with h5py.File(os.path.join(local, "summary.h5"), "r") as f:
    s = f["summary"][()]
    check(len(s) == NCASE and list(s["case"]) == list(range(NCASE)) and
          s["energy/total"][4] == e_final and not s["ok"][9] and
          f.attrs["parameters"].tolist() == ["parameters.m1", "parameters.m2"],
          "summary.h5: the same table as a compound dataset")
print("    local sweep: %.1f s" % (time.time() - t0))

# re-running skips the completed cases and runs the failed one again
mtimes = {i: os.path.getmtime(os.path.join(local, "case-%04d.h5" % i)) for i in range(9)}
code, out, err = sweep("-o", local, "--jobs", "2")
check(code == 1 and "9 of 10 cases completed earlier: skipped" in out and
      "running 1 cases" in out, "re-run: 9 completed cases skipped, the failed one retried")
check(all(os.path.getmtime(os.path.join(local, "case-%04d.h5" % i)) == m
          for i, m in mtimes.items()), "re-run: completed results untouched")
check(comparable(read_csv(os.path.join(local, "summary.csv"))) == comparable(rows),
      "re-run: the same summary")
# a changed sweep is not taken for done
changed = dict(sw, set=dict(sw["set"], **{"solver.t_end": 0.5}))
changed_file = os.path.join(TMP, "changed.yaml")
with open(changed_file, "w") as f:
    yaml.safe_dump(changed, f, sort_keys=False)
p = subprocess.run([PYTHON, SWEEP, changed_file, "--mbsim", MBSIM, "-o", local, "--jobs", "2"],
                   capture_output=True, text=True, timeout=600)
rows_changed = read_csv(os.path.join(local, "summary.csv"))
check("completed earlier" not in p.stdout and
      all(float(r["t_final"]) == 0.5 for r in rows_changed if r["status"] == "completed"),
      "changed overrides: every case runs again")
# put the original results back for the comparison with Slurm
code, out, err = sweep("-o", local, "--jobs", "2")
rows = read_csv(os.path.join(local, "summary.csv"))


# ---------- a single-node Slurm on this machine ----------
def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSlurm:
    """munged, slurmctld and slurmd in a scratch directory, configured for localhost."""

    def __init__(self, root):
        self.root = root
        self.procs = []
        os.makedirs(root, exist_ok=True)
        for d in ("state", "spool", "log", "munge"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        os.chmod(os.path.join(root, "munge"), 0o700)
        self.node = socket.gethostname().split(".")[0]
        self.conf = os.path.join(root, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.socket = os.path.join(root, "munge", "munge.socket")

    def write_conf(self):
        user = getpass.getuser()
        r = self.root
        conf = """\
ClusterName=mbsimtest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={p1}
SlurmdPort={p2}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes={node} Default=YES MaxTime=60 State=UP
""".format(node=self.node, p1=free_port(), p2=free_port(), user=user, sock=self.socket, r=r,
           cpus=os.cpu_count() or 1)
        with open(self.conf, "w") as f:
            f.write(conf)

    def spawn(self, name, cmd):
        log = open(os.path.join(self.root, "log", name + ".out"), "w")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                             start_new_session=True)
        self.procs.append((name, p))
        return p

    def start(self, timeout=90):
        key = os.path.join(self.root, "munge", "munge.key")
        subprocess.run(["mungekey", "--create", "--keyfile", key], check=True,
                       capture_output=True)
        m = self.root + "/munge/munged"
        self.spawn("munged", ["munged", "--foreground", "--force", "--key-file", key,
                              "--socket", self.socket, "--pid-file", m + ".pid",
                              "--log-file", m + ".log", "--seed-file", m + ".seed"])
        deadline = time.time() + 20
        while not os.path.exists(self.socket) and time.time() < deadline:
            time.sleep(0.2)
        self.write_conf()
        self.spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
        time.sleep(1.0)
        self.spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", self.node])
        deadline = time.time() + timeout
        while time.time() < deadline:
            p = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True,
                               env=self.env)
            if p.stdout.strip() == "idle":
                return True
            if any(proc.poll() is not None for _, proc in self.procs):
                break
            time.sleep(1.0)
        return False

    def idle(self, timeout):
        """Wait until no job is queued or running."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            p = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=self.env)
            if p.returncode == 0 and not p.stdout.strip():
                return True
            time.sleep(1.0)
        return False

    def stop(self):
        # daemons first (slurmd also ends its job steps), munged last; by process group
        for name, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=15)

    def logs(self):
        text = ""
        for name in ("slurmctld", "slurmd", "munged"):
            path = os.path.join(self.root, "log", name + ".out")
            if os.path.exists(path):
                text += "--- %s\n%s" % (name, open(path).read()[-1500:])
        return text


for tool in ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "parallel"):
    check(shutil.which(tool) is not None, "%s installed (scripts/install-deps --tools)" % tool)

cluster = LocalSlurm(os.path.join(TMP, "slurm-cluster"))
try:
    t0 = time.time()
    up = cluster.start()
    check(up, "single-node Slurm up on localhost (%.1f s)" % (time.time() - t0))
    if not up:
        print(cluster.logs())
    else:
        remote = os.path.join(TMP, "slurm")
        t0 = time.time()
        code, out, err = sweep("-o", remote, "--slurm", "--partition", "debug", "--time",
                               "00:05:00", "--mem", "100M", "--max-parallel", "4", "--wait",
                               env=cluster.env, timeout=400)
        check(code == 1 and "job array" in out, "sweep on Slurm with --wait: exit 1 (%s)" %
              (err.strip()[-300:] or out.strip()[-300:]))
        script = open(os.path.join(remote, "sweep.sbatch")).read()
        check("#SBATCH --array=0-9%4" in script and "#SBATCH --partition=debug" in script and
              "#SBATCH --time=00:05:00" in script and "#SBATCH --mem=100M" in script and
              '--case "$SLURM_ARRAY_TASK_ID"' in script,
              "the job array script: one task per case, the options users give")
        logs = os.listdir(os.path.join(remote, "slurm"))
        check(len([x for x in logs if x.startswith("case-")]) == NCASE,
              "Slurm ran %d array tasks (their logs are there)" % NCASE)
        srows = read_csv(os.path.join(remote, "summary.csv"))
        check(comparable(srows) == comparable(rows),
              "Slurm and GNU parallel give the same summary table")
        check(srows[9]["status"].startswith("failed") and srows[9]["ok"] == "false",
              "on Slurm too the failing case is marked failed")
        print("    Slurm sweep: %.1f s" % (time.time() - t0))

        # again without --wait: only the failed case is submitted, then the summary job
        before = os.path.getmtime(os.path.join(remote, "summary.csv"))
        code, out, err = sweep("-o", remote, "--slurm", "--partition", "debug", "--time",
                               "00:05:00", env=cluster.env, timeout=120)
        check(code == 0 and "9 of 10 cases completed earlier: skipped" in out and
              "summary job" in out, "re-submitted: completed cases skipped, a summary job")
        check("#SBATCH --array=9\n" in open(os.path.join(remote, "sweep.sbatch")).read(),
              "the new array holds only the failed case")
        idle = cluster.idle(180)
        summary_logs = [x for x in os.listdir(os.path.join(remote, "slurm"))
                        if x.startswith("summary-")]
        check(idle and summary_logs and
              os.path.getmtime(os.path.join(remote, "summary.csv")) > before and
              comparable(read_csv(os.path.join(remote, "summary.csv"))) == comparable(rows),
              "the summary job rewrote the same summary after the array")
finally:
    cluster.stop()
    check(all(p.poll() is not None for _, p in cluster.procs), "Slurm and munge daemons stopped")
done()

"""The progress line: on stderr when it is a terminal (a pseudo-terminal here), with the
simulated time, steps/s and the ETA; silenced by --quiet; absent when stderr is a pipe
unless --progress, which then writes one line per update (a log file has no \\r)."""
import os
import pty
import re
import select
import subprocess
import time

from common import MBSIM, QUICK, TMP, check, deck, done

# long enough for several progress updates (every 0.5 s of wall time)
T_END = "40" if QUICK else "80"
LINE = re.compile(r"t = ([0-9.e+-]+) / ([0-9.e+-]+) s +(\d+) steps +(\d+) steps/s +ETA ([0-9.]+) s")


def run_on_tty(*args):
    """Run with stderr on a pseudo-terminal; return (exit code, stdout, what the tty got)."""
    master, slave = pty.openpty()
    out = os.path.join(TMP, "progress.h5")
    p = subprocess.Popen([MBSIM, deck("quickstart.yaml"), "-o", out, "--t-end", T_END] +
                         list(args), stdout=subprocess.PIPE, stderr=slave,
                         stdin=subprocess.DEVNULL)
    os.close(slave)
    got = b""
    deadline = time.time() + 300
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            got += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    stdout, _ = p.communicate(timeout=60)
    return p.returncode, stdout.decode(), got.decode(errors="replace")


def run_on_pipe(*args):
    out = os.path.join(TMP, "progress_pipe.h5")
    p = subprocess.run([MBSIM, deck("quickstart.yaml"), "-o", out, "--t-end", T_END] +
                       list(args), capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


# a terminal: progress lines with time, rate and ETA, rewritten in place, cleared at the end
rc, out, tty = run_on_tty()
lines = LINE.findall(tty)
check(rc == 0 and "status:       completed" in out, "run on a terminal completes")
check(len(lines) >= 2, "progress shown on a terminal (%d updates)" % len(lines))
if lines:
    ts = [float(x[0]) for x in lines]
    check(all(b > a for a, b in zip(ts, ts[1:])) and float(lines[0][1]) == float(T_END),
          "simulated time grows towards t_end = %s" % T_END)
    check(all(int(x[3]) > 0 for x in lines), "steps/s shown")
    eta = [float(x[4]) for x in lines]
    check(eta[-1] < eta[0], "ETA decreases (%.1f s -> %.1f s)" % (eta[0], eta[-1]))
check("\r" in tty and "status:" not in tty, "the line is rewritten with \\r; the summary is on stdout")

# --quiet on a terminal: nothing
rc, out, tty = run_on_tty("--quiet")
check(rc == 0 and not LINE.search(tty) and tty.strip() == "" and out == "",
      "--quiet: no progress and no summary on a terminal")

# stderr a pipe: no progress unless --progress
rc, out, err = run_on_pipe()
check(rc == 0 and not LINE.search(err), "no progress when stderr is not a terminal")
rc, out, err = run_on_pipe("--progress")
check(rc == 0 and len(LINE.findall(err)) >= 1, "--progress forces it on a pipe (%d updates)" % len(LINE.findall(err)))
# a log file: one whole line per update, no carriage returns
progress_lines = [l for l in err.split("\n") if LINE.search(l)]
check("\r" not in err and len(progress_lines) == len(LINE.findall(err)) and err.endswith("\n"),
      "--progress on a pipe: one line per update ending in a newline, no \\r (%d lines)"
      % len(progress_lines))
done()

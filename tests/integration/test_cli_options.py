"""Command-line details: --opt=value is --opt value for every option that takes a value; the
summary and the `integrator_reason` attribute say where the integrator came from (deck,
command line or auto); --check prints the model's masses, inertias, gravity, joints and
loads."""
import os
import subprocess

import h5py
import numpy as np

from common import MBSIM, TMP, check, deck, done


def mbsim(*args):
    return subprocess.run([MBSIM] + list(args), capture_output=True, text=True, timeout=120)


# --opt=value: the same run as --opt value (identical q), for each option with a value
quick = deck("quickstart.yaml")
base = os.path.join(TMP, "spaced.h5")
p = mbsim(quick, "-o", base, "--quiet", "--t-end", "0.05", "--dt", "5e-3", "--integrator",
          "midpoint", "--set", "bodies.link2.density=3000")
check(p.returncode == 0, "the reference run with '--opt value' (exit %d: %s)" % (p.returncode, p.stderr))
joined = os.path.join(TMP, "joined.h5")
p = mbsim(quick, "--output=" + joined, "--quiet", "--t-end=0.05", "--dt=5e-3",
          "--integrator=midpoint", "--set=bodies.link2.density=3000")
check(p.returncode == 0 and os.path.exists(joined),
      "--output= --t-end= --dt= --integrator= --set= accepted (exit %d: %s)" % (p.returncode, p.stderr))
if p.returncode == 0:
    with h5py.File(base, "r") as a, h5py.File(joined, "r") as b:
        check(a["state/q"].shape == b["state/q"].shape and
              np.array_equal(a["state/q"][()], b["state/q"][()]) and
              b.attrs["integrator"] in (b"midpoint", "midpoint") and
              abs(b.attrs["dt"] - 5e-3) < 1e-18 and abs(b.attrs["t_end"] - 0.05) < 1e-18,
              "--opt=value gives the same run as --opt value")
        check(b"density: 3000" in (b.attrs["deck"] if isinstance(b.attrs["deck"], bytes)
                                   else b.attrs["deck"].encode()),
              "--set=KEY=VALUE splits at the first '=' only")
# --restart=RUN.h5 continues like --restart RUN.h5
cont = os.path.join(TMP, "cont.h5")
p = mbsim(quick, "-o", cont, "--quiet", "--t-end=0.1", "--dt=5e-3", "--integrator=midpoint",
          "--set=bodies.link2.density=3000", "--restart=" + base)
ok = p.returncode == 0
if ok:
    with h5py.File(cont, "r") as f:
        ok = abs(f["time"][0] - 0.05) < 1e-12 and abs(f["time"][-1] - 0.1) < 1e-12
check(ok, "--restart=RUN.h5 continues from RUN.h5 (exit %d: %s)" % (p.returncode, p.stderr.strip()))
# a bad value given inline is reported like a spaced one: exit 1, nothing written
bad = os.path.join(TMP, "bad.h5")
p = mbsim(quick, "-o", bad, "--dt=-1")
check(p.returncode == 1 and "dt" in p.stderr and not os.path.exists(bad),
      "--dt=-1: exit 1 naming dt, nothing written (%s)" % p.stderr.strip())
p = mbsim(quick, "-o", bad, "--integrator=rk4")
check(p.returncode == 1 and "rk4" in p.stderr and not os.path.exists(bad),
      "--integrator=rk4: exit 1 naming the word (%s)" % p.stderr.strip())
# flags take no value, unknown options stay unknown
for opt in ("--quiet=1", "--check=yes", "--bogus=3"):
    p = mbsim(quick, "-o", bad, opt)
    check(p.returncode == 1 and ("'%s'" % opt) in p.stderr and not os.path.exists(bad),
          "%s: exit 1, refused by name" % opt)
p = mbsim(quick, "--check", "--dt=")
check(p.returncode == 1, "--dt= (an empty value): exit 1")

# where the integrator came from: auto, the deck, --integrator, --set solver.integrator=
dp = deck("double_pendulum.yaml")  # solver.integrator: em in the file
cases = [
    (quick, [], "auto:"),
    (dp, [], "chosen in the deck"),
    (dp, ["--integrator", "midpoint"], "chosen on the command line: --integrator midpoint"),
    (quick, ["--integrator=euler"], "chosen on the command line: --integrator euler"),
    (dp, ["--set", "solver.integrator=genalpha"],
     "chosen on the command line: --set solver.integrator=genalpha"),
    # another override of the solver does not make the deck's choice a command-line one
    (dp, ["--set", "solver.dt=2e-3"], "chosen in the deck"),
]
for i, (d, extra, want) in enumerate(cases):
    p = mbsim(d, "--check", *extra)
    line = [l for l in p.stdout.splitlines() if l.startswith("integrator:")]
    check(p.returncode == 0 and len(line) == 1 and ("(" + want) in line[0],
          "--check %s: integrator line says '%s' (%s)" % (" ".join(extra), want, line))
    out = os.path.join(TMP, "reason%d.h5" % i)
    p = mbsim(d, "-o", out, "--t-end", "0.01", *extra)
    with h5py.File(out, "r") as f:
        r = f.attrs["integrator_reason"]
        r = r.decode() if isinstance(r, bytes) else str(r)
    check(p.returncode == 0 and r.startswith(want) and ("(" + want) in p.stdout,
          "run %s: summary and integrator_reason say '%s' (%s)" % (" ".join(extra), want, r))
done()

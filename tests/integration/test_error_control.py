"""solver.tolerance (error control): the global error against independent references (the
double pendulum's two-angle Lagrange equations and the heavy top's rotation-matrix equations,
scipy DOP853 at rtol 1e-13) falls with the tolerance over three decades, as tol^(2/3) for the
second-order schemes and as tol^(4/5) for spacetime of degree 2 (order 4 at the element ends,
the steps as tol^(-1/5)); em and spacetime keep energy (em and spacetime of degree 1 also the
top's vertical angular momentum, and degree 1 the impulse of a torque) to round-off with chosen
steps; a restart repeats the run bit for bit (em, spacetime of degree 2); a deck with a
tolerance and no dt runs; records fall on output.dt with /solver/step_size the last step; the
integrators without an estimate are refused at the key."""
import os
import re
import subprocess
import sys

import h5py
import numpy as np

from common import MBSIM, ROOT, TMP, check, deck, done, heavy_top_deck, load, run, write_deck

sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
import heavy_top  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "scripts"))

with open(deck("double_pendulum.yaml")) as f:
    DP_TEXT = re.sub(r"\n  dt: [^\n]*", "", f.read())
DP = write_deck("dp_nodt.yaml", DP_TEXT)
TOP = write_deck("top.yaml", heavy_top_deck("{integrator: em, t_end: 0.3}"))


def run_v(path, *args):
    """run with the summary (no --quiet): (stdout, output path)"""
    out = os.path.join(TMP, "v%d.h5" % len(os.listdir(TMP)))
    p = subprocess.run([MBSIM, path, "-o", out] + list(args), capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s failed: %s" % (path, p.stderr))
    return p.stdout, out


def steps_of(out):
    m = re.search(r"(\d+) steps accepted, (\d+) rejected by the error estimate", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def pendulum_reference(t):
    from scipy.integrate import solve_ivp
    g = 9.81

    def rhs(_, y):
        th1, th2, w1, w2 = y
        c, s = np.cos(th1 - th2), np.sin(th1 - th2)
        a = np.linalg.solve(np.array([[2.0, c], [c, 1.0]]),
                            [-s * w2 ** 2 - 2 * g * np.sin(th1), s * w1 ** 2 - g * np.sin(th2)])
        return [w1, w2, a[0], a[1]]
    y = solve_ivp(rhs, (0, t[-1]), [np.pi / 2, np.pi / 2, 0, 0], t_eval=t, rtol=1e-13,
                  atol=1e-13, method="DOP853").y
    x1, z1 = np.sin(y[0]), -np.cos(y[0])
    return np.stack([x1, z1, x1 + np.sin(y[1]), z1 - np.cos(y[1])], axis=1)


def pendulum_error(r):
    p = r["bodies/position"]
    got = np.stack([p[:, 0, 0], p[:, 0, 2], p[:, 1, 0], p[:, 1, 2]], axis=1)
    return np.max(np.abs(got - pendulum_reference(r["time"])))


def top_error(r):
    R = heavy_top.deck_top(r["time"])
    return np.max(np.linalg.norm(r["bodies/position"][:, 0, :] - 0.5 * R[:, :, 2], axis=1))


# ---- the error delivered follows the tolerance ----
TOLS = (1e-3, 1e-4, 1e-5, 1e-6)
# spacetime of degree 2: steps as long as the largest (0.1 s), the tolerances where the
# estimate chooses them
ST1 = ("--integrator", "spacetime", "--set", "solver.spacetime.degree=1")
ST2 = ("--integrator", "spacetime", "--set", "solver.spacetime.degree=2", "--set",
       "solver.dt=0.1")
TOLS2 = (1e-5, 1e-6, 1e-7, 1e-8)
for name, path, err_of, extra, integrators in (
        ("double pendulum", DP, pendulum_error, ("--t-end", "1", "--set", "solver.dt=0.1",
                                                  "--set", "output.dt=0.01"),
         ("em", "genalpha", "spacetime 2")),
        ("heavy top", TOP, top_error, ("--set", "output.dt=0.005"),
         ("em", "midpoint", "spacetime 1", "spacetime 2"))):
    for integ in integrators:
        # midpoint and spacetime 1: the two ends of the range (they take em's steps on these
        # models)
        tols = (TOLS[0], TOLS[-1]) if integ in ("midpoint", "spacetime 1") else TOLS
        args = ("--integrator", integ)
        low, high, p = 0.3, 1.0, 2
        if integ == "spacetime 1":
            args = ST1
        elif integ == "spacetime 2":
            args, tols, low, p = ST2, TOLS2, 0.55, 4
        errs, steps = [], []
        for tol in tols:
            out, h5 = run_v(path, *args, "--set", "solver.tolerance=%g" % tol, *extra)
            errs.append(err_of(load(h5)))
            steps.append(steps_of(out)[0])
        slope = np.polyfit(np.log(tols), np.log(errs), 1)[0]
        sslope = np.polyfit(np.log(tols), np.log(steps), 1)[0]
        print("%s %s: errors %s, steps %s, slope %.2f, steps ~ tol^%.2f" % (
            name, integ, ", ".join("%.2e" % e for e in errs), steps, slope, sslope))
        check(all(errs[i + 1] < errs[i] for i in range(len(errs) - 1)),
              "%s, %s: the error falls with the tolerance over 3 decades (%s)"
              % (name, integ, ", ".join("%.1e" % e for e in errs)))
        check(all(steps[i + 1] > steps[i] for i in range(len(steps) - 1)),
              "%s, %s: more steps for a smaller tolerance (%s)" % (name, integ, steps))
        check(low <= slope <= high,
              "%s, %s: error ~ tol^%.2f (order %d: %d/%d expected, in [%g, %g])"
              % (name, integ, slope, p, p, p + 1, low, high))
        if p == 4:
            # the estimate's order: a local error ~ h^5 gives steps ~ tol^(-1/5) (h^3: -1/3)
            check(-0.27 <= sslope <= -0.13, "%s, %s: steps ~ tol^%.3f (-1/5 expected: the "
                  "estimate is of order 5 in h)" % (name, integ, sslope))

# ---- em with chosen steps: energy and J_z to round-off, every record a step end ----
out, h5 = run_v(TOP, "--set", "solver.tolerance=1e-5", "--set", "output.every=1")
r = load(h5)
E, J = r["energy/total"], r["momentum/angular"][:, 2]
e = np.max(np.abs(E - E[0])) / abs(E[0])
j = np.max(np.abs(J - J[0])) / np.linalg.norm(r["momentum/angular"][0])
acc, rej = steps_of(out)
check(e <= 1e-12 and j <= 1e-12,
      "em with tolerance 1e-5 (%d steps of %.2g to %.2g s): energy %.1e, J_z %.1e relative "
      "(<= 1e-12)" % (acc, np.min(r["solver/step_size"][1:]), np.max(r["solver/step_size"]), e, j))
check(np.ptp(r["solver/step_size"][1:]) > 0.0, "the steps vary (/solver/step_size)")
check(np.all(r["solver/step_size"][1:] <= 0.3 / 20 * (1 + 1e-12)) and
      np.allclose(np.diff(r["time"]), 0.3 / 20, rtol=1e-9),
      "no dt in the deck: the largest step and the record interval (output.every = 1) are "
      "t_end / 20")
out, h5 = run_v(TOP, "--set", "solver.tolerance=1e-3")
r = load(h5)
check(np.allclose(np.diff(r["time"]), 0.3 / 100, rtol=1e-9) and steps_of(out)[0] < 100,
      "no dt, no output settings: records every t_end / 100 between fewer steps (%d)"
      % steps_of(out)[0])

# ---- the summary's statistics ----
m = re.search(r"step min ([0-9.e+-]+) s, mean ([0-9.e+-]+) s, max ([0-9.e+-]+) s", out)
check(m is not None and float(m.group(1)) <= float(m.group(2)) <= float(m.group(3)) and
      abs(float(m.group(2)) * steps_of(out)[0] - 0.3) < 1e-2 * 0.3,
      "summary: steps accepted and rejected, min <= mean <= max, mean x steps = t_end")

# ---- records on output.dt between chosen steps, by the scheme's interpolation ----
_, out, _, h5 = run(DP, "--t-end", "1", "--set", "solver.tolerance=1e-6", "--set",
                    "output.dt=0.004")
r = load(h5)
t = r["time"]
check(np.allclose(t, 0.004 * np.arange(len(t)), rtol=0, atol=1e-12) and abs(t[-1] - 1) < 1e-12,
      "records at k output.dt (%d records)" % len(t))
ss = r["solver/step_size"][1:]
check(np.max(ss) > 0.004, "steps longer than output.dt (up to %.3g s): records fall between "
      "steps" % np.max(ss))
check(pendulum_error(r) < 1e-3, "the interpolated records follow the reference (%.1e)"
      % pendulum_error(r))

# ---- restart: bit for bit with the steps the controller chose ----
S = ("--set", "solver.tolerance=1e-6", "--set", "solver.dt=0.05", "--set", "output.every=1",
     "--set", "solver.newton.reuse=false")
_, _, _, full = run(DP, "--t-end", "1", *S)
_, _, _, half = run(DP, "--t-end", "0.5", *S)
rest = os.path.join(TMP, "restarted.h5")
p = subprocess.run([MBSIM, DP, "--restart", half, "--t-end", "1", "-o", rest] + list(S),
                   capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "restart runs (%s)" % p.stderr.strip())
a, b = load(full), load(rest)
i0 = int(np.searchsorted(a["time"], b["time"][0]))
for name in ("time", "state/q", "state/v", "state/multipliers", "solver/step_size",
             "state/step_control", "energy/total"):
    check(np.array_equal(a[name][i0:], b[name]),
          "restarted run: every record of %s equals the uninterrupted run's, bit for bit" % name)

# ---- spacetime with chosen steps: energy to round-off (degree 1 also J_z), on the top ----
for deg in (1, 2):
    out, h5 = run_v(TOP, "--integrator", "spacetime", "--set",
                    "solver.spacetime.degree=%d" % deg, "--set", "solver.tolerance=1e-6",
                    "--set", "output.every=1")
    r = load(h5)
    E, J = r["energy/total"], r["momentum/angular"][:, 2]
    e = np.max(np.abs(E - E[0])) / abs(E[0])
    j = np.max(np.abs(J - J[0])) / np.linalg.norm(r["momentum/angular"][0])
    acc, rej = steps_of(out)
    check(np.ptp(r["solver/step_size"][1:]) > 0.0 and e <= 1e-12 and (deg == 2 or j <= 1e-12),
          "spacetime degree %d with tolerance 1e-6 (%d steps of %.2g to %.2g s): energy %.1e "
          "(<= 1e-12)%s" % (deg, acc, np.min(r["solver/step_size"][1:]),
                            np.max(r["solver/step_size"]), e,
                            ", J_z %.1e (<= 1e-12)" % j if deg == 1 else ""))
# the free box under a constant torque m (Hesch et al. 2024): degree 1 gives its angular
# momentum the torque's impulse J_n+1 - J_n = h_n m exactly, whatever the steps
with open(deck("spacetime_free_body.yaml")) as f:
    FB_TEXT = re.sub(r"\n  dt: [^\n]*", "", f.read())
out, h5 = run_v(write_deck("fb_nodt.yaml", FB_TEXT), "--set", "solver.spacetime.degree=1",
                "--set", "solver.tolerance=1e-7", "--set", "output.every=1")
r = load(h5)
J = r["momentum/angular"]
M = np.ones(3)  # the deck's world torque [N m]
dJ = np.diff(J, axis=0) - np.diff(r["time"])[:, None] * M
check(np.ptp(r["solver/step_size"][1:]) > 0.0 and np.max(np.abs(dJ)) <= 1e-12,
      "spacetime degree 1, free box under a torque, chosen steps: J_(n+1) - J_n = dt m at "
      "every record (max deviation %.1e)" % np.max(np.abs(dJ)))

# ---- spacetime of degree 2: a restart repeats the run bit for bit ----
S2 = ("--integrator", "spacetime", "--set", "solver.spacetime.degree=2") + S[:4] + ("--set",
                                                                                     "output.every=1")
_, _, _, full = run(DP, "--t-end", "1", *S2)
_, _, _, half = run(DP, "--t-end", "0.5", *S2)
p = subprocess.run([MBSIM, DP, "--restart", half, "--t-end", "1", "-o", rest] + list(S2),
                   capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "spacetime: restart runs (%s)" % p.stderr.strip())
a, b = load(full), load(rest)
i0 = int(np.searchsorted(a["time"], b["time"][0]))
same = [name for name in ("time", "state/q", "state/v", "state/multipliers", "solver/step_size",
                          "state/step_control", "state/step_history", "energy/total")
        if np.array_equal(a[name][i0:], b[name])]
check(len(same) == 8 and b["state/step_history"].shape[1] == 5 * a["state/q"].shape[1],
      "spacetime degree 2, restarted: every record equals the uninterrupted run's, bit for "
      "bit, with a history of 5 step ends (%s)" % ", ".join(same))

# ---- refused: integrators without an estimate, a tolerance out of range ----
for integ, dk in (("euler", deck("double_pendulum.yaml")),
                  ("static", deck("static_pendulum.yaml")),
                  ("moreau", deck("contacts/bouncing_ball.yaml"))):
    with open(dk) as f:
        text = re.sub(r"\n  integrator: \w+", "\n  integrator: %s\n  tolerance: 1.0e-6" % integ,
                      f.read())
    p = subprocess.run([MBSIM, write_deck("bad_%s.yaml" % integ, text), "-o",
                        os.path.join(TMP, "x.h5")], capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and re.search(r"bad_%s\.yaml:\d+:\d+: .*tolerance.*em, midpoint, "
                                          r"genalpha and spacetime" % integ, p.stderr)
          is not None,
          "%s with a tolerance: refused at the key (%s)" % (integ, p.stderr.strip()[:150]))
BALL = deck("contacts/bouncing_ball.yaml")
with open(BALL) as f:
    text = f.read().replace("  integrator: moreau\n", "  integrator: auto\n  tolerance: 1.0e-6\n")
p = subprocess.run([MBSIM, write_deck("ball.yaml", text), "-o", os.path.join(TMP, "y.h5")],
                   capture_output=True, text=True, timeout=60)
check(p.returncode != 0 and re.search(r"ball\.yaml:\d+:\d+: solver.tolerance", p.stderr),
      "auto that picks moreau (contacts) with a tolerance: refused at the key (%s)"
      % p.stderr.strip()[:160])
for bad in ("0", "1", "-1e-6", "1e-13"):
    p = subprocess.run([MBSIM, DP, "-o", os.path.join(TMP, "z.h5"), "--set",
                        "solver.tolerance=%s" % bad], capture_output=True, text=True, timeout=60)
    check(p.returncode != 0 and "tolerance" in p.stderr, "tolerance %s refused (%s)"
          % (bad, p.stderr.strip()[:120]))

done()

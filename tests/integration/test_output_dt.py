"""output.dt: records at k dt independent of the step, each from the scheme's own
interpolation inside the step that holds it (docs/output.md "Records between steps").

- A projectile (constant gravity): every scheme's step and interpolation reproduce the
  parabola, so the records between steps carry its position and velocity to round-off.
- The damped oscillator under every integrator: the records between steps are as accurate
  against the closed form as the records at the steps (the interpolation's error is of a
  higher order than the scheme's).
- static: a spring under a ramped force is linear in the load factor, so the records between
  load steps are exact equilibria.
- A ball bouncing on a floor (moreau): the records between steps never penetrate.
- The trajectory does not depend on the records: the final state equals output.every's bit
  for bit; a restart to a later t_end goes on with the same record times and ends bit for bit
  as the uninterrupted run.
- Bad values are deck errors."""
import os

import numpy as np

from common import (TMP, attempt, check, deck, done, load, python_package, run,
                    write_deck)

G = 9.81

PROJ = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: b, type: rigid, mass: 2.0, inertia: [1, 2, 3], position: [0, 0, 1],
     velocity: [3, 0, 4], angular_velocity: [0, 0, 2]}
solver: {integrator: %s, dt: 0.01, t_end: 1.0}
output: {dt: 0.0237, xdmf: false}
"""
for integ in ("em", "midpoint", "genalpha", "spacetime", "moreau"):
    r = attempt("projectile, %s, output.dt 0.0237 with dt 0.01" % integ,
                write_deck("proj_%s.yaml" % integ, PROJ % integ))
    if r is None:
        continue
    t = r["time"]
    want = np.append(np.arange(43) * 0.0237, 1.0)
    check(len(t) == len(want) and np.allclose(t, want, rtol=0, atol=1e-12),
          "%s: records at k 0.0237 s and at t_end (%d records)" % (integ, len(t)))
    if len(t) != len(want):
        continue
    p, v = r["bodies/position"][:, 0, :], r["bodies/velocity"][:, 0, :]
    pe = np.stack([3 * t, 0 * t, 1 + 4 * t - 0.5 * G * t**2], 1)
    ve = np.stack([3 + 0 * t, 0 * t, 4 - G * t], 1)
    # spacetime's degree-1 elements (the default) and moreau's step are straight lines in
    # q, which miss the parabola by at most g h^2 / 8 = 1.23e-4 m between steps
    tol_p = 1.3e-4 if integ in ("moreau", "spacetime") else 1e-12
    tol_v = 1e-12
    check(np.max(np.abs(p - pe)) <= tol_p,
          "%s: positions between steps on the parabola: max error %.2e m (<= %.0e)"
          % (integ, np.max(np.abs(p - pe)), tol_p))
    check(np.max(np.abs(v - ve)) <= tol_v,
          "%s: velocities between steps on the line v0 + g t: max error %.2e m/s"
          % (integ, np.max(np.abs(v - ve))))

# the damped oscillator against its closed form (decks/damped_oscillator.yaml)
k, c, mass, x0 = 50.0, 0.5, 0.5, 0.1
w0 = np.sqrt(k / mass)
s = c / (2 * mass)
wd = np.sqrt(w0**2 - s**2)


def exact(t):
    return 1.0 + x0 * np.exp(-s * t) * (np.cos(wd * t) + s / wd * np.sin(wd * t))


for integ in ("em", "midpoint", "genalpha", "euler", "spacetime"):
    args = ["--integrator", integ, "--dt", "0.01", "--t-end", "2", "--set", "output.xdmf=false"]
    _, _, _, o1 = run(deck("damped_oscillator.yaml"), *args, "--set", "output.every=1")
    _, _, _, o2 = run(deck("damped_oscillator.yaml"), *args, "--set", "output.dt=0.0237")
    a, b = load(o1), load(o2)
    ea = np.max(np.abs(a["bodies/position"][:, 0, 0] - exact(a["time"])))
    eb = np.max(np.abs(b["bodies/position"][:, 0, 0] - exact(b["time"])))
    check(len(b["time"]) == 86 and abs(b["time"][-2] - 84 * 0.0237) < 1e-12,
          "%s: %d records at k 0.0237 s and t_end" % (integ, len(b["time"])))
    check(eb <= 1.25 * ea + 1e-9,
          "%s: records between steps as accurate as at the steps: max |x - exact| %.2e "
          "against %.2e" % (integ, eb, ea))
    same = np.array_equal(a["state/q"][-1], b["state/q"][-1]) and \
        np.array_equal(a["state/v"][-1], b["state/v"][-1])
    check(same, "%s: final state with output.dt equal to output.every=1 bit for bit" % integ)
    # at the steps the balance is the scheme's (em, midpoint, spacetime: round-off); between
    # them the interpolated state's energy is off by the interpolation's error, which falls
    # with dt^2 (below: em)
    bal = np.max(np.abs(b["energy/total"] + b["energy/dissipated"] - b["energy/total"][0]))
    bal1 = np.max(np.abs(a["energy/total"] + a["energy/dissipated"] - a["energy/total"][0]))
    check(bal <= 3.0e-3 * b["energy/total"][0] + 2.0 * bal1,
          "%s: E + D - E0 between steps %.2e J (at the steps %.2e J)" % (integ, bal, bal1))

errs = []
for dt in (0.01, 0.005, 0.0025):
    _, _, _, o = run(deck("damped_oscillator.yaml"), "--dt", str(dt), "--t-end", "2", "--set",
                     "output.dt=0.0237", "--set", "output.xdmf=false")
    b = load(o)
    errs.append(np.max(np.abs(b["energy/total"] + b["energy/dissipated"] -
                              b["energy/total"][0])))
orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
check(np.all(orders > 1.9),
      "em: the energy balance between steps converges with dt^2 (%s J; orders %s)"
      % (", ".join("%.2e" % e for e in errs), ", ".join("%.2f" % o for o in orders)))

# static: a spring (k 100 N/m, rest 0.5 m) under a force 50 N t: length 0.5 + 0.5 t exactly
# static: a spring (k 100 N/m, rest 0.5 m) under 20 N + 50 N t: length 0.7 + 0.5 t exactly
STATIC = """mbsim: 1
bodies:
  - {name: m, type: point, mass: 2.0, position: [0, 0, -0.7]}
loads:
  - {name: s, type: spring, bodies: [ground, m], points: [[0, 0, 0], [0, 0, -0.7]],
     stiffness: 100.0, rest_length: 0.5}
  - {name: f0, type: force, body: m, value: [0, 0, -20]}
  - {name: f, type: force, body: m, value: [0, 0, -50], profile: {ramp: [0, 1]}}
solver: {integrator: static, dt: 0.1, t_end: 1.0}
output: {dt: 0.07, xdmf: false}
"""
r = attempt("static spring, output.dt 0.07 with load steps 0.1", write_deck("st.yaml", STATIC))
if r is not None:
    t, z = r["time"], r["bodies/position"][:, 0, 2]
    err = np.max(np.abs(z - (-0.7 - 0.5 * t)))
    check(len(t) == 16 and err < 1e-12,
          "static: %d records, each between load steps an equilibrium: max error %.1e m"
          % (len(t), err))

# moreau: a bouncing ball (e = 0.5) recorded between steps never penetrates the floor
r = attempt("bouncing ball, output.dt 0.0013 with dt 1e-3",
            deck("contacts/bouncing_ball.yaml"), "--t-end", "1.5", "--set", "output.dt=0.0013",
            "--set", "output.xdmf=false")
if r is not None:
    zc = r["bodies/position"][:, 0, 2]
    check(np.min(zc) - 0.1 >= -1e-9,
          "moreau: lowest point of the ball between steps %.2e m above the floor" %
          (np.min(zc) - 0.1))
    # the first impact at sqrt(2 h / g): the last record before it is in free fall
    t1 = np.sqrt(2 / G)
    pre = r["time"] < t1 - 2e-3
    ze = 1.1 - 0.5 * G * r["time"][pre]**2
    check(np.max(np.abs(zc[pre] - ze)) < 2e-3,
          "moreau: free fall before the impact within the step's first order: %.2e m" %
          np.max(np.abs(zc[pre] - ze)))

# a restart from the end of a run with output.dt, to a later t_end: the same record times
# and the uninterrupted run's final state bit for bit
dp = ["--t-end", "0.5", "--set", "output.dt=0.0131", "--set", "output.xdmf=false"]
_, _, _, whole = run(deck("double_pendulum.yaml"), "--t-end", "0.5", "--set",
                     "output.dt=0.0131", "--set", "output.xdmf=false")
_, _, _, first = run(deck("double_pendulum.yaml"), "--t-end", "0.3", "--set",
                     "output.dt=0.0131", "--set", "output.xdmf=false")
_, _, _, rest = run(deck("double_pendulum.yaml"), *dp, "--restart", first)
w, f2 = load(whole), load(rest)
same = np.array_equal(w["state/q"][-1], f2["state/q"][-1]) and \
    np.array_equal(w["state/v"][-1], f2["state/v"][-1])
check(same, "restart at t = 0.3 to 0.5 with output.dt: final state bit for bit")
tw = w["time"][w["time"] > 0.3 + 1e-9]
tr = f2["time"][1:]
check(len(tw) == len(tr) and np.allclose(tw, tr, rtol=0, atol=1e-12),
      "restart: the same record times after the restart (%d)" % len(tr))
if len(tw) == len(tr):
    check(np.array_equal(w["state/q"][-len(tr):], f2["state/q"][1:]),
          "restart: every record after the restart bit for bit, between steps included")

# bad values: deck errors at the key, nothing written
for text, msg in (("output: {dt: 0.01, every: 2}", "not both"),
                  ("output: {dt: -0.01}", "dt"),
                  ("output: {dt: 5.0}", "larger than t_end")):
    path = write_deck("bad.yaml", "mbsim: 1\nbodies:\n"
                      "  - {name: p, type: point, mass: 1, position: [0, 0, 0]}\n"
                      "solver: {dt: 0.01, t_end: 1.0}\n" + text + "\n")
    rc, _, err, out = run(path, check=False)
    check(rc == 1 and msg in err and "bad.yaml:5:" in err,
          "deck error for %r: exit %d, %s" % (text, rc, err.strip()[-160:]))
# a run stopped between records (here in process: advanced to 0.2 and finished) writes a
# record at its last step, from which a restart goes on bit for bit (last: under the
# sanitizers the Python package cannot load, and python_package ends the script with a SKIP)
mbsim = python_package("a stopped run's closing record")
stop = os.path.join(TMP, "stopped.h5")
with mbsim.Simulation(deck("double_pendulum.yaml"),
                      set={"output.dt": "0.0131", "output.xdmf": "false",
                           "solver.t_end": "0.5"}) as sim:
    sim.save(stop)
    sim.advance(0.2)
    sim.finish()
s1 = load(stop)
check(abs(s1["time"][-1] - 0.2) < 1e-12 and abs(s1["time"][-2] - 15 * 0.0131) < 1e-12,
      "stopped at 0.2: the last record at the step (t = %.6g), the one before at 15 x 0.0131"
      % s1["time"][-1])
_, _, _, rest2 = run(deck("double_pendulum.yaml"), *dp, "--restart", stop)
f3 = load(rest2)
check(np.array_equal(w["state/q"][-1], f3["state/q"][-1]),
      "restart from the stopped run's last step to 0.5: final state bit for bit")
done()

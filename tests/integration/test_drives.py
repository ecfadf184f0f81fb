"""Prescribed motions with kinks, load windows on step boundaries, genalpha's work and
dissipation, and runs that blow up, against closed forms:
- a crank of mass m, centre r from its bearing, driven by `ramp: [0, 2]` (rate pi, then 0), no
  gravity: during the ramp omega = pi and the bearing force is m omega^2 r (centripetal);
  after it omega = 0 and the force is 0; velocities satisfy the velocity constraints;
- the shipped slider-crank locked after its ramp: no kinetic energy, no forces;
- a unit force on a unit point mass in `window: [0.5, 1.5]`: nothing moves before 0.5, the
  work is exactly F dx, for every integrator;
- genalpha's work and dissipation converge at second order (energy balance of a damped
  oscillator);
- genalpha on a fast top blows up: exit 2, status 'failed: unstable at t=...', records kept."""
import os
import subprocess

import h5py
import numpy as np

from common import MBSIM, TMP, check, deck, done, load, run, write_deck

INTEGRATORS = ("em", "midpoint", "euler", "genalpha")
m, r = 2.0, 0.5
CRANK = """mbsim: 1
bodies:
  - {name: crank, mass: 2.0, inertia: [0.001, 0.2, 0.2], position: [0.5, 0, 0],
     velocity: [0, 1.5707963267948966, 0], angular_velocity: [0, 0, 3.141592653589793]}
joints:
  - {name: bearing, type: revolute, bodies: [ground, crank], point: [0, 0, 0], axis: [0, 0, 1],
     motion: {value: 6.283185307179586, profile: {ramp: [0, 2]}}}
solver: {dt: 1.0e-3, t_end: 3.0}
output: {xdmf: false}
"""
path = write_deck("crank.yaml", CRANK)
for integ in INTEGRATORS:
    _, _, _, out = run(path, "--integrator", integ)
    res = load(out)
    t = res["time"]
    w = res["bodies/angular_velocity"][:, 0, 2]
    F = np.linalg.norm(res["joints/reaction"][:, 0, :3], axis=1)
    during, after = t < 2.0 - 1e-9, t > 2.0 - 1e-9
    ew = np.max(np.abs(w[during] - np.pi))
    eF = np.max(np.abs(F[during] - m * np.pi ** 2 * r))
    check(ew <= 1e-8 and eF <= 1e-8,
          "%s: during the ramp omega = pi (%.1e) and |F| = m omega^2 r (%.1e)" % (integ, ew, eF))
    wa, Fa = np.max(np.abs(w[after])), np.max(F[after])
    check(wa <= 1e-8 and Fa <= 1e-8,
          "%s: after the ramp omega = 0 (%.1e) and F = 0 (%.1e)" % (integ, wa, Fa))
    vv = np.max(res["constraints/velocity_violation"])
    check(vv <= 1e-10, "%s: velocity constraints hold at every record (%.1e)" % (integ, vv))
    check(res["attrs"]["status"] == "completed" or integ == "euler",
          "%s: status %s" % (integ, res["attrs"]["status"][:60]))
    if integ in ("em", "midpoint"):
        # the drive's work: T goes from 1/2 I_O pi^2 to 0 at the kink, all of it the drive's
        T0 = res["energy/kinetic"][0]
        W = res["energy/external_work"][-1]
        check(abs(W + T0) <= 1e-9 * T0, "%s: the drive's work -T0 (%.3e vs %.3e)" % (integ, W, -T0))

# the shipped slider-crank is locked after its ramp
for integ in INTEGRATORS:
    _, _, _, out = run(deck("slider_crank.yaml"), "--t-end", "3", "--integrator", integ)
    res = load(out)
    after = res["time"] > 2.0 + 1e-9
    T = np.max(res["energy/kinetic"][after])
    F = np.max(np.abs(res["joints/reaction"][after]))
    vv = np.max(res["constraints/velocity_violation"])
    check(T <= 1e-3 and F <= 1e-8 and vv <= 1e-10,
          "slider-crank, %s: locked after the ramp: T %.1e J, reactions %.1e, velocity "
          "constraints %.1e" % (integ, T, F, vv))

# a window on step boundaries acts on exactly the steps inside it
WIN = """mbsim: 1
bodies:
  - {name: p, type: point, mass: 1.0, position: [0, 0, 0]}
loads:
  - {name: push, type: force, body: p, value: [1, 0, 0], profile: {window: [0.5, 1.5]}}
solver: {dt: 1.0e-2, t_end: 2.0}
output: {xdmf: false}
"""
wpath = write_deck("window.yaml", WIN)
for integ in INTEGRATORS:
    _, _, _, out = run(wpath, "--integrator", integ)
    res = load(out)
    t, v, x = res["time"], res["state/v"][:, 0], res["state/q"][:, 0]
    i05 = np.argmin(np.abs(t - 0.5))
    W = res["energy/external_work"]
    check(np.max(np.abs(v[: i05 + 1])) == 0.0 and np.max(np.abs(x[: i05 + 1])) == 0.0,
          "%s: at rest up to t = 0.5 (v(0.5) = %.1e)" % (integ, v[i05]))
    eW = np.max(np.abs(W - np.clip(x, 0, None) + np.where(t > 1.5, x - x[np.argmin(np.abs(t - 1.5))], 0)))
    check(eW <= 1e-12, "%s: work = F dx over the window's steps (%.1e)" % (integ, eW))
    if integ != "euler":
        eT = abs(res["energy/kinetic"][-1] - W[-1])
        # genalpha answers a jump of the load with an O(dt) transient in its velocities
        check(eT <= 1e-12 if integ != "genalpha" else eT <= 1e-2,
              "%s: kinetic energy gained = work (%.1e%s)"
              % (integ, eT, ", O(dt) after a jump" if integ == "genalpha" else ""))

# genalpha and the window (docs/decks.md "Profiles"): the load acts on the same steps, its
# total impulse equals em's to round-off; at the window's end the velocity lacks half a step's
# impulse (F dt / 2m, whatever rho_inf), which arrives over the following steps
_, _, _, out_em = run(wpath, "--integrator", "em")
v_em = load(out_em)["state/v"][:, 0]
for rho in ("0.8", "0.3"):
    _, _, _, out = run(wpath, "--integrator", "genalpha", "--set", "solver.genalpha.rho_inf=" + rho)
    res = load(out)
    t, v = res["time"], res["state/v"][:, 0]
    i15 = np.argmin(np.abs(t - 1.5))
    check(abs(v[-1] - v_em[-1]) <= 1e-12,
          "genalpha (rho_inf %s): the window's total impulse equals em's (v(2) %.15f vs %.15f)"
          % (rho, v[-1], v_em[-1]))
    check(abs(v[i15] - (1.0 - 0.5e-2)) <= 1e-12,
          "genalpha (rho_inf %s): at the window's end v = 1 - F dt / 2m = 0.995 (%.15f)"
          % (rho, v[i15]))

# genalpha's work and dissipation are second order: energy balance of a driven, damped
# oscillator at dt and dt/2
OSC = """mbsim: 1
bodies:
  - {name: p, type: point, mass: 1.0, position: [1.0, 0, 0]}
loads:
  - {name: s, type: spring, bodies: [ground, p], points: [[0, 0, 0], [1, 0, 0]],
     stiffness: 40, damping: 0.8, rest_length: 0.8}
  - {name: f, type: force, body: p, value: [2, 0, 0], profile: {sine: {amplitude: 1, frequency: 0.7}}}
solver: {integrator: genalpha, t_end: 2.0}
output: {xdmf: false}
"""
opath = write_deck("osc.yaml", OSC)
errs = []
for dt in (4e-3, 2e-3, 1e-3):
    _, _, _, out = run(opath, "--dt", str(dt))
    res = load(out)
    B = res["energy/total"] - res["energy/external_work"] + res["energy/dissipated"]
    errs.append(np.max(np.abs(B - B[0])))
o1, o2 = np.log2(errs[0] / errs[1]), np.log2(errs[1] / errs[2])
check(1.8 <= o1 <= 2.3 and 1.8 <= o2 <= 2.3,
      "genalpha energy balance converges at order 2 (%s, orders %.2f %.2f)"
      % (" ".join("%.2e" % e for e in errs), o1, o2))

# a blow-up is a failure, not a success
TOP = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: top, mass: 1.0, inertia: [0.05, 0.05, 0.08], position: [0.25, 0, 0.4330127018922193],
     orientation: {axis: [0, 1, 0], angle_deg: 30}, angular_velocity: [25.0, 0, 43.30127018922193]}
joints:
  - {name: tip, type: spherical, bodies: [ground, top], point: [0, 0, 0]}
solver: {integrator: genalpha, dt: 4.0e-3, t_end: 10.0}
output: {xdmf: false}
"""
tpath = write_deck("top.yaml", TOP)
out = os.path.join(TMP, "top.h5")
p = subprocess.run([MBSIM, tpath, "-o", out], capture_output=True, text=True, timeout=600)
with h5py.File(out, "r") as f:
    status = f.attrs["status"]
    n = len(f["time"])
    E = f["energy/total"][()]
check(p.returncode == 2 and status.startswith("failed: unstable at t=") and n > 10,
      "genalpha on the top: exit %d, status '%s...', %d records kept"
      % (p.returncode, status[:40], n))
check(E[-1] > 2.0 * E[0], "the last record shows the energy grown (%.3g J from %.3g J)" % (E[-1], E[0]))
check("unstable" in p.stderr and "energy" in p.stdout, "stderr says why; the summary shows it")
# the same top with em at the same dt is fine
_, _, _, out = run(tpath, "--integrator", "em")
res = load(out)
e = np.max(np.abs(res["energy/total"] - res["energy/total"][0])) / res["energy/total"][0]
check(res["attrs"]["status"] == "completed" and e <= 1e-12, "em at dt = 4e-3: completed, energy %.1e" % e)
# a motion with an expression profile: the joint follows A f(t) and turns at A f'(t) (the
# exact derivative), a smooth start-up from rest
PE = """mbsim: 1
parameters: {w: 1.5707963267948966, A: 0.8}
bodies:
  - {name: crank, mass: 2.0, inertia: [0.001, 0.2, 0.2], position: [0.5, 0, 0]}
joints:
  - {name: bearing, type: revolute, bodies: [ground, crank], point: [0, 0, 0], axis: [0, 0, 1],
     motion: {value: "$A", profile: {expression: "0.5 * (1 - cos($w * t))"}}}
solver: {dt: 1.0e-3, t_end: 2.0}
output: {xdmf: false, every: 10}
"""
ppath = write_deck("expr_motion.yaml", PE)
for integ in INTEGRATORS:
    _, _, _, out = run(ppath, "--integrator", integ)
    res = load(out)
    t, w, A = res["time"], np.pi / 2, 0.8
    ec = np.max(np.abs(res["joints/coordinates"][:, 0, 0] - A * 0.5 * (1 - np.cos(w * t))))
    er = np.max(np.abs(res["joints/rates"][:, 0, 0] - A * 0.5 * w * np.sin(w * t)))
    check(ec <= 1e-12 and er <= 1e-12, "%s: a motion with an expression profile: angle (%.1e) "
          "and rate (%.1e) follow A f(t), A f'(t)" % (integ, ec, er))

# a load with an expression profile acts exactly as the same sine profile
SINE = WIN.replace("profile: {window: [0.5, 1.5]}", "profile: {sine: {amplitude: 2, frequency: 0.5}}")
EXPR = WIN.replace("profile: {window: [0.5, 1.5]}", 'profile: {expression: "2 * sin(pi * t)"}')
outs = []
for name, text in (("sine.yaml", SINE), ("expr.yaml", EXPR)):
    pth = write_deck(name, text)
    outs.append(load(run(pth)[3]))
d = np.max(np.abs(outs[0]["state/q"] - outs[1]["state/q"]))
check(d <= 1e-14, "a force with the expression 2 sin(pi t) moves like the sine profile (%.1e)" % d)
done()

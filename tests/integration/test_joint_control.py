"""Control laws on joint coordinates (`control:` on joint_torque / joint_force), against
things we did not write:
- a PD-controlled link on a revolute joint, no gravity, constant target: the closed-form
  damped oscillator I theta'' + kd theta' + kp (theta - theta*) = 0 with the default
  integrator; the error falls by 4 per halving of dt (second order) and the energy balance
  E - E0 - W + D closes to round-off (the law's work is in /energy/external_work);
- a moving target (an expression profile, rate from its exact derivative) against scipy's
  solve_ivp of I theta'' = -kp (theta - theta*) - kd (theta' - theta*');
- a PD joint_force on a prismatic cart: the same oscillator in x with the mass m;
- a PID law under a constant disturbing torque against scipy (order 2), no steady offset,
  its error integral (/state/control_integral) carried bit for bit across a restart;
- two free bodies with a PD torque between them: the total angular momentum is conserved to
  round-off (contravariant torques, equal and opposite);
- bad `control` entries are errors at file:line:column."""
import os
import subprocess

import numpy as np
from scipy.integrate import solve_ivp

from common import MBSIM, TMP, check, done, load, run, write_deck

I, KP, KD, TT = 0.5, 8.0, 0.4, 0.5
LINK = """mbsim: 1
bodies:
  - {name: link, mass: 1.0, inertia: [0.3, 0.3, 0.5], position: [0, 0, 0]}
joints:
  - {name: a1, type: revolute, bodies: [ground, link], point: [0, 0, 0], axis: [0, 0, 1]}
loads:
  - {name: servo, type: joint_torque, joint: a1,
     control: {kp: 8.0, kd: 0.4, ki: 0, target: %s}}
solver: {dt: %g, t_end: 4.0}
output: {xdmf: false}
"""


def oscillator(t, x0, kp, kd, inertia):
    """theta(t) of I theta'' + kd theta' + kp (theta - x0) = 0 from rest at 0 (underdamped)"""
    z = kd / (2 * np.sqrt(kp * inertia))
    w0 = np.sqrt(kp / inertia)
    wd = w0 * np.sqrt(1 - z * z)
    return x0 - x0 * np.exp(-z * w0 * t) * (np.cos(wd * t) + z * w0 / wd * np.sin(wd * t))


def balance(res):
    E = res["energy/kinetic"] + res["energy/potential"]
    W, D = res["energy/external_work"], res["energy/dissipated"]
    return np.max(np.abs(E - E[0] - W + D)) / max(np.max(np.abs(E)), np.max(np.abs(W)))


# constant target: closed form, order 2 in dt
errs = []
for dt in (0.02, 0.01, 0.005):
    _, _, _, out = run(write_deck("pd%g.yaml" % dt, LINK % (TT, dt)))
    res = load(out)
    th = res["joints/coordinates"][:, 0, 0]
    errs.append(np.max(np.abs(th - oscillator(res["time"], TT, KP, KD, I))))
    bal = balance(res)
    check(bal <= 1e-12, "dt %g: energy balance closes (%.1e relative)" % (dt, bal))
    check(res["attrs"]["integrator"] in ("em", b"em"), "the default integrator is em")
rates = [np.log2(errs[k] / errs[k + 1]) for k in range(2)]
check(errs[-1] <= 1e-4 and min(rates) >= 1.9,
      "PD link against the closed-form damped oscillator: errors %s, orders %s" %
      (" ".join("%.2e" % e for e in errs), " ".join("%.2f" % r for r in rates)))
W = load(out)["energy/external_work"]
check(abs(W[-1]) > 1e-3, "the law does work (%.3e J booked)" % W[-1])

# a moving target with its exact rate, against scipy
target = '{value: 0.8, profile: {expression: "sin(2 * t)"}}'
ea = []
for dt in (0.005, 0.0025):
    _, _, _, out = run(write_deck("pd_sine.yaml", LINK % (target, dt)))
    res = load(out)
    t = res["time"]
    sol = solve_ivp(lambda s, y: [y[1], (-KP * (y[0] - 0.8 * np.sin(2 * s))
                                         - KD * (y[1] - 1.6 * np.cos(2 * s))) / I],
                    (0, t[-1]), [0.0, 0.0], t_eval=t, rtol=1e-11, atol=1e-12)
    ea.append((np.max(np.abs(res["joints/coordinates"][:, 0, 0] - sol.y[0])),
               np.max(np.abs(res["joints/rates"][:, 0, 0] - sol.y[1]))))
    check(balance(res) <= 1e-12, "moving target: energy balance %.1e" % balance(res))
oa, orate = np.log2(ea[0][0] / ea[1][0]), np.log2(ea[0][1] / ea[1][1])
check(ea[1][0] <= 5e-5 and oa >= 1.9 and orate >= 1.9,
      "moving target against solve_ivp: angle %.1e, %.1e rad (order %.2f), rate %.1e, %.1e "
      "rad/s (order %.2f)" % (ea[0][0], ea[1][0], oa, ea[0][1], ea[1][1], orate))

# joint_force on a prismatic cart, other integrators too
CART = """mbsim: 1
bodies:
  - {name: cart, mass: 2.0, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}
joints:
  - {name: rail, type: prismatic, bodies: [ground, cart], point: [0, 0, 0], axis: [1, 0, 0]}
loads:
  - {name: servo, type: joint_force, joint: rail, control: {kp: 50, kd: 2, target: 0.1}}
solver: {dt: 0.002, t_end: 2.0}
output: {xdmf: false}
"""
cpath = write_deck("cart.yaml", CART)
for integ in ("em", "midpoint", "genalpha"):
    _, _, _, out = run(cpath, "--integrator", integ)
    res = load(out)
    x = res["joints/coordinates"][:, 0, 0]
    e = np.max(np.abs(x - oscillator(res["time"], 0.1, 50.0, 2.0, 2.0)))
    tol = 1e-5 if integ != "genalpha" else 1e-4
    check(e <= tol, "%s: PD cart against the closed form (%.1e m)" % (integ, e))
    if integ != "genalpha":
        check(balance(res) <= 1e-11, "%s: cart energy balance %.1e" % (integ, balance(res)))

# two free bodies with the law between them: angular momentum conserved
PAIR = """mbsim: 1
bodies:
  - {name: a, mass: 1.0, inertia: [0.2, 0.3, 0.4], position: [0, 0, 0],
     angular_velocity: [0.3, -0.2, 0.5]}
  - {name: b, mass: 2.0, inertia: [0.5, 0.4, 0.3], position: [1, 0, 0],
     angular_velocity: [0.3, -0.2, 0.5], velocity: [0, 0.5, 0.2]}
joints:
  - {name: h, type: revolute, bodies: [a, b], point: [0.5, 0, 0], axis: [0, 1, 1]}
loads:
  - {name: servo, type: joint_torque, joint: h,
     control: {kp: 20, kd: 1, target: {value: 1.0, profile: {ramp: [0, 1]}}}}
solver: {dt: 0.005, t_end: 2.0}
output: {xdmf: false}
"""
_, _, _, out = run(write_deck("pair.yaml", PAIR))
res = load(out)
L = res["momentum/angular"]
dL = np.max(np.abs(L - L[0])) / np.max(np.abs(L[0]))
th = res["joints/coordinates"][:, 0, 0]
check(dL <= 1e-12, "free pair: angular momentum conserved (%.1e relative)" % dL)
check(abs(th[-1] - 1.0) <= 0.2, "free pair: the joint follows the target (%.3f rad at t = 2)" % th[-1])

# PID: a constant disturbing torque d on the joint; the integral term removes the offset d/kp
# a PD law leaves. Against scipy of I theta'' = -kp e - kd theta' - ki z + d, z' = e
PID = LINK.replace("control: {kp: 8.0, kd: 0.4, ki: 0, target: %s}",
                   "control: {kp: 8.0, kd: 2.0, ki: 4.0, target: 0.5}}\n"
                   "  - {name: disturb, type: joint_torque, joint: a1, value: 0.5").replace(
                       "t_end: 4.0", "t_end: 8.0")
ep = []
for dt in (0.02, 0.01):
    _, _, _, out = run(write_deck("pid%g.yaml" % dt, PID % dt))
    res = load(out)
    t = res["time"]
    sol = solve_ivp(lambda s, y: [y[1], (-8 * (y[0] - 0.5) - 2 * y[1] - 4 * y[2] + 0.5) / I,
                                  y[0] - 0.5], (0, t[-1]), [0.0, 0.0, 0.0], t_eval=t,
                    rtol=1e-12, atol=1e-13)
    ep.append(np.max(np.abs(res["joints/coordinates"][:, 0, 0] - sol.y[0])))
    z = res["state/control_integral"][:, 0]
    ez = np.max(np.abs(z - sol.y[2]))
    check(balance(res) <= 1e-12 and ez <= 1e-4,
          "PID dt %g: energy balance %.1e, /state/control_integral against scipy %.1e" %
          (dt, balance(res), ez))
po = np.log2(ep[0] / ep[1])
check(ep[1] <= 1e-4 and po >= 1.9, "PID against scipy: errors %.2e %.2e (order %.2f)" %
      (ep[0], ep[1], po))
check(abs(res["joints/coordinates"][-1, 0, 0] - 0.5) <= 0.01 < 0.5 / 8,
      "PID: no steady offset (%.4f rad from the target; a PD law would leave d/kp = %.4f)" %
      (abs(res["joints/coordinates"][-1, 0, 0] - 0.5), 0.5 / 8))
# a restart carries the integral: bit for bit
ppath = write_deck("pid_restart.yaml", PID % 0.01)
_, _, _, full = run(ppath)
_, _, _, half = run(ppath, "--t-end", "4")
rpath = os.path.join(TMP, "pid_restarted.h5")
p = subprocess.run([MBSIM, ppath, "--restart", half, "-o", rpath, "--quiet"],
                   capture_output=True, text=True, timeout=600)
a, b = load(full), load(rpath)
check(p.returncode == 0 and np.array_equal(a["state/q"][-1], b["state/q"][-1]) and
      np.array_equal(a["state/control_integral"][-1], b["state/control_integral"][-1]),
      "PID restarted at t = 4: the final q and integral equal the uninterrupted run's, bit for "
      "bit")
p = subprocess.run([MBSIM, ppath, "--check"], capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and "servo: joint_torque on joint a1, control kp 8 N m/rad, kd 2 N m s/rad, "
      "ki 4 N m/(rad s), target 0.5 rad" in p.stdout, "--check lists the law and its gains")
for integ in ("static", "spacetime"):
    rc, _, err, _ = run(ppath, "--integrator", integ, check=False)
    check(rc == 1 and "pid_restart.yaml:8:" in err and "ki" in err,
          "ki with %s: %s" % (integ, err.strip()[:150]))

# bad entries
BAD = [
    ("control: {kp: 8, kd: 0.4, target: 0.5, kq: 1}", "kq"),
    ("control: {kp: 8, ki: -2, target: 0.5}", "ki"),
    ("control: {kd: 0.4, target: 0.5}", "kp"),
    ("control: {kp: 8}", "target"),
    ("control: {kp: -1, target: 0.5}", "kp"),
    ("control: {kp: 8, target: {value: 1, profile: {rampp: [0, 1]}}}", "rampp"),
    ("value: 1, control: {kp: 8, target: 0.5}", "value"),
    ("method: naive, control: {kp: 8, target: 0.5}", "contravariant"),
    ("control: 3", "mapping"),
]
for k, (entry, word) in enumerate(BAD):
    text = LINK.replace("control: {kp: 8.0, kd: 0.4, ki: 0, target: %s}", entry) % 0.01
    p = write_deck("bad%d.yaml" % k, text)
    rc, _, err, _ = run(p, check=False)
    import re
    check(rc == 1 and re.search(r"bad%d\.yaml:\d+:\d+: " % k, err) and word in err,
          "bad control '%s': %s" % (entry, err.strip().splitlines()[0] if err else "(none)"))
done()

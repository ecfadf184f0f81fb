"""Computed-torque control (`control: {computed_torque: REFERENCE, kp, kd}` on joint_torque
loads) of a planar double pendulum under gravity, against the closed-form inverse dynamics of
the two-link arm (Spong's M(theta) theta'' + C(theta, theta') + g(theta)):
- reference starting at rest at the initial configuration: the joints track it to round-off
  at every record, and /joints/drive (= the loads' /loads/force z torques) equals the
  inverse-dynamics torques along the reference to round-off; the energy balance closes;
- a reference the arm does not start on: the error of each joint decays as the closed-loop
  error dynamics e'' + kd e' + kp e = 0 (one under-, one over-damped), computed by scipy, and
  the torques are the inverse dynamics along the motion actually taken;
- the tracking error falls at least at second order in dt (here: it is round-off);
- bad entries are errors at file:line:column."""
import re

import numpy as np
from scipy.integrate import solve_ivp

from common import check, done, load, run, write_deck

ARM = """mbsim: 1
gravity: [0, -9.81, 0]
bodies:
  - {name: l1, mass: 1.0, inertia: [0.001, 0.08333333333333333, 0.08333333333333333],
     position: [0.5, 0, 0]}
  - {name: l2, mass: 0.5, inertia: [0.001, 0.041666666666666664, 0.041666666666666664],
     position: [1.5, 0, 0]}
joints:
  - {name: j1, type: revolute, bodies: [ground, l1], point: [0, 0, 0], axis: [0, 0, 1]}
  - {name: j2, type: revolute, bodies: [l1, l2], point: [1, 0, 0], axis: [0, 0, 1]}
loads:
  - {name: ct1, type: joint_torque, joint: j1, control: {computed_torque: %s, kp: %s, kd: %s}}
  - {name: ct2, type: joint_torque, joint: j2, control: {computed_torque: %s, kp: %s, kd: %s}}
solver: {dt: %g, t_end: 2.0}
output: {xdmf: false}
"""
M1, M2, L1, LC1, LC2, G = 1.0, 0.5, 1.0, 0.5, 0.5, 9.81
I1, I2 = M1 / 12, M2 / 12


def inverse_dynamics(q1, q2, d1, d2, a1, a2):
    """joint torques of the planar two-link arm (angles from x, gravity along -y)"""
    c2, s2 = np.cos(q2), np.sin(q2)
    m11 = I1 + I2 + M1 * LC1 ** 2 + M2 * (L1 ** 2 + LC2 ** 2 + 2 * L1 * LC2 * c2)
    m12 = I2 + M2 * (LC2 ** 2 + L1 * LC2 * c2)
    m22 = I2 + M2 * LC2 ** 2
    h = M2 * L1 * LC2 * s2
    g1 = (M1 * LC1 + M2 * L1) * G * np.cos(q1) + M2 * LC2 * G * np.cos(q1 + q2)
    g2 = M2 * LC2 * G * np.cos(q1 + q2)
    return (m11 * a1 + m12 * a2 - h * (2 * d1 * d2 + d2 ** 2) + g1,
            m12 * a1 + m22 * a2 + h * d1 ** 2 + g2)


def rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


# a reference starting at rest where the arm is
R1 = '{value: 1.0, profile: {expression: "0.5 * (1 - cos(pi * t))"}}'
R2 = '{value: -0.8, profile: {expression: "sin(2 * t)^2"}}'
errs = []
for dt in (0.01, 0.005):
    _, _, _, out = run(write_deck("ct%g.yaml" % dt, ARM % (R1, 400, 40, R2, 400, 40, dt)))
    res = load(out)
    t = res["time"]
    q1, d1, a1 = 0.5 * (1 - np.cos(np.pi * t)), 0.5 * np.pi * np.sin(np.pi * t), \
        0.5 * np.pi ** 2 * np.cos(np.pi * t)
    q2, d2, a2 = -0.8 * np.sin(2 * t) ** 2, -1.6 * np.sin(4 * t), -6.4 * np.cos(4 * t)
    th = res["joints/coordinates"][:, :, 0]
    errs.append(max(np.max(np.abs(th[:, 0] - q1)), np.max(np.abs(th[:, 1] - q2))))
    t1, t2 = inverse_dynamics(q1, q2, d1, d2, a1, a2)
    D, F = res["joints/drive"], res["loads/force"]
    e1, e2 = rel(D[:, 0, 3], t1), rel(D[:, 1, 3], t2)
    check(e1 <= 1e-12 and e2 <= 1e-12,
          "dt %g: drive torques = inverse dynamics along the reference (%.1e, %.1e relative)" %
          (dt, e1, e2))
    check(np.max(np.abs(F[:, :, 5] - D[:, :, 3])) <= 1e-12,
          "dt %g: the loads' torques (/loads/force) are the drive torques" % dt)
    E = res["energy/kinetic"] + res["energy/potential"]
    bal = np.max(np.abs(E - E[0] - res["energy/external_work"])) / np.max(np.abs(E))
    check(bal <= 1e-12, "dt %g: energy balance closes with the laws' work (%.1e)" % (dt, bal))
check(errs[1] <= 1e-12 and errs[1] <= errs[0] / 4 + 1e-12,
      "tracking the reference: %.1e, %.1e rad (second order or better: round-off)" % tuple(errs))

# the arm starts off its reference: the error dynamics in closed loop
_, _, _, out = run(write_deck("ct_off.yaml", ARM % ("0.3", 100, 25, '{value: 0.5, profile: '
                                                    '{expression: "cos(t)"}}', 100, 4, 0.005)))
res = load(out)
t = res["time"]
th = res["joints/coordinates"][:, :, 0]
pairs = ((0.3 + 0 * t, 0 * t, 0 * t, 100.0, 25.0, -0.3),
         (0.5 * np.cos(t), -0.5 * np.sin(t), -0.5 * np.cos(t), 100.0, 4.0, -0.5))
qs, ds, acc = [], [], []
for k, (ref, dref, aref, kp, kd, e0) in enumerate(pairs):
    sol = solve_ivp(lambda s, y: [y[1], -kd * y[1] - kp * y[0]], (0, t[-1]), [e0, 0.0],
                    t_eval=t, rtol=1e-12, atol=1e-14)
    e = np.max(np.abs(th[:, k] - (ref + sol.y[0])))
    check(e <= 1e-8, "joint %d: theta = reference + e(t), e'' + %g e' + %g e = 0 (%.1e rad)" %
          (k + 1, kd, kp, e))
    qs.append(ref + sol.y[0])
    ds.append(dref + sol.y[1])
    acc.append(aref - kd * sol.y[1] - kp * sol.y[0])
t1, t2 = inverse_dynamics(qs[0], qs[1], ds[0], ds[1], acc[0], acc[1])
D = res["joints/drive"]
e1, e2 = rel(D[:, 0, 3], t1), rel(D[:, 1, 3], t2)
check(e1 <= 1e-7 and e2 <= 1e-7,
      "off the reference: drive torques = inverse dynamics along the motion (%.1e, %.1e)" %
      (e1, e2))

# bad entries
BAD = [
    ("{computed_torque: 0.3, kp: 1, kd: 1, target: 0.2}", "target"),
    ("{computed_torque: 0.3, kp: 1, ki: 1}", "ki"),
    ("{computed_torque: {value: 1, profile: {sin: 1}}, kp: 1}", "sin"),
    ("{computed_torque: 0.3, kd: 1}", "kp"),
]
for k, (entry, word) in enumerate(BAD):
    text = ARM.replace("control: {computed_torque: %s, kp: %s, kd: %s}",
                       "control: " + entry.replace("%", "%%"), 1) % ("0.1", 1, 1, 0.01)
    p = write_deck("ct_bad%d.yaml" % k, text)
    rc, _, err, _ = run(p, check=False)
    check(rc == 1 and re.search(r"ct_bad%d\.yaml:\d+:\d+: " % k, err) and word in err,
          "bad %s: %s" % (entry, err.strip().splitlines()[0] if err else "(none)"))
MOT = ARM.replace("axis: [0, 0, 1]}\n  - {name: j2",
                  "axis: [0, 0, 1],\n     motion: {value: 0.1, profile: {ramp: [0, 1]}}}\n"
                  "  - {name: j2") % ("0.3", 1, 1, "0.1", 1, 1, 0.01)
rc, _, err, _ = run(write_deck("ct_motion.yaml", MOT), check=False)
check(rc == 1 and "ct_motion.yaml:" in err and "motion" in err,
      "computed_torque on a joint with a motion: %s" % err.strip()[:160])
TWICE = (ARM % ("0.3", 1, 1, "0.1", 1, 1, 0.01)).replace("joint: j2", "joint: j1")
rc, _, err, _ = run(write_deck("ct_twice.yaml", TWICE), check=False)
check(rc == 1 and "ct_twice.yaml:" in err and "one per joint" in err,
      "two computed_torque laws on one joint: %s" % err.strip()[:160])
done()

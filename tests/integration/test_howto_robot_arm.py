"""The how-to "A robot arm with drives and joint torques" (docs/howto/robot-arm.md): its deck
decks/howto/robot_arm.yaml as shipped (default settings). Checked against what the program
does not compute itself:
- the shoulder's PD torque (/joints/drive, about the joint axis -y) against the balance of
  angular momentum of the whole arm about the shoulder point, dH_y/dt = tau_y + sum_i (r_i x
  m_i g)_y, with H = sum_i m_i r_i x v_i + R_i I_i R_i^T w_i built here from the recorded
  motion and the deck's masses and inertias: pointwise (central differences) after the
  start-up transient, and integrated over the whole run (trapezoidal rule);
- the elbow and wrist angles (/joints/coordinates) against their prescribed motions, degrees
  times the quintic 10 s^3 - 15 s^4 + 6 s^5;
- the shoulder's final angle against the static balance of the PD law and gravity,
  kp (50 deg - theta) = sum_i m_i g x_i, solved here by fixed-point iteration;
- the energy balance E - E0 - W + D (em: to round-off)."""
import math
import time

import numpy as np
from scipy.integrate import cumulative_trapezoid

from common import attempt, balance, check, deck, done

L = [0.5, 0.4, 0.2]
M = [4.0, 3.0, 1.5]
W = 0.05
KP = 3000.0
G = np.array([0.0, 0.0, -9.81])

t0 = time.time()
r = attempt("decks/howto/robot_arm.yaml", deck("howto/robot_arm.yaml"))
if r is None:
    done()
print("      (the deck ran in %.2f s)" % (time.time() - t0))
t = r["time"]
x, v = r["bodies/position"], r["bodies/velocity"]
R, w = r["bodies/orientation"], r["bodies/angular_velocity"]
jn = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]

H = np.zeros((len(t), 3))
Mg = np.zeros((len(t), 3))
for i in range(3):
    inertia = np.diag([M[i] * W ** 2 / 6, M[i] * (L[i] ** 2 + W ** 2) / 12,
                       M[i] * (L[i] ** 2 + W ** 2) / 12])
    H += M[i] * np.cross(x[:, i], v[:, i])
    H += np.einsum("nij,jk,nlk,nl->ni", R[:, i], inertia, R[:, i], w[:, i])
    Mg += np.cross(x[:, i], M[i] * G)
tau = -r["joints/drive"][:, jn.index("shoulder"), 3]        # about +y (the axis is -y)
scale = np.max(np.abs(tau))
dH = np.gradient(H[:, 1], t)
after = (t > 0.05) & (t < t[-1])
err = np.max(np.abs(dH - Mg[:, 1] - tau)[after])
check(err <= 5e-4 * scale, "shoulder torque = dH_y/dt - gravity moment after t = 0.05 s: "
      "%.2e N m of max %.1f N m (measured 4.7e-3 N m, 6.7e-5 of the max; bound 5e-4 of the max)" % (err, scale))
integ = cumulative_trapezoid(tau + Mg[:, 1], t, initial=0.0)
err = np.max(np.abs(H[:, 1] - H[0, 1] - integ))
hs = np.max(np.abs(H[:, 1]))
check(err <= 5e-4 * hs, "H_y(t) - H_y(0) = integral of shoulder torque + gravity moment over "
      "the whole run: %.2e of max |H_y| %.2f N m s (measured 6.6e-4 N m s, 8.7e-5 of the max; bound 5e-4 of the max)"
      % (err, hs))


def quintic(s):
    s = np.clip(s, 0.0, 1.0)
    return 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5


q = r["joints/coordinates"]
e_elbow = np.max(np.abs(q[:, jn.index("elbow"), 0] - math.radians(60) * quintic(t)))
e_wrist = np.max(np.abs(q[:, jn.index("wrist"), 0] - math.radians(-45) * quintic(t - 0.5)))
check(max(e_elbow, e_wrist) <= 1e-9, "elbow and wrist angles follow value_deg x the quintic: "
      "%.1e, %.1e rad" % (e_elbow, e_wrist))

# the final pose at rest: the PD law holds the arm's weight, kp (target - theta) = sum m g x
th = math.radians(50)
for _ in range(50):
    phi = [th, th + math.radians(60), th + math.radians(15)]
    xc, base = [], 0.0
    for i in range(3):
        xc.append(base + L[i] / 2 * math.cos(phi[i]))
        base += L[i] * math.cos(phi[i])
    th = math.radians(50) - sum(M[i] * 9.81 * xc[i] for i in range(3)) / KP
got = q[-1, jn.index("shoulder"), 0]
check(abs(got - th) <= 2e-5, "the shoulder settles where kp (50 deg - theta) carries the "
      "arm's weight: %.6f deg, static balance %.6f deg" % (math.degrees(got), math.degrees(th)))
rate = abs(r["joints/rates"][-1, jn.index("shoulder"), 0])
check(rate <= 1e-3, "the arm is at rest at the end: shoulder rate %.1e rad/s" % rate)
b, sc = balance(r)
check(b <= 1e-10 * sc, "energy balance E - E0 - W + D: %.1e of %.2f J" % (b, sc))
done()

"""/joints/coordinates, /joints/rates, /loads/names and /loads/force against closed forms and
an independent ODE:
- a cart on a prismatic rail pushed by a joint force F: x = F t^2 / (2 m), rate F t / m (em
  is exact for a constant force), and the load's force F along the rail;
- a spring-damper between the cart and a point mass: the force on the mass is
  -(k (l - L) + c dl/dt) e with l, dl/dt, e from the recorded positions and velocities;
- a rod pendulum on a revolute joint: the joint angle and rate against the pendulum ODE
  (scipy, rtol 1e-12), order 2, continuous past +-pi (it swings over the top);
- a top on a spherical joint: the rotation vector of its attitude relative to t = 0
  (scipy's Rotation from /bodies/orientation) and the angular velocity as the rates;
- a joint torque: the load's torque is tau about the axis."""

import numpy as np
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from common import check, done, load, run, write_deck


def names(r, key):
    return [n.decode() if isinstance(n, bytes) else n for n in r[key]]


# cart on a rail, pushed
m, F = 2.0, 3.0
p = write_deck("cart.yaml", """mbsim: 1
bodies:
  - {name: cart, mass: 2.0, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}
joints:
  - {name: rail, type: prismatic, bodies: [ground, cart], point: [0, 0, 0], axis: [1, 0, 0]}
loads:
  - {name: push, type: joint_force, joint: rail, value: 3.0}
solver: {dt: 1.0e-3, t_end: 1.0}
output: {xdmf: false, every: 10}
""")
_, _, _, out = run(p)
r = load(out)
t = r["time"]
x, xd = r["joints/coordinates"][:, 0, 0], r["joints/rates"][:, 0, 0]
check(r["joints/coordinates"].shape == (len(t), 1, 3) and np.all(np.isnan(r["joints/coordinates"][:, 0, 1:])),
      "a prismatic joint has one coordinate, the others NaN")
ex = np.max(np.abs(x - F * t ** 2 / (2 * m)))
ev = np.max(np.abs(xd - F * t / m))
check(ex <= 1e-12 and ev <= 1e-12, "prismatic: x = F t^2/(2m) (%.1e), rate F t/m (%.1e)" % (ex, ev))
check(names(r, "loads/names") == ["push"], "/loads/names")
fl = r["loads/force"][:, 0]
check(np.max(np.abs(fl - [F, 0, 0, 0, 0, 0])) <= 1e-12, "the joint force acts along the rail")

# spring-damper between the cart and a mass
k, c, L = 40.0, 0.7, 1.0
p = write_deck("spring.yaml", """mbsim: 1
bodies:
  - {name: cart, mass: 2.0, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}
  - {name: bob, type: point, mass: 0.5, position: [1.2, 0.3, 0]}
joints:
  - {name: rail, type: prismatic, bodies: [ground, cart], point: [0, 0, 0], axis: [1, 0, 0]}
loads:
  - {name: push, type: joint_force, joint: rail, value: 3.0}
  - {name: spring, type: spring, bodies: [cart, bob], points: [[0, 0, 0], [1.2, 0.3, 0]],
     stiffness: 40, damping: 0.7, rest_length: 1.0}
solver: {dt: 1.0e-3, t_end: 1.0}
output: {xdmf: false, every: 10}
""")
_, _, _, out = run(p)
r = load(out)
bn = names(r, "bodies/names")
d = r["bodies/position"][:, bn.index("bob")] - r["bodies/position"][:, bn.index("cart")]
dv = r["bodies/velocity"][:, bn.index("bob")] - r["bodies/velocity"][:, bn.index("cart")]
l = np.linalg.norm(d, axis=1)
e = d / l[:, None]
ldot = np.sum(e * dv, axis=1)
want = -(k * (l - L) + c * ldot)[:, None] * e
got = r["loads/force"][:, names(r, "loads/names").index("spring"), :3]
err = np.max(np.abs(got - want)) / np.max(np.abs(want))
check(err <= 1e-12, "spring-damper: force on the bob = -(k (l - L) + c dl/dt) e (%.1e)" % err)
check(np.max(np.abs(r["loads/force"][:, 1, 3:])) <= 1e-12, "no torque about the spring's point")

# rod pendulum on a revolute joint, swinging over the top
mr, lr, g, w0 = 1.0, 0.6, 9.81, 12.0
I_O = mr * lr ** 2 / 3
p = write_deck("rod.yaml", """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: rod, mass: 1.0, inertia: [1.0e-4, 0.03, 0.03], position: [0, 0, -0.3],
     orientation: {axis: [0, 1, 0], angle_deg: 90}, velocity: [-3.6, 0, 0],
     angular_velocity: [0, 12.0, 0]}
joints:
  - {name: hinge, type: revolute, bodies: [ground, rod], point: [0, 0, 0], axis: [0, 1, 0]}
solver: {t_end: 2.0}
output: {xdmf: false}
""")
# theta about +y from hanging straight down; com at (l/2)(sin th, 0, -cos th)
sol = solve_ivp(lambda t, y: [y[1], -mr * g * lr / 2 / I_O * np.sin(y[0])], (0, 2), [0.0, w0],
                method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)
errs = []
for dt in (2e-3, 1e-3):
    _, _, _, out = run(p, "--dt", str(dt))
    r = load(out)
    th, thd = r["joints/coordinates"][:, 0, 0], r["joints/rates"][:, 0, 0]
    ref = sol.sol(r["time"])
    errs.append((np.max(np.abs(th - ref[0])), np.max(np.abs(thd - ref[1]))))
check(np.max(np.abs(th)) > 2 * np.pi, "the angle is continuous past +-pi (%.2f rad at the end)"
      % th[-1])
o = np.log2(errs[0][0] / errs[1][0])
check(errs[1][0] <= 5e-4 and errs[1][1] <= 1e-3 and 1.8 <= o <= 2.2,
      "revolute angle and rate against the pendulum ODE (%.1e, %.1e at dt = 1e-3; order %.2f)"
      % (errs[1][0], errs[1][1], o))

# top on a spherical joint
p = write_deck("top.yaml", """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: top, mass: 1.0, inertia: [0.05, 0.05, 0.08], position: [0.25, 0, 0.4330127018922193],
     orientation: {axis: [0, 1, 0], angle_deg: 30}, angular_velocity: [5.0, 0, 8.660254037844386]}
joints:
  - {name: tip, type: spherical, bodies: [ground, top], point: [0, 0, 0]}
loads:
  - {name: twist, type: torque, body: top, value: [0, 0, 0.2]}
solver: {t_end: 0.5}
output: {xdmf: false, every: 10}
""")
_, _, _, out = run(p)
r = load(out)
Rb = r["bodies/orientation"][:, 0]
rel = Rotation.from_matrix(Rb) * Rotation.from_matrix(Rb[0]).inv()
rv = rel.as_rotvec()
erv = np.max(np.abs(r["joints/coordinates"][:, 0] - rv))
ew = np.max(np.abs(r["joints/rates"][:, 0] - r["bodies/angular_velocity"][:, 0]))
check(erv <= 1e-12 and ew <= 1e-12, "spherical: the rotation vector relative to t = 0 (%.1e) and "
      "the angular velocity as rates (%.1e)" % (erv, ew))
ft = r["loads/force"][:, 0]
check(np.max(np.abs(ft - [0, 0, 0, 0, 0, 0.2])) <= 1e-12, "a world torque: /loads/force holds it")
# a crane: a trolley (M) on a rail with a rod (m, centre lc below the pivot, Ic about its
# centre) hanging from a revolute joint, released at 0.5 rad: the trolley's displacement and
# the rod's angle against the two-coordinate Lagrange equations, solved by scipy:
#   (M + m) x'' + m lc (th'' cos th - th'^2 sin th) = 0
#   (Ic + m lc^2) th'' + m lc x'' cos th + m g lc sin th = 0
M, mc, lc, Ic, th0 = 4.0, 1.0, 0.5, 1.0 / 12.0, 0.5
p = write_deck("crane.yaml", """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: trolley, mass: 4.0, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}
  - {name: rod, mass: 1.0, inertia: ["1 / 12", "1 / 12", 1.0e-4],
     position: ["0.5 * sin(0.5)", 0, "-0.5 * cos(0.5)"],
     orientation: {axis: [0, -1, 0], angle: 0.5}}
joints:
  - {name: rail, type: prismatic, bodies: [ground, trolley], point: [0, 0, 0], axis: [1, 0, 0]}
  - {name: pivot, type: revolute, bodies: [trolley, rod], point: [0, 0, 0], axis: [0, -1, 0]}
solver: {t_end: 2.0}
output: {xdmf: false, every: 10}
""")


def crane(t, y):
    x, th, xd, thd = y
    A = np.array([[M + mc, mc * lc * np.cos(th)], [mc * lc * np.cos(th), Ic + mc * lc ** 2]])
    b = np.array([mc * lc * thd ** 2 * np.sin(th), -mc * 9.81 * lc * np.sin(th)])
    xdd, thdd = np.linalg.solve(A, b)
    return [xd, thd, xdd, thdd]


ref = solve_ivp(crane, (0, 2), [0, th0, 0, 0], method="DOP853", rtol=1e-12, atol=1e-12,
                dense_output=True)
errs = []
for dt in (2e-3, 1e-3):
    _, _, _, out = run(p, "--dt", str(dt))
    r = load(out)
    jn = names(r, "joints/names")
    x = r["joints/coordinates"][:, jn.index("rail"), 0]
    th = th0 + r["joints/coordinates"][:, jn.index("pivot"), 0]
    y = ref.sol(r["time"])
    errs.append(max(np.max(np.abs(x - y[0])), np.max(np.abs(th - y[1]))))
o = np.log2(errs[0] / errs[1])
check(errs[1] <= 1e-4 and 1.8 <= o <= 2.2,
      "crane: trolley displacement and rod angle (/joints/coordinates) against the Lagrange "
      "equations (scipy): %.1e at dt = 1e-3, order %.2f" % (errs[1], o))
done()

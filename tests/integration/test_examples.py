"""The example decks, run as shipped, against closed forms and independent scipy solutions:
- damped_oscillator.yaml: x(t) of the damped oscillator, its period 2 pi / wd and decay
  e^(-s Td) per period, /energy/dissipated = E0 - E(t) of the closed form, the spring-damper
  force -(k (x - L) + c x');
- rotational_spring.yaml: the joint angle and rate of the damped torsional oscillator, its
  period, the spring's torque -(k (theta - rest) + d theta') in /loads/force at every record;
- joint_force.yaml: the displacement and rate of a cart under a table-profile joint force
  against the exact (piecewise cubic) integral of the table, the load's force, the rail's
  reaction m g and the work m v^2 / 2;
- planar_and_fixed.yaml: a puck with a welded sensor on a tilted plane: the centre of mass
  moves as one body of the combined mass under g sin(alpha), the spin about the normal is
  constant, the planar joint's coordinates follow the closed form, nothing leaves the plane,
  the sensor keeps its pose relative to the puck, the plane carries m g cos(alpha);
- expressions.yaml: the compound pendulum against scipy's solution of its ODE and its period
  against the elliptic-integral closed form, also with parameters changed by --set.
Each deck also runs at dt / 2 where the bound is a discretisation error, to show that the
error falls as dt^2 (so the agreement is the integrator's, not a loose tolerance's). Each
bound is a few times the error measured (stated beside it)."""
import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import ellipk

from common import check, deck, done, load, run

G = 9.81


def shipped(name, *args):
    """run decks/NAME as shipped (plus args); it must exit 0 with status completed"""
    rc, _, err, out = run(deck(name), *args, check=False)
    r = load(out) if rc == 0 else None
    status = r["attrs"]["status"] if r is not None else None
    if isinstance(status, bytes):
        status = status.decode()
    ok = rc == 0 and status == "completed"
    check(ok, "decks/%s%s runs: exit %d, status %r%s" % (name, "".join(" " + a for a in args), rc,
                                                       status, "" if ok else ": " + err.strip()))
    return r


def second_order(what, e1, e2, bound):
    """errors at dt and dt/2: below bound at dt, ratio about 4"""
    ratio = e1 / e2 if e2 > 0 else np.inf
    check(e1 <= bound and 3.0 <= ratio <= 5.0,
          "%s: error %.2e at dt (bound %.0e), %.2e at dt/2 (ratio %.2f, order 2)"
          % (what, e1, bound, e2, ratio))


def crossings(t, y, both=False):
    """times where y changes sign upwards (or either way), linearly interpolated"""
    i = np.nonzero(((y[:-1] < 0) & (y[1:] >= 0)) | (both & (y[:-1] > 0) & (y[1:] <= 0)))[0]
    return t[i] - y[i] * (t[i + 1] - t[i]) / (y[i + 1] - y[i])


def maxima(t, y):
    """local maxima (time, value) by a parabola through each sampled maximum and neighbours"""
    i = np.nonzero((y[1:-1] > y[:-2]) & (y[1:-1] >= y[2:]))[0] + 1
    h = t[1] - t[0]
    a, b, c = y[i - 1], y[i], y[i + 1]
    den = a - 2 * b + c
    dx = 0.5 * (a - c) / den
    return t[i] + dx * h, b - 0.25 * (a - c) * dx


def names(r, key):
    return [n.decode() if isinstance(n, bytes) else n for n in r[key]]


# ---- damped_oscillator.yaml: m x'' + c x' + k (x - L) = 0 along x, x(0) - L = x0, at rest
m, k, c, L, x0 = 0.5, 50.0, 0.5, 1.0, 0.1
w0 = np.sqrt(k / m)
s = c / (2 * m)
wd = np.sqrt(w0 ** 2 - s ** 2)


def oscillator(t):
    """x - L and x' of the closed form"""
    e = np.exp(-s * t)
    u = x0 * e * (np.cos(wd * t) + s / wd * np.sin(wd * t))
    ud = -x0 * e * (w0 ** 2 / wd) * np.sin(wd * t)
    return u, ud


r = shipped("damped_oscillator.yaml")
r2 = shipped("damped_oscillator.yaml", "--dt", "5e-4")
t = r["time"]
errs = []
for res in (r, r2):
    u, ud = oscillator(res["time"])
    errs.append(np.max(np.abs(res["bodies/position"][:, 0, 0] - L - u)) / x0)
# measured 6.1e-5 of x0 at dt = 1e-3
second_order("damped oscillator: x(t) - L = x0 e^(-st) (cos wd t + s/wd sin wd t)", errs[0],
             errs[1], 2e-4)
pos, vel = r["bodies/position"][:, 0], r["bodies/velocity"][:, 0]
check(np.max(np.abs(pos[:, 1:])) == 0 and np.max(np.abs(vel[:, 1:])) == 0,
      "damped oscillator: the mass stays on the x axis")
u, ud = oscillator(t)
ev = np.max(np.abs(vel[:, 0] - ud)) / (x0 * w0)
check(ev <= 2e-4, "damped oscillator: x' against the closed form (%.1e of x0 w0)" % ev)  # 6.1e-5
tc = crossings(t, pos[:, 0] - L)
Td = np.mean(np.diff(tc))
check(len(tc) >= 6 and abs(Td - 2 * np.pi / wd) <= 3e-5 * Td,
      "damped oscillator: period %.7f s from %d crossings, 2 pi / wd = %.7f s"
      % (Td, len(tc), 2 * np.pi / wd))  # measured 7e-6 relative, em's (w dt)^2 / 12
tm, ym = maxima(t, pos[:, 0] - L)
tm, ym = tm[1:], ym[1:]              # the first maximum is the start (t = 0)
ratio = np.exp(np.mean(np.diff(np.log(ym))))
check(len(ym) >= 5 and abs(ratio - np.exp(-s * 2 * np.pi / wd)) <= 1e-4,
      "damped oscillator: successive maxima shrink by %.6f, e^(-s Td) = %.6f"
      % (ratio, np.exp(-s * 2 * np.pi / wd)))  # measured 5e-6
E0 = 0.5 * k * x0 ** 2
D = r["energy/dissipated"]
D_cf = E0 - (0.5 * m * ud ** 2 + 0.5 * k * u ** 2)
ed = np.max(np.abs(D - D_cf)) / E0
check(ed <= 1e-4, "damped oscillator: /energy/dissipated = E0 - E(t) of the closed form (%.1e "
      "of E0; %.4f of E0 at t = %g)" % (ed, D[-1] / E0, t[-1]))  # measured 1.2e-5
bal = np.max(np.abs(D - (r["energy/total"][0] - r["energy/total"] + r["energy/external_work"])))
check(bal <= 1e-12 * E0, "damped oscillator: /energy/dissipated = E0 - E(t) + W (%.1e J)" % bal)
f = r["loads/force"][:, 0]
want = -(k * (pos[:, 0] - L) + c * vel[:, 0])
ef = max(np.max(np.abs(f[:, 0] - want)), np.max(np.abs(f[:, 1:])))
check(names(r, "loads/names") == ["spring"] and ef <= 1e-12,
      "damped oscillator: /loads/force = -(k (x - L) + c x') along x (%.1e N)" % ef)

# ---- rotational_spring.yaml: I theta'' + d theta' + k (theta - rest) = 0, theta(0) = 0
I, kr, dr, rest = 0.1, 2.5, 0.05, 0.5
W = np.sqrt(kr / I)
sr = dr / (2 * I)
Wd = np.sqrt(W ** 2 - sr ** 2)


def torsion(t):
    e = np.exp(-sr * t)
    th = rest * (1 - e * (np.cos(Wd * t) + sr / Wd * np.sin(Wd * t)))
    thd = rest * e * (W ** 2 / Wd) * np.sin(Wd * t)
    return th, thd


r = shipped("rotational_spring.yaml")
r2 = shipped("rotational_spring.yaml", "--dt", "5e-4")
errs = [np.max(np.abs(res["joints/coordinates"][:, 0, 0] - torsion(res["time"])[0])) / rest
        for res in (r, r2)]
# measured 1.6e-5 of the rest angle at dt = 1e-3
second_order("rotational spring: theta(t) against the closed form", errs[0], errs[1], 5e-5)
t = r["time"]
th, thd = r["joints/coordinates"][:, 0, 0], r["joints/rates"][:, 0, 0]
th_cf, thd_cf = torsion(t)
ev = np.max(np.abs(thd - thd_cf)) / (rest * W)
check(ev <= 5e-5, "rotational spring: theta' against the closed form (%.1e)" % ev)  # 1.6e-5
check(np.all(np.isnan(r["joints/coordinates"][:, 0, 1:])),
      "rotational spring: a revolute joint has one coordinate, the others NaN")
tc = crossings(t, th - rest)
T = np.mean(np.diff(tc))
check(len(tc) >= 3 and abs(T - 2 * np.pi / Wd) <= 1e-5 * T,
      "rotational spring: period %.7f s, 2 pi / Wd = %.7f s (2 pi sqrt(I/k) = %.7f s undamped)"
      % (T, 2 * np.pi / Wd, 2 * np.pi * np.sqrt(I / kr)))  # measured 1.0e-6 relative
f = r["loads/force"][:, 0]
want = -(kr * (th - rest) + dr * thd)
et = np.max(np.abs(f[:, 5] - want))
check(names(r, "loads/names") == ["torsion"] and et <= 1e-12,
      "rotational spring: torque on the disc = -(k (theta - rest) + d theta') about the axle at "
      "every record (%.1e N m)" % et)
check(np.max(np.abs(f[:, :5])) <= 1e-12,
      "rotational spring: no force, no torque across the axle (%.1e)" % np.max(np.abs(f[:, :5])))
E0 = 0.5 * kr * rest ** 2
D_cf = E0 - (0.5 * I * thd_cf ** 2 + 0.5 * kr * (th_cf - rest) ** 2)
ed = np.max(np.abs(r["energy/dissipated"] - D_cf)) / E0
check(ed <= 2e-5, "rotational spring: /energy/dissipated = E0 - E(t) of the closed form (%.1e "
      "of E0)" % ed)  # measured 3.1e-6

# ---- joint_force.yaml: m x'' = F0 f(t), f piecewise linear through the table
mc, F0 = 4.0, 10.0
table = np.array([[0, 0], [1, 1], [2, 1], [3, -1], [4, 0]], dtype=float)


def cart(t):
    """exact x, x' of m x'' = F0 f(t) from rest: integrate each linear piece of the table"""
    x = np.zeros_like(t)
    v = np.zeros_like(t)
    ts, fs = list(table[:, 0]) + [np.inf], list(table[:, 1]) + [table[-1, 1]]
    xi = vi = 0.0
    for i in range(len(ts) - 1):
        a0 = F0 / mc * fs[i]
        a1 = F0 / mc * (fs[i + 1] - fs[i]) / (ts[i + 1] - ts[i]) if np.isfinite(ts[i + 1]) else 0
        sel = (t >= ts[i]) & (t <= ts[i + 1])
        tau = t[sel] - ts[i]
        v[sel] = vi + a0 * tau + a1 * tau ** 2 / 2
        x[sel] = xi + vi * tau + a0 * tau ** 2 / 2 + a1 * tau ** 3 / 6
        if np.isfinite(ts[i + 1]):
            h = ts[i + 1] - ts[i]
            xi, vi = xi + vi * h + a0 * h ** 2 / 2 + a1 * h ** 3 / 6, vi + a0 * h + a1 * h ** 2 / 2
    return x, v


r = shipped("joint_force.yaml")
r2 = shipped("joint_force.yaml", "--dt", "5e-4")
errs = [np.max(np.abs(res["joints/coordinates"][:, 0, 0] - cart(res["time"])[0]))
        for res in (r, r2)]
# measured 2.1e-7 m at dt = 1e-3 (of 12.5 m)
second_order("joint force: x(t) against the exact integral of the table profile", errs[0],
             errs[1], 1e-6)
t = r["time"]
x_cf, v_cf = cart(t)
check(abs(x_cf[-1] - 12.5) < 1e-12 and abs(v_cf[-1] - 2.5) < 1e-12,
      "joint force: the closed form gives x(5) = 12.5 m, x'(5) = 2.5 m/s (as the deck says)")
ev = np.max(np.abs(r["joints/rates"][:, 0, 0] - v_cf))
# the midpoint rule integrates a force linear over each step exactly: measured 4.4e-14
check(ev <= 1e-11, "joint force: /joints/rates = x' of the closed form (%.1e m/s)" % ev)
ep = np.max(np.abs(r["bodies/position"][:, 0, 0] - r["joints/coordinates"][:, 0, 0]))
check(ep <= 1e-12, "joint force: /joints/coordinates = the cart's x (%.1e m)" % ep)
f_cf = F0 * np.interp(t, table[:, 0], table[:, 1])
f = r["loads/force"][:, 0]
ef = max(np.max(np.abs(f[:, 0] - f_cf)), np.max(np.abs(f[:, 1:])))
check(ef <= 1e-12, "joint force: /loads/force = F0 f(t) along the rail (%.1e N)" % ef)
reac = r["joints/reaction"][:, 0]
er = np.max(np.abs(reac - [0, 0, mc * G, 0, 0, 0]))
check(er <= 1e-9, "joint force: the rail carries the weight m g = %.2f N (%.1e N)" % (mc * G, er))
ew = np.max(np.abs(r["energy/external_work"] - 0.5 * mc * v_cf ** 2))
check(ew <= 1e-10, "joint force: /energy/external_work = m x'^2 / 2 of the closed form (%.1e J)"
      % ew)  # measured 2.2e-13

# ---- planar_and_fixed.yaml: puck + welded sensor on a plane of normal n, tilted by alpha
alpha = np.radians(20.0)
m1, m2, a, h, v0, om = 1.0, 0.5, 0.08, 0.03, 0.5, 2.0
n = np.array([0, np.sin(alpha), np.cos(alpha)])
downhill = np.array([0, np.cos(alpha), -np.sin(alpha)])
Rx = np.array([[1, 0, 0], [0, np.cos(alpha), np.sin(alpha)], [0, -np.sin(alpha), np.cos(alpha)]])
p1_0 = np.zeros(3)
p2_0 = Rx @ np.array([a, 0, h])
mt = m1 + m2
c0 = (m1 * p1_0 + m2 * p2_0) / mt


def rot(axis, ang):
    """rotation matrices about a unit axis by the angles ang (Rodrigues)"""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    ang = np.asarray(ang)[:, None, None]
    return np.eye(3) + np.sin(ang) * K + (1 - np.cos(ang)) * (K @ K)


def pair(t):
    """closed form: centre of mass c(t), rotation Rot(n, omega t), puck and sensor centres"""
    cc = c0 + np.outer(t, [v0, 0, 0]) + np.outer(G * np.sin(alpha) * t ** 2 / 2, downhill)
    R = rot(n, om * t)
    return cc, R, cc + R @ (p1_0 - c0), cc + R @ (p2_0 - c0)


def pair_error(res):
    cc, _, p1, p2 = pair(res["time"])
    return max(np.max(np.abs(res["bodies/position"][:, 0] - p1)),
               np.max(np.abs(res["bodies/position"][:, 1] - p2)))


r = shipped("planar_and_fixed.yaml")
r2 = shipped("planar_and_fixed.yaml", "--dt", "5e-4")
# measured 5.5e-8 m at dt = 1e-3 (the centres travel 6.8 m)
second_order("planar + fixed: puck and sensor centres against the rigid motion of the pair",
             pair_error(r), pair_error(r2), 2e-7)
t = r["time"]
bn = names(r, "bodies/names")
P = r["bodies/position"]
cc_cf, R_cf, p1_cf, p2_cf = pair(t)
com = (m1 * P[:, bn.index("puck")] + m2 * P[:, bn.index("sensor")]) / mt
ec = np.max(np.abs(com - cc_cf))
check(ec <= 1e-10, "planar + fixed: the centre of mass moves as one body of mass m1 + m2 under "
      "g sin(alpha) down the slope (%.1e m)" % ec)  # measured 8.9e-15
out_of_plane = np.max(np.abs((P - P[0]) @ n))
O = r["bodies/orientation"]                   # columns: the directors d1, d2, d3
tilt = np.max(np.abs(O[:, :, :, 2] @ n - 1))
check(out_of_plane <= 1e-12 and tilt <= 1e-12,
      "planar + fixed: no motion out of the plane (%.1e m), body axes 3 stay along n (%.1e)"
      % (out_of_plane, tilt))
# relative pose of the sensor in the puck's frame
i1, i2 = bn.index("puck"), bn.index("sensor")
rel_p = np.einsum("nji,nj->ni", O[:, i1], P[:, i2] - P[:, i1])
rel_R = np.einsum("nji,njk->nik", O[:, i1], O[:, i2])
e_rel = max(np.max(np.abs(rel_p - rel_p[0])), np.max(np.abs(rel_R - rel_R[0])))
check(np.max(np.abs(rel_p[0] - [a, 0, h])) <= 1e-14 and e_rel <= 1e-10,
      "planar + fixed: the sensor keeps its pose relative to the puck (%.1e)" % e_rel)
# the planar joint's coordinates: the puck centre's displacement in the plane, in a
# right-handed in-plane frame (e2, e3 = n x e2) of the joint, and the angle about n; the
# frame's direction in the plane is a convention, so it is fitted (one angle for all records)
# and the shape of the path is what is checked
jn = names(r, "joints/names")
jc, jr = r["joints/coordinates"][:, jn.index("plane")], r["joints/rates"][:, jn.index("plane")]
e2 = downhill
e3 = np.cross(n, e2)
d_cf = p1_cf - p1_0
z_cf = d_cf @ e2 + 1j * (d_cf @ e3)
z = jc[:, 0] + 1j * jc[:, 1]
ph = np.sum(z * np.conj(z_cf))
ph /= abs(ph)
ez = np.max(np.abs(z - ph * z_cf))
# the rates: the derivative of the closed form (the puck centre's velocity)
vel1_cf = np.array([v0, 0, 0]) + np.outer(G * np.sin(alpha) * t, downhill) \
    + np.cross(om * n, p1_cf - cc_cf)
zd = jr[:, 0] + 1j * jr[:, 1]
ezd = np.max(np.abs(zd - ph * (vel1_cf @ e2 + 1j * (vel1_cf @ e3))))
check(ez <= 1e-7 and ezd <= 2e-7,
      "planar + fixed: the planar joint's displacements follow the closed form (%.1e m, rates "
      "%.1e m/s; in-plane frame at %.1f deg from the downhill direction)"
      % (ez, ezd, np.degrees(np.angle(ph))))  # measured 2.8e-8, 6.5e-8
ea = np.max(np.abs(jc[:, 2] - om * t))
ear = np.max(np.abs(jr[:, 2] - om))
check(ea <= 5e-6 and ear <= 1e-12,
      "planar + fixed: the joint angle is omega t (%.1e rad at t = %g s), its rate omega (%.1e)"
      % (ea, t[-1], ear))  # measured 1.3e-6 (the midpoint rule's 2 atan(omega dt / 2) per step)
check(np.all(np.isnan(r["joints/coordinates"][:, jn.index("weld")])),
      "planar + fixed: a fixed joint has no coordinates (NaN)")
reac = r["joints/reaction"][:, jn.index("plane"), :3]
want = mt * G * np.cos(alpha) * n
er = np.max(np.abs(reac - want))
check(er <= 1e-9, "planar + fixed: the plane carries m g cos(alpha) = %.4f N along n (%.1e N)"
      % (mt * G * np.cos(alpha), er))
# the weld holds the sensor on its circle about the centre of mass: m2 (a2 - g), a2 = the
# centre's acceleration plus the centripetal omega^2 (c - p2) across n
arm = cc_cf - p2_cf
acc2 = G * np.sin(alpha) * downhill + om ** 2 * (arm - np.outer(arm @ n, n))
want = m2 * (acc2 - [0, 0, -G])
er = np.max(np.abs(r["joints/reaction"][:, jn.index("weld"), :3] - want))
# measured 1.1e-7 (the state's second-order error)
check(er <= 5e-7, "planar + fixed: the weld's force on the sensor is m2 (a2 - g) (%.1e N)" % er)

# ---- expressions.yaml: I_O theta'' = -m g (L/2) sin(theta), from rest at theta0


def pendulum(mb, Lb, wb, th0_deg, t_end):
    IO = mb * (Lb ** 2 / 3 + wb ** 2 / 12)
    w2 = mb * G * Lb / 2 / IO
    th0 = np.radians(th0_deg)
    sol = solve_ivp(lambda _, y: [y[1], -w2 * np.sin(y[0])], (0, t_end), [th0, 0.0],
                    method="DOP853", rtol=1e-12, atol=1e-14, dense_output=True)
    period = 4 / np.sqrt(w2) * ellipk(np.sin(th0 / 2) ** 2)
    return sol, period, th0


def pendulum_checks(res, mb, Lb, wb, th0_deg, what):
    t = res["time"]
    sol, period, th0 = pendulum(mb, Lb, wb, th0_deg, t[-1])
    th = th0 + res["joints/coordinates"][:, 0, 0]
    pos0 = res["bodies/position"][0, 0]
    want0 = [Lb / 2 * np.sin(th0), -Lb / 2 * np.cos(th0), 0]
    check(np.max(np.abs(pos0 - want0)) <= 1e-15,
          "expressions%s: the bar's centre starts at (L/2 sin theta0, -L/2 cos theta0, 0)"
          % what)
    eth = np.max(np.abs(th - sol.sol(t)[0])) / th0
    tc = crossings(t, th, both=True)          # every half period
    T = 2 * np.mean(np.diff(tc)) if len(tc) >= 2 else np.nan
    return eth, T, period, np.abs(T - period) / period


r = shipped("expressions.yaml")
r2 = shipped("expressions.yaml", "--dt", "5e-4")
e1, T, period, eT = pendulum_checks(r, 2.0, 1.0, 0.04, 60.0, "")
e2, _, _, _ = pendulum_checks(r2, 2.0, 1.0, 0.04, 60.0, " (dt/2)")
# measured 2.2e-5 of theta0 at dt = 1e-3
second_order("expressions: theta(t) against scipy's solution of I_O theta'' = -m g L/2 sin "
             "theta", e1, e2, 1e-4)
check(eT <= 1e-5, "expressions: period %.6f s, 4 sqrt(I_O / (m g L/2)) K(sin^2(theta0/2)) = "
      "%.6f s (%.1e)" % (T, period, eT))  # measured 1.5e-6
# the same deck with other parameters: every expression written with them follows
r = shipped("expressions.yaml", "--set", "parameters.theta0_deg=5", "--set", "parameters.L=2",
            "--set", "parameters.m=3")
e, T, period, eT = pendulum_checks(r, 3.0, 2.0, 0.04, 5.0, " with L = 2, m = 3, theta0 = 5 deg")
IO = 3.0 * (4.0 / 3 + 0.04 ** 2 / 12)
T0 = 2 * np.pi * np.sqrt(IO / (3.0 * G * 1.0))
# measured 6.6e-6 and 6.0e-7; the 5 deg swing is 4.8e-4 slower than the small-angle limit
check(e <= 3e-5 and eT <= 5e-6 and abs(period / T0 - 1) < 1e-3,
      "expressions with L = 2, m = 3, theta0 = 5 deg: theta(t) against scipy (%.1e), period "
      "%.6f s against the closed form %.6f s (%.1e), 2 pi sqrt(I_O / (m g L/2)) = %.6f s"
      % (e, T, period, eT, T0))

done()

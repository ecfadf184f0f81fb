"""slider_crank.yaml and cardan_shaft.yaml: closed loops with the new joints, driven by a
`motion`. The slider follows the slider-crank formula and the Cardan shaft's output the
universal-joint formula; both are kinematically driven, so positions are exact at every step.
The drive is the only joint that does work: with the crank (input shaft) turning by
dtheta = omega dt about its fixed bearing per step, the em energy balance is
T_{n+1} - T_n = 2 tan(dtheta/2) M_n, M_n the reaction torque of the driven joint about its
axis from /joints/reaction; this checks the reactions of the new joints and the energy."""
import numpy as np

from common import check, deck, done, load, run

OMEGA = 2 * np.pi


def drive_work_check(r, joint, axis, what):
    names = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
    j = names.index(joint)
    M = r["joints/reaction"][1:, j, 3:] @ np.array(axis, float)
    dt = np.diff(r["time"])
    work = 2 * np.tan(OMEGA * dt / 2) * M
    T = r["energy/kinetic"]
    err = np.max(np.abs((T[1:] - T[0]) - np.cumsum(work))) / np.max(T)
    print("%s: T(0) = %.6f, T(end) = %.6f, work of the drive from the reactions %.6f"
          % (what, T[0], T[-1], np.sum(work)))
    check(err <= 1e-9, "%s: T_n - T_0 = work of the drive (reaction torque of '%s') to 1e-9 "
          "relative (%.1e)" % (what, joint, err))


# --- slider-crank --------------------------------------------------------------------------
_, _, _, out = run(deck("slider_crank.yaml"))
r = load(out)
t = r["time"]
names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
x = r["bodies/position"][:, names.index("slider"), 0]
rr, ll = 0.5, 1.5
th = OMEGA * t
x_exact = rr * np.cos(th) + np.sqrt(ll ** 2 - (rr * np.sin(th)) ** 2)
err = np.max(np.abs(x - x_exact))
print("slider-crank: %d steps, max |x - x_exact| = %.2e, x(1.25 s) = %.6f" %
      (len(t) - 1, err, x[np.argmin(np.abs(t - 1.25))]))
# measured: position 4.4e-16, velocity 4.7e-4, violation 4.4e-16, crank angle 8.9e-16
check(err <= 1e-14, "slider position follows r cos(theta) + sqrt(l^2 - r^2 sin^2(theta)) to "
      "1e-14 (%.1e)" % err)
v = r["bodies/velocity"][:, names.index("slider"), 0]
v_exact = -rr * OMEGA * np.sin(th) * (1 + rr * np.cos(th) / np.sqrt(ll ** 2 - (rr * np.sin(th)) ** 2))
ev = np.max(np.abs(v - v_exact)) / np.max(np.abs(v_exact))
check(ev <= 1.5e-3, "slider velocity follows the derivative to O(dt^2) (%.1e)" % ev)
check(np.max(r["constraints/violation"]) <= 5e-15, "constraints hold (%.1e)"
      % np.max(r["constraints/violation"]))
crank = r["bodies/orientation"][:, names.index("crank")]
ang = np.unwrap(np.arctan2(crank[:, 1, 0], crank[:, 0, 0]))
check(np.max(np.abs(ang - th)) <= 5e-15, "the crank angle is omega t at every step (%.1e)"
      % np.max(np.abs(ang - th)))
drive_work_check(r, "crank_bearing", [0, 0, 1], "slider-crank")
# the rail takes no force along its axis: its reaction is perpendicular to x
jn = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
Fr = r["joints/reaction"][1:, jn.index("rail"), :3]
check(np.max(np.abs(Fr[:, 0])) <= 1e-9 * np.max(np.abs(Fr)) + 1e-12,
      "the prismatic rail's reaction has no component along its axis")

# reactions of the new joints: each is the force on the joint's second body, evaluated where the
# step evaluates constraint forces, so the discrete momentum balance of a body reads
# m (v_{n+1} - v_n) / dt = sum of the reactions on it (+ minus those where it is the first body)
vel = r["bodies/velocity"]
dt = np.diff(r["time"])[:, None]
React = {n: r["joints/reaction"][1:, jn.index(n), :3] for n in jn}
acc = lambda b: np.diff(vel[:, names.index(b)], axis=0) / dt
e_s = np.max(np.abs(2.0 * acc("slider") - React["rail"] - React["slider_pin"]))
e_c = np.max(np.abs(3.75 * acc("coupler") - React["crank_pin"] + React["slider_pin"]))
scale = np.max(np.abs(React["crank_pin"]))
check(e_s <= 1e-8 * scale, "slider: m dv/dt = reaction of 'rail' (prismatic) + 'slider_pin' "
      "(spherical) (%.1e)" % (e_s / scale))
check(e_c <= 1e-8 * scale, "coupler: m dv/dt = reaction of 'crank_pin' (cylindrical) - "
      "'slider_pin' (%.1e)" % (e_c / scale))

# --- Cardan shaft --------------------------------------------------------------------------
_, _, _, out = run(deck("cardan_shaft.yaml"))
r = load(out)
t = r["time"]
names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
cb, sb = 0.8, 0.6
s2 = np.array([cb, sb, 0.0])
R1 = r["bodies/orientation"][:, names.index("input")]
R2 = r["bodies/orientation"][:, names.index("output")]
phi1 = np.unwrap(np.arctan2(R1[:, 2, 1], R1[:, 1, 1]))        # input d2 from y towards z
phi2 = np.unwrap(np.arctan2(R2[:, 2, 1], R2[:, :, 1] @ np.array([-sb, cb, 0.0])))
# measured: input angle 8.9e-16, output angle 1.8e-15, side rotation 2.3e-12, violation
# 2.2e-16, speed ratio 8.8e-5 (at dt = 2e-3)
check(np.max(np.abs(phi1 - OMEGA * t)) <= 5e-15, "the input shaft turns at omega1 (%.1e)"
      % np.max(np.abs(phi1 - OMEGA * t)))
phi2_exact = np.unwrap(np.arctan2(np.sin(phi1) / cb, np.cos(phi1)))
e = np.max(np.abs(phi2 - phi2_exact))
check(e <= 1e-14, "output angle: tan(phi2) = tan(phi1)/cos(b) to 1e-14 (%.1e)" % e)
w2 = r["bodies/angular_velocity"][:, names.index("output")] @ s2
ratio = cb / (1 - sb ** 2 * np.cos(phi1) ** 2)
e = np.max(np.abs(w2 / OMEGA - ratio))
print("Cardan shaft: omega2/omega1 in [%.4f, %.4f] (formula [%.4f, %.4f]), max error %.2e"
      % (np.min(w2) / OMEGA, np.max(w2) / OMEGA, cb, 1 / cb, e))
check(e <= 1e-4, "output speed ratio omega2/omega1 = cos(b)/(1 - sin(b)^2 cos(phi1)^2) to "
      "1e-4 (dt = 2e-3) (%.1e)" % e)
w2_side = r["bodies/angular_velocity"][:, names.index("output")] - np.outer(w2, s2)
check(np.max(np.abs(w2_side)) <= 1e-11, "the output shaft turns about its own axis only (%.1e)"
      % np.max(np.abs(w2_side)))
check(np.max(r["constraints/violation"]) <= 5e-15, "constraints hold (%.1e)"
      % np.max(r["constraints/violation"]))
drive_work_check(r, "input_bearing", [1, 0, 0], "Cardan shaft")
jn = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
F = lambda n: r["joints/reaction"][1:, jn.index(n), :3]
acc = np.diff(r["bodies/velocity"][:, names.index("output")], axis=0) / np.diff(t)[:, None]
e = np.max(np.abs(10.0 * acc - F("cross") - F("output_link_z") - F("output_link_xy")))
scale = np.max(np.abs(F("cross")))
check(e <= 1e-8 * scale, "output shaft: m dv/dt = reactions of 'cross' (universal) and the two "
      "links (%.1e)" % (e / scale))
done()

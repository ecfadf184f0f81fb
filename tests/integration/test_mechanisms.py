"""slider_crank.yaml and cardan_shaft.yaml: closed loops with the new joints, driven by a
`motion`. The slider follows the slider-crank formula and the Cardan shaft's output the
universal-joint formula; both are kinematically driven, so positions are exact at every step.
The drive is the only joint that does work: dT/dt = M omega with M the reaction torque of the
driven joint about its axis (/joints/reaction, the reaction at the recorded time), so
T_n - T_0 equals the trapezoidal integral of M omega to O(dt^2); and each body's momentum
balance m a = sum of reactions holds with a from central differences of the recorded
velocities, to O(dt^2). This checks the reactions of the new joints and the energy."""
import numpy as np

from common import check, deck, done, load, run

OMEGA = 2 * np.pi
# measured: drive work 2.2e-3 (slider-crank, dt = 1e-2), 1.1e-4 (Cardan, dt = 2e-3); momentum
# balance 4.2e-4, 5.6e-4 (slider-crank), 5.3e-12 (the Cardan output shaft turns steadily)
TOL_W, TOL_S, TOL_C = 5e-3, 2e-3, 1e-10


def drive_work_check(r, joint, axis, what, tol):
    names = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
    j = names.index(joint)
    # the last record is the end of the drive's ramp: the motion stops there, an impulse
    # that the trapezoidal rule does not see (its work is in /energy/external_work)
    M = r["joints/reaction"][:-1, j, 3:] @ np.array(axis, float)
    dt = np.diff(r["time"][:-1])
    work = 0.5 * (M[1:] + M[:-1]) * OMEGA * dt
    T = r["energy/kinetic"][:-1]
    err = np.max(np.abs((T[1:] - T[0]) - np.cumsum(work))) / np.max(T)
    print("%s: T(0) = %.6f, T(end) = %.6f, work of the drive from the reactions %.6f"
          % (what, T[0], T[-1], np.sum(work)))
    check(err <= tol, "%s: T_n - T_0 = work of the drive (reaction torque of '%s') to %.0e "
          "relative, O(dt^2) (%.1e)" % (what, joint, tol, err))


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
check(ev <= 1e-12, "slider velocity follows the derivative exactly: the recorded velocities "
      "satisfy the velocity constraints (%.1e)" % ev)
check(np.max(r["constraints/violation"]) <= 5e-15, "constraints hold (%.1e)"
      % np.max(r["constraints/violation"]))
crank = r["bodies/orientation"][:, names.index("crank")]
ang = np.unwrap(np.arctan2(crank[:, 1, 0], crank[:, 0, 0]))
check(np.max(np.abs(ang - th)) <= 5e-15, "the crank angle is omega t at every step (%.1e)"
      % np.max(np.abs(ang - th)))
drive_work_check(r, "crank_bearing", [0, 0, 1], "slider-crank", TOL_W)
# the rail takes no force along its axis: its reaction is perpendicular to x
jn = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
Fr = r["joints/reaction"][1:, jn.index("rail"), :3]
check(np.max(np.abs(Fr[:, 0])) <= 1e-9 * np.max(np.abs(Fr)) + 1e-12,
      "the prismatic rail's reaction has no component along its axis")

# reactions of the new joints: each is the force on the joint's second body, evaluated where the
# step evaluates constraint forces, so the discrete momentum balance of a body reads
# m (v_{n+1} - v_n) / dt = sum of the reactions on it (+ minus those where it is the first body)
vel = r["bodies/velocity"]
# (central differences at the interior records before the ramp's end, the last record)
dt = (r["time"][2:-1] - r["time"][:-3])[:, None]
React = {n: r["joints/reaction"][1:-2, jn.index(n), :3] for n in jn}
acc = lambda b: (vel[2:-1, names.index(b)] - vel[:-3, names.index(b)]) / dt
e_s = np.max(np.abs(2.0 * acc("slider") - React["rail"] - React["slider_pin"]))
e_c = np.max(np.abs(3.75 * acc("coupler") - React["crank_pin"] + React["slider_pin"]))
scale = np.max(np.abs(React["crank_pin"]))
check(e_s <= TOL_S * scale, "slider: m dv/dt = reaction of 'rail' (prismatic) + 'slider_pin' "
      "(spherical) (%.1e)" % (e_s / scale))
check(e_c <= TOL_S * scale, "coupler: m dv/dt = reaction of 'crank_pin' (cylindrical) - "
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
# (the drive stops at t = 2, the last record: omega1 = 0 there)
e = np.max(np.abs(w2 / OMEGA - ratio)[:-1])
check(np.max(np.abs(w2[-1])) <= 1e-9, "the output shaft stops with the input at the ramp's end")
print("Cardan shaft: omega2/omega1 in [%.4f, %.4f] (formula [%.4f, %.4f]), max error %.2e"
      % (np.min(w2) / OMEGA, np.max(w2) / OMEGA, cb, 1 / cb, e))
# the recorded velocities satisfy the velocity constraints, and a kinematically driven
# mechanism's velocities are fixed by them: the ratio is exact, not O(dt^2)
check(e <= 1e-12, "output speed ratio omega2/omega1 = cos(b)/(1 - sin(b)^2 cos(phi1)^2) to "
      "1e-12 (%.1e)" % e)
w2_side = r["bodies/angular_velocity"][:, names.index("output")] - np.outer(w2, s2)
check(np.max(np.abs(w2_side)) <= 1e-11, "the output shaft turns about its own axis only (%.1e)"
      % np.max(np.abs(w2_side)))
check(np.max(r["constraints/violation"]) <= 5e-15, "constraints hold (%.1e)"
      % np.max(r["constraints/violation"]))
drive_work_check(r, "input_bearing", [1, 0, 0], "Cardan shaft", TOL_W)
jn = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
F = lambda n: r["joints/reaction"][1:-2, jn.index(n), :3]
vo = r["bodies/velocity"][:, names.index("output")]
acc = (vo[2:-1] - vo[:-3]) / (t[2:-1] - t[:-3])[:, None]
e = np.max(np.abs(10.0 * acc - F("cross") - F("output_link_z") - F("output_link_xy")))
scale = np.max(np.abs(F("cross")))
check(e <= TOL_C * scale, "output shaft: m dv/dt = reactions of 'cross' (universal) and the two "
      "links (%.1e)" % (e / scale))
done()

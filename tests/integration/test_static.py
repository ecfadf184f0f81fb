"""integrator: static (equilibria at each time of the grid, no inertia), against closed forms
and scipy's roots:
- static_spring.yaml: a mass hanging on a spring under gravity and a ramped force: the
  spring's length L + (m g + F t)/k at every record (t is the load factor), its force, zero
  velocities and kinetic energy, the external work against the trapezoidal rule along the
  recorded path, V - W constant along the path of equilibria;
- static_pendulum.yaml: an inverted pendulum on a rotational spring: k theta = m g l sin theta
  (scipy brentq), the hinge's reaction m g, the spring's torque -k theta; em restarted
  from it stays at rest (a pre-stressed start);
- a hanging pendulum pushed sideways by a ramp: tan(angle) = F t / (m g), tension
  sqrt((m g)^2 + (F t)^2) (the geometric stiffness from the start's multipliers);
- static_truss.yaml: a snap-through of a two-bar truss of springs: every record on the branch
  of P t = 2 k (l0 - l)(h - w)/l it belongs to; a large increment that Newton cannot take
  within its iteration limit is halved, and the result is the same root; with too few
  iterations to leave the limit point the run stops there, its records kept;
- slider_crank.yaml under static: the slider follows the kinematics of the crank angle;
- a mechanism with a free degree of freedom under load (a cart on a rail pushed by a
  joint_force; a spring that reaches its rest length): a clean failure that names the free
  coordinate, exit status 2, the records before the failure kept;
- contacts are refused (exit 1), auto never picks static, a restart repeats the run bit for
  bit, and the constraint violation is at most 1e-10 at every record."""
import subprocess

import h5py
import numpy as np
from scipy.optimize import brentq

from common import MBSIM, check, deck, done, load, run, write_deck

G = 9.81


def status(r):
    s = r["attrs"]["status"]
    return s.decode() if isinstance(s, bytes) else s


def at_rest(r, what):
    check(np.all(r["state/v"] == 0.0) and np.all(r["energy/kinetic"] == 0.0)
          and np.all(r["bodies/velocity"] == 0.0)
          and np.all(r["bodies/angular_velocity"] == 0.0),
          "%s: velocities and kinetic energy are zero at every record" % what)


def violation(r, what):
    v = np.max(r["constraints/violation"])
    check(v <= 1e-10, "%s: constraint violation %.1e <= 1e-10 at every record" % (what, v))


# ---- static_spring.yaml: k (l - L) = (m g + F) t (gravity ramped), m g + F t (full) ----
m, k, L, F = 2.0, 100.0, 0.5, 50.0
for dt, gmode in (("0.1", "ramp"), ("0.25", "ramp"), ("0.1", "full")):
    _, _, _, out = run(deck("static_spring.yaml"), "--dt", dt,
                       "--set", "solver.static.gravity=%s" % gmode)
    dt = "%s, gravity %s" % (dt, gmode)
    r = load(out)
    t, z = r["time"], r["state/q"][:, 2]
    lam = np.clip(t, 0.0, 1.0) if gmode == "ramp" else np.ones_like(t)
    l_ref = L + (m * G * lam[1:] + F * t[1:]) / k
    err = np.max(np.abs(-z[1:] - l_ref))
    check(status(r) == "completed" and r["attrs"]["integrator"] in ("static", b"static"),
          "static_spring (dt %s): runs with integrator static" % dt)
    check(err <= 1e-12, "static_spring (dt %s): spring length L + (m g lambda + F t)/k at every "
          "record, error %.1e m (<= 1e-12)" % (dt, err))
    check(np.all(r["state/q"][:, :2] == 0.0), "static_spring (dt %s): no sideways motion" % dt)
    # the force the spring exerts on the mass: k (l - L) up
    fs = r["loads/force"][1:, 0, 2]
    check(np.max(np.abs(fs - k * (l_ref - L))) <= 1e-9,
          "static_spring (dt %s): the spring's force k (l - L) = m g lambda + F t" % dt)
    at_rest(r, "static_spring (dt %s)" % dt)
    # external work: the ramped force -F t e_z along the recorded path, trapezoidal rule,
    # and the rise of the ramped gravity's potential lambda V_g (V_g = m g z): V_g d(lambda)
    f = -F * np.clip(t, 0.0, 1.0)
    W = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(z))])
    Vg = m * G * z
    W += np.concatenate([[0.0], np.cumsum(0.5 * (Vg[1:] + Vg[:-1]) * np.diff(lam))])
    # the potential holds lambda V_g and the spring's energy
    Vref = lam * Vg + 0.5 * k * (-z - L) ** 2
    check(np.max(np.abs(r["energy/potential"] - Vref)) <= 1e-12 * np.max(np.abs(Vref)),
          "static_spring (dt %s): /energy/potential is lambda m g z + k (l - L)^2 / 2 (%.1e J)"
          % (dt, np.max(np.abs(r["energy/potential"] - Vref))))
    werr = np.max(np.abs(r["energy/external_work"] - W))
    check(werr <= 1e-12 * F, "static_spring (dt %s): /energy/external_work is the trapezoidal "
          "work of the load and of the gravity's rise along the equilibria (error %.1e J)"
          % (dt, werr))
    # along a path of equilibria (from t = dt on) V - W is constant (here exactly: linear)
    B = r["energy/potential"] - r["energy/external_work"]
    check(np.max(np.abs(B[1:] - B[1])) <= 1e-12 * np.max(np.abs(r["energy/potential"])),
          "static_spring (dt %s): V - W constant along the equilibria (%.1e J)"
          % (dt, np.max(np.abs(B[1:] - B[1]))))
    check(np.all(r["energy/dissipated"] == 0.0), "static_spring (dt %s): nothing dissipated" % dt)

# the summary says the energy balance is not checked, and says what it is
p = subprocess.run([MBSIM, deck("static_spring.yaml"), "-o", out, "--overwrite"],
                   capture_output=True, text=True)
line = [ln for ln in p.stdout.splitlines() if ln.startswith("energy:")]
check(p.returncode == 0 and line and "not checked" in line[0] and "relative error" not in line[0],
      "static_spring: the summary reports the energy balance as not checked: %r" % line)

# auto never picks static
_, _, _, out = run(deck("static_spring.yaml"), "--integrator", "auto", "--t-end", "0.01",
                   "--dt", "0.001")
r = load(out)
ig = r["attrs"]["integrator"]
check((ig.decode() if isinstance(ig, bytes) else ig) == "em",
      "auto picks em, not static, for static_spring.yaml (%r)" % ig)

# ---- static_pendulum.yaml: k theta = m g l sin(theta) ----
for kk, th0 in ((8.0, 0.9), (6.0, 1.5), (9.0, 0.6)):
    _, _, _, out = run(deck("static_pendulum.yaml"), "--set", "parameters.k=%g" % kk,
                       "--set", "parameters.th0=%g" % th0)
    r = load(out)
    p = r["bodies/position"][:, 0, :]
    th = np.arctan2(p[:, 0], p[:, 2])
    ref = brentq(lambda x: kk * x - G * np.sin(x), 1e-3, np.pi)
    err = np.max(np.abs(th[1:] - ref))
    check(err <= 1e-10, "static_pendulum k = %g: tilt %.12f rad, brentq root of k theta = m g "
          "l sin theta %.12f (error %.1e)" % (kk, th[-1], ref, err))
    tq = r["loads/force"][1:, 0, 4]
    check(np.max(np.abs(tq + kk * ref)) <= 1e-8,
          "static_pendulum k = %g: the spring's torque -k theta about the hinge" % kk)
    R = r["joints/reaction"][1:, 0, :3]
    check(np.max(np.abs(R - [0.0, 0.0, G])) <= 1e-9,
          "static_pendulum k = %g: the hinge carries m g" % kk)
    violation(r, "static_pendulum k = %g" % kk)
    at_rest(r, "static_pendulum k = %g" % kk)
# a pre-stressed start: em restarted from the static result stays at rest in it
_, _, _, sp = run(deck("static_pendulum.yaml"))
_, _, _, spe = run(deck("static_pendulum.yaml"), "--restart", sp, "--integrator", "em",
                   "--t-end", "3")
re_ = load(spe)
drift = np.max(np.abs(re_["bodies/position"] - load(sp)["bodies/position"][-1]))
check(np.max(np.abs(re_["state/v"])) <= 1e-12 and drift <= 1e-12 and len(re_["time"]) == 5,
      "static_pendulum: em restarted from the static equilibrium stays there to t = 3 "
      "(|v| <= %.1e, drift %.1e m)" % (np.max(np.abs(re_["state/v"])), drift))
# Newton finds the equilibrium nearest its start: from 0.2 rad the (unstable) upright one
_, _, _, out = run(deck("static_pendulum.yaml"), "--set", "parameters.th0=0.2")
p = load(out)["bodies/position"][-1, 0, :]
check(abs(np.arctan2(p[0], p[2])) <= 1e-12,
      "static_pendulum from 0.2 rad: the upright equilibrium (the one nearest the start)")

# ---- a hanging pendulum pushed sideways: tan(angle) = F t / (m g) ----
hang = write_deck("hanging.yaml", """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: bob, type: point, mass: 2.0, position: [0, 0, -1.5]}
joints:
  - {name: rod, type: distance, bodies: [ground, bob], points: [[0, 0, 0], [0, 0, -1.5]]}
loads:
  - {name: push, type: force, body: bob, value: [30, 0, 0], profile: {ramp: [0, 1]}}
solver: {integrator: static, dt: 0.125, t_end: 1.5}
""")
# gravity ramped with the push (the default): the angle atan(F / (m g)) from the first
# increment on, the tension min(t, 1) sqrt((m g)^2 + F^2); gravity in full: tan(angle) =
# F t / (m g), the tension sqrt((m g)^2 + (F t)^2)
for gmode in ("ramp", "full"):
    _, _, _, out = run(hang, "--set", "solver.static.gravity=%s" % gmode)
    r = load(out)
    t, p = r["time"], r["bodies/position"][:, 0, :]
    Ft = 30.0 * np.clip(t, 0, 1)
    Wt = 2.0 * G * (np.clip(t, 0, 1) if gmode == "ramp" else np.ones_like(t))
    ang = np.arctan2(p[:, 0], -p[:, 2])
    err = np.max(np.abs(ang[1:] - np.arctan2(Ft[1:], Wt[1:])))
    check(err <= 1e-12, "hanging pendulum, gravity %s: tan(angle) = F t / (m g %s) at every "
          "record (%.1e rad)" % (gmode, "t" if gmode == "ramp" else "", err))
    T = np.linalg.norm(r["joints/reaction"][1:, 0, :3], axis=1)
    check(np.max(np.abs(T - np.hypot(Wt[1:], Ft[1:]))) <= 1e-9,
          "hanging pendulum, gravity %s: the rod's tension sqrt((m g %s)^2 + (F t)^2)"
          % (gmode, "t" if gmode == "ramp" else ""))
    violation(r, "hanging pendulum, gravity %s" % gmode)

# ---- static_truss.yaml: snap-through ----
a, h, kt, P = 1.0, 0.2, 1000.0, 10.0
l0 = np.hypot(a, h)


def load_of(w):
    ln = np.hypot(a, h - w)
    return 2 * kt * (l0 - ln) * (h - w) / ln


w_lim = brentq(lambda w: (load_of(w + 1e-7) - load_of(w - 1e-7)), 0.01, h)
P_lim = load_of(w_lim)
check(abs(P_lim - 3.0191) < 1e-4 and abs(w_lim - 0.08528) < 1e-5,
      "static_truss: limit load %.5f N at w = %.5f m (as the deck says)" % (P_lim, w_lim))
_, _, _, out = run(deck("static_truss.yaml"))
r = load(out)
t, w = r["time"], h - r["bodies/position"][:, 0, 2]
worst, snapped = 0.0, None
for i in range(1, len(t)):
    Pt = P * min(t[i], 1.0)
    if Pt < P_lim:
        ref = brentq(lambda x: load_of(x) - Pt, 0.0, w_lim)
    else:
        ref = brentq(lambda x: load_of(x) - Pt, 2 * h, 10.0)
        snapped = t[i] if snapped is None else snapped
    worst = max(worst, abs(w[i] - ref))
check(worst <= 1e-10, "static_truss: every record on its branch of P t = 2 k (l0 - l)(h - w)/l "
      "(worst %.1e m)" % worst)
check(snapped is not None and abs(snapped - 0.35) < 1e-9 and w[7] > 2 * h and w[6] < w_lim,
      "static_truss: snaps through between t = 0.30 (w = %.4f) and 0.35 (w = %.4f)"
      % (w[6], w[7]))
violation(r, "static_truss")
at_rest(r, "static_truss")

# from an equilibrium (the unloaded truss) V - W stays constant up to the trapezoidal rule's
# O(dt^2): the work of the load along the recorded path is the energy the springs store
errs = []
for dtt in (0.05, 0.025):
    _, _, _, o2 = run(deck("static_truss.yaml"), "--dt", str(dtt), "--t-end", "0.25")
    r2 = load(o2)
    B = r2["energy/potential"] - r2["energy/external_work"]
    errs.append(np.max(np.abs(B - B[0])) / r2["energy/potential"][-1])
check(errs[0] <= 1e-2 and 3.5 <= errs[0] / errs[1] <= 4.5,
      "static_truss to t = 0.25: V - W constant to the trapezoidal rule's O(dt^2): %.2e of V at "
      "dt = 0.05, %.2e at 0.025 (ratio %.2f)" % (errs[0], errs[1], errs[0] / errs[1]))

# a large load in one increment: with 5 Newton iterations the full increment fails, half of
# it succeeds, and the grid time is reached again; the root is the one of the full load


def summary(*args):
    p = subprocess.run([MBSIM, deck("static_truss.yaml"), "-o", out, "--overwrite"] + list(args),
                       capture_output=True, text=True)
    rej = [int(ln.split()[2]) for ln in p.stdout.splitlines() if ln.startswith("step control:")]
    return p.returncode, rej[0] if rej else -1


Pb = 2.7
ref = brentq(lambda x: load_of(x) - Pb, 0.0, w_lim)
for iters, halved in ((5, True), (50, False)):
    rc, rej = summary("--set", "parameters.P=%g" % Pb, "--dt", "1",
                      "--set", "solver.newton.max_iterations=%d" % iters)
    with h5py.File(out, "r") as f:
        wb = h - f["bodies/position"][-1, 0, 2]
        tt = f["time"][()]
    check(rc == 0 and (rej > 0) == halved and list(tt) == [0.0, 1.0] and abs(wb - ref) <= 1e-10,
          "static_truss, P = %g N in one increment, %d Newton iterations: %d increments "
          "halved (%s), w = %.12f m, root %.12f" % (Pb, iters, rej,
                                                     "expected" if halved else "none needed",
                                                     wb, ref))

# full Newton limited to 8 iterations cannot leave the limit point (its convergence slows
# where the tangent stiffness vanishes): the run stops there after the halvings, exit 2,
# with the records of the pre-limit branch kept
rc, _, err, out = run(deck("static_truss.yaml"), "--set", "solver.newton.max_iterations=8",
                      "--set", "solver.newton.reuse=false", check=False)
rl = load(out)
check(rc == 2 and "gave up at a load increment" in err and abs(rl["time"][-1] - 0.3) < 1e-12
      and np.max(np.abs(rl["state/q"] - r["state/q"][:len(rl["time"])])) <= 1e-10
      and status(rl).startswith("failed: no static equilibrium found at t = 0.30"),
      "static_truss with 8 full Newton iterations: stops at the limit point after the halvings "
      "(exit %d), the pre-limit records kept: %s" % (rc, err.strip()[:110]))

# a restart from the record at t = 0.5 repeats the run bit for bit
_, _, _, half = run(deck("static_truss.yaml"), "--t-end", "0.5")
_, _, _, rest = run(deck("static_truss.yaml"), "--restart", half)
rr = load(rest)
n = len(rr["time"])
check(np.array_equal(rr["state/q"], r["state/q"][-n:])
      and np.array_equal(rr["energy/external_work"], r["energy/external_work"][-n:])
      and np.array_equal(rr["state/multipliers"], r["state/multipliers"][-n:]),
      "static_truss: a restart at t = 0.5 repeats the run bit for bit")

# ---- slider_crank.yaml under static: the kinematics of the prescribed crank angle ----
_, _, _, out = run(deck("slider_crank.yaml"), "--integrator", "static")
r = load(out)
t = r["time"]
th = 2 * np.pi * np.clip(t, 0, 2)
xs = 0.5 * np.cos(th) + np.sqrt(1.5 ** 2 - (0.5 * np.sin(th)) ** 2)
err = np.max(np.abs(r["bodies/position"][:, 2, 0] - xs))
check(err <= 1e-10, "slider_crank (static): the slider at r cos(theta) + sqrt(l^2 - r^2 "
      "sin^2(theta)) at every record (%.1e m)" % err)
violation(r, "slider_crank (static)")

# ---- a mechanism with a free degree of freedom under load: a clean failure ----
cart = write_deck("cart.yaml", """mbsim: 1
bodies:
  - {name: cart, mass: 3.0, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}
joints:
  - {name: rail, type: prismatic, bodies: [ground, cart], point: [0, 0, 0], axis: [1, 0, 0]}
loads:
  - {name: push, type: joint_force, joint: rail, value: 5.0, profile: {ramp: [0, 1]}}
solver: {integrator: static, dt: 0.1, t_end: 1.0}
""")
rc, _, err, out = run(cart, check=False)
r = load(out)
check(rc == 2 and "free degree of freedom" in err and "cart.phi.x" in err
      and status(r).startswith("failed: no static equilibrium at t = 0.1")
      and list(r["time"]) == [0.0] and "Traceback" not in err and "nan" not in err.lower(),
      "cart on a rail under a joint_force (static): exit %d, the initial record kept, the "
      "free coordinate named: %s" % (rc, err.strip()[:160]))
# a spring that reaches its rest length leaves the mass free sideways: the records up to
# there stay
rc, _, err, out = run(deck("damped_oscillator.yaml"), "--integrator", "static", "--dt", "0.1",
                      "--set", "output.every=1", check=False)
r = load(out)
check(rc == 2 and "free degree of freedom" in err and "mass.phi" in err
      and list(r["time"]) == [0.0, 0.1] and abs(r["state/q"][1, 0] - 1.0) <= 1e-12
      and status(r).startswith("failed: no static equilibrium at t = 0.2"),
      "damped_oscillator (static): the equilibrium at t = 0.1 (the spring at rest, x = %.12f) "
      "kept, then a clean failure (exit %d)" % (r["state/q"][1, 0], rc))

# ---- contacts: refused before anything is written ----
rc, _, err, out = run(deck("contacts/bouncing_ball.yaml"), "--integrator", "static", check=False)
check(rc == 1 and "static cannot handle contacts" in err,
      "a deck with contacts under static is refused (exit %d): %s" % (rc, err.strip()[:120]))

done()

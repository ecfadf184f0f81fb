"""Joints that engage and release (`active: {from, until}`, docs/decks.md "Joints that engage
and release"), against references we did not write:

1. two free bodies (different masses, inertias, velocities and spins, no gravity) captured by
   an engaging fixed joint: a plastic collision. Linear and angular momentum are conserved
   across the capture, the common velocity is (m1 v1 + m2 v2)/(m1 + m2), the common angular
   velocity is the composite inertia's (numpy, from the bodies' states at the capture), the
   kinetic energy lost is the analytic loss and is the jump of /energy/dissipated, and
   E - E0 - W + D closes; with every time-stepping integrator;
2. a free rod caught at its end by a spherical joint to the ground: its angular momentum about
   the pivot is kept through the capture, and afterwards it is a physical pendulum (scipy at
   rtol 1e-12), to second order in dt;
3. a rod spinning on a revolute joint, released: after the release a free body on a parabola
   exactly, with no impulse;
4. restarts from a record after the engagement and from one before it end bit for bit as the
   uninterrupted run;
5. bad inputs are deck errors at file:line:column, exit 1, nothing written."""
import os
import subprocess

import numpy as np
from scipy.integrate import solve_ivp

from common import TMP, balance, check, done, load, run, write_deck

INTEGRATORS = ["em", "midpoint", "euler", "genalpha", "moreau"]

CAPTURE = """mbsim: 1
title: two free bodies captured by a fixed joint
gravity: [0, 0, 0]
bodies:
  - {name: a, mass: 2.0, inertia: [0.1, 0.2, 0.25], position: [0, 0, 0],
     velocity: [1, 0.2, 0], angular_velocity: [0.5, -1, 2]}
  - {name: b, mass: 3.0, inertia: [0.3, 0.15, 0.2], position: [0.5, 0.1, 0],
     orientation: {axis: [0, 0, 1], angle: 0.3},
     velocity: [-0.5, 0.3, 0.1], angular_velocity: [-1, 0.3, 0.7]}
joints:
  - {name: grip, type: fixed, bodies: [a, b], point: [0.25, 0, 0], active: {from: 0.1}}
solver: {integrator: INTEG, dt: 0.01, t_end: 0.3}
"""
MASS = np.array([2.0, 3.0])
INERTIA = [np.diag([0.1, 0.2, 0.25]), np.diag([0.3, 0.15, 0.2])]
T0 = 0.1


def composite(r, i):
    """mass centre, velocity, angular momentum about the mass centre, composite inertia about
    it and kinetic energy of the bodies of record i, from their states (numpy)"""
    x, v = r["bodies/position"][i], r["bodies/velocity"][i]
    w, R = r["bodies/angular_velocity"][i], r["bodies/orientation"][i]
    m = MASS.sum()
    xc = (MASS[:, None] * x).sum(0) / m
    vc = (MASS[:, None] * v).sum(0) / m
    L, I, T = np.zeros(3), np.zeros((3, 3)), 0.0
    for k in range(2):
        Iw = R[k] @ INERTIA[k] @ R[k].T
        d = x[k] - xc
        L += Iw @ w[k] + MASS[k] * np.cross(d, v[k] - vc)
        I += Iw + MASS[k] * (d @ d * np.eye(3) - np.outer(d, d))
        T += 0.5 * MASS[k] * v[k] @ v[k] + 0.5 * w[k] @ Iw @ w[k]
    return xc, vc, L, I, T


def capture_case(integ):
    r = load(run(write_deck("capture_%s.yaml" % integ, CAPTURE.replace("INTEG", integ)))[3])
    t = r["time"]
    i0 = int(np.argmin(abs(t - T0)))
    active = r["joints/active"][:, 0]
    check(np.all(active[: i0 + 1] == 0) and np.all(active[i0 + 1:] == 1),
          "%s: /joints/active is 0 up to the record at t = %g, 1 after" % (integ, T0))
    check(np.all(r["joints/reaction"][: i0 + 1] == 0.0) and
          np.abs(r["joints/reaction"][i0 + 1:]).max() > 0.0,
          "%s: the joint reports zero reaction before it engages" % integ)
    # the analytic capture from the bodies' states at the record of the capture (the state
    # the next step starts from)
    xc, vc, Lc, Ic, Tb = composite(r, i0)
    wc = np.linalg.solve(Ic, Lc)
    Ta = 0.5 * MASS.sum() * vc @ vc + 0.5 * wc @ Ic @ wc
    lost = Tb - Ta
    jump = r["energy/capture_dissipated"][i0 + 1] - r["energy/capture_dissipated"][i0]
    other = r["energy/dissipated"] - r["energy/capture_dissipated"]
    # the capture projects the scheme's own velocities (whose energy the records' balance
    # holds, /energy/kinetic) onto the constraints; the bodies' velocities are the records'
    # consistent ones, the M-orthogonal projection of the scheme's onto the constraints that
    # held (O(dt^4) apart for em and midpoint, round-off for moreau, O(dt) for euler and
    # genalpha, whose velocities leave the rigidity's velocity constraints). So the jump is
    # the analytic loss of the rigid bodies plus the kinetic energy of the scheme velocities'
    # part off the constraints, K - T_bodies
    off = r["energy/kinetic"][i0] - Tb
    dev = abs(jump - lost - off)
    check(dev <= 1e-13 * Tb,
          "%s: /energy/capture_dissipated jumps by the analytic loss of the plastic capture, "
          "%.12f J (+ %.1e J of the scheme's velocities off the rigidity constraints): %.12f "
          "J, relative %.1e" % (integ, lost, off, jump, dev / Tb))
    check(np.all(r["energy/capture_dissipated"][: i0 + 1] == 0.0) and
          np.all(r["energy/capture_dissipated"][i0 + 1:] == r["energy/capture_dissipated"][-1]) and
          np.all(other >= -1e-15) and (integ == "moreau" or np.abs(other).max() == 0.0),
          "%s: /energy/dissipated = /energy/capture_dissipated%s" %
          (integ, " + the theta method's numerical damping (%.1e J)" % other.max()
           if integ == "moreau" else ""))
    P = r["momentum/linear"]
    dP = np.abs(P[i0 + 1:] - P[i0]).max()
    check(dP <= 1e-14 * (1 + np.abs(P[i0]).max()),
          "%s: linear momentum kept across the capture (%.1e)" % (integ, dP))
    # after the capture: one rigid body
    for i in range(i0 + 1, len(t)):
        x1, v1, L1, I1, _ = composite(r, i)
        w = r["bodies/angular_velocity"][i]
        ok = (np.abs(v1 - vc).max() <= 1e-13 and np.abs(w[0] - w[1]).max() <= 1e-11 and
              all(np.abs(r["bodies/velocity"][i][k] - (v1 + np.cross(w[k], r["bodies/position"][i][k] - x1))).max() <= 1e-11
                  for k in range(2)))
        if not ok:
            break
    check(ok, "%s: after the capture the bodies move as one: the common velocity (m1 v1 + "
          "m2 v2)/(m1 + m2) = %s, one angular velocity" % (integ, np.round(vc, 6)))
    if integ in ("em", "midpoint", "moreau"):
        # the conservative schemes: angular momentum and energy to round-off over the run, and
        # the composite's angular velocity from its inertia
        L = r["momentum/angular"]
        dL = np.abs(L - L[0]).max()
        check(dL <= 1e-13, "%s: angular momentum about the origin kept over the run, through "
              "the capture (%.1e)" % (integ, dL))
        werr = 0.0
        for i in range(i0 + 1, len(t)):
            _, _, L1, I1, _ = composite(r, i)
            werr = max(werr, np.abs(r["bodies/angular_velocity"][i][0] - np.linalg.solve(I1, Lc)).max())
        check(werr <= 1e-11, "%s: the common angular velocity is the composite inertia's "
              "I^-1 L (L about the mass centre at the capture; %.1e)" % (integ, werr))
        err, scale = balance(r)
        check(err <= 1e-13 * scale, "%s: E - E0 - W + D closes through the capture (%.1e)" %
              (integ, err / scale))
    else:
        # not conservative for spinning bodies: the capture itself keeps angular momentum
        _, _, L1, I1, _ = composite(r, i0 + 1)
        check(np.abs(r["momentum/angular"][i0 + 1] - r["momentum/angular"][i0]).max() <
              0.1 * np.abs(r["momentum/angular"][i0]).max(),
              "%s: angular momentum about the origin across the capture step (%.1e)" %
              (integ, np.abs(r["momentum/angular"][i0 + 1] - r["momentum/angular"][i0]).max()))
    return r


for integ in INTEGRATORS:
    capture_case(integ)

# ---- 2. a free rod caught at its end by a spherical joint to the ground: then a pendulum ----
ROD = """mbsim: 1
title: a rod caught at its end
gravity: [0, 0, -9.81]
bodies:
  - {name: rod, mass: 1.5, inertia: [0.001, 0.125, 0.125], position: [0, 0, 0],
     velocity: [0.3, 0, 0.5], angular_velocity: [0, 1.5, 0]}
joints:
  - {name: catch, type: spherical, bodies: [ground, rod], point: [-0.5, 0, 0],
     active: {from: 0.2}}
solver: {integrator: em, dt: DT, t_end: 1.2}
output: {every: EVERY}
"""
m_rod, I_rod = 1.5, np.diag([0.001, 0.125, 0.125])
g = np.array([0, 0, -9.81])
errs = []
for dt, every in ((2e-3, 50), (1e-3, 100)):
    r = load(run(write_deck("rod_%g.yaml" % dt,
                            ROD.replace("DT", repr(dt)).replace("EVERY", str(every))))[3])
    t = r["time"]
    i0 = int(np.argmin(abs(t - 0.2)))
    x, v = r["bodies/position"][:, 0], r["bodies/velocity"][:, 0]
    w, R = r["bodies/angular_velocity"][:, 0], r["bodies/orientation"][:, 0]
    # the pivot: the rod's end (body point (-0.5, 0, 0)) where it is at the capture
    P = x[i0] + R[i0] @ np.array([-0.5, 0, 0])
    d = x[i0] - P
    Iw = R[i0] @ I_rod @ R[i0].T
    IP = Iw + m_rod * (d @ d * np.eye(3) - np.outer(d, d))
    LP = Iw @ w[i0] + m_rod * np.cross(d, v[i0])
    wp = np.linalg.solve(IP, LP)
    # the physical pendulum after the capture (planar: about y), scipy at rtol 1e-12
    Iyy = IP[1, 1]

    sol = solve_ivp(lambda _, y: [y[2] * y[1], -y[2] * y[0], m_rod * 9.81 * y[0] / Iyy],
                    (t[i0], t[-1]), [d[0], d[2], wp[1]], method="DOP853", rtol=1e-12,
                    atol=1e-14, t_eval=t[i0 + 1:], dense_output=False)
    xe = np.stack([P[0] + sol.y[0], np.full(len(sol.t), P[1]), P[2] + sol.y[1]], axis=1)
    errs.append(np.abs(x[i0 + 1:] - xe).max())
    if dt == 1e-3:
        check(abs(wp[0]) < 1e-12 and abs(wp[2]) < 1e-12,
              "rod: the capture keeps the motion planar (omega+ about y: %.6f rad/s)" % wp[1])
        dev = np.abs(x[i0 + 1:] + np.einsum("nij,j->ni", R[i0 + 1:], [-0.5, 0, 0]) - P).max()
        check(dev <= 1e-10, "rod: its end stays at the pivot after the capture (%.1e m)" % dev)
        err, scale = balance(r)
        check(err <= 1e-10 * scale, "rod: E - E0 - W + D closes with the capture's loss in D "
              "(%.1e; D = %.6f J)" % (err / scale, r["energy/dissipated"][-1]))
# the angular momentum about the pivot through the capture: a run recording every step; the
# step after the capture changes it by the gravity impulse about the pivot (midpoint rule)
r = load(run(write_deck("rod_L.yaml", ROD.replace("DT", "1e-3").replace("EVERY", "1")
                        .replace("t_end: 1.2", "t_end: 0.21")))[3])
t = r["time"]
i0 = int(np.argmin(abs(t - 0.2)))
x, v = r["bodies/position"][:, 0], r["bodies/velocity"][:, 0]
w, R = r["bodies/angular_velocity"][:, 0], r["bodies/orientation"][:, 0]
P = x[i0] + R[i0] @ np.array([-0.5, 0, 0])
Lp = [R[i] @ I_rod @ R[i].T @ w[i] + m_rod * np.cross(x[i] - P, v[i]) for i in (i0, i0 + 1)]
dLg = np.cross(0.5 * (x[i0] + x[i0 + 1]) - P, m_rod * g) * (t[i0 + 1] - t[i0])
dev = np.abs(Lp[1] - Lp[0] - dLg).max() / np.abs(Lp[0]).max()
check(dev <= 1e-6, "rod: angular momentum about the pivot kept through the capture, up to the "
      "gravity impulse of the step (%.1e relative; dt^2 = 1e-6)" % dev)
order = np.log2(errs[0] / errs[1])
check(errs[1] < 1e-4 and 1.8 < order < 2.3,
      "rod: after the capture a physical pendulum (scipy DOP853): position error %.2e at dt = "
      "2e-3, %.2e at 1e-3, order %.2f" % (errs[0], errs[1], order))

# ---- 3. release: a spinning rod on a revolute joint, then free flight ----
SPIN = """mbsim: 1
title: a rod released from its hinge
gravity: [0, 0, -9.81]
bodies:
  - {name: rod, mass: 1.5, inertia: [0.001, 0.125, 0.125], position: [0.5, 0, 0],
     velocity: [0, 1.0, 0], angular_velocity: [0, 0, 2.0]}
joints:
  - {name: hinge, type: revolute, bodies: [ground, rod], point: [0, 0, 0], axis: [0, 0, 1],
     active: {until: 0.3}}
solver: {integrator: INTEG, dt: 0.01, t_end: 0.8}
"""
for integ in ("em", "genalpha"):
    r = load(run(write_deck("spin_%s.yaml" % integ, SPIN.replace("INTEG", integ)))[3])
    t = r["time"]
    i1 = int(np.argmin(abs(t - 0.3)))
    names = r["q_names"]
    ix = [names.index("rod.phi.%s" % c) for c in "xyz"]
    q, vs = r["state/q"][:, ix], r["state/scheme_velocity"][:, ix]
    act = r["joints/active"][:, 0]
    check(np.all(act[: i1 + 1] == 1) and np.all(act[i1 + 1:] == 0),
          "%s: /joints/active 1 up to the release at t = 0.3, 0 after" % integ)
    check(np.all(r["joints/reaction"][i1 + 1:] == 0.0) and
          np.abs(r["joints/reaction"][i1, 0, :2]).max() > 2.0,
          "%s: the reaction is the centripetal force before the release (|F| = %.3f N, m w^2 "
          "l/2 = 3 N), zero after" % (integ, np.linalg.norm(r["joints/reaction"][i1, 0, :2])))
    tau = t[i1:] - t[i1]
    par = q[i1] + np.outer(tau, vs[i1]) + 0.5 * np.outer(tau ** 2, g)
    dev = np.abs(q[i1:] - par).max()
    check(dev <= 1e-12, "%s: after the release the centre of mass flies on the parabola from "
          "its state at t = 0.3, no impulse (%.1e m)" % (integ, dev))
    vr = r["bodies/velocity"][i1, 0]
    check(abs(np.linalg.norm(vr[:2]) - 1.0) <= 1e-3 and abs(vr[2]) <= 1e-3,
          "%s: the release velocity is the hinge's w l/2 = 1 m/s, horizontal (%.6f m/s)" %
          (integ, np.linalg.norm(vr)))

# ---- 4. restarts across the engagement end bit for bit ----
for integ in ("em", "genalpha", "moreau"):
    path = os.path.join(TMP, "capture_%s.yaml" % integ)
    full = load(run(path)[3])
    for t_mid, what in ((0.15, "after"), (0.05, "before")):
        first = run(path, "--t-end", str(t_mid))[3]
        rest = load(run(path, "--restart", first, "--t-end", "0.3")[3])
        same = all(np.array_equal(full[k][-1], rest[k][-1]) for k in
                   ("state/q", "state/v", "state/multipliers", "energy/dissipated", "energy/capture_dissipated",
                    "joints/reaction", "joints/active", "state/joint_engagement"))
        check(same and rest["time"][-1] == full["time"][-1],
              "%s: a restart from the record at t = %g (%s the engagement at 0.1) ends bit for "
              "bit as the uninterrupted run" % (integ, t_mid, what))

# ---- redundancy across engagement: a four-bar whose loop closes at 0.2 s and opens at 0.6 s ----
# The loop's 20 joint equations hold 17 independent ones: the check of t = 0 sees the loop open
# (the pin released) and drops nothing; the check of the phase that starts at 0.2 s drops the
# pin's 3 repeated rows (not the rows of the rocker's pivot, which holds the rocker alone while
# the loop is open); at 0.6 s all the pin's rows leave.
text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "decks",
                         "four_bar.yaml")).read()
text = text.replace("motion: {value: 6.283185307179586, profile: {ramp: [0, 1]}}  # one turn in 1 s", "")
i = text.index("  - name: rocker_pin")
j = text.index("axis: [0, 0, 1]", i) + len("axis: [0, 0, 1]")
text = text[:j] + "\n    active: {from: 0.2, until: 0.6}" + text[j:]
fb_path = write_deck("four_bar_engage.yaml", text)
p = subprocess.run([os.environ["MBSIM"], fb_path, "-o", os.path.join(TMP, "fb_summary.h5"),
                    "--t-end", "0.8"], capture_output=True, text=True)
rc, res = p.returncode, os.path.join(TMP, "fb_summary.h5")
check(rc == 0, "four-bar with an engaging pin runs (exit %d)" % rc)
if rc == 0:
    r = load(res)
    dropped = r["attrs"].get("redundant_rows")
    dropped = dropped.decode() if isinstance(dropped, bytes) else dropped
    note = "redundant:    dropped at engagement or release, until the next: t = 0.2: joint " \
        "'rocker_pin' rows 3, 4, 5"
    check(dropped == "" and note in p.stdout,
          "four-bar: nothing dropped at t = 0 (the loop is open: %r); the repeated rows "
          "dropped when the pin closes it are the engaging joint's (summary: %r)" %
          (dropped, note in p.stdout))
    t = r["time"]
    jn = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
    k = jn.index("rocker_pin")
    on = (t > 0.2 + 1e-9) & (t <= 0.6 + 1e-9)
    check(np.array_equal(r["joints/active"][:, k] == 1, on),
          "four-bar: rocker_pin holds from the record after 0.2 s to 0.6 s")
    check(np.all(r["joints/reaction"][~on, k] == 0.0) and np.abs(r["joints/reaction"][on, k]).max() > 0,
          "four-bar: rocker_pin's reaction is zero while it is released")
    viol = r["constraints/violation"].max()
    err_e, scale = balance(r)
    check(viol <= 1e-10 and err_e <= 1e-12 * scale,
          "four-bar: constraints hold (%.1e) and E - E0 - W + D closes (%.1e) through the "
          "engagement with dropped rows and the release" % (viol, err_e / scale))
    w = r["bodies/angular_velocity"]
    check(np.abs(w[:, :, :2]).max() <= 1e-10,
          "four-bar: the links turn about z only while the loop is open and closed (%.1e)" %
          np.abs(w[:, :, :2]).max())
    # the rows dropped in a phase come from the restart state: a restart from a record of
    # the closed loop (and one of the open loop after it) ends bit for bit
    for t_mid in (0.4, 0.64):  # on the step grid (350 x 2e-3 is 0.7000000000000001)
        first = run(fb_path, "--t-end", str(t_mid))[3]
        rest = load(run(fb_path, "--restart", first, "--t-end", "0.8")[3])
        same = all(np.array_equal(r[k][-1], rest[k][-1]) for k in
                   ("state/q", "state/v", "state/multipliers", "energy/dissipated",
                    "joints/reaction", "state/joint_engagement"))
        check(same, "four-bar: a restart from the record at t = %g (the loop %s) ends bit for "
              "bit as the uninterrupted run" % (t_mid, "closed, rows dropped" if t_mid < 0.6
                                                 else "open again"))

    # the reactions of the closed loop are those of least norm, as for a loop closed at t = 0
    # (test_four_bar.py): with gravity tilted out of the plane, the out-of-plane forces Fz and
    # moments Mx, My of the four joints are orthogonal to every self-equilibrated set of them
    # (numpy: the null space of the links' out-of-plane equilibrium) at each record of the
    # closed phase; without the phase's dropped rows in the least-norm problem they are not
    # (the pin's out-of-plane part zero, 0.53 of the reactions along the null space)
    r = load(run(fb_path, "--t-end", "0.8", "--set", "gravity=[0, -9.81, -9.81]")[3])
    jn = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
    loop = [("crank_bearing", None, "crank"), ("crank_pin", "crank", "coupler"),
            ("rocker_pin", "coupler", "rocker"), ("rocker_pivot", None, "rocker")]
    links = ["crank", "coupler", "rocker"]
    worst, n_on = 0.0, 0
    for n in range(len(r["time"])):
        if r["joints/active"][n, jn.index("rocker_pin")] != 1:
            continue
        E = np.zeros((9, 12))
        for j, (name, b1, b2) in enumerate(loop):
            px, py = r["joints/position"][n, jn.index(name), :2]
            for b, sgn in ((b1, -1.0), (b2, 1.0)):
                if b is not None:
                    kb = links.index(b)
                    E[3 * kb, 3 * j] += sgn
                    E[3 * kb + 1, 3 * j] += sgn * py
                    E[3 * kb + 1, 3 * j + 1] += sgn
                    E[3 * kb + 2, 3 * j] -= sgn * px
                    E[3 * kb + 2, 3 * j + 2] += sgn
        N = np.linalg.svd(E)[2][9:].T
        x = np.concatenate([r["joints/reaction"][n, jn.index(nm), 2:5] for nm, _, _ in loop])
        worst = max(worst, np.linalg.norm(N.T @ x) / np.linalg.norm(x))
        n_on += 1
    check(n_on > 100 and worst <= 1e-12, "four-bar, gravity out of plane: while the pin closes "
          "the loop (%d records) the reactions are of least norm (%.1e along the "
          "self-equilibrated sets)" % (n_on, worst))

# a phase that is redundant by itself is handled as at t = 0: with the crank's motion and one
# on the rocker's pivot, the loop the pin closes at 0.2 s holds two motions: refused then,
# with the message of t = 0 naming the loop's joints
text2 = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "decks",
                          "four_bar.yaml")).read()
i = text2.index("  - name: rocker_pin")
j = text2.index("axis: [0, 0, 1]", i) + len("axis: [0, 0, 1]")
text2 = text2[:j] + "\n    active: {from: 0.2}" + text2[j:]
i = text2.index("  - name: rocker_pivot")
j = text2.index("axis: [0, 0, 1]", i) + len("axis: [0, 0, 1]")
text2 = text2[:j] + "\n    motion: {value: 2.5741785682029956, profile: {ramp: [0, 1]}}" + text2[j:]
path2 = write_deck("four_bar_two_motions_engage.yaml", text2)
rc, out, err, res = run(path2, "--t-end", "0.4", check=False)
line = text2.splitlines().index("  - name: crank_bearing") + 1
check(rc != 0 and "%s:%d:" % (path2, line) in err and "the constraints are redundant: joints "
      "'crank_bearing' (revolute), 'crank_pin' (revolute), 'rocker_pin' (revolute), "
      "'rocker_pivot' (revolute) close a loop" in err and "at t = 0.2" in err and
      "The prescribed motion of joint 'rocker_pivot' is one of them" in err,
      "four-bar with two motions whose loop a pin closes at 0.2 s: refused then, as at t = 0 "
      "(exit %d: %s)" % (rc, err.strip()[-300:]))

# ---- a hand-over: a holder (plug to ground) released at T while a grip (arm to plug) engages
# at T. The union (holder, grip and the arm's hinge) repeats 5 of the grip's rows; each phase
# repeats none. No gravity: the arm spins on its hinge at 2 rad/s, the plug rests in the
# holder; at T the arm catches the plug: the hinge's impulse acts at the pivot, so the
# angular momentum about the pivot is kept, omega+ = I_arm omega- / (I_arm + I_plug) (about
# the pivot), and the kinetic energy lost is the capture's loss.
HANDOVER = """mbsim: 1
title: a plug handed from a holder to a spinning arm
gravity: [0, 0, 0]
bodies:
  - {name: arm, mass: 1.0, inertia: [0.001, 0.09, 0.09], position: [0.5, 0, 0],
     velocity: [0, 1.0, 0], angular_velocity: [0, 0, 2.0]}
  - {name: plug, mass: 0.4, inertia: [0.002, 0.003, 0.004], position: [1.2, 0.2, 0]}
joints:
  - {name: hinge, type: revolute, bodies: [ground, arm], point: [0, 0, 0], axis: [0, 0, 1]}
  - {name: holder, type: fixed, bodies: [ground, plug], point: [1.2, 0.2, 0],
     active: {until: 0.25}}
  - {name: grip, type: fixed, bodies: [arm, plug], point: [1.2, 0.2, 0], active: {from: 0.25}}
solver: {integrator: em, dt: 0.01, t_end: 0.5}
"""
ho_path = write_deck("handover.yaml", HANDOVER)
p = subprocess.run([os.environ["MBSIM"], ho_path, "-o", os.path.join(TMP, "handover.h5")],
                   capture_output=True, text=True)
check(p.returncode == 0 and "redundant:" not in p.stdout,
      "hand-over: runs, nothing dropped in either phase (exit %d%s)" %
      (p.returncode, p.stderr.strip()[-300:]))
if p.returncode == 0:
    r = load(os.path.join(TMP, "handover.h5"))
    t = r["time"]
    i0 = int(np.argmin(abs(t - 0.25)))
    act = r["joints/active"]
    check(np.all(act[: i0 + 1, 1] == 1) and np.all(act[i0 + 1:, 1] == 0) and
          np.all(act[: i0 + 1, 2] == 0) and np.all(act[i0 + 1:, 2] == 1),
          "hand-over: the holder holds up to the record at T = 0.25, the grip after it")
    vp = r["bodies/velocity"][:, 1]
    check(np.abs(vp[: i0 + 1]).max() == 0.0, "hand-over: the plug rests in the holder")
    Ia = 0.09 + 1.0 * 0.5 ** 2
    Ip = 0.004 + 0.4 * (1.2 ** 2 + 0.2 ** 2)
    w0 = r["bodies/angular_velocity"][i0, 0, 2]
    wp = Ia * w0 / (Ia + Ip)
    w = r["bodies/angular_velocity"][i0 + 1:, :, 2]
    dw = np.abs(w - wp).max()
    check(dw <= 1e-12 * abs(w0), "hand-over: after the capture arm and plug turn at I_arm "
          "omega- / (I_arm + I_plug) = %.12f rad/s (%.1e)" % (wp, dw))
    L = r["momentum/angular"][:, 2]
    dL = np.abs(L - L[0]).max()
    check(dL <= 1e-13 * abs(L[0]), "hand-over: angular momentum about the pivot's axis kept "
          "through the hand-over (%.1e relative)" % (dL / abs(L[0])))
    lost = 0.5 * Ia * w0 ** 2 - 0.5 * (Ia + Ip) * wp ** 2
    jump = r["energy/capture_dissipated"][-1]
    check(abs(jump - lost) <= 1e-12 * lost, "hand-over: the capture takes out the analytic "
          "loss %.12f J (%.12f J)" % (lost, jump))
    err_e, scale = balance(r)
    check(err_e <= 1e-12 * scale, "hand-over: E - E0 - W + D closes (%.1e)" % (err_e / scale))
    first = run(ho_path, "--t-end", "0.3")[3]
    rest = load(run(ho_path, "--restart", first, "--t-end", "0.5")[3])
    same = all(np.array_equal(r[k][-1], rest[k][-1]) for k in
               ("state/q", "state/v", "state/multipliers", "energy/dissipated",
                "joints/reaction", "state/joint_engagement"))
    check(same, "hand-over: a restart from the record at t = 0.3 (after the hand-over at 0.25) ends bit for bit")

# ---- 5. bad inputs: deck errors at the key ----
JOINT = "  - {name: grip, type: fixed, bodies: [a, b], point: [0.25, 0, 0], active: {from: 0.1}}"
BAD = [
    ("from after until", "active: {from: 0.1}", "active: {from: 0.3, until: 0.2}",
     "until (0.2 s) must come after from (0.3 s)"),
    ("negative from", "active: {from: 0.1}", "active: {from: -1}", "active.from must be a time >= 0"),
    ("negative until", "active: {from: 0.1}", "active: {until: -0.5}",
     "active.until must be a time >= 0"),
    ("empty", "active: {from: 0.1}", "active: {}", "give 'from'"),
    ("unknown key", "active: {from: 0.1}", "active: {from: 0.1, at: 2}", "unknown key 'at'"),
    ("static", "integrator: em", "integrator: static", "static cannot take"),
    ("spacetime", "integrator: em", "integrator: spacetime", "spacetime cannot take"),
    ("assemble", "solver: {", "initial: {assemble: true}\nsolver: {",
     "`initial: {assemble: true}` moves"),
]
base = CAPTURE.replace("INTEG", "em")
line = base.splitlines().index(JOINT) + 1
for what, old, new, msg in BAD:
    text = base.replace(old, new)
    path = write_deck("bad_%s.yaml" % what.replace(" ", "_"), text)
    out = os.path.join(TMP, "bad_%s.h5" % what.replace(" ", "_"))
    rc, _, err, _ = run(path, out=out, check=False)
    # the position of the offending value, or of the `active` key for the integrators
    col = None
    for ln, l in enumerate(text.splitlines(), 1):
        if ln == line:
            col = l.index("active") + 1
    where = "%s:%d:" % (path, line)
    check(rc == 1 and where in err and msg in err and not os.path.exists(out),
          "bad deck (%s): exit 1 at %s..., '%s', nothing written (%s)" %
          (what, os.path.basename(where), msg, err.strip()[-160:]))
    if what in ("static", "spacetime", "assemble"):
        check("%s:%d:%d:" % (path, line, col) in err, "bad deck (%s): at the `active` key "
              "(column %d)" % (what, col))

done()

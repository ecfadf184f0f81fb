"""four_bar.yaml: a planar four-bar of four revolute joints, whose 3 out-of-plane equations
repeat the others in 3D. The compiler drops them (the summary names them) and the run goes on:
the coupler and rocker angles follow the loop-closure (Freudenstein) equation, solved here
independently, to 1e-8, and the dropped rows still hold. The reactions of such a loop are
not unique; mbsim-run writes those of least norm: on a parallelogram four-bar at rest under
a gravity tilted out of its plane they match the minimum-norm solution of the bodies'
equilibrium equations (numpy's pseudo-inverse) to 1e-9."""
import os
import subprocess

import numpy as np

from common import MBSIM, ROOT, TMP, check, deck, done, load, run

A_, B_, C_, D_ = 0.4, 1.2, 1.0, 1.0  # crank, coupler, rocker, ground
OMEGA = 2 * np.pi


def names(r, key):
    return [n.decode() if isinstance(n, bytes) else n for n in r[key]]


# --- the summary names what was dropped ----------------------------------------------------
p = subprocess.run([MBSIM, deck("four_bar.yaml"), "--check"], capture_output=True, text=True)
print(p.stdout.strip())
check(p.returncode == 0 and "redundant:    dropped 3 equations that repeat the others: joint "
      "'rocker_pivot' rows 3, 4, 5" in p.stdout and "constraints:  36" in p.stdout and
      "dof:          0" in p.stdout,
      "--check: the 3 repeated rows of joint 'rocker_pivot' are named as dropped, 36 rows left")

# --- the run against the Freudenstein solution ---------------------------------------------
out = os.path.join(TMP, "four_bar.h5")
p = subprocess.run([MBSIM, deck("four_bar.yaml"), "-o", out], capture_output=True, text=True)
check(p.returncode == 0 and "redundant:  dropped 3 equations that repeat the others: joint "
      "'rocker_pivot' rows 3, 4, 5" in p.stdout, "the run's header names the dropped rows too")
r = load(out)
t = r["time"]
check(r["attrs"]["status"] == "completed" and t[-1] == 1.0, "the four-bar runs to t = 1")
check(r["attrs"]["redundant_rows"] == "joint 'rocker_pivot' rows 3, 4, 5",
      "the root attribute redundant_rows names the dropped rows")
bn = names(r, "bodies/names")
R = r["bodies/orientation"]


def link_angle(body):
    d1 = R[:, bn.index(body), :, 0]  # the link lies along its body axis 1
    return np.unwrap(np.arctan2(d1[:, 1], d1[:, 0]))


th2, th3, th4 = link_angle("crank"), link_angle("coupler"), link_angle("rocker")
check(np.max(np.abs(th2 - (np.pi / 2 + OMEGA * t))) <= 1e-10,
      "the crank angle is pi/2 + omega t at every record")

# K1 cos(th4) - K2 cos(th2) + K3 = cos(th2 - th4), i.e. P cos(th4) + Q sin(th4) = -S
K1, K2 = D_ / A_, D_ / C_
K3 = (A_ ** 2 - B_ ** 2 + C_ ** 2 + D_ ** 2) / (2 * A_ * C_)
P = K1 - np.cos(th2)
Q = -np.sin(th2)
S = K3 - K2 * np.cos(th2)
base = np.arctan2(Q, P)
half = np.arccos(np.clip(-S / np.hypot(P, Q), -1, 1))
# the open branch: the one that holds the initial crank-vertical configuration, whose rocker
# pin C is the upper intersection of the circles about B = (0, a) and D = (d, 0)
Bp, Dp = np.array([0.0, A_]), np.array([D_, 0.0])
dist = np.linalg.norm(Dp - Bp)
x = (B_ ** 2 - C_ ** 2 + dist ** 2) / (2 * dist)
u = (Dp - Bp) / dist
C0 = Bp + x * u + np.sqrt(B_ ** 2 - x ** 2) * np.array([-u[1], u[0]])
th4_0 = np.arctan2(C0[1] - Dp[1], C0[0] - Dp[0])
cands = [base + half, base - half]
k = int(np.argmin([abs(np.angle(np.exp(1j * (c[0] - th4_0)))) for c in cands]))
th4_ref = cands[k]
th4_ref = th4_ref + 2 * np.pi * np.round((th4_0 - th4_ref[0]) / (2 * np.pi))
th4_ref = np.unwrap(th4_ref)
# the coupler closes the loop: b e(th3) = D + c e(th4) - a e(th2)
cx = D_ + C_ * np.cos(th4_ref) - A_ * np.cos(th2)
cy = C_ * np.sin(th4_ref) - A_ * np.sin(th2)
th3_ref = np.unwrap(np.arctan2(cy, cx))
check(np.max(np.abs(np.hypot(cx, cy) - B_)) <= 1e-12, "the reference closes the loop "
      "(|BC| = b to 1e-12)")
e3 = np.max(np.abs(th3 - th3_ref))
e4 = np.max(np.abs(th4 - th4_ref))
print("four-bar: %d steps, rocker from %.6f to %.6f rad (swing %.4f rad), max |theta3 - ref| = "
      "%.2e, max |theta4 - ref| = %.2e" % (len(t) - 1, th4[0], th4[-1], np.ptp(th4), e3, e4))
check(np.ptp(th4) > 0.5, "the rocker swings (%.3f rad)" % np.ptp(th4))
check(e3 <= 1e-8 and e4 <= 1e-8, "coupler and rocker angles follow the Freudenstein solution to "
      "1e-8 (%.1e, %.1e)" % (e3, e4))

# the dropped rows (the rocker pivot's z and its axis alignment) still hold
jn = names(r, "joints/names")
pivot = r["joints/position"][:, jn.index("rocker_pivot")]
check(np.max(np.abs(pivot - [1.0, 0.0, 0.0])) <= 1e-10,
      "the rocker's pivot point stays at D = (1, 0, 0) to 1e-10")
check(np.max(np.abs(R[:, :, :, 2] - [0.0, 0.0, 1.0])) <= 1e-10 and
      np.max(np.abs(r["bodies/position"][:, :, 2])) <= 1e-10,
      "every link stays in the plane z = 0 with its axis 3 along z, to 1e-10")
check(np.max(r["constraints/violation"]) <= 1e-10, "the kept constraints hold to 1e-10")

# --- minimum-norm reactions ----------------------------------------------------------------
# The parallelogram of tests/hazards/four_bar_revolute.yaml at rest (crank and rocker
# vertical, coupler on top), with gravity (0, -g, -g): the in-plane part is balanced by the
# links' vertical position, the out-of-plane part loads the joints with forces along z and
# moments about x and y, shared in infinitely many ways by the loop. Unknowns per joint: the
# force F and the moment M (about x and y; none about the revolute axis z) on its second body
# about the joint point; per body: sum of forces + weight = 0 and sum of moments about its
# centre = 0. numpy's pseudo-inverse gives the solution of least Euclidean norm.
hz = os.path.join(ROOT, "tests", "hazards", "four_bar_revolute.yaml")
g = 9.81
_, _, _, out = run(hz, "--set", "gravity=[0, -9.81, -9.81]", "--t-end", "0.01")
r = load(out)
bodies = {"crank": (2.5, [0, 0.5, 0]), "coupler": (5.0, [1, 1, 0]), "rocker": (2.5, [2, 0.5, 0])}
joints = [("A", None, "crank", [0, 0, 0]), ("B", "crank", "coupler", [0, 1, 0]),
          ("C", "coupler", "rocker", [2, 1, 0]), ("D", None, "rocker", [2, 0, 0])]
bl = list(bodies)
Aeq = np.zeros((6 * len(bl), 5 * len(joints)))
beq = np.zeros(6 * len(bl))
for j, (_, b1, b2, pj) in enumerate(joints):
    for b, sgn in ((b1, -1.0), (b2, 1.0)):
        if b is None:
            continue
        k = bl.index(b)
        arm = np.array(pj, float) - np.array(bodies[b][1], float)
        for c in range(3):  # force components
            e = np.zeros(3)
            e[c] = 1.0
            Aeq[6 * k:6 * k + 3, 5 * j + c] += sgn * e
            Aeq[6 * k + 3:6 * k + 6, 5 * j + c] += sgn * np.cross(arm, e)
        for c in range(2):  # moments about x and y
            Aeq[6 * k + 3 + c, 5 * j + 3 + c] += sgn
for b, (mass, _) in bodies.items():
    beq[6 * bl.index(b):6 * bl.index(b) + 3] = -mass * np.array([0.0, -g, -g])
x_ref = np.linalg.pinv(Aeq) @ beq
check(np.linalg.norm(Aeq @ x_ref - beq) <= 1e-10 * np.linalg.norm(beq),
      "the reference reactions balance every link")
check(np.linalg.matrix_rank(Aeq) == 17, "the equilibrium equations have rank 17 of 20 unknowns "
      "(3 self-equilibrated sets: the reactions are not unique)")
jn = names(r, "joints/names")
react = r["joints/reaction"][1:]
order = [jn.index(j[0]) for j in joints]
x_run = react[:, order][:, :, [0, 1, 2, 3, 4]].reshape(len(react), -1)
err = np.max(np.abs(x_run - x_ref)) / np.max(np.abs(x_ref))
print("reactions of least norm (A, B, C, D: Fx Fy Fz Mx My):\n%s\nwritten at t = %g:\n%s"
      % (np.array2string(x_ref.reshape(4, 5), precision=5, suppress_small=True), r["time"][-1],
         np.array2string(x_run[-1].reshape(4, 5), precision=5, suppress_small=True)))
check(err <= 1e-9, "the written reactions are the least-norm ones to 1e-9 (%.1e)" % err)
check(np.max(np.abs(react[:, :, 5])) <= 1e-9 * np.max(np.abs(x_ref)),
      "no moment about the revolute axes")

# While the four-bar moves (driven, gravity tilted out of its plane), the sets of out-of-plane
# forces Fz and moments Mx, My that leave every link in equilibrium change with the
# configuration; the written ones must be orthogonal to them (least norm) at every record.
# The reactions belong to the recorded time and configuration (the index-1 equations of the
# recorded state), so the least-norm property holds there to round-off, from t = 0 on.
_, _, _, out = run(deck("four_bar.yaml"), "--set", "gravity=[0, -9.81, -9.81]")
r = load(out)
jn = names(r, "joints/names")
loop = [("crank_bearing", None, "crank"), ("crank_pin", "crank", "coupler"),
        ("rocker_pin", "coupler", "rocker"), ("rocker_pivot", None, "rocker")]
links = ["crank", "coupler", "rocker"]


def self_equilibrated(p):
    """orthonormal basis of (Fz, Mx, My) per joint, on its second body about its point p,
    that leave each link in equilibrium (forces along z, moments about x and y)"""
    E = np.zeros((9, 12))
    for j, (name, b1, b2) in enumerate(loop):
        px, py = p[jn.index(name), :2]
        for b, sgn in ((b1, -1.0), (b2, 1.0)):
            if b is not None:
                k = links.index(b)
                E[3 * k, 3 * j] += sgn
                E[3 * k + 1, 3 * j] += sgn * py
                E[3 * k + 1, 3 * j + 1] += sgn
                E[3 * k + 2, 3 * j] -= sgn * px
                E[3 * k + 2, 3 * j + 2] += sgn
    _, sv, vt = np.linalg.svd(E)
    assert np.sum(sv > 1e-10 * sv[0]) == 9
    return vt[9:].T


P, Rj = r["joints/position"], r["joints/reaction"]
worst = 0.0
for n in range(len(r["time"])):
    x = np.concatenate([Rj[n, jn.index(nm), 2:5] for nm, _, _ in loop])
    N = self_equilibrated(P[n])
    worst = max(worst, np.linalg.norm(N.T @ x) / np.linalg.norm(x))
print("moving four-bar, gravity out of plane: max |Fz| %.3f N; part of the out-of-plane "
      "reactions along self-equilibrated sets: %.1e" % (np.max(np.abs(Rj[:, :, 2])), worst))
check(worst <= 1e-12, "moving: the out-of-plane reactions are of least norm at every record, "
      "t = 0 included (%.1e)" % worst)
# the driven four-bar's recorded velocities satisfy the velocity constraints, with every
# integrator, and after the drive's kinks
for integ in ("em", "midpoint", "euler", "genalpha"):
    _, _, _, out = run(deck("four_bar.yaml"), "--integrator", integ)
    vv = np.max(load(out)["constraints/velocity_violation"])
    check(vv <= 1e-10, "driven four-bar, %s: velocity constraints hold at every record (%.1e)"
          % (integ, vv))
done()

"""/joints/drive: the force and torque a joint's drive (its motion, its joint loads, a control
law) applies on its second body, along and about the joint's own axes, against closed forms:
- a crank turned by a prescribed revolute motion theta(t) = 1 - cos 3t under gravity: the
  torque about the axis is I_O theta'' + m g r cos theta (the rest zero), also the z torque of
  /joints/reaction (the motion's row is part of the reaction);
- a cart driven along a tilted prismatic axis by x(t) = 0.2 (1 - cos 2t): the force along the
  axis is m x'' - m g . a;
- a second link driven by a motion on an elbow whose first link swings freely in 3D: the
  drive torque equals the /joints/reaction torque projected onto the axis rebuilt from the
  first link's /bodies/orientation (what users had to do by hand), for any orientation;
- joint_torque loads (given, and by a PD law): the drive torque is the load's value
  value x profile(t), and -kp (theta - theta*) - kd theta' from the recorded coordinates;
- a restart continues /joints/drive bit for bit;
- mbsim-export and mbsim-compare read it (columns F1..M3 with their units)."""
import os
import subprocess

import numpy as np

from common import MBSIM, PYTHON_BIN, ROOT, TMP, check, done, load, run, write_deck

G = 9.81
CRANK = """mbsim: 1
gravity: [0, -9.81, 0]
bodies:
  - {name: crank, mass: 2.0, inertia: [0.001, 0.2, 0.2], position: [0.5, 0, 0]}
joints:
  - {name: bearing, type: revolute, bodies: [ground, crank], point: [0, 0, 0], axis: [0, 0, 1],
     motion: {value: 1.0, profile: {expression: "1 - cos(3 * t)"}}}
solver: {dt: 1.0e-3, t_end: 2.0}
output: {xdmf: false}
"""
path = write_deck("crank.yaml", CRANK)
_, _, _, out = run(path)
res = load(out)
t, D = res["time"], res["joints/drive"]
th, thdd = 1 - np.cos(3 * t), 9 * np.cos(3 * t)
tau = (0.2 + 2.0 * 0.5 ** 2) * thdd + 2.0 * G * 0.5 * np.cos(th)
e = np.max(np.abs(D[:, 0, 3] - tau)) / np.max(np.abs(tau))
rest = np.max(np.abs(D[:, 0, [0, 1, 2, 4, 5]]))
check(D.shape == (len(t), 1, 6) and e <= 1e-12,
      "prescribed revolute: drive torque = I_O theta'' + m g r cos theta (%.1e relative)" % e)
check(rest <= 1e-12, "prescribed revolute: no drive force, no torque off the axis (%.1e)" % rest)
er = np.max(np.abs(res["joints/reaction"][:, 0, 5] - D[:, 0, 3]))
check(er <= 1e-12, "the motion's torque is the reaction's z torque (%.1e N m)" % er)

# restart: the first record repeats the restart record's drive, the last one the full run's
_, _, _, half = run(path, "--t-end", "1.0")
rpath = os.path.join(TMP, "crank_restarted.h5")
p = subprocess.run([MBSIM, path, "--restart", half, "-o", rpath, "--quiet"],
                   capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "crank restart runs (%s)" % p.stderr.strip()[:200])
h, b = load(half), load(rpath)
check(np.array_equal(h["joints/drive"][-1], b["joints/drive"][0]) and
      np.array_equal(res["joints/drive"][-1], b["joints/drive"][-1]),
      "restart: /joints/drive of the restart record and of the end, bit for bit")

# the tools: its columns by name, with units, and a comparison of two files
p = subprocess.run([PYTHON_BIN, os.path.join(ROOT, "scripts", "mbsim-export"), rpath, "--csv",
                    "joints/drive[bearing, M1]", "joints/drive[bearing, F1]"],
                   capture_output=True, text=True, timeout=300)
lines = p.stdout.splitlines()
head = lines[0] if lines else ""
col = np.array([float(x.split(",")[1].strip('"')) for x in lines[1:]]) if len(lines) > 1 else []
check(p.returncode == 0 and "joints/drive[bearing].M1 [N m]" in head and
      "joints/drive[bearing].F1 [N]" in head and np.array_equal(col, b["joints/drive"][:, 0, 3]),
      "mbsim-export: %s" % head)
p = subprocess.run([PYTHON_BIN, os.path.join(ROOT, "scripts", "mbsim-compare"), rpath, rpath],
                   capture_output=True, text=True, timeout=300)
check(p.returncode == 0, "mbsim-compare accepts files with /joints/drive (%s)" %
      p.stdout.strip().splitlines()[-1:])

# a prismatic motion along a tilted axis
CART = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: cart, mass: 3.0, inertia: [0.1, 0.1, 0.1], position: [0, 0, 0]}
joints:
  - {name: rail, type: prismatic, bodies: [ground, cart], point: [0, 0, 0], axis: [0.6, 0, 0.8],
     motion: {value: 0.2, profile: {expression: "1 - cos(2 * t)"}}}
solver: {dt: 1.0e-3, t_end: 1.0}
output: {xdmf: false}
"""
_, _, _, out = run(write_deck("cart.yaml", CART))
res = load(out)
t, D = res["time"], res["joints/drive"]
F = 3.0 * 0.2 * 4 * np.cos(2 * t) + 3.0 * G * 0.8
e = np.max(np.abs(D[:, 0, 0] - F)) / np.max(np.abs(F))
rest = np.max(np.abs(D[:, 0, 1:]))
check(e <= 1e-12 and rest <= 1e-12,
      "prescribed prismatic: drive force = m x'' - m g . a (%.1e relative), nothing else (%.1e)"
      % (e, rest))

# a spatial elbow: drive torque = reaction torque about the axis fixed to the first link
ARM = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
  - {name: upper, mass: 1.5, inertia: [0.01, 0.05, 0.05], position: [0.25, 0, 0]}
  - {name: fore, mass: 1.0, inertia: [0.01, 0.03, 0.03], position: [0.7, 0, 0]}
joints:
  - {name: shoulder, type: spherical, bodies: [ground, upper], point: [0, 0, 0]}
  - {name: elbow, type: revolute, bodies: [upper, fore], point: [0.5, 0, 0], axis: [0, 0.6, 0.8],
     motion: {value: 1.2, profile: {expression: "1 - cos(2 * t)"}}}
solver: {dt: 2.0e-3, t_end: 1.5}
output: {xdmf: false}
"""
_, _, _, out = run(write_deck("arm.yaml", ARM))
res = load(out)
D, R = res["joints/drive"][:, 1, :], res["joints/reaction"][:, 1, :]
Rot = res["bodies/orientation"][:, 0]           # [N, 3, 3], column i = d_i
a0 = np.array([0, 0.6, 0.8])                    # the axis in upper's frame (d_i(0) = e_i)
axis = np.einsum("nij,j->ni", Rot, a0)
proj = np.einsum("ni,ni->n", R[:, 3:], axis)
e = np.max(np.abs(D[:, 3] - proj)) / np.max(np.abs(proj))
off = np.max(np.abs(D[:, [0, 1, 2, 4, 5]]))
moved = np.max(np.abs(Rot[:, :, 0] - Rot[0, :, 0]))
check(e <= 1e-10 and off <= 1e-9 and moved > 0.1,
      "spatial elbow: drive torque = reaction torque about the moving axis (%.1e relative, "
      "off-axis %.1e, the upper link turned by %.2f)" % (e, off, moved))

# joint loads: a given torque, and a PD law
LOADS = """mbsim: 1
bodies:
  - {name: a, mass: 1.0, inertia: [0.3, 0.3, 0.5], position: [0, 0, 0]}
  - {name: b, mass: 1.0, inertia: [0.3, 0.3, 0.5], position: [2, 0, 0]}
joints:
  - {name: ja, type: revolute, bodies: [ground, a], point: [0, 0, 0], axis: [0, 0, 1]}
  - {name: jb, type: revolute, bodies: [ground, b], point: [2, 0, 0], axis: [1, 0, 0]}
loads:
  - {name: push, type: joint_torque, joint: ja, value: 0.7, profile: {sine: {amplitude: 1, frequency: 0.5}}}
  - {name: servo, type: joint_torque, joint: jb,
     control: {kp: 8.0, kd: 0.4, target: {value: 0.5, profile: {ramp: [0, 1]}}}}
solver: {dt: 5.0e-3, t_end: 2.0}
output: {xdmf: false}
"""
_, _, _, out = run(write_deck("loads.yaml", LOADS))
res = load(out)
t, D = res["time"], res["joints/drive"]
e1 = np.max(np.abs(D[:, 0, 3] - 0.7 * np.sin(np.pi * t)))
th, om = res["joints/coordinates"][:, 1, 0], res["joints/rates"][:, 1, 0]
tgt = 0.5 * np.clip(t, 0, 1)
rate = np.where(t < 1 - 1e-12, 0.5, 0.0)
e2 = np.max(np.abs(D[:, 1, 3] - (-8.0 * (th - tgt) - 0.4 * (om - rate))))
lf = res["loads/force"]
e3 = np.max(np.abs(D[:, 1, 3] - lf[:, 1, 3]))
check(e1 <= 1e-12, "given joint torque: drive = value x profile(t) (%.1e N m)" % e1)
check(e2 <= 1e-12 and e3 <= 1e-12,
      "PD law: drive = -kp (theta - theta*) - kd (theta' - theta*') from the records (%.1e), "
      "= the load's torque about world x (%.1e)" % (e2, e3))
done()

"""Seeing every result with the Python tools (docs/post-processing.md, docs/sweeps.md), each number against mechanics or against the file read with h5py alone:

- mbsim.py: contact_force on a box at rest is m g (1e-9), the ground gets minus it, the
  torque about the box's centre vanishes; a bouncing ball recorded every 10 steps has the
  mean of every step's forces and the contact impulses balance its momentum; beam nodes are
  named NAME[i] in the model's order (two beams whose names sort the other way), each
  node's contact point lies under that node, and a beam's node forces add up to its weight;
  select() picks components by name and number, with each column's units;
- mbsim-plot: one panel per unit labelled with it, runs overlaid with their own line style,
  the plotted values those of the file, a component picked by name; file names;
- mbsim-export: picked components and contact_force:BODY, exactly;
- mbsim-compare: a box pushed by a growing force k t with mu = 0.3 and 0.31 starts to slide
  at t = mu m g / k; the tool finds that first divergence (within two steps), the largest
  difference at the end against the closed form F/6m (t - t*)^3, the same numbers as h5py;
  records of different grids interpolated (the printed difference against numpy's), the same
  run recorded every step and every 3rd step equal;
- mbsim-sweep: outputs max(...), min(...), mean(...), final(...) against h5py and the
  momentum balance (the mean contact force on a ball), shown in the console table."""
import csv
import importlib.machinery
import importlib.util
import io
import os
import re
import subprocess
import sys

import h5py
import numpy as np
import yaml

from common import MBSIM, PYTHON_BIN, ROOT, TMP, check, deck, done, run, write_deck

SCRIPTS = os.path.join(ROOT, "scripts")
sys.path.insert(0, SCRIPTS)
import mbsim  # noqa: E402

G = 9.81


def tool(name, *args, timeout=300):
    p = subprocess.run([PYTHON_BIN, os.path.join(SCRIPTS, name)] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def load_script(name):
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"),
                                                  os.path.join(SCRIPTS, name))
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(mod)
    return mod


# ---------- contact forces ----------
BOX = """mbsim: 1
title: a box at rest on a floor
gravity: [0, 0, -9.81]
bodies:
  - name: box
    shape: {box: [0.2, 0.2, 0.1]}
    density: 250
    position: [0.3, -0.1, 0.05]
ground:
  collision:
    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}
contacts:
  - {name: box_floor, between: [box, ground], friction: 0.3}
solver: {integrator: moreau, dt: 1.0e-3, t_end: 0.3}
output: {every: 1, xdmf: false}
"""
_, _, _, box_h5 = run(write_deck("box.yaml", BOX))
r = mbsim.load(box_h5)
F = r.contact_force("box")
W = r.contact_force("box", torque=True)
mg = np.array([0.0, 0.0, 1.0 * G])
err = np.max(np.linalg.norm(F[1:] - mg, axis=1)) / G
check(F.shape == (len(r), 3) and np.all(F[0] == 0) and err <= 1e-9,
      "contact_force('box') at rest on a floor: m g upwards at every record after t = 0, max "
      "relative error %.1e (<= 1e-9; measured 3.4e-10), 0 at t = 0" % err)
check(np.array_equal(r.contact_force("ground"), -F) and
      np.array_equal(r.contact_force("box", other="ground"), F),
      "the ground gets minus it; other='ground' keeps the same contacts")
check(W.shape == (len(r), 6) and np.array_equal(W[:, :3], F) and
      np.max(np.abs(W[1:, 3:])) <= 1e-9 * G * 0.1,
      "torque=True: [N, 6], the torque about the box's centre vanishes (max %.1e N m)" %
      np.max(np.abs(W[1:, 3:])))
c = r.contacts()
k = 5
s = c.rows(k)
step_force = -np.sum(c.force[s], axis=0)  # the box is body a of its rows
check(c.body_a[s.start] == "box" and c.body_b[s.start] == "ground" and
      np.all(c.time[s] == r.time[k]) and np.all(c.record[s] == k) and
      np.linalg.norm(step_force - mg) <= 1e-9 * G and np.allclose(-np.sum(c.mean_force[s], 0),
                                                                 F[k], rtol=0, atol=1e-12),
      "contacts(): rows of record %d name the box and the ground, their last step's force "
      "(impulse / step, world, via tangent1) sums to m g: %s" % (k, step_force))
try:
    r.contact_force("crate")
    check(False, "contact_force of an unknown body raises KeyError")
except KeyError as e:
    check("crate" in str(e), "contact_force of an unknown body raises KeyError (%s)" % e)

ball = deck(os.path.join("contacts", "bouncing_ball.yaml"))
_, _, _, b1 = run(ball, "--t-end", "1.5", "--set", "output.xdmf=false")
_, _, _, b10 = run(ball, "--t-end", "1.5", "--set", "output.xdmf=false", "--set",
                   "output.every=10")
ra, rb = mbsim.load(b1), mbsim.load(b10)
Fa, Fb = ra.contact_force("ball"), rb.contact_force("ball")
m10 = np.zeros_like(Fb)
m10[1:] = Fa[1:].reshape(-1, 10, 3).mean(axis=1)
dev = np.max(np.abs(m10 - Fb)) / np.max(np.abs(Fb))
v = rb.body("ball")["velocity"][:, 2]
J = np.sum(Fb[1:, 2] * np.diff(rb.time))
want = v[-1] - v[0] + G * rb.time[-1]
check(np.array_equal(ra.time[::10], rb.time) and dev <= 1e-12 and abs(J - want) <= 1e-12 * want,
      "contact_force('ball') every 10 steps = the mean of every step's (max deviation %.1e of "
      "the largest, <= 1e-12); sum F dt = %.12g = m (v(T) - v(0)) + m g T = %.12g" %
      (dev, J, want))

# beam nodes: NAME[i] in the model's order, whatever the names' alphabetical order
BEAMS = """mbsim: 1
title: two beams and a ball on a floor
gravity: [0, 0, -9.81]
bodies:
  - {name: ball, mass: 1, inertia: [0.004, 0.004, 0.004], position: [0, 2, 0.1],
     collision: [{sphere: 0.1}]}
beams:
  - {name: zeta, from: [0, 0, 0.005], to: [1, 0, 0.005], elements: 3, up: [0, 0, 1],
     section: {E: 2.0e9, nu: 0.3, density: 1000, rectangle: [0.01, 0.02]},
     collision: {sphere: 0.005}}
  - {name: alpha, from: [0, 1, 0.005], to: [1, 1, 0.005], elements: 2, up: [0, 0, 1],
     section: {E: 2.0e9, nu: 0.3, density: 1000, rectangle: [0.01, 0.02]},
     collision: {sphere: 0.005}}
ground:
  collision:
    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}
contacts:
  - {name: all_floor, between: ["*", ground]}
solver: {dt: 1.0e-3, t_end: 0.01}
output: {xdmf: false}
"""
_, _, _, beams_h5 = run(write_deck("beams.yaml", BEAMS))
r = mbsim.load(beams_h5)
c = r.contacts()
k = len(r) - 1
bad, labels = [], []
for i in range(c.rows(k).start, c.rows(k).stop):
    lab = c.body_a[i] if c.index_a[i] >= 1 else c.body_b[i]
    if "[" not in lab:
        continue
    labels.append(lab)
    name, node = lab[:lab.index("[")], int(lab[lab.index("[") + 1:-1])
    p = r.beam(name)["position"][k, node]
    if np.linalg.norm(c.point[i, :2] - p[:2]) > 1e-9 or abs(c.point[i, 2] - (p[2] - 0.005)) > 1e-6:
        bad.append((lab, c.point[i], p))
check(r.beam_order == ["zeta", "alpha"] and sorted(labels) == sorted(
    ["zeta[%d]" % i for i in range(4)] + ["alpha[%d]" % i for i in range(3)]) and not bad,
      "beam nodes are named NAME[i] counted in the model's order (zeta before alpha), and each "
      "row's contact point lies under its node (%s)" % (bad[:2] or ", ".join(labels)))
wz = sum(r.contact_force("zeta[%d]" % i)[-1, 2] for i in range(4))
wa = sum(r.contact_force("alpha[%d]" % i)[-1, 2] for i in range(3))
check(abs(wz - 0.2 * G) <= 1e-6 * G and abs(wa - 0.2 * G) <= 1e-6 * G,
      "the node forces of each beam add up to its weight 0.2 kg g: %.9f and %.9f N" % (wz, wa))

# ---------- select ----------
_, _, _, sc = run(deck("slider_crank.yaml"), "--t-end", "0.3", "--set", "output.xdmf=false")
_, _, _, sc2 = run(deck("slider_crank.yaml"), "--t-end", "0.3", "--set", "output.xdmf=false",
                   "--set", "solver.dt=2e-3")
r, r2 = mbsim.load(sc), mbsim.load(sc2)
with h5py.File(sc, "r") as f:
    R, X, Q = f["joints/reaction"][()], f["bodies/position"][()], f["state/q"][()]
    JC = f["joints/coordinates"][()]
    qn = [n.decode() for n in f["state/names"][()]]
    ju = [u.decode() if isinstance(u, bytes) else u for u in f["joints/coordinates"].attrs[
        "joint_units"]]
sel = mbsim.select(r, "joints/reaction[crank_bearing, Mz]")
check(len(sel) == 1 and np.array_equal(sel[0][1], R[:, 0, 5]) and sel[0][2] == "N m" and
      sel[0][0] == "joints/reaction[crank_bearing].Mz",
      "select joints/reaction[crank_bearing, Mz]: one column, the file's, in N m")
sel = mbsim.select(r, "bodies/position[slider]")
check([c[0] for c in sel] == ["bodies/position[slider].%s" % a for a in "xyz"] and
      all(np.array_equal(c[1], X[:, 2, i]) for i, c in enumerate(sel)),
      "select bodies/position[slider]: x, y, z of the third body")
sel = mbsim.select(r, "bodies/position[-1, 2]") + mbsim.select(r, "state/q[%s]" % qn[4])
check(np.array_equal(sel[0][1], X[:, -1, 2]) and np.array_equal(sel[1][1], Q[:, 4]) and
      sel[1][2] == "1", "select by number (negative from the end) and state/q by coordinate "
      "name with its column unit (%s: %s)" % (qn[4], sel[1][2]))
units_ok = [(c.entity, c.component, c.unit) for c in mbsim.select(r, "joints/coordinates")]
want_units = [(j, str(i), u) for j, us in zip(r.joints["names"], ju)
              for i, u in enumerate(us.split(", ")) if u != "none"]
check(units_ok == want_units and np.array_equal(mbsim.select(r, "joints/coordinates[rail]")[0][1],
                                                JC[:, 3, 0]),
      "joints/coordinates: a column per joint coordinate with its unit from joint_units (%s)" %
      units_ok)
for spec, text in (("joints/reaction[crank, Mz]", "known: crank_bearing, crank_pin"),
                   ("joints/reaction[rail, Qz]", "no component 'Qz'"),
                   ("no/such", "not a time series")):
    try:
        mbsim.select(r, spec)
        check(False, "select %s raises KeyError" % spec)
    except KeyError as e:
        check(text in str(e), "select %s: KeyError (%s)" % (spec, e))

# ---------- mbsim-plot ----------
plot = load_script("mbsim-plot")
check(plot.matplotlib.rcParams["text.parse_math"] is False and
      plot.matplotlib.rcParams["text.usetex"] is False,
      "mbsim-plot shows text as text: mathtext and TeX off")
spec = "joints/coordinates"
fig = plot.dataset_figure([r, r2], spec, [mbsim.select(r, spec), mbsim.select(r2, spec)])
axes = fig.axes
labels = [ax.get_ylabel() for ax in axes]
lines = {ax.get_ylabel(): ax.get_lines() for ax in axes}
rad = lines.get("joints/coordinates [rad]", [])
m_lines = lines.get("joints/coordinates [m]", [])
n_rad = sum(1 for u in want_units if u[2] == "rad")
n_m = sum(1 for u in want_units if u[2] == "m")
rail = [ln for ln in m_lines if ln.get_label().startswith("coordinates[rail]")]
check(labels == ["joints/coordinates [rad]", "joints/coordinates [m]"] and
      len(rad) == 2 * n_rad and len(m_lines) == 2 * n_m and len(rail) == 2 and
      [ln.get_linestyle() for ln in rail] == ["-", "--"] and
      np.array_equal(rail[0].get_ydata(), JC[:, 3, 0]) and
      np.array_equal(rail[1].get_xdata(), r2.time),
      "mbsim-plot of two runs: a panel per unit labelled [rad] and [m], each run's lines "
      "(solid, dashed) with the files' values (%s)" % labels)
fig = plot.dataset_figure([r], "joints/reaction[crank_bearing, Mz]",
                          [mbsim.select(r, "joints/reaction[crank_bearing, Mz]")])
check(len(fig.axes) == 1 and fig.axes[0].get_ylabel() == "joints/reaction[crank_bearing].Mz [N m]"
      and len(fig.axes[0].get_lines()) == 1 and
      np.array_equal(fig.axes[0].get_lines()[0].get_ydata(), R[:, 0, 5]),
      "mbsim-plot of joints/reaction[crank_bearing, Mz]: one line, labelled with its unit")
out = os.path.join(TMP, "plots")
code, so, se = tool("mbsim-plot", sc, sc2, "joints/reaction[crank_bearing, Mz]",
                    "contact_force:box" if False else "bodies/position[slider, x]", "-o", out)
pngs = [os.path.join(out, n) for n in ("joints_reaction_crank_bearing_Mz.png",
                                       "bodies_position_slider_x.png")]
check(code == 0 and all(os.path.isfile(p) and open(p, "rb").read(4) == b"\x89PNG" for p in pngs)
      and so.split() == pngs, "mbsim-plot A.h5 B.h5 PATH[...] PATH[...]: one PNG each (%s%s)" %
      (so.strip(), se.strip()[-200:]))
code, so, se = tool("mbsim-plot", box_h5, "contact_force:box", "-o", out)
check(code == 0 and so.strip() == os.path.join(out, "contact_force_box.png"),
      "mbsim-plot RUN contact_force:box writes contact_force_box.png (%s)" % se.strip()[-200:])
code, so, se = tool("mbsim-plot", sc, sc2, "-o", out)
check(code == 2 and "give PATH" in se, "two runs without PATH: exit 2 (%s)" % se.strip())
code, so, se = tool("mbsim-plot", sc, "joints/reaction[crank, Mz]", "-o", out)
check(code == 2 and "known: crank_bearing" in se and "Traceback" not in se,
      "an unknown joint: exit 2 naming the known ones (%s)" % se.strip())

# ---------- mbsim-export ----------
p = subprocess.run([PYTHON_BIN, os.path.join(SCRIPTS, "mbsim-export"), box_h5, "--csv",
                    "contact_force:box[z]", "bodies/position[box, z]"], capture_output=True)
code, so, se = p.returncode, p.stdout.decode(), p.stderr.decode()
rows = list(csv.reader(io.StringIO(so, newline="")))
data = np.array(rows[1:], dtype=float) if len(rows) > 1 else np.zeros((0, 3))
box = mbsim.load(box_h5)
check(code == 0 and rows[0] == ["time [s]", "contact_force:box.z [N]",
                                "bodies/position[box].z [m]"] and
      np.array_equal(data[:, 1], box.contact_force("box")[:, 2]) and
      np.array_equal(data[:, 2], box["bodies/position"][:, 0, 2]) and so.endswith("\r\n"),
      "mbsim-export contact_force:box[z] bodies/position[box, z]: the columns exactly, CRLF "
      "(%s)" % (rows[0] if rows else se))

# ---------- mbsim-compare: the first divergence of two frictions ----------
PUSH = """mbsim: 1
title: a box pushed along a floor by a growing force
parameters: {mu: 0.3}
gravity: [0, 0, -9.81]
bodies:
  - name: box
    shape: {box: [0.2, 0.2, 0.1]}
    density: 250
    position: [0, 0, 0.05]
ground:
  collision:
    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}
contacts:
  - {name: box_floor, between: [box, ground], friction: $mu}
loads:
  - {name: push, type: force, body: box, value: [10, 0, 0], profile: {ramp: [0, 1]}}
solver: {integrator: moreau, dt: 1.0e-3, t_end: 0.5}
output: {every: 1, xdmf: false}
"""
push = write_deck("push.yaml", PUSH)
_, _, _, pa = run(push)
_, _, _, pb = run(push, "--set", "parameters.mu=0.31")
K, M, T, DT = 10.0, 1.0, 0.5, 1e-3
t_a, t_b = 0.3 * M * G / K, 0.31 * M * G / K     # sliding starts where k t = mu m g
ex = ("--exclude", "contacts/*", "--exclude", "solver/*", "--exclude", "state/multipliers")
# atol 5e-10: the first sliding step (t = 0.295 s) moves the box by 1.000e-9 m, so that at an
# atol of 1e-9 the stuck box's round-off drift (1e-14 m, either sign) decided whether its
# position or only its velocity (2e-6 m/s) was first beyond the tolerance
code, so, se = tool("mbsim-compare", pa, pb, "--atol", "5e-10", *ex)
line = [ln for ln in so.splitlines() if ln.startswith("/bodies/position[box]:")]
mm = re.match(r"/bodies/position\[box\]: max \|a - b\| = (\S+) m \(x\) at t = (\S+) s "
              r"\(a = (\S+), b = (\S+)\); beyond tolerance from t = (\S+) s$", line[0]) \
    if line else None
with h5py.File(pa, "r") as fa, h5py.File(pb, "r") as fb:
    xa, xb, tt = fa["bodies/position"][:, 0, 0], fb["bodies/position"][:, 0, 0], fa["time"][()]
d = np.abs(xa - xb)
i = int(np.argmax(d))
closed = K / (6 * M) * ((T - t_a) ** 3 - (T - t_b) ** 3)
if mm:
    dmax, tmax, va, vb, first = (float(g) for g in mm.groups())
else:
    dmax = tmax = va = vb = first = float("nan")
check(code == 1 and mm is not None and dmax == float("%.6g" % d[i]) and
      tmax == float("%.6g" % tt[i]) and va == float("%.6g" % xa[i]) and
      vb == float("%.6g" % xb[i]),
      "compare mu = 0.3 / 0.31: /bodies/position[box] prints max |a - b|, its time and both "
      "values as h5py reads them (%s)" % (line[0] if line else so[-300:] + se))
check(so.splitlines()[:3] == ["A: %s: 501 records, t = 0 ... 0.5 s, completed" % pa,
                              "B: %s: 501 records, t = 0 ... 0.5 s, completed" % pb,
                              "times: the same 501 records"],
      "compare names the runs with their records, time span and status (%s)" %
      so.splitlines()[:3])
check(t_a <= first <= t_a + 2 * DT and
      so.splitlines()[-1].endswith("first at t = %s s in /bodies/position[box]" % mm.group(5)
                                   if mm else "?"),
      "compare finds the first divergence at t = %g s: the box starts to slide at t* = mu m g "
      "/ k = %.4f s (within two steps after it)" % (first, t_a))
check(abs(dmax - closed) <= 1e-3 * closed and tmax == T,
      "the largest difference, at t = %g s: %.6g m against k/6m ((T - t_a)^3 - (T - t_b)^3) = "
      "%.6g m (1e-3 relative)" % (tmax, dmax, closed))
code, so, se = tool("mbsim-compare", pa, pb, "--atol", "1e-9", "--rtol", "0", "--quiet", *ex,
                    "--exclude", "*")
check(code == 0 and so.startswith("equal:"), "everything excluded: equal (%s)" % so.strip())

# the contact tables, row by row at the same records: the corners' impulses since the
# previous record, and records that hold different numbers of rows
code, so, se = tool("mbsim-compare", pa, pb, "--atol", "1e-9")
line = [ln for ln in so.splitlines() if ln.startswith("/contacts/impulse_since_record[x]:")]
with h5py.File(pa, "r") as fa, h5py.File(pb, "r") as fb:
    sa, sb = fa["contacts/impulse_since_record"][:, 0], fb["contacts/impulse_since_record"][:, 0]
    rec = fa["contacts/table"][:, 0].astype(int)
    same_rows = np.array_equal(fa["contacts/count"][()], fb["contacts/count"][()])
ds = np.abs(sa - sb)
i = int(np.argmax(ds))
first = tt[rec[int(np.argmax(ds > 1e-9))]]
want = ("/contacts/impulse_since_record[x]: max |a - b| = %.6g N s at t = %.6g s (a = %.6g, "
        "b = %.6g); beyond tolerance from t = %.6g s" % (ds[i], tt[rec[i]], sa[i], sb[i], first))
check(code == 1 and same_rows and line == [want],
      "compare: /contacts/impulse_since_record row by row, its largest difference, time, "
      "values and first time beyond the tolerance as h5py reads them (%s)" %
      (line or so[-300:]))
_, _, _, e9 = run(ball, "--t-end", "1.5", "--set", "output.xdmf=false", "--set",
                  "parameters.e=0.9")
code, so, se = tool("mbsim-compare", b1, e9)
with h5py.File(b1, "r") as f1, h5py.File(e9, "r") as f9:
    c1, c9, tb = f1["contacts/count"][()], f9["contacts/count"][()], f1["time"][()]
k = int(np.argmax(c1 != c9))
want = ("/contacts/count: the records hold different numbers of rows from t = %.6g s (%d and "
        "%d)" % (tb[k], c1[k], c9[k]))
check(code == 1 and want in so.splitlines(), "compare: restitution 0.5 against 0.9, the first "
      "record whose contacts differ in number (%s)" % want)

# the same run on other record grids: every 2nd and every 3rd step
_, _, _, p2 = run(push, "--set", "output.every=2")
_, _, _, p3 = run(push, "--set", "output.every=3")
# (what depends on the record grid is left out: the solver's statistics of the steps since
# the previous record, the contact impulses summed since it)
code, so, se = tool("mbsim-compare", pa, p3, "--rtol", "1e-9", "--atol", "1e-12", "--exclude",
                    "solver/*", "--exclude", "contacts/*")
check(code == 0 and "compared at the 168 records of B in [0, 0.5] s, A's values interpolated"
      in so, "every step against every 3rd: compared at B's 168 records (A's values there "
      "are its own records), equal within 1e-9 (%s)" % (so.strip()[-300:] + se))
code, so, se = tool("mbsim-compare", p2, p3, "--all", "--exclude", "contacts/*", "--exclude",
                    "solver/*")
line = [ln for ln in so.splitlines() if ln.startswith("/bodies/velocity[box]:")]
with h5py.File(p2, "r") as f2, h5py.File(p3, "r") as f3:
    t2, v2 = f2["time"][()], f2["bodies/velocity"][:, 0, 0]
    t3, v3 = f3["time"][()], f3["bodies/velocity"][:, 0, 0]
dv = np.abs(np.interp(t3, t2, v2) - v3)
check(code == 1 and line and line[0].startswith(
    "/bodies/velocity[box]: max |a - b| = %s m/s (x) at t = %s s" % (fmt := "%.6g" % dv.max(),
                                                                      "%.6g" % t3[np.argmax(dv)])),
      "every 2nd against every 3rd step: A interpolated linearly at B's records, max |a - b| "
      "of the velocity %s m/s as numpy's interp gives (%s)" % (fmt, line[0] if line else so[-300:]))

# ---------- mbsim-sweep: reductions over time ----------
sweep_dir = os.path.join(TMP, "sweep")
sweep_file = os.path.join(TMP, "balls.yaml")
outputs = ["max(contact_force:ball[z])", "mean(contact_force:ball[z])", "bodies/position[ball, z]",
           "min(bodies/velocity[ball, z])", "final(energy/total)", "max(bodies/position[ball])"]
with open(sweep_file, "w") as f:
    yaml.safe_dump({"sweep": 1, "deck": ball, "set": {"solver.t_end": 1.0, "output.xdmf": False,
                                                      "output.every": 10},
                    "grid": {"parameters.e": [0.5, 0.9]}, "outputs": outputs}, f)
p = subprocess.run([PYTHON_BIN, os.path.join(SCRIPTS, "mbsim-sweep"), sweep_file, "--mbsim",
                    MBSIM, "-o", sweep_dir, "--jobs", "2"], capture_output=True, text=True,
                   timeout=600)
with open(os.path.join(sweep_dir, "summary.csv")) as f:
    summary = list(csv.DictReader(f))
ok, got = True, []
for row in summary:
    with h5py.File(os.path.join(sweep_dir, row["file"]), "r") as f:
        t = f["time"][()]
        z, vz = f["bodies/position"][:, 0, 2], f["bodies/velocity"][:, 0, 2]
        E = f["energy/total"][()]
        pos = f["bodies/position"][:, 0]
    Fz = mbsim.load(os.path.join(sweep_dir, row["file"])).contact_force("ball")[:, 2]
    mean_closed = (vz[-1] - vz[0]) / t[-1] + G      # momentum balance, m = 1
    want = {"max(contact_force:ball[z])": np.max(Fz), "bodies/position[ball,z]": z[-1],
            "min(bodies/velocity[ball,z])": np.min(vz), "final(energy/total)": E[-1],
            "max(bodies/position[ball,0])": np.max(pos[:, 0]),
            "max(bodies/position[ball,2])": np.max(pos[:, 2])}
    for col, val in want.items():
        ok = ok and float(row[col]) == val
    mean = float(row["mean(contact_force:ball[z])"])
    ok = ok and abs(mean - mean_closed) <= 1e-12 * G
    got.append((row["parameters.e"], row["max(contact_force:ball[z])"], mean))
check(p.returncode == 0 and len(summary) == 2 and ok,
      "sweep outputs: max, min, final and bare values equal h5py's, mean(contact_force:ball[z]) "
      "= (v(T) - v(0)) / T + g (the momentum balance, 1e-12 g): %s" % (got or p.stderr[-300:]))
table = p.stdout.splitlines()
head = [ln for ln in table if ln.startswith("case ") and ln.rstrip().endswith("status")]
body = [ln for ln in table if re.match(r"\d+ ", ln)]
code, so, se = tool("mbsim-compare", os.path.join(sweep_dir, "summary.h5"),
                    os.path.join(sweep_dir, "summary.h5"), "--exact")
check(code == 0 and so.strip() == "equal: 1 datasets, 0 attributes (rtol 0, atol 0)",
      "compare --exact reads a sweep's summary.h5 (a compound dataset): %s" % (so + se).strip())
check(head and "max(contact_force:ball[z])" in head[0] and len(body) == 2 and all(
    ("%.6g" % float(summary[i]["max(contact_force:ball[z])"])) in body[i] and
    ("%.6g" % float(summary[i]["mean(contact_force:ball[z])"])) in body[i] for i in range(2)),
      "the console table shows the outputs (%s)" % (head[0][:120] if head else p.stdout[-300:]))
done()

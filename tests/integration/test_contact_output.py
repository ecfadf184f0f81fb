"""/contacts/impulse_since_record and /contacts/tangent1 (docs/output.md), read with h5py
alone and checked against mechanics, not against the program's own numbers:

- a box resting on a floor: the contact impulses since the previous record over the time
  since it are m g upwards on the box at every record (1e-9 relative), written every step or
  every 10th;
- a bouncing ball recorded every 10 steps gives the same mean contact force as recorded
  every step (the mean of 10 steps' forces, to round-off), impacts between records
  included (they appear as rows gone by the record's step: status 0, no impulse in the
  last step, their sum), and the impulses balance the momentum: sum F dt = m (v(T) - v(0))
  + m g T;
- a box sliding and a ball rolling down an incline with friction: the force on the box is
  m g cos(alpha) (n - mu d), on the ball m (5/7 g sin(alpha) d) + m g e_z (Coulomb sliding and
  rolling without slip, to the scheme's accuracy); with every step recorded the impulse
  summed is the step's, impulse_n n + impulse_t1 t1 + impulse_t2 (n x t1) with t1 from
  /contacts/tangent1;
- the layout: [rows, 3] beside the table, attributes units, columns, aligned_with;
- a restart in flight continues the datasets bit for bit (records after the restart equal
  the uninterrupted run's)."""
import os

import h5py
import numpy as np

from common import TMP, check, deck, done, run, write_deck

G = 9.81
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
solver: {integrator: moreau, dt: 1.0e-3, t_end: 0.5}
output: {every: 1, xdmf: false}
"""


def read(path):
    with h5py.File(path, "r") as f:
        r = {k: f[k][()] for k in ("time", "contacts/table", "contacts/count", "contacts/offsets",
                                   "contacts/impulse_since_record", "contacts/tangent1",
                                   "bodies/velocity", "bodies/position")}
        r["attrs"] = {k: dict(f[k].attrs) for k in ("contacts/impulse_since_record",
                                                     "contacts/tangent1", "contacts/table")}
        r["names"] = [n.decode() for n in f["bodies/names"][()]]
    return r


def mean_force(r, body):
    """[N, 3]: the contact impulses on body since the previous record over the time since it
    (body b gets the sum, body a minus it); 0 at the first record"""
    t, tab, S = r["time"], r["contacts/table"], r["contacts/impulse_since_record"]
    off, cnt = r["contacts/offsets"], r["contacts/count"]
    F = np.zeros((len(t), 3))
    for k in range(1, len(t)):
        for i in range(off[k], off[k] + cnt[k]):
            sign = float(tab[i, 2] == body) - float(tab[i, 1] == body)
            F[k] += sign * S[i]
        F[k] /= t[k] - t[k - 1]
    return F


# ---------- a box at rest: m g ----------
box_deck = write_deck("box.yaml", BOX)
for every in (1, 10):
    _, _, _, out = run(box_deck, "--set", "output.every=%d" % every)
    r = read(out)
    F = mean_force(r, 0)
    want = np.array([0.0, 0.0, 1.0 * G])
    err = np.max(np.linalg.norm(F[1:] - want, axis=1)) / G
    check(len(r["time"]) > 10 and r["contacts/count"][0] == 0 and np.all(F[0] == 0) and
          err <= 1e-9, "a box at rest, a record every %d step(s): the mean contact force is "
          "m g upwards at every record, max |F - m g e_z| / m g = %.1e (<= 1e-9; measured "
          "3.4e-10 every step)" % (every, err))
    ground = -mean_force(r, -1)
    check(np.array_equal(ground, F), "the ground gets minus the box's force")

# ---------- a bouncing ball: every 10 steps = the mean of every step ----------
ball = deck(os.path.join("contacts", "bouncing_ball.yaml"))
common_args = ("--t-end", "1.5", "--set", "output.xdmf=false")
_, _, _, o1 = run(ball, *common_args)
_, _, _, o10 = run(ball, *common_args, "--set", "output.every=10")
a, b = read(o1), read(o10)
Fa, Fb = mean_force(a, 0), mean_force(b, 0)
same_grid = np.array_equal(a["time"][::10], b["time"]) and \
    np.array_equal(a["bodies/position"][::10], b["bodies/position"])
mean10 = np.zeros_like(Fb)
mean10[1:] = Fa[1:].reshape(-1, 10, 3).mean(axis=1)
dev = np.max(np.abs(mean10 - Fb)) / np.max(np.abs(Fb))
# records of the coarse run whose interval holds an impact at a step other than its own
inside = [k for k in range(1, len(b["time"])) if np.any(Fa[10 * (k - 1) + 1:10 * k, 2] > 100.0)]
check(same_grid and len(inside) >= 3 and dev <= 1e-12,
      "a bouncing ball every 10 steps: the mean force of each record is the mean of the 10 "
      "steps' forces, max deviation %.1e of the largest force (<= 1e-12; round-off); %d "
      "records hold an impact between records (first at t = %.2f s)" % (
          dev, len(inside), b["time"][inside[0]] if inside else np.nan))
k = inside[0] if inside else 0
rows = slice(b["contacts/offsets"][k], b["contacts/offsets"][k] + b["contacts/count"][k])
tab = b["contacts/table"][rows]
gone = (tab[:, 13] == 0) & np.all(tab[:, 10:13] == 0, axis=1) & \
    (b["contacts/impulse_since_record"][rows][:, 2] < -0.5)
check(k > 0 and np.any(gone), "the impact's contact appears at its record although gone by the "
      "record's step: status 0, no impulse in the last step, its sum (%s N s)" %
      (b["contacts/impulse_since_record"][rows][:, 2] if k else "-"))
for name, r, F in (("every step", a, Fa), ("every 10 steps", b, Fb)):
    J = np.sum(F[1:, 2] * np.diff(r["time"]))
    v = r["bodies/velocity"][:, 0, 2]
    want = 1.0 * (v[-1] - v[0]) + 1.0 * G * (r["time"][-1] - r["time"][0])
    check(abs(J - want) <= 1e-12 * want, "ball, %s: sum F dt = %.15g N s = m (v(T) - v(0)) + "
          "m g T = %.15g (1e-12)" % (name, J, want))

# ---------- an incline with friction: sliding and rolling, world vectors ----------
_, _, _, oi = run(deck(os.path.join("contacts", "incline.yaml")), "--t-end", "0.5", "--set",
                  "output.xdmf=false")
r = read(oi)
alpha, mu = np.radians(30.0), 0.3
n = np.array([np.sin(alpha), 0.0, np.cos(alpha)])
d = np.array([np.cos(alpha), 0.0, -np.sin(alpha)])
want = {"box": G * np.cos(alpha) * (n - mu * d),
        "ball": 5.0 / 7.0 * G * np.sin(alpha) * d + np.array([0.0, 0.0, G])}
for name, Fw in want.items():
    F = mean_force(r, r["names"].index(name))
    err = np.max(np.linalg.norm(F[1:] - Fw, axis=1)) / np.linalg.norm(Fw)
    # (sliding: exact but for the contact tolerance; rolling: the scheme's error,
    # docs/integrators.md: 1.5e-5 in the speed at dt = 1e-3)
    bound = 1e-8 if name == "box" else 3e-5
    check(err <= bound, "incline: the contact force on the %s is %s (closed form), max "
          "relative error %.1e (<= %g; measured 1.5e-9 box, 9.4e-6 ball)" % (
              name, "m g cos(a) (n - mu d)" if name == "box" else "m (5/7 g sin(a) d) + m g e_z",
              err, bound))
tab, S, t1 = r["contacts/table"], r["contacts/impulse_since_record"], r["contacts/tangent1"]
nrm = tab[:, 6:9]
J = tab[:, 10:11] * nrm + tab[:, 11:12] * t1 + tab[:, 12:13] * np.cross(nrm, t1)
check(len(tab) > 0 and np.max(np.abs(J - S)) <= 1e-15 * np.max(np.abs(S)) and
      np.max(np.abs(np.linalg.norm(t1, axis=1) - 1)) <= 1e-15 and
      np.max(np.abs(np.sum(t1 * nrm, axis=1))) <= 1e-15 and np.max(np.abs(S[:, 1])) > 0,
      "every step recorded: impulse_since_record = impulse_n n + impulse_t1 t1 + impulse_t2 "
      "(n x t1) with the unit tangent t1 of /contacts/tangent1 (max difference %.1e)" %
      np.max(np.abs(J - S)))

# ---------- the layout ----------
at = r["attrs"]
check(S.shape == (len(tab), 3) and t1.shape == (len(tab), 3) and
      at["contacts/impulse_since_record"]["aligned_with"] == "/contacts/table" and
      at["contacts/tangent1"]["aligned_with"] == "/contacts/table" and
      list(at["contacts/impulse_since_record"]["columns"]) == ["x", "y", "z"] and
      at["contacts/impulse_since_record"]["units"].startswith("N s") and
      at["contacts/tangent1"]["units"] == "1",
      "layout: [rows, 3] beside /contacts/table, attributes aligned_with, columns, units")

# ---------- a restart in flight ----------
# (0.75 = 750 dt exactly: the uninterrupted run's record falls on that time)
_, _, _, half = run(ball, "--t-end", "0.75", "--set", "output.xdmf=false")
more = os.path.join(TMP, "more.h5")
run(ball, "--restart", half, "--t-end", "1.5", "--set", "output.xdmf=false", out=more)
c = read(more)
i0 = int(np.searchsorted(a["time"], c["time"][0]))
ok = np.array_equal(c["time"], a["time"][i0:])
for key in ("contacts/count", "bodies/position"):
    ok = ok and np.array_equal(c[key], a[key][i0:])
rows_a = np.concatenate([np.arange(a["contacts/offsets"][i], a["contacts/offsets"][i] +
                                   a["contacts/count"][i]) for i in range(i0 + 1, len(a["time"]))])
for key in ("contacts/impulse_since_record", "contacts/tangent1"):
    ok = ok and np.array_equal(c[key], a[key][rows_a])
check(ok and c["contacts/count"][0] == 0 and len(rows_a) > 100,
      "a restart at t = 0.75 s (the ball in flight) continues /contacts/* bit for bit: %d rows "
      "after the restart equal the uninterrupted run's" % len(rows_a))
done()

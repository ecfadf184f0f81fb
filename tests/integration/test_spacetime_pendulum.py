"""integrator: spacetime on seed 003 sec. 4.2 (the double spherical pendulum in blocks of 100
temporal elements) and on a heavy top, against what we did not write:
- /solver/action, the action integral of every temporal element: both columns (int (T + V)
  dt, int (T - V) dt) against the closed form of an undamped spring-mass oscillator; its
  layout (contiguous elements, one block number per 100 elements, the record that each
  element's end falls in)
  and its value: int (T + V) dt per unit time constant within each block to round-off for
  degree 2 (the seed's Fig. 9 and 13), and for degree 1 (the midpoint rule, whose one-point
  quadrature of T is not its conserved energy) varying at order 2 in the element length;
- the 3D case (decks/spacetime_pendulum.yaml, the seed's initial velocity) and the centred
  planar case against tests/reference/double_spherical_pendulum.py (point masses as an
  index-1 DAE, DOP853 rtol 1e-12: nothing exerts a moment on the centred cubes) and the
  cubes' constant spin; energy at the temporal nodes;
- the centred case stays in the x-z plane (|y| at round-off: exactly 0), the offset case
  leaves it (its 1e-8 rad/s seed spin grows by orders of magnitude), and from exact rest
  the offset case stays planar by symmetry;
- a heavy top against tests/reference/heavy_top.py (DOP853 rtol 1e-13): the directors'
  error at the nodes falls at order 2 (degree 1) and 4 (degree 2);
- a restarted run's /solver/action continues the uninterrupted run's;
- mbsim-plot writes the action plot (a PNG).
The full 40 blocks of 100 elements of all three pendulum cases: scripts/spacetime-pendulum."""
import os
import subprocess
import sys

import numpy as np

# BLAS threads cost more than they save on these blocks (test_spacetime.py)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from common import PYTHON_BIN, QUICK, ROOT, TMP, check, deck, done, energy_error, load, run
from common import write_deck
from common import heavy_top_deck

sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
import double_spherical_pendulum as dsp  # noqa: E402
import heavy_top  # noqa: E402

C1, C2 = 4.0 / np.sqrt(2.0), 8.0 / np.sqrt(2.0)
T_PEND = 0.3 if QUICK else 1.0  # the pendulums' horizon: 3 or 10 blocks of 100 elements
M1, M2 = 1.5, 0.768  # cubes of edges 1 and 0.8, density 1.5


def st(deg, dt, t_end, *args):
    return ("--integrator", "spacetime", "--set", "solver.spacetime.degree=%d" % deg, "--set",
            "solver.spacetime.elements_per_block=100", "--dt", repr(dt), "--t-end",
            repr(t_end)) + args


def action(r):
    """/solver/action: the table and the mean of T + V over each element, int / h"""
    a = r["solver/action/table"]
    return a, a[:, 3] / (a[:, 1] - a[:, 0])


def block_spread(a, H):
    """the largest spread of the element means of T + V within one block, relative to
    |mean|"""
    return max(np.ptp(H[a[:, 2] == b]) for b in np.unique(a[:, 2])) / abs(np.mean(H))


def layout(r, what, dt, t_end):
    """the table's elements: contiguous from 0 to t_end, all of length dt, 100 per block;
    each in the record its end falls in"""
    a = r["solver/action/table"]
    n = int(round(t_end / dt))
    ok = a.shape == (n, 5)
    ok = ok and np.max(np.abs(a[:, 0] - dt * np.arange(n))) <= 1e-9 * t_end
    ok = ok and np.max(np.abs(a[:, 1] - a[:, 0] - dt)) <= 1e-12
    ok = ok and np.array_equal(a[:, 2], np.arange(n) // 100)
    t, off, cnt = r["time"], r["solver/action/offsets"], r["solver/action/count"]
    rec = np.repeat(np.arange(len(t)), cnt)
    ok = ok and len(rec) == n and cnt[0] == 0
    ok = ok and np.array_equal(off, np.r_[0, np.cumsum(cnt)[:-1]])
    ok = ok and np.all(a[:, 1] <= t[rec] + 1e-9)
    ok = ok and np.all(a[:, 1] > t[np.maximum(rec - 1, 0)] + 1e-9)
    check(ok, "%s: /solver/action holds %d contiguous elements of %g s, 100 per block, each "
          "in the record its end falls in (%s)" % (what, n, dt, a.shape))


def against_reference(r, what, v0, omega, tol):
    t = r["time"]
    ref, drift = dsp.reference([C1, 0, C1], [C2, 0, C2], v0, v0, M1, M2, t)
    err = np.max(np.abs(r["bodies/position"] - ref))
    R = dsp.spin(omega, t)
    rerr = max(np.max(np.abs(r["bodies/orientation"][:, b] - R)) for b in (0, 1))
    check(err <= tol and drift <= 1e-10,
          "%s: both centres agree with the scipy point-mass reference over [0, %g] (max %.2e, "
          "bound %g; the reference's rod length drift %.1e)" % (what, t[-1], err, tol, drift))
    check(rerr <= 1e-12, "%s: both cubes keep spinning at %s rad/s (directors to %.1e)"
          % (what, omega, rerr))


# --- both columns against a closed form: the undamped oscillator of decks/damped_oscillator.yaml
# (m = 0.5, k = 50, x = 1 + 0.1 cos 10 t about the rest length): T + V = 0.25 J, and
# T - V = -0.25 cos 20 t J, so int (T - V) dt over [a, b] = -(sin 20 b - sin 20 a) / 80 ------
for deg, want in ((1, 3.0), (2, 5.0)):
    errs = []
    for dt in (0.01, 0.005):
        _, _, _, out = run(deck("damped_oscillator.yaml"), "--integrator", "spacetime", "--set",
                           "loads.spring.damping=0", "--set", "solver.spacetime.degree=%d" % deg,
                           "--dt", repr(dt), "--t-end", "1")
        a = load(out)["solver/action/table"]
        lag = -(np.sin(20 * a[:, 1]) - np.sin(20 * a[:, 0])) / 80.0
        errs.append(max(np.max(np.abs(a[:, 4] - lag)),
                        np.max(np.abs(a[:, 3] - 0.25 * (a[:, 1] - a[:, 0])))))
    order = np.log2(errs[0] / errs[1])
    # measured: degree 1 3.6e-5, 4.5e-6 (order 3.0: the one-point rule's error h^3 per element);
    # degree 2 6.0e-9, 1.9e-10 (order 5.0); the integrals themselves are up to 2.5e-3 J s
    check(abs(order - want) <= 0.2, "oscillator, degree %d: both action columns of every "
          "element against the closed form, the error falling at order %g per element (%.2e, "
          "%.2e at dt 0.01, 0.005: order %.2f)" % (deg, want, errs[0], errs[1], order))

# --- the 3D case: the shipped deck (seed's velocities), the first 10 of its 40 blocks --------
_, _, _, out3 = run(deck("spacetime_pendulum.yaml"), "--t-end", repr(T_PEND))
r = load(out3)
layout(r, "3D case", 1e-3, T_PEND)
a, H = action(r)
s = block_spread(a, H)
# measured 1.1e-13 here, 1.1e-11 over the 40 blocks of the full run (the seed: "below the
# Newton tolerance"); the block boundaries show no jump (our rows hold at every element's end)
check(s <= 1e-9, "3D case, degree 2: the action integral per element is constant within "
      "each block (relative spread of int (T + V) dt / h %.1e)" % s)
e = energy_error(r)
check(e <= 1e-12, "3D case: energy conserved at the temporal nodes (%.1e)" % e)
check(abs(np.mean(H) - r["energy/total"][0]) <= 1e-9 * abs(r["energy/total"][0]),
      "3D case: the element means of T + V are the energy (%.12g J, E0 = %.12g J)"
      % (np.mean(H), r["energy/total"][0]))
y = np.max(np.abs(r["bodies/position"][:, 1, 1]))
check(y >= 0.5 * T_PEND, "3D case: the second centre moves out of the x-z plane (max |y| %.2f m)"
      % y)
# measured 5.7e-12 over [0, 1] (1.6e-10 over [0, 4] in the full run)
against_reference(r, "3D case", [0, 1, 0], [-0.5, 0, 0], 1e-10)

# --- the centred case from rest: planar -------------------------------------------------------
_, _, _, out = run(deck("double_spherical_pendulum.yaml"), *st(2, 1e-3, T_PEND))
r = load(out)
layout(r, "centred", 1e-3, T_PEND)
y = np.max(np.abs(r["bodies/position"][:, :, 1]))
# measured 0 (the seed: below 1e-30)
check(y <= 1e-14, "centred: the motion stays in the x-z plane (max |y| %.1e)" % y)
a, H = action(r)
s = block_spread(a, H)
# measured 1.1e-13 (40 blocks: 1.0e-11); against the reference 1.1e-11
check(s <= 1e-9, "centred, degree 2: the action integral per element is constant within "
      "each block (relative spread %.1e)" % s)
against_reference(r, "centred", [0, 0, 0], [0, 0, 0], 1e-10)

# --- degree 1 (the midpoint rule): int T dt by one point is not its conserved energy ----------
spread = {}
for dt in (2e-3, 1e-3):
    _, _, _, out = run(deck("double_spherical_pendulum.yaml"), *st(1, dt, 0.4))
    a, H = action(load(out))
    spread[dt] = np.ptp(H) / abs(np.mean(H))
order = np.log2(spread[2e-3] / spread[1e-3])
# measured 2.5e-7, 6.3e-8: order 2.00 (T at the midpoint velocity differs from the nodes' mean
# by |v_1 - v_0|_M^2 / 8, and v_1 - v_0 = O(h))
check(abs(order - 2.0) <= 0.1, "degree 1: the spread of int (T + V) dt / h falls at order 2 "
      "(%.2e, %.2e: order %.2f)" % (spread[2e-3], spread[1e-3], order))

# --- the offset case: unstable planar motion --------------------------------------------------
# degree 1 (degree 2 costs 5 times more on this coupled mass matrix; the full run uses it)
_, _, _, out = run(deck("double_spherical_pendulum_offset.yaml"), *st(1, 2e-3, 2.0))
r = load(out)
t, y = r["time"], np.abs(r["bodies/position"][:, 1, 1])
y1, y2 = np.max(y[t <= 1.0 + 1e-9]), np.max(y)
# measured 1.6e-11 at t <= 1, 6.7e-10 at t <= 2 (metres by t = 40, test_double_spherical_
# pendulum.py); round-off of the 8 m reach is 1e-15
check(y2 >= 1e-10 and y2 >= 10 * y1, "offset: the second body leaves the x-z plane, the "
      "deviation growing (max |y| %.2e m by t = 1, %.2e m by t = 2)" % (y1, y2))
e = energy_error(r)
check(e <= 1e-12, "offset: energy conserved at the temporal nodes (%.1e)" % e)
_, _, _, out = run(deck("double_spherical_pendulum_offset.yaml"),
                   *st(1, 2e-3, 1.0, "--set", "bodies.cube2.angular_velocity.0=0"))
y = np.max(np.abs(load(out)["bodies/position"][:, :, 1]))
check(y == 0.0, "offset from exact rest: planar by symmetry (max |y| %.1e)" % y)

# --- the heavy top against scipy: orders at the nodes -----------------------------------------
top = write_deck("top.yaml", heavy_top_deck("{integrator: spacetime, dt: 5.0e-3, t_end: 0.5}"))
Rref = heavy_top.deck_top(np.array([0.0, 0.5]))[-1]
for deg, dts, want in ((1, (4e-3, 2e-3, 1e-3), 2.0), (2, (5e-3, 2.5e-3, 1.25e-3), 4.0)):
    errs = []
    for dt in dts:
        _, _, _, out = run(top, "--set", "solver.spacetime.degree=%d" % deg, "--set",
                           "solver.spacetime.elements_per_block=50", "--dt", repr(dt))
        r = load(out)
        h = np.unique(np.round(np.diff(r["solver/action/table"][:, :2], axis=1), 12))
        check(np.array_equal(h, [round(dt, 12)]), "heavy top, degree %d, dt %g: no block "
              "halved (element lengths %s)" % (deg, dt, h))
        errs.append(np.max(np.abs(r["bodies/orientation"][-1, 0] - Rref)))
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    # measured: degree 1 7.7e-2, 1.9e-2, 4.9e-3 (orders 1.99, 2.00); degree 2 1.1e-2, 6.9e-4,
    # 4.4e-5 (orders 3.98, 3.99); omega dt = 0.25 at degree 2's coarsest (above it the blocks
    # fail and are halved)
    check(abs(orders[-1] - want) <= 0.1, "heavy top, degree %d: the directors at t = 0.5 "
          "converge to scipy's at order %g (errors %s, orders %s)"
          % (deg, want, " ".join("%.2e" % x for x in errs), " ".join("%.2f" % o for o in orders)))

# --- restart: the restarted file's action rows continue the uninterrupted run's --------------
_, _, _, full = run(deck("spacetime_free_body.yaml"))
_, _, _, half = run(deck("spacetime_free_body.yaml"), "--t-end", "0.4")
_, _, _, rest = run(deck("spacetime_free_body.yaml"), "--restart", half)
a = load(full)["solver/action/table"]
b = np.vstack([load(half)["solver/action/table"], load(rest)["solver/action/table"]])
ok = a.shape == b.shape
d = np.max(np.abs(a[:, [0, 1, 3, 4]] - b[:, [0, 1, 3, 4]])) if ok else np.inf
# measured 1.3e-15
check(ok and d <= 1e-10, "restart at t = 0.4: the action rows of both files are the "
      "uninterrupted run's (%s, %s; max difference %.1e)" % (a.shape, b.shape, d))

# --- the plot ---------------------------------------------------------------------------------
plots = os.path.join(TMP, "plots")
p = subprocess.run([PYTHON_BIN, os.path.join(ROOT, "scripts", "mbsim-plot"), out3,
                    "solver/action", "-o", plots], capture_output=True, text=True, timeout=120)
png = os.path.join(plots, "action.png")
check(p.returncode == 0 and os.path.exists(png) and open(png, "rb").read(8)
      == b"\x89PNG\r\n\x1a\n", "mbsim-plot RUN.h5 solver/action writes action.png (exit %d%s)"
      % (p.returncode, (": " + p.stderr.strip()[-200:]) if p.returncode else ""))
done()

"""Large models end to end: 10,000 free rigid bodies (120,000 coordinates, far beyond the
341 bodies whose coordinate names filled HDF5's 64 KiB object header) and the largest deck
the limits allow (66,660 rigid bodies: 1,000,000 YAML nodes), each a few steps. The
coordinate names are in /state/names; the attribute `names` of /state/q only for models of
up to 4000 coordinates. The motion is checked against the free flight of each body under
gravity (the centre of mass moves on a parabola, exactly for em)."""
import os
import subprocess
import sys
import time

import h5py
import numpy as np

from common import MBSIM, QUICK, ROOT, TMP, check, done

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import mbsim  # noqa: E402

G = -9.81


def deck(n, minimal, t_end):
    """n rigid bodies in a row; minimal: the fewest YAML nodes a rigid body takes (15)"""
    path = os.path.join(TMP, "bodies%d.yaml" % n)
    with open(path, "w") as f:
        f.write("mbsim: 1\ngravity: [0, 0, %g]\nbodies:\n" % G)
        for i in range(n):
            extra = "" if minimal else ", velocity: [0, 1, 2], angular_velocity: [0.1, 0.2, 0.3]"
            f.write("  - {name: b%d, mass: 1, inertia: [1, 2, 2.5], position: [%d, 0, 0]%s}\n"
                    % (i, i, extra))
        f.write("solver: {integrator: em, dt: 1.0e-3, t_end: %r}\n" % t_end)
    return path


def run_big(n, minimal, steps, limit_s):
    path = deck(n, minimal, steps * 1e-3)
    out = os.path.join(TMP, "bodies%d.h5" % n)
    t0 = time.time()
    p = subprocess.run([MBSIM, path, "-o", out, "--quiet"], capture_output=True, text=True,
                       timeout=600)
    wall = time.time() - t0
    check(p.returncode == 0, "%d rigid bodies: exit 0 in %.1f s (%s)" % (n, wall,
                                                                        p.stderr.strip()[:200]))
    check(wall < limit_s, "%d rigid bodies: %d steps in %.1f s (< %g s)" % (n, steps, wall,
                                                                             limit_s))
    if p.returncode != 0:
        return
    with h5py.File(out, "r") as f:
        nq = 12 * n
        check(f["state/q"].shape == (steps + 1, nq) and f["state/names"].shape == (nq,) and
              f.attrs["status"] == "completed",
              "%d rigid bodies: /state/q is [%d, %d], /state/names [%d], completed" %
              (n, steps + 1, nq, nq))
        names = [s.decode() if isinstance(s, bytes) else s for s in f["state/names"][()]]
        check(names[12 * (n - 1)] == "b%d.phi.x" % (n - 1) and len(set(names)) == nq,
              "%d rigid bodies: %d distinct coordinate names, the last body's 'b%d.phi.x'" %
              (n, nq, n - 1))
        check("names" not in f["state/q"].attrs,
              "%d rigid bodies: no attribute names on /state/q (it would not fit)" % n)
        t = f["time"][()]
        pos = f["bodies/position"][()]
    v0 = np.zeros(3) if minimal else np.array([0.0, 1.0, 2.0])
    x0 = np.stack([np.arange(n, dtype=float), np.zeros(n), np.zeros(n)], axis=1)
    want = x0 + v0 * t[-1] + 0.5 * np.array([0, 0, G]) * t[-1] ** 2
    err = np.max(np.abs(pos[-1] - want))
    check(err < 1e-12, "%d rigid bodies: every centre of mass on its parabola at t = %g "
          "(max error %.1e m)" % (n, t[-1], err))
    run = mbsim.load(out)
    check(len(run.coordinate_names) == nq and run.coordinate_names[-1] == "b%d.d3.z" % (n - 1),
          "%d rigid bodies: scripts/mbsim.py reads the coordinate names" % n)
    os.remove(out)


run_big(10000, False, 3, 60)
if not QUICK:
    run_big(66660, True, 1, 120)
    # one body more crosses the node limit: refused with exit 1 before anything is written
    path = deck(66670, True, 1e-3)
    out = os.path.join(TMP, "too_big.h5")
    p = subprocess.run([MBSIM, path, "-o", out, "--quiet"], capture_output=True, text=True)
    check(p.returncode == 1 and "more than 1000000 YAML nodes" in p.stderr and
          not os.path.exists(out), "66,670 rigid bodies: exit 1 at the node limit, no file")

# a small model keeps the attribute names (h5py users' scripts read it) beside /state/names
path = deck(3, False, 1e-3)
out = os.path.join(TMP, "small.h5")
subprocess.run([MBSIM, path, "-o", out, "--quiet"], check=True)
with h5py.File(out, "r") as f:
    a = [s.decode() if isinstance(s, bytes) else s for s in f["state/q"].attrs["names"]]
    d = [s.decode() if isinstance(s, bytes) else s for s in f["state/names"][()]]
    check(a == d and len(d) == 36, "3 rigid bodies: /state/names equals the attribute names")
# a model too large for the attribute restarts from /state/names
path = deck(400, False, 4e-3)
first, more = os.path.join(TMP, "b400a.h5"), os.path.join(TMP, "b400b.h5")
subprocess.run([MBSIM, path, "-o", first, "--quiet", "--t-end", "0.002"], check=True)
p = subprocess.run([MBSIM, path, "-o", more, "--quiet", "--restart", first], capture_output=True,
                   text=True)
with h5py.File(first, "r") as f:
    no_attr = "names" not in f["state/q"].attrs
check(p.returncode == 0 and no_attr, "400 rigid bodies (4800 coordinates, names only in "
      "/state/names): the restart reads them (%s)" % p.stderr.strip()[-200:])
done()

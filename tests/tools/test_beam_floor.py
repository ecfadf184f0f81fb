"""A 200-element beam lying on a floor on all its 201 nodes (the scene of
scripts/bench/beam_floor.yaml: 1 m, 10 x 20 mm, E = 2e9, 1000 kg/m^3, a sphere of r = 5 mm on
every node, mu = 0.3), pushed along its axis at v0 = 0.1 m/s, with default solver settings
(moreau at theta = 0.5, dt = 1e-3): one island of 201 frictional contacts on one flexible body.
Checked against Coulomb's law for a body sliding on a plane (nothing here uses the program's
contact code):
- it slides with a = -mu g and stops at v0 / (mu g) (within one step) after v0^2 / (2 mu g):
  the theta scheme's positions are exact for a constant deceleration but for the step in which
  the motion stops, so the bound is a dt^2 / 2;
- from then on it rests: the centre moves less than 1e-9 m, the nodes' speeds fall below
  1e-6 m/s within 5 steps (the sudden stick rings the beam's stiff axial modes, which the
  theta = 0.5 scheme does not damp: 2e-6 m/s in the first step), every contact stays closed
  with gap >= -1e-9 m;
- every step's normal impulses add up to the weight's impulse m g dt plus the change of
  the vertical momentum /momentum/linear (1e-9 of m g dt; that change is at most 1e-5 of
  m g dt: the ringing's vertical share) and,
  while it slides, the tangential ones' magnitudes to mu m g dt (1e-6);
- the friction dissipation is the kinetic energy m v0^2 / 2 (1e-6), the energy balance
  closes and the run ends plain `completed`.
Here and not in `make test`: a step of this beam costs about 0.25 s of CPU (the columns of its
201 contacts through the beam's sparse LU), 12 s for the run; the same physics on 10 elements
runs in tests/integration/test_beam_contact.py."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from common import ROOT, attempt, balance, check, done, write_deck  # noqa: E402
from common import contact_rows as rows  # noqa: E402

G, MU, V0, DT, R = 9.81, 0.3, 0.1, 1e-3, 0.005
MASS = 1000 * 0.01 * 0.02 * 1.0
T_STOP = V0 / (MU * G)

# the benchmark's deck as shipped, pushed along its axis and run for 45 steps
with open(os.path.join(ROOT, "scripts", "bench", "beam_floor.yaml")) as f:
    text = f.read()
for old, new in (("    collision: {sphere: 0.005}\n",
                  "    collision: {sphere: 0.005}\n    velocity: [%r, 0, 0]\n" % V0),
                 ("  t_end: 0.05\n", "  t_end: 0.045\n")):
    check(text.count(old) == 1, "scripts/bench/beam_floor.yaml has %r once" % old.strip())
    text = text.replace(old, new)
for key in ("elements: 200", "rectangle: [0.01, 0.02]", "density: 1000", "friction: 0.3",
            "dt: 1.0e-3", "from: [0, 0, 0.005]", "to: [1, 0, 0.005]"):
    check(key in text, "scripts/bench/beam_floor.yaml: %s (the scene this test's closed forms use)"
          % key)
path = write_deck("beam_floor.yaml", text)

what = "200-element beam sliding on the floor"
r = attempt(what, path)
if r is not None:
    status = r["attrs"]["status"]
    status = status.decode() if isinstance(status, bytes) else status
    check(status == "completed", "%s: status %r (no warning)" % (what, status))
    t = r["time"]
    p = r["beams/rod/position"]
    check(p.shape[1] == 201, "%s: 201 nodes (%d)" % (what, p.shape[1]))
    c = p.mean(axis=1)
    dist = c[-1, 0] - c[0, 0]
    d_ref = V0 ** 2 / (2 * MU * G)
    check(abs(dist - d_ref) <= MU * G * DT ** 2 / 2,
          "%s: stops after %.9f m, v0^2 / (2 mu g) = %.9f m (a dt^2 / 2 = %.1e)"
          % (what, dist, d_ref, MU * G * DT ** 2 / 2))
    v = np.diff(c[:, 0]) / DT
    k = int(np.argmax(np.abs(v) < 1e-6))
    check(abs(t[k] - T_STOP) <= DT,
          "%s: at rest from %.3f s, v0 / (mu g) = %.4f s (dt)" % (what, t[k], T_STOP))
    rest = t >= T_STOP + DT
    creep = np.max(np.abs(c[rest] - c[rest][0]))
    check(creep <= 1e-9, "%s: at rest the centre moves %.2e m (1e-9)" % (what, creep))
    vn = np.abs(np.diff(p, axis=0)).max(axis=(1, 2)) / DT
    vrest = np.max(vn[t[1:] >= T_STOP + 5 * DT])
    check(vrest <= 1e-6, "%s: 5 steps after the stop the nodes' speeds stay below %.2e m/s "
          "(1e-6)" % (what, vrest))
    zdev = np.max(np.abs(p[:, :, 2] - R))
    check(zdev <= 1e-9, "%s: every node stays on the floor, |z - r| <= %.2e m (1e-9)"
          % (what, zdev))
    gap, wn, dpz, wt, nclosed = [], [], [], [], []
    pz = r["momentum/linear"][:, 2]
    for j in range(1, len(t)):
        tab = rows(r, j)
        gap.append(np.min(tab[:, 9]) if len(tab) else 1.0)
        nclosed.append(len(tab))
        wn.append(abs(np.sum(tab[:, 10]) - MASS * G * DT - (pz[j] - pz[j - 1])) / (MASS * G * DT))
        dpz.append(abs(pz[j] - pz[j - 1]) / (MASS * G * DT))
        if t[j] < T_STOP - DT:
            wt.append(abs(np.sum(np.hypot(tab[:, 11], tab[:, 12])) / (MU * MASS * G * DT) - 1))
    check(min(gap) >= -1e-9, "%s: smallest gap %.2e m (>= -1e-9)" % (what, min(gap)))
    check(min(nclosed) == 201, "%s: all 201 contacts closed at every step (at least %d)"
          % (what, min(nclosed)))
    check(max(wn) <= 1e-9, "%s: the normal impulses are m g dt + the change of p_z at every "
          "step (%.1e of m g dt, 1e-9)" % (what, max(wn)))
    check(max(dpz) <= 1e-5, "%s: p_z changes by at most %.1e of m g dt per step (1e-5)"
          % (what, max(dpz)))
    check(len(wt) > 20 and max(wt) <= 1e-6,
          "%s: while sliding the tangential impulses add up to mu m g dt (%.1e over %d steps, 1e-6)"
          % (what, max(wt), len(wt)))
    fric = r["energy/friction_dissipated"][-1]
    ke = MASS * V0 ** 2 / 2
    check(abs(fric / ke - 1) <= 1e-6, "%s: friction dissipated %.9g J, m v0^2 / 2 = %.9g J (1e-6)"
          % (what, fric, ke))
    err, scale = balance(r)
    check(err <= 1e-6 * scale, "%s: energy balance %.2e of %.2e J (1e-6)" % (what, err, scale))
done()

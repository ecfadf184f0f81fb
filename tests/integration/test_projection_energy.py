"""The position projection creates no energy (docs/decks.md, "Energy:" in the contacts
section). At theta = 1/2 a closed point that approaches at a step's start moves dt |g'| / 2
into its obstacle before the law stops it; the projection pushes it out against the load on
it. Scenes where those pushes raise V by more than the step's impulses dissipate: a plate
(1 x 1 x 0.05 m, 2 kg) on four zero-length springs (5000 N/m) at its corners, two stacks of
three 0.1 m boxes (1 kg) on it at (-0.25, -0.25) and (0.25, 0.25), and boxes (1 kg, tilted
about [1, 1, 0]) thrown down at 2-4 m/s onto a stack or beside it; frictionless, restitution
0, default solver settings (dt = 1e-3, 0.4 s). The undamped plate rings on and the stacks
chatter on it.

Before the projection was energy-consistent these runs ended `completed with warning`: the
balance reached 2.5e-4, 4.3e-5 and 2.2e-6 of the energy scale (single steps gaining up to
5.8e-3 J). Now the kinetic energy of the pushed bodies pays what the pushes add beyond the
step's dissipation (measured: 7e-15, 1.8e-13, 1.5e-14 of the scale). The same bodies pay
the work of an impulse on a point that was opening at the step's start (Moreau-Jean closes a
point by its gap, not its velocity): the edge case with its tilt changed by 5 or 32 x 7.3e-13
rad ended 8.8e-7 of the scale off before, 1.8e-13 now. Checked against the
conservation law and a closed form:
- status plain `completed`;
- E - E0 - W + D within 1e-11 of the energy scale in every record (every step recorded);
- impact, friction and numerical dissipation never fall (each part >= 0 per step, 1e-15 J),
  and /energy/dissipated is their sum;
- no penetration: the summary's smallest gap of any step and every record's gap >= -1e-9 m;
- until the first thrown box lands, the plate and the stacks move as one 8 kg body on the
  springs, z(t) = -(g / w^2)(1 - cos wd t) (w^2 = 4 k / 8 kg, at the trapezoidal rule's
  frequency wd = 2 atan(w dt / 2) / dt), to 1e-9 m."""
import re
import subprocess

import numpy as np

from common import MBSIM, TMP, balance, check, contact_rows, done, load, write_deck

SPRINGS = "".join(
    "  - {name: k%d, type: spring, bodies: [ground, plate], points: [[%g, %g, 0], [%g, %g, 0]], "
    "stiffness: 5000, rest_length: 0}\n" % (i, x, y, x, y)
    for i, (x, y) in enumerate([(-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)]))


def scene(thrown):
    """the deck: the plate, the two stacks, and the thrown boxes (x, y, z, vz, tilt)"""
    bodies = ["  - {name: plate, shape: {box: [1.0, 1.0, 0.05]}, mass: 2, position: [0, 0, 0]}"]
    for k in range(6):
        c = -0.25 if k < 3 else 0.25
        bodies.append("  - {name: box%d, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, "
                      "position: [%g, %g, %g]}" % (k + 1, c, c, 0.075 + 0.1 * (k % 3)))
    for k, (x, y, z, vz, tilt) in enumerate(thrown):
        bodies.append("  - {name: box%d, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, "
                      "position: [%g, %g, %g], velocity: [0, 0, %g], "
                      "orientation: {axis: [1, 1, 0], angle: %r}}" % (k + 7, x, y, z, vz, tilt))
    return ("mbsim: 1\ntitle: boxes thrown onto a sprung plate with a stack\n"
            "gravity: [0, 0, -9.81]\nbodies:\n" + "\n".join(bodies) + "\nloads:\n" + SPRINGS +
            "contacts:\n"
            "  - {name: plate_boxes, between: [\"box*\", plate], restitution: 0, friction: 0}\n"
            "  - {name: boxes, between: [\"box*\", \"box*\"], restitution: 0, friction: 0}\n"
            "solver: {dt: 1.0e-3, t_end: 0.4}\noutput: {every: 1, xdmf: false}\n")


CASES = [
    ("one box onto a stack at 4 m/s", [(-0.25, -0.25, 0.5, -4.0, 0.1)]),
    ("one box onto a stack's edge at 2 m/s", [(-0.22, -0.27, 0.5, -2.0, 0.3)]),
    # the edge case with the tilt changed by 5 and 32 x 7.3e-13 rad: at t = 0.242 s a point
    # of the lower stack opening at 2.4 mm/s 16 um apart takes an impulse that stops it
    # (+2.1e-5 J of the impulse's work), where 6 of the 40 tilts i x 7.3e-13 rad ended
    # 8.8e-7 of the scale off
    ("the edge case tilted by 5 x 7.3e-13 rad", [(-0.22, -0.27, 0.5, -2.0, 0.3 + 5 * 7.3e-13)]),
    ("the edge case tilted by 32 x 7.3e-13 rad",
     [(-0.22, -0.27, 0.5, -2.0, 0.3 + 32 * 7.3e-13)]),
    ("two boxes beside the stacks at 3 m/s", [(-0.219381, 0.20846, 0.6, -3.0, 0.229132),
                                              (-0.146959, -0.00273895, 0.75, -3.0, 0.134847)]),
]

for i, (what, thrown) in enumerate(CASES):
    path = write_deck("plate%d.yaml" % i, scene(thrown))
    out = "%s/plate%d.h5" % (TMP, i)
    p = subprocess.run([MBSIM, path, "-o", out], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        check(False, "%s: exit %d %s" % (what, p.returncode, p.stderr[-300:]))
        continue
    r = load(out)
    status = r["attrs"]["status"]
    status = status.decode() if isinstance(status, bytes) else status
    check(status == "completed", "%s: status %r" % (what, status))
    err, scale = balance(r)
    check(err <= 1e-11 * scale,
          "%s: |E - E0 - W + D| = %.2e J <= 1e-11 x %.3f J" % (what, err, scale))
    parts = [r["energy/impact_dissipated"], r["energy/friction_dissipated"],
             r["energy/numerical_dissipation"]]
    fall = min(np.min(np.diff(x)) for x in parts)
    total = np.max(np.abs(sum(parts) - r["energy/dissipated"]))
    check(fall >= -1e-15 and total <= 1e-12 and parts[0][-1] > 1.0,
          "%s: dissipation parts never fall (smallest step %.1e J), sum to /energy/dissipated "
          "(%.1e J), impact dissipation %.3f J" % (what, fall, total, parts[0][-1]))
    m = re.search(r"smallest gap (\S+) m", p.stdout + p.stderr)
    gmin = float(m.group(1)) if m else -np.inf
    grec = np.min(r["contacts/table"][:, 9])
    check(gmin >= -1e-9 and grec >= -1e-9,
          "%s: smallest gap of any step %.2e m, of the records %.2e m (>= -1e-9)"
          % (what, gmin, grec))
    # until a thrown box lands, the plate and the stacks (8 kg) oscillate on the springs
    # (4 x 5000 N/m) as one body: z(t) = -(g / w^2) (1 - cos wd t), w^2 = 20000 / 5, at the
    # trapezoidal rule's frequency wd = 2 atan(w dt / 2) / dt
    names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
    thrown_ids = {names.index("box%d" % (k + 7)) for k in range(len(thrown))}
    k1 = next(k for k in range(len(r["time"]))
              if any(int(b) in thrown_ids for b in contact_rows(r, k)[:, 1:3].ravel()))
    t, z = r["time"][:k1], r["bodies/position"][:k1, names.index("plate"), 2]
    w = np.sqrt(20000.0 / 8.0)
    wd = 2 * np.arctan(w * 1e-3 / 2) / 1e-3
    zerr = np.max(np.abs(z + 9.81 / w ** 2 * (1 - np.cos(wd * t))))
    check(k1 > 20 and zerr <= 1e-9,
          "%s: plate and stacks oscillate as one body until t = %.3f s: z = -(g / w^2)(1 - "
          "cos wd t) to %.1e m (1e-9)" % (what, t[-1], zerr))
done()

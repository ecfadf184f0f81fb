"""Contact points that the impulses of their neighbours close within a step join that step's
contact problem (src/solver/moreau.c, admit_reserve), with the default settings: die a (0.1 m,
0.1 kg) sinks at 0.01 m/s with its bottom 5e-5 m above the floor, die b lands on it at 1 m/s
from 2e-4 m above. Within the first step b's impulse drives a into the floor: a's four bottom
corners are not predicted to close at the step's start (they would have made the step be tried
again), so the step takes them in once its first solution closes them.
Checks: completed; the summary counts the points taken in and no step tried again; every gap
>= -1e-9 m; both dice at rest at the end (|v|, |omega| <= 1e-8), a on the floor and b on a
(centres at 0.05 and 0.15 m to 1e-9 m); the impacts dissipate exactly what a perfectly
inelastic landing must (e = 0): the initial kinetic energy plus m g times the two drops
(5e-5 and 2.5e-4 m), to 1e-9 relative."""

import numpy as np

from common import TMP, attempt_summary, check, done, write_deck

G, M = 9.81, 0.1
DECK = """mbsim: 1
title: a die struck onto the floor by another
gravity: [0, 0, -%r]
bodies:
  - {name: a, shape: {box: [0.1, 0.1, 0.1]}, density: 100, position: [0, 0, 0.05005],
     velocity: [0, 0, -0.01]}
  - {name: b, shape: {box: [0.1, 0.1, 0.1]}, density: 100, position: [0.01, 0.02, 0.15025],
     velocity: [0, 0, -1.0]}
ground:
  collision:
    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}
contacts:
  - {name: floor, between: [a, ground], law: unilateral, restitution: 0, friction: 0.3}
  - {name: dice, between: [a, b], law: unilateral, restitution: 0, friction: 0.3}
solver: {dt: 1.0e-3, t_end: 0.2}
output: {every: 1, xdmf: false}
""" % G
path = write_deck("struck_die.yaml", DECK)
r, summary = attempt_summary("struck die", path, out=TMP + "/struck_die.h5")
if r is not None:
    taken = [ln for ln in summary.splitlines() if "points taken into a step's contact" in ln]
    n = int(taken[0].split()[2]) if taken else 0
    check(n >= 4 and "tried again" not in summary,
          "a's bottom corners join the step's contact problem (%d points taken in, %s)"
          % (n, "a step tried again" if "tried again" in summary else "no step tried again"))
    gmin = r["contacts/table"][:, 9].min()
    check(gmin >= -1e-9, "every gap >= -1e-9 m (min %.3e)" % gmin)
    v = np.abs(r["bodies/velocity"][-1]).max()
    w = np.abs(r["bodies/angular_velocity"][-1]).max()
    z = r["bodies/position"][-1, :, 2]
    check(max(v, w) <= 1e-8 and abs(z[0] - 0.05) <= 1e-9 and abs(z[1] - 0.15) <= 1e-9,
          "at rest, a on the floor and b on a: |v| %.1e, |omega| %.1e, z %.12f, %.12f"
          % (v, w, z[0], z[1]))
    expect = 0.5 * M * (0.01 ** 2 + 1.0) + M * G * (5e-5 + 2.5e-4)
    got = r["energy/impact_dissipated"][-1] + r["energy/friction_dissipated"][-1]
    check(abs(got - expect) <= 1e-9 * expect,
          "dissipated %.12f J = T0 + m g (drops) = %.12f J (relative %.1e)"
          % (got, expect, abs(got - expect) / expect))
done()

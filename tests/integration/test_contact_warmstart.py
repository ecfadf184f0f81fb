"""Warm starts across a change of the step: a contact that carries a load takes an impulse in
proportion to the step, so the last step's impulses are scaled by the ratio of the steps
before they start the next contact problem (after a halving, after the doubling back, after a
restart with another dt). A box (0.2 x 0.1 x 0.1 m, 2 kg) resting on a floor for 0.05 s at dt =
1e-3, restarted at dt = 5e-4 for one step: the warm start alone solves its contact problem
(0 iterations of the contact solver; unscaled, the step started from twice the impulses and
took 12 iterations), the four corners carry the weight over the step (sum of the normal
impulses m g dt to 1e-9 relative) and the box stays at rest."""
import numpy as np

from common import check, done, load, run, write_deck

MASS, G, DT = 2.0, 9.81, 1e-3
BOX = write_deck("warm_box.yaml", """mbsim: 1
gravity: [0, 0, -%r]
bodies:
  - {name: box, shape: {box: [0.2, 0.1, 0.1]}, density: 1000, position: [0, 0, 0.05]}
ground:
  collision:
    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}
contacts:
  - {name: floor, between: [box, ground], law: unilateral, friction: 0.3}
solver: {dt: %r, t_end: 0.05}
output: {every: 10, xdmf: false}
""" % (G, DT))

_, _, _, first = run(BOX)
_, out, _, second = run(BOX, "--restart", first, "--dt", repr(DT / 2), "--t-end", "0.0505")
r = load(second)
iters = int(r["solver/contact_iterations"][-1])
check(abs(r["solver/step_size"][-1] - DT / 2) <= 1e-12 * DT, "the restarted step is dt / 2")
check(iters == 0, "the warm start scaled by dt ratio solves the step (%d iterations)" % iters)
count = r["contacts/count"]
rows = r["contacts/impulse_since_record"][int(r["contacts/offsets"][-1]):][:int(count[-1])]
lz = abs(rows[:, 2].sum())
check(count[-1] == 4 and abs(lz - MASS * G * DT / 2) <= 1e-9 * MASS * G * DT / 2,
      "four corners carry m g dt / 2 = %.6e N s over the step (%.6e)" % (MASS * G * DT / 2, lz))
speed = float(np.abs(r["bodies/velocity"][-1]).max())
check(speed < 1e-9, "the box stays at rest (%.2e m/s)" % speed)
done()

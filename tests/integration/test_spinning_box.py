"""A box spinning on the floor about the vertical with Coulomb friction, against the closed
form: each of its four bottom vertices slides on a circle of radius r (half the diagonal of
its a x a base) and takes the friction mu N_i against its slip, so the torque about the
vertical is mu m g r whatever the four normal forces are, and the spin falls linearly,
    omega(t) = omega_0 - alpha t,  alpha = mu m g r / I_zz = 6 mu g r / a^2 (I_zz = m a^2 / 6),
to rest at t_stop = omega_0 / alpha, the centre staying where it is (the four friction forces
cancel). The box turns by 0.8 rad before it stops: its contact points' W columns are built at
new directors in every step (the step's columns take each body's orthonormalized directors
from a per-node cache keyed by their bits, which must follow every turn: directors left from
an earlier step give the friction the wrong lever directions and another deceleration).
Asserted: the fitted deceleration within 1e-4 of alpha, the stop within 2 dt of t_stop, the
box at rest afterwards (|omega| <= 1e-9 rad/s), its centre within 1e-9 m of the start."""
import numpy as np

from common import attempt, check, done, write_deck

G, A, C, MU, W0, DT = 9.81, 0.2, 0.1, 0.3, 10.0, 1e-3

DECK = write_deck("spinning_box.yaml", """mbsim: 1
title: A box spinning on the floor
gravity: [0, 0, -%(g)r]
bodies:
  - name: box
    shape: {box: [%(a)r, %(a)r, %(c)r]}
    density: 250
    position: [0, 0, %(z)r]
    angular_velocity: [0, 0, %(w0)r]
ground:
  collision:
    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}
contacts:
  - {name: box_floor, between: [box, ground], restitution: 0.0, friction: %(mu)r}
solver: {integrator: moreau, dt: %(dt)r, t_end: 0.25}
output: {every: 1, xdmf: false}
""" % {"g": G, "a": A, "c": C, "z": C / 2, "w0": W0, "mu": MU, "dt": DT})

r = attempt("spinning box", DECK)
if r is not None:
    t = r["time"]
    w = r["bodies/angular_velocity"][:, 0]
    p = r["bodies/position"][:, 0]
    alpha = 6.0 * MU * G * np.hypot(A / 2, A / 2) / A ** 2
    t_stop = W0 / alpha
    spin = (t >= 0.01) & (t <= t_stop - 0.02)
    a_fit = -np.polyfit(t[spin], w[spin, 2], 1)[0]
    check(abs(a_fit - alpha) <= 1e-4 * alpha,
          "spinning box: the spin falls at %.6f rad/s^2, 6 mu g r / a^2 = %.6f (%.1e)"
          % (a_fit, alpha, abs(a_fit - alpha) / alpha))
    at_rest = np.linalg.norm(w, axis=1) <= 1e-9
    first = t[np.argmax(at_rest)] if at_rest.any() else np.inf
    check(abs(first - t_stop) <= 2 * DT and at_rest[t >= first].all(),
          "spinning box: at rest from t = %.4f s on, omega_0 / alpha = %.4f s (2 dt)"
          % (first, t_stop))
    moved = np.max(np.linalg.norm(p[:, :2] - p[0, :2], axis=1))
    check(moved <= 1e-9, "spinning box: its centre stays (%.1e m)" % moved)
done()

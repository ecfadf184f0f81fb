"""The how-to "A contact scene" (docs/howto/contact-scene.md): decks/howto/stairs.yaml as
shipped (default settings), a box pushed off the top of three ground-box steps. Checked
against mechanics, not against the program:
- it ends at rest on the floor (speed, spin), lying flat: its centre at half its height;
- no contact gap below -1e-9 m at any record (/contacts/table);
- the energy it lost, m g (z0 - z_end) + m v0^2 / 2 from the deck's numbers, is what was
  dissipated (/energy/dissipated; 1e-9 of it), nearly all by the contacts (the theta
  method's velocity projection 7.6e-6 of it), and the balance E - E0 - W + D holds (1e-9 of
  the scale);
- at rest the floor carries its weight: the mean contact force over the last interval
  (/contacts/impulse_since_record over the time between records) is m g upwards (1e-6);
- it went down step by step: contact points that pushed on each step's top and on the floor."""
import time

import numpy as np

from common import attempt, balance, check, contact_rows, deck, done

A, B, RHO, G = 0.2, 0.15, 600.0, 9.81
MASS = RHO * A * B * B
Z0, V0 = 3 * 0.2 + B / 2, 2.5

t0 = time.time()
r = attempt("decks/howto/stairs.yaml", deck("howto/stairs.yaml"))
if r is None:
    done()
print("      (the deck ran in %.2f s)" % (time.time() - t0))
t = r["time"]
x = r["bodies/position"][:, 0]
v = np.linalg.norm(r["bodies/velocity"][:, 0], axis=1)
om = np.linalg.norm(r["bodies/angular_velocity"][:, 0], axis=1)
check(v[-1] <= 1e-9 and om[-1] <= 1e-9, "at rest at t = %g s: speed %.1e m/s, spin %.1e rad/s"
      % (t[-1], v[-1], om[-1]))
check(abs(x[-1, 2] - B / 2) <= 1e-9 and x[-1, 0] > 1.25,
      "lying flat on the floor past the last step: centre at x = %.3f m, z = %.6f m (b/2 = %g)"
      % (x[-1, 0], x[-1, 2], B / 2))
tab = r["contacts/table"]
check(tab[:, 9].min() >= -1e-9, "no contact gap below -1e-9 m: smallest %.2e m"
      % tab[:, 9].min())
lost = MASS * G * (Z0 - x[-1, 2]) + MASS * V0 ** 2 / 2
D = r["energy/dissipated"][-1]
Dc = r["energy/contact_dissipated"][-1]
check(abs(D - lost) <= 1e-9 * lost, "energy lost m g (z0 - z) + m v0^2 / 2 = %.6f J is the "
      "dissipation %.6f J" % (lost, D))
check(abs(D - Dc) <= 1e-5 * lost, "of it the contacts took %.6f J, the theta method's "
      "projection %.1e J (below 1e-5 of it)" % (Dc, D - Dc))
b, sc = balance(r)
check(b <= 1e-9 * sc, "energy balance E - E0 - W + D: %.1e of %.2f J" % (b, sc))
k = len(t) - 1
o, c = r["contacts/offsets"][k], r["contacts/count"][k]
imp = r["contacts/impulse_since_record"][o:o + c]
rows = contact_rows(r, k)
# the impulses are those on body b, the ground (-1); the box gets minus them
F = -imp.sum(axis=0) / (t[k] - t[k - 1])
check(np.all(rows[:, 2] == -1) and abs(F[2] - MASS * G) <= 1e-6 * MASS * G
      and np.hypot(F[0], F[1]) <= 1e-6 * MASS * G,
      "the floor carries its weight at rest: %.6f N up (m g = %.6f N)" % (F[2], MASS * G))
# contact points that pushed (an impulse since the previous record), wherever they were
touch = tab[np.linalg.norm(r["contacts/impulse_since_record"], axis=1) > 0]
on = [bool(np.any((np.abs(touch[:, 5] - top) < 1e-3) & (touch[:, 3] > lo)
                  & (touch[:, 3] < lo + 0.5)))
      for top, lo in ((0.6, -0.25), (0.4, 0.25), (0.2, 0.75), (0.0, 1.25))]
check(all(on), "it came down step by step: contact points that pushed on the top step, the second, the "
      "third and the floor (%s)" % on)
done()

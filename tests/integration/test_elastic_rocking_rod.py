"""decks/beams/elastic_rocking_rod.yaml (Zander 2008 sec. 6.2, Table 6.2) at a small size:
the rod of 1, 2 and 4 linear elements (E = 2.1e10, the seed's mesh study), each falling onto
the pins. Against the rigid rod of the independent event-driven computation
(tests/reference/rocking_rod.py: first impact at 0.31437 s on pin 1, loss 40.42 J):
  - the first contact is on pin 1 at the rigid rod's impact time (the fall is a rigid
    translation);
  - the energy T + V lost in the first impact episode (first contact to the first contact on
    pin 2) falls as the mesh is refined and stays below the rigid rod's loss, the seed's
    claim; the one-element rod, whose centre line stays straight, loses nearly the rigid
    rod's;
  - the energy balance E - E0 - W + D closes to 1e-5 of the scale (not to round-off: the
    capsule contacts leave an error of the order of dt, 3e-6 at dt = 2e-5, 6e-7 at 5e-6 for
    2 elements, where the rigid box closes to 1e-9).
The rod falls undeformed until it first touches a pin: each run starts at T0 = 0.3 s with the
free-fall state (height h0 - g T0^2 / 2, velocity -g T0), which saves 30000 steps of free
fall. The full studies (8 elements, dt, E): scripts/elastic-rocking-rod."""
import os
import sys

import numpy as np

from common import ROOT, balance, check, deck, done, load, run

sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
import rocking_rod  # noqa: E402

G, H0, T0 = 9.81, 0.5, 0.3
ref = rocking_rod.reference()
rigid_loss = ref["E0"] - ref["E_after_1"]


def episode(r):
    """(time of the first contact, its pin (0: x = -a), energy lost until pin 2 closes)"""
    t, E = r["time"] + T0, r["energy/total"]
    off, cnt = r["contacts/offsets"], r["contacts/count"]
    tab, imp = r["contacts/table"], r["contacts/impulse_since_record"]
    pins = np.zeros((len(t), 2), bool)
    for k in range(len(t)):
        for i in range(off[k], off[k] + cnt[k]):
            if tab[i, 13] > 0 or np.linalg.norm(imp[i]) > 0:
                pins[k, 0 if tab[i, 3] < 0 else 1] = True
    k1 = int(np.argmax(pins.any(axis=1)))
    k2 = int(np.argmax(pins[:, 1]))
    assert k2 > k1, "pin 2 did not close within the run"
    return t[k1], 0 if pins[k1, 0] else 1, E[k1 - 1] - E[k2 - 1]


DT = 2e-5
loss = {}
for ne in (1, 2, 4):
    r = load(run(deck("beams/elastic_rocking_rod.yaml"),
                 "--set", "parameters.elements=%d" % ne,
                 "--set", "parameters.h0=%r" % (H0 - 0.5 * G * T0 * T0),
                 "--set", "beams.rod.velocity=[0, 0, %r]" % (-G * T0),
                 "--set", "solver.t_end=0.03", "--set", "solver.dt=%r" % DT,
                 "--set", "output.every=1")[3])
    t1, pin, loss[ne] = episode(r)
    check(pin == 0 and abs(t1 - ref["t1"]) <= DT,
          "%d element(s): first contact on pin 1 at %.5f s (rigid: %.5f s)" % (ne, t1, ref["t1"]))
    err, scale = balance(r)
    check(err < 1e-5 * scale, "%d element(s): energy balance %.1e J of %.2f J (%.1e)"
          % (ne, err, scale, err / scale))
print("loss in the first impact episode: %s J; rigid rod %.3f J"
      % (", ".join("%d: %.3f" % (n, v) for n, v in loss.items()), rigid_loss))
check(loss[1] > loss[2] > loss[4] > 0,
      "the loss falls with refinement (%.2f > %.2f > %.2f J)" % (loss[1], loss[2], loss[4]))
check(max(loss.values()) < rigid_loss,
      "the rigid rod's loss %.3f J bounds them" % rigid_loss)
check(abs(loss[1] - rigid_loss) < 0.01 * rigid_loss,
      "one element (straight centre line) loses nearly the rigid loss (%.3f J)" % loss[1])
done()

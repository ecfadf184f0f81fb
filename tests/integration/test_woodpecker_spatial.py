"""decks/beams/woodpecker_spatial.yaml (Zander 2008 sec. 6.3, Table 6.3, the spatial model:
the sleeve as two rings free on a pole of surface capsules, the bird 1 mm out of the plane) at
a small size (4 elements, dt = 1e-4 s, up to just after the first pick):
  - the sleeve stays on the pole: every ring contact's gap >= -1e-9 m;
  - the picker strikes the pole, off its centre plane (the eccentricity e = 1 mm of a 2.5 mm
    radius: the contact normal's z component at least 0.3);
  - the eccentric pick twists the pole (the seed's figure 6.10, "the torsion of the pole tip
    occurs in high frequency oscillations"): the largest torsion |K1| of its elements within
    5 ms after the pick is more than 3 times the largest before it (the sleeve's friction
    on its bore twists the pole a little all along);
  - the energy balance closes to 1e-6 of the scale.
The planar model's checks are in test_woodpecker_elastic.py."""
import numpy as np

from common import attempt, balance, check, deck, done

what = "woodpecker_spatial.yaml"
r = attempt(what, deck("beams/woodpecker_spatial.yaml"), "--t-end", "0.155", "--set",
            "parameters.elements=4", "--set", "solver.dt=1e-4", "--set", "output.every=1")
if r is not None:
    t, tab = r["time"], r["contacts/table"]
    off, cnt, imp = r["contacts/offsets"], r["contacts/count"], r["contacts/impulse_since_record"]
    names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
    sleeve, bird = names.index("sleeve"), names.index("bird")
    rings = tab[(tab[:, 1] == sleeve) | (tab[:, 2] == sleeve)]
    check(len(rings) > 0 and np.min(rings[:, 9]) >= -1e-9,
          "%s: the sleeve's rings stay on the pole: %d ring contact rows, gaps >= -1e-9 m "
          "(min %.2e)" % (what, len(rings), np.min(rings[:, 9]) if len(rings) else np.nan))
    hits = [k for k in range(len(t)) for i in range(off[k], off[k] + cnt[k])
            if bird in (tab[i, 1], tab[i, 2]) and np.linalg.norm(imp[i]) > 0]
    check(len(hits) > 0, "%s: the picker strikes the pole (first at %s s)"
          % (what, "%.4f" % t[hits[0]] if hits else "-"))
    if hits:
        k = hits[0]
        row = [tab[i] for i in range(off[k], off[k] + cnt[k]) if bird in (tab[i, 1], tab[i, 2])]
        nz = abs(row[0][8])
        check(nz >= 0.3, "%s: it strikes off the pole's centre plane: normal's |z| = %.3f "
              "(e / r_p = 0.4; >= 0.3)" % (what, nz))
        K1 = np.abs(r["beams/pole/strain"][:, :, 3])
        before, after = np.max(K1[:k]), np.max(K1[k:k + 50])
        check(after > 3 * before,
              "%s: the eccentric pick twists the pole: max |K1| %.2e 1/m within 5 ms after it, "
              "%.2e before (> 3 x)" % (what, after, before))
    err, scale = balance(r)
    check(err <= 1e-6 * scale, "%s: energy balance |E - E0 - W + D| = %.2e J <= 1e-6 x %.4g J"
          % (what, err, scale))
done()

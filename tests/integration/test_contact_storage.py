"""The contact storage has no fixed limit: it is sized from the model and grows when a step
finds more contact points (src/solver/moreau.c, grow_contacts), with the default settings:
1. a disc (2 kg, radius 0.2 m) whose contact shape is 1000 points on its flat bottom, resting
   on a floor plane for 0.1 s (mu = 0.5): completed; |v|, |omega| <= 1e-8 in every record;
   every gap >= -1e-9 m; in every record after the first, the normal impulses of its 1000
   points sum to the weight's impulse m g dt to 1e-9 relative (statics: the floor carries the
   disc), with all 1000 points in the table; and (not QUICK) the run takes at most 12 s of
   CPU (3 s with the augmented Newton system of src/contact/problem.c; 21-24 s before);
2. six plates (1 kg, a 10 x 10 grid of points under each) dropped from staggered heights
   onto a floor, 0.4 s: the contact count grows during the run from 0 to 600, well beyond the
   storage's first estimate (64 + 32 per shape: 288 for 7 shapes); completed, every gap >=
   -1e-9 m, at rest at the end (|v|, |omega| <= 1e-8 over the last 0.1 s) and the last
   record's normal impulses sum to 6 m g dt to 1e-9 relative.
/contacts/table columns: 0 record, 1 body a, 2 body b, 9 gap, 10 normal impulse."""
import math
import resource

import numpy as np

from common import QUICK, attempt, check, done, write_deck
from common import contact_rows as rows

G, DT = 9.81, 1.0e-3
COL_GAP, COL_PN = 9, 10

FLOOR = """ground:
  collision:
    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}
"""


def pts(coords):
    return ", ".join("[%r, %r, %r]" % c for c in coords)


def speeds(r):
    return (np.linalg.norm(r["bodies/velocity"], axis=2),
            np.linalg.norm(r["bodies/angular_velocity"], axis=2))


# ---- 1. 1000 points at rest -----------------------------------------------------------------
N, M, R = 1000, 2.0, 0.2
disc = [(round(R * math.sqrt((k + 0.5) / N) * math.cos(2.399963229728653 * k), 6),
         round(R * math.sqrt((k + 0.5) / N) * math.sin(2.399963229728653 * k), 6), -0.05)
        for k in range(N)]
I1, I3 = M * (3 * R * R + 0.01) / 12, M * R * R / 2
text = """mbsim: 1
title: a disc on 1000 points at rest
gravity: [0, 0, -%r]
bodies:
  - {name: disc, mass: %r, inertia: [%r, %r, %r], position: [0, 0, 0.05],
     collision: [{points: [%s]}]}
%scontacts:
  - {name: floor, between: [disc, ground], friction: 0.5}
solver: {dt: %r, t_end: 0.1}
""" % (G, M, I1, I1, I3, pts(disc), FLOOR, DT)
cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
r = attempt("a disc on 1000 points at rest (default settings)", write_deck("disc1000.yaml", text))
cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - cpu0
if r is not None and not QUICK:
    # the island's Newton system in the augmented form (src/contact/problem.c): 3 s of CPU
    # where the dense 3000 x 3000 LU of the Delassus matrix's pattern took 21-24 s
    check(cpu <= 12.0, "1000 points: %.1f s of CPU (<= 12 s: the augmented Newton system)" % cpu)
if r is not None:
    v, w = speeds(r)
    check(max(v.max(), w.max()) <= 1e-8, "1000 points: at rest, max |v| %.2e, |omega| %.2e"
          % (v.max(), w.max()))
    gmin = r["contacts/table"][:, COL_GAP].min()
    check(gmin >= -1e-9, "1000 points: every gap >= -1e-9 m (min %.3e)" % gmin)
    nrec = len(r["time"])
    counts = [len(rows(r, k)) for k in range(1, nrec)]
    check(min(counts) == N, "1000 points: all %d in every record's table (min %d)" % (N, min(counts)))
    err = max(abs(rows(r, k)[:, COL_PN].sum() - M * G * DT) / (M * G * DT) for k in range(1, nrec))
    check(err <= 1e-9, "1000 points: normal impulses sum to m g dt to %.2e relative (<= 1e-9)" % err)

# ---- 2. contacts growing beyond the first estimate ------------------------------------------
NP, MP = 6, 1.0
grid = [(-0.05 + 0.1 * i / 9, -0.05 + 0.1 * j / 9, -0.01) for i in range(10) for j in range(10)]
plates = "\n".join(
    "  - {name: p%d, mass: %r, inertia: [0.001, 0.001, 0.002], position: [%r, 0, %r],\n"
    "     collision: [{points: [%s]}]}" % (k, MP, 0.15 * k, 0.01 + 0.02 * (k + 1), pts(grid))
    for k in range(NP))
text = """mbsim: 1
title: six plates of points landing one after the other
gravity: [0, 0, -%r]
bodies:
%s
%scontacts:
  - {name: floor, between: ["p*", ground], friction: 0.5}
solver: {dt: %r, t_end: 0.4}
""" % (G, plates, FLOOR, DT)
r = attempt("six plates of 100 points landing", write_deck("plates.yaml", text))
if r is not None:
    estimate = 64 + 32 * (NP + 1)
    cnt = r["contacts/count"]
    check(cnt[-1] == NP * 100 and cnt.max() > estimate,
          "plates: the contact count grows to %d (last record %d), beyond the first estimate %d"
          % (cnt.max(), cnt[-1], estimate))
    check(cnt[1] < cnt[-1], "plates: fewer contacts at the first step (%d) than at the end" % cnt[1])
    gmin = r["contacts/table"][:, COL_GAP].min()
    check(gmin >= -1e-9, "plates: every gap >= -1e-9 m (min %.3e)" % gmin)
    v, w = speeds(r)
    late = r["time"] >= r["time"][-1] - 0.1 - 1e-9
    check(max(v[late].max(), w[late].max()) <= 1e-8,
          "plates: at rest over the last 0.1 s, max |v| %.2e, |omega| %.2e"
          % (v[late].max(), w[late].max()))
    last = rows(r, len(r["time"]) - 1)
    err = abs(last[:, COL_PN].sum() - NP * MP * G * DT) / (NP * MP * G * DT)
    check(err <= 1e-9, "plates: the last record's normal impulses sum to 6 m g dt to %.2e" % err)

done()

"""A record never changes the trajectory: the final state of a run is the same, bit for bit,
whether it writes a record every step, every 7 steps or every 500 (output.every), on decks
with joints and each kind of integrator state (em's multipliers, genalpha's accelerations,
moreau's contacts), and it equals the last record of a restart from a middle record."""
import numpy as np

from common import check, deck, done, load, run

CASES = [
    ("double_pendulum.yaml", ["--t-end", "0.6"]),
    ("four_bar.yaml", ["--t-end", "0.5"]),
    ("slider_crank.yaml", ["--t-end", "0.5", "--integrator", "genalpha"]),
    ("contacts/bouncing_ball.yaml", ["--t-end", "0.5"]),
]

for name, args in CASES:
    finals = {}
    for every in (1, 7, 500):
        _, _, _, out = run(deck(name), *args, "--set", "output.every=%d" % every,
                           "--set", "output.xdmf=false")
        r = load(out)
        finals[every] = (r["state/q"][-1], r["state/v"][-1], r["time"][-1])
    q1, v1, t1 = finals[1]
    for every in (7, 500):
        q, v, t = finals[every]
        same = t == t1 and np.array_equal(q, q1) and np.array_equal(v, v1)
        check(same, "%s: final q and v with output.every=%d equal to every=1, bit for bit "
              "(max |dq| %.1e)" % (name, every, np.max(np.abs(q - q1)) if q.size else 0.0))
done()

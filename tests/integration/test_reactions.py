"""/joints/reaction against Newton's second law: on the double pendulum, the rods are the
only forces besides gravity, so m (v_{n+1} - v_n)/dt - m g must equal the recorded
reactions (em evaluates the constraint forces at the step's midpoint)."""
import numpy as np

from common import check, deck, done, load, run

dt = 1e-3
_, _, _, out = run(deck("double_pendulum.yaml"), "--t-end", "1", "--set", "output.every=1")
r = load(out)
names = [n.decode() if isinstance(n, bytes) else n for n in r["joints/names"]]
check(names == ["rod1", "rod2"], "joint names %s" % names)
R = r["joints/reaction"]
check(R.shape == (len(r["time"]), 2, 6), "reaction shape %s" % (R.shape,))
v = r["bodies/velocity"]
g = np.array([0, 0, -9.81])
f2 = (v[1:, 1] - v[:-1, 1]) / dt - g          # m2 = 1
f1 = (v[1:, 0] - v[:-1, 0]) / dt - g          # m1 = 1
e2 = np.max(np.abs(f2 - R[1:, 1, :3]))
e1 = np.max(np.abs(f1 - (R[1:, 0, :3] - R[1:, 1, :3])))
check(e2 <= 1e-6, "rod2 on bob2 equals m2 a2 - m2 g (%.2e)" % e2)
check(e1 <= 1e-6, "rod1 on bob1 equals m1 a1 - m1 g + rod2's reaction (%.2e)" % e1)
check(np.max(np.abs(R[:, :, 3:])) <= 1e-9, "no torque on point masses about their joint point")
done()

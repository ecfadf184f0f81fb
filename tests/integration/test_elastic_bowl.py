"""decks/contacts/elastic_bowl.yaml (Zander 2008 sec. 6.4, Table 6.4), reduced to its first
0.25 s (the full 2 s run takes about a minute: the closing note's figures): the 50 dice fall
into the bowl of 16 sprung nodes. Checked against closed forms computed here:
- until the first die lands every node oscillates freely on its spring, z(t) - z0 =
  -(g / w^2) (1 - cos w t) with w^2 = k_n / m_n (the seed's identity stiffness and mass), at
  the trapezoidal rule's frequency 2 atan(w dt / 2) / dt;
- the first dice land on the bowl's central patch (contacts die-bowl, body b a node of its
  patch), the bowl's nodes under it jump in velocity at that step, and nothing sinks into the
  bowl (smallest gap above -1e-8 m);
- the energy balance E - E0 - W + D closes to 1e-10 of the energy scale."""
import numpy as np

from common import attempt, balance, check, contact_rows, deck, done

KN, MN, G = 750.0, 1.0, 9.81

what = "elastic bowl, first 0.25 s"
r = attempt(what, deck("contacts/elastic_bowl.yaml"), "--set", "solver.t_end=0.25",
            "--set", "output.every=1", "--set", "output.xdmf=false")
if r is not None:
    names = [n.decode() if isinstance(n, bytes) else n for n in r["bodies/names"]]
    nodes = [i for i, n in enumerate(names) if n.startswith("n")]
    t, z = r["time"], r["bodies/position"][:, nodes, 2]
    cnt = r["contacts/count"]
    k1 = int(np.argmax(cnt > 0))
    # the theta method at theta = 1/2 (the trapezoidal rule) turns at wd = 2 atan(w dt / 2)
    # / dt: the discrete solution is the closed form's with w -> wd (dt = 1e-3 until then)
    w = np.sqrt(KN / MN)
    wd = 2 * np.arctan(w * 1e-3 / 2) / 1e-3
    free = z[:k1] - z[0] + G / w ** 2 * (1 - np.cos(wd * t[:k1]))[:, None]
    err = np.max(np.abs(free))
    check(k1 > 100 and len(nodes) == 16 and err <= 1e-12,
          "%s: 16 nodes oscillate freely until t = %.3f s: z - z0 = -(g / w^2)(1 - cos wd t), "
          "wd = 2 atan(w dt / 2) / dt (error %.1e m, 1e-12)" % (what, t[k1], err))
    rows = contact_rows(r, k1)
    ab = {(names[int(a)], names[int(b)]) for a, b in rows[:, 1:3]}
    ok = len(ab) > 0 and all(a.startswith("die") and b.startswith("n") for a, b in ab)
    vz = r["bodies/velocity"][:, nodes, 2]
    jump = np.max(np.abs((vz[k1] - vz[k1 - 1]) - (vz[k1 - 1] - vz[k1 - 2])))
    check(ok and jump > 1e-3,
          "%s: the first contacts (t = %.3f s) are dice on the bowl's nodes %s, whose "
          "velocities jump by up to %.3g m/s" % (what, t[k1], sorted(ab), jump))
    gmin = min(np.min(contact_rows(r, k)[:, 9]) for k in range(k1, len(t)) if cnt[k] > 0)
    check(gmin >= -1e-8, "%s: smallest gap %.2e m (-1e-8)" % (what, gmin))
    e, scale = balance(r)
    check(e <= 1e-10 * scale, "%s: energy balance %.1e J of %.3g J (1e-10)" % (what, e, scale))
done()

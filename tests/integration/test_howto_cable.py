"""The how-to "A hanging cable, static then moving" (docs/howto/hanging-cable.md): its deck
decks/howto/hanging_cable.yaml as the guide runs it (default settings; `--integrator static
--t-end 0.005`, then `--restart` with `--integrator em`). Checked against the analytic
catenary y = a (cosh((x - s/2) / a) - cosh(s / 2a)) of the cable's length between the pins
(a from scipy's brentq on 2 a sinh(s / 2a) = L):
- the static sag against the catenary's a (cosh(s / 2a) - 1) (1e-3; 20 elements 2.1e-5 long,
  40 elements 1.7e-5: what is left is the cable's stretch, about T L / EA = 3e-5 m of length
  or 1.5e-5 of the sag, which the inextensible catenary leaves out; the sag of 40 elements
  no farther off than that of 20), every node within 2 mm of the curve;
- the pins' forces: the vertical ones carry the weight rho A g l (l the node polygon's length,
  the mass the elements hold; 1e-4), the horizontal ones the catenary's tension w a (1.5 %:
  0.02 % with 20 elements, below 0.01 % with 40, falling with the mesh);
- moving: the restarted run starts from the static file's state, the sideways pull's work
  (/energy/external_work, 20 N on the middle node over 0.1 s) equals the energy the cable
  gained (em conserves it: 1e-9), and the pull moves the middle node sideways."""
import os
import time

import numpy as np
from scipy.optimize import brentq

from common import TMP, attempt, check, deck, done, load, run

SPAN, LEN, RHO, RAD, G = 10.0, 11.0, 7800.0, 0.005, 9.81
a = brentq(lambda a: 2 * a * np.sinh(SPAN / (2 * a)) - LEN, 0.5, 100.0)
sag = a * (np.cosh(SPAN / (2 * a)) - 1)
w = RHO * np.pi * RAD ** 2 * G
d = deck("howto/hanging_cable.yaml")


def static(what, *extra):
    out = os.path.join(TMP, what + ".h5")
    rc, _, err, _ = run(d, "--integrator", "static", "--t-end", "0.005", "--set",
                        "solver.static.gravity=full", *extra, out=out,
                        check=False)
    check(rc == 0, "%s: the static run completes (exit %d) %s" % (what, rc, err.strip()[-200:]))
    return load(out) if rc == 0 else None, out


t0 = time.time()
r, static_h5 = static("static")
print("      (the static run took %.2f s)" % (time.time() - t0))
errs = {}
for n, (res, path) in (("20", (r, static_h5)),
                       ("40", static("static40", "--set", "beams.cable.elements=40",
                                     "--set", "loads.pull.body=cable[20]"))):
    if res is None:
        done()
    p = res["beams/cable/position"][-1]
    s = -np.min(p[:, 2])
    poly = np.sum(np.linalg.norm(np.diff(p, axis=0), axis=1))
    fx = res["joints/reaction"][-1][:, 0]
    fz = res["joints/reaction"][-1][:, 2]
    errs[n] = (abs(s - sag) / sag, abs(abs(fx[0]) - w * a) / (w * a))
    if n == "20":
        check(errs[n][0] <= 1e-3, "static sag %.5f m against the catenary's %.5f m: %.1e "
              "(1e-3)" % (s, sag, errs[n][0]))
        zc = a * (np.cosh((p[:, 0] - SPAN / 2) / a) - np.cosh(SPAN / (2 * a)))
        dev = np.max(np.abs(p[:, 2] - zc))
        check(dev <= 2e-3, "every node within %.1e m of the catenary (2 mm)" % dev)
        e = np.max(np.abs(fz - w * poly / 2)) / (w * poly / 2)
        check(e <= 1e-4, "the pins carry the weight rho A g l / 2 = %.4f N each: %.1e"
              % (w * poly / 2, e))
        check(errs[n][1] <= 1.5e-2 and abs(fx[0] + fx[1]) <= 1e-9 * abs(fx[0]),
              "the pins pull apart with the catenary's tension w a = %.3f N: %.3f N (%.2f %%)"
              % (w * a, abs(fx[0]), 100 * errs[n][1]))
check(errs["40"][0] <= errs["20"][0] and errs["40"][0] <= 3e-5
      and errs["40"][1] < errs["20"][1] / 2,
      "40 elements: sag %.1e off (no more than 20 elements' %.1e, and within 3e-5: the "
      "cable's stretch), tension %.1e off, below half of 20 elements' %.1e"
      % (errs["40"][0], errs["20"][0], errs["40"][1], errs["20"][1]))

t0 = time.time()
m = attempt("the restart with em (moving)", d, "--restart", static_h5, "--integrator", "em")
print("      (the moving run took %.2f s)" % (time.time() - t0))
if m is not None:
    p0 = m["beams/cable/position"][0]
    check(np.max(np.abs(p0 - r["beams/cable/position"][-1])) == 0.0,
          "the moving run starts from the static equilibrium, bit for bit")
    E, Wk = m["energy/total"], m["energy/external_work"]
    gain = E[-1] - E[0]
    check(Wk[-1] > 0 and abs(gain - Wk[-1]) <= 1e-9 * abs(E[0]),
          "the pull's work %.6f J is the energy the cable gained %.6f J" % (Wk[-1], gain))
    y = np.max(np.abs(m["beams/cable/position"][:, 10, 1]))
    check(0.05 <= y <= 1.0, "the pull swings the middle node sideways: %.3f m" % y)
done()

"""Profile expressions as docs/decks.md "Parameters and
expressions", "Profiles"), through whole runs:
- `2^t^2` is 2^(t^2): a unit force with that profile on a unit point mass gives the velocity
  int_0^1 2^(t^2) dt at t = 1 (scipy's quadrature), not int (2^t)^2 dt;
- a prescribed motion `abs(t - 0.5) - 0.5` whose kink falls on the step grid: the run
  completes (before: NaN reactions, exit 2), the angle follows the profile, the rate jumps
  from -1 to +1 at the kink, every reaction is finite;
- piecewise profiles (min, max, clamp, if, smoothstep) as motions: the joint angle equals
  the profile at every record;
- an expression of more than 10,000 terms and one nested 65 levels deep are refused at
  file:line:column, in well under a second, nothing written."""
import os
import time

import numpy as np
from scipy.integrate import quad

from common import TMP, check, done, load, run, write_deck

POINT = """mbsim: 1
bodies:
  - {name: p, type: point, mass: 1.0, position: [0, 0, 0]}
loads:
  - {name: f, type: force, body: p, value: [1, 0, 0], profile: {expression: "%s"}}
solver: {integrator: em, dt: 1.0e-3, t_end: 1.0}
output: {xdmf: false}
"""
path = write_deck("pow.yaml", POINT % "2^t^2")
_, _, _, out = run(path)
res = load(out)
v1 = res["bodies/velocity"][-1, 0, 0]
ref, _ = quad(lambda t: 2.0 ** (t * t), 0.0, 1.0, epsabs=1e-14)
wrong, _ = quad(lambda t: (2.0 ** t) ** 2, 0.0, 1.0, epsabs=1e-14)
check(abs(v1 - ref) <= 1e-6,
      "2^t^2 = 2^(t^2): v(1) = %.9f, int 2^(t^2) dt = %.9f ((2^t)^2 would give %.6f)"
      % (v1, ref, wrong))

# a motion with a kink of abs on the step grid
DISC = """mbsim: 1
bodies:
  - {name: disc, mass: 1.0, inertia: [0.5, 0.5, 1.0], position: [0, 0, 0],
     angular_velocity: [0, 0, %s]}
joints:
  - {name: hinge, type: revolute, bodies: [ground, disc], point: [0, 0, 0], axis: [0, 0, 1],
     motion: {value: 1.0, profile: {expression: "%s"}}}
solver: {integrator: %s, dt: 0.1, t_end: 1.0}
output: {xdmf: false}
"""
for integ in ("em", "midpoint", "euler", "genalpha"):
    path = write_deck("kink_%s.yaml" % integ, DISC % ("-1.0", "abs(t - 0.5) - 0.5", integ))
    rc, _, err, out = run(path, check=False)
    check(rc == 0, "%s: a motion abs(t - 0.5) - 0.5 with its kink on the step grid completes "
          "(exit %d%s)" % (integ, rc, (": " + err.strip().splitlines()[-1][:200]) if rc else ""))
    if rc != 0:
        continue
    res = load(out)
    t = res["time"]
    ang = res["joints/coordinates"][:, 0, 0]
    rate = res["joints/rates"][:, 0, 0]
    e = np.max(np.abs(ang - (np.abs(t - 0.5) - 0.5)))
    check(e <= 1e-9, "%s: the angle follows |t - 0.5| - 0.5 (%.1e)" % (integ, e))
    er = np.max(np.abs(rate - np.where(t < 0.5 - 1e-9, -1.0, 1.0)))
    check(er <= 1e-9, "%s: the rate is -1 before the kink and +1 from it on (%.1e)" % (integ, er))
    check(np.all(np.isfinite(res["joints/reaction"])), "%s: every reaction is finite" % integ)

# piecewise profiles as motions: the angle is the profile at every record
PIECES = [("min(t, 0.5)", "1.0", lambda t: np.minimum(t, 0.5)),
          ("max(-t, -0.5)", "-1.0", lambda t: np.maximum(-t, -0.5)),
          ("clamp(t - 0.3, 0, 0.4)", "0.0", lambda t: np.clip(t - 0.3, 0.0, 0.4)),
          ("if(t - 0.6, 0.6 - t, 0)", "0.0", lambda t: np.where(t >= 0.6 - 1e-12, 0.6 - t, 0.0)),
          ("smoothstep(0.2, 0.7, t)", "0.0",
           lambda t: (lambda u: u * u * (3 - 2 * u))(np.clip((t - 0.2) / 0.5, 0, 1)))]
for text, w0, f in PIECES:
    path = write_deck("piece.yaml", DISC % (w0, text, "em"))
    rc, _, err, out = run(path, check=False)
    check(rc == 0, "a motion %s completes (exit %d)" % (text, rc))
    if rc != 0:
        continue
    res = load(out)
    e = np.max(np.abs(res["joints/coordinates"][:, 0, 0] - f(res["time"])))
    check(e <= 1e-9, "the angle follows %s (%.1e)" % (text, e))

# sizes: refused at the value, quickly, nothing written
big = "+".join(["sin(t)"] * 4000)
deep = "(" * 65 + "t" + ")" * 65
for what, text in (("of 12,000 terms", big), ("nested 65 levels deep", deep)):
    path = write_deck("big.yaml", POINT % text)
    outp = os.path.join(TMP, "big.h5")
    if os.path.exists(outp):
        os.remove(outp)
    t0 = time.time()
    rc, _, err, _ = run(path, "-o", outp, check=False)
    dt = time.time() - t0
    check(rc == 1 and "big.yaml:5:" in err and ("more than 10000 terms" in err
                                                 or "nested deeper than 64" in err),
          "an expression %s: exit 1 at file:line:column (%s)" % (what, err.strip()[:160]))
    check(dt < 2.0 and not os.path.exists(outp),
          "an expression %s: refused in %.2f s, nothing written" % (what, dt))
done()

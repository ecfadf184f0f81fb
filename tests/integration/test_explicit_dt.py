"""dt against the stiffest elements under Moreau's semi-explicit variant (docs/decks.md
"Contacts", variant explicit): a warning before the run, at the element's file:line:column,
with the closed-form limits:
- a spring k on a point mass m: period T = 2 pi sqrt(m / k) (k = 1e6 N/m, m = 1 kg: 6.28 ms),
  a warning when dt > T / 10, naming T and the explicit stability limit T / pi;
- a beam of node spacing h: its highest axial mode omega = 2 sqrt(3) c / h (consistent mass,
  c = sqrt(E / rho)), unstable above dt = h / (sqrt(3) c) (steel, h = 0.1 m: 11.4 us);
- none of these under the theta variant (implicit: stable at any dt), nor for a dt within
  the limits;
- the explicit run at 2 T / pi grows without bound: the spring's amplitude after 20 steps is
  far above its start (the limit is real)."""
import math
import re

import h5py
import numpy as np

from common import check, done, run, write_deck

K, M, E, RHO, H = 1.0e6, 1.0, 2.0e11, 7800.0, 0.1
T = 2 * math.pi * math.sqrt(M / K)
LIMIT = H / (math.sqrt(3) * math.sqrt(E / RHO))


def scene(name, dt, variant, t_end=None):
    return write_deck(name, f"""mbsim: 1
bodies:
  - {{name: m, type: point, mass: {M}, position: [0.1, 0, 0]}}
loads:
  - {{name: k, type: spring, bodies: [ground, m], points: [[0, 0, 0], [0.1, 0, 0]],
     stiffness: {K}, rest_length: 0.0999}}
beams:
  - name: rod
    from: [0, 1, 0]
    to: [1, 1, 0]
    elements: 10
    section: {{E: {E}, nu: 0.3, density: {RHO}, circle: 0.01}}
solver: {{integrator: moreau, dt: {dt}, t_end: {t_end or 2 * dt}, moreau: {{variant: {variant}}},
         energy_balance: {{unstable: 1e300, warning: 1e300}}}}
output: {{xdmf: false}}
""")


_, _, err, _ = run(scene("explicit.yaml", 1e-3, "explicit"), check=False)
m = re.search(r"explicit\.yaml:5:5: loads\[0\] 'k': .*period 2 pi sqrt\(m / k\) = ([0-9.e+-]+) s"
              r".*unstable above dt = T / pi = ([0-9.e+-]+) s", err)
check(m is not None and abs(float(m.group(1)) - T) <= 1e-3 * T and
      abs(float(m.group(2)) - T / math.pi) <= 1e-3 * T / math.pi,
      "spring: a warning at 5:5 with T = 2 pi sqrt(m / k) = %.4g s and T / pi (%s)"
      % (T, err.strip()[:300]))
m = re.search(r"explicit\.yaml:8:5: beams\[0\] 'rod': .*unstable above dt = ([0-9.e+-]+) s", err)
check(m is not None and abs(float(m.group(1)) - LIMIT) <= 1e-3 * LIMIT,
      "beam: a warning at 8:5 with h / (sqrt(3) c) = %.4g s" % LIMIT)
_, _, err, _ = run(scene("theta.yaml", 1e-3, "theta"), check=False)
check("period" not in err and "axial mode" not in err,
      "theta variant: no explicit-step warning (%s)" % err.strip()[:200])
_, _, err, _ = run(scene("small.yaml", 0.5 * LIMIT, "explicit"), check=False)
check("period" not in err and "axial mode" not in err,
      "explicit within both limits (dt = %.3g s): no warning (%s)" % (0.5 * LIMIT, err.strip()[:200]))

# the spring alone at 2 T / pi: the explicit update's amplification exceeds 1
path = write_deck("blowup.yaml", f"""mbsim: 1
bodies:
  - {{name: m, type: point, mass: {M}, position: [0.1, 0, 0]}}
loads:
  - {{name: k, type: spring, bodies: [ground, m], points: [[0, 0, 0], [0.1, 0, 0]],
     stiffness: {K}, rest_length: 0.0999}}
solver: {{integrator: moreau, dt: {2 * T / math.pi}, t_end: {40 * T / math.pi},
         moreau: {{variant: explicit}},
         energy_balance: {{unstable: 1e300, warning: 1e300}}}}
output: {{xdmf: false}}
""")
rc, _, err, out = run(path, check=False)
if rc == 0:
    with h5py.File(out, "r") as f:
        x = f["bodies/position"][:, 0, 0] - 0.0999
    check(np.max(np.abs(x[-3:])) > 100 * abs(x[0]),
          "explicit spring at dt = 2 T / pi: the amplitude grows (%.3g m from %.3g m)"
          % (np.max(np.abs(x[-3:])), abs(x[0])))
else:
    check(False, "explicit spring at 2 T / pi runs with the monitor off: exit %d: %s"
          % (rc, err.strip()[:300]))
done()

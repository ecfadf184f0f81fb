"""solver.linear_solver: the default klu against umfpack. Both solve the same Newton
equations, so on decks that are not chaotic over the horizon the records agree to round-off
amplified by the step count; with klu the conservation laws of em hold as docs/integrators.md promises
(energy to 1e-9, constraints to 1e-10, J_{n+1} - J_n = dt m), and a restart is bit-exact
(the step after a record pivots afresh, so KLU's reused pivot order carries no history)."""
import os
import subprocess

import numpy as np

from common import MBSIM, TMP, check, deck, done, energy_error, load, run

KLU = ("--set", "solver.linear_solver=klu")

# decks of every joint and load family, over horizons where their motion is not chaotic
CASES = (("quickstart.yaml", 1.0), ("spacecraft.yaml", 5.0), ("slider_crank.yaml", 2.0),
         ("cardan_shaft.yaml", 2.0), ("revolute_pair.yaml", 5.0),
         ("double_spherical_pendulum.yaml", 2.0), ("free_body_torque_window.yaml", 4.0),
         ("torque_profile.yaml", 1.0), ("step_halving.yaml", 0.1))
for name, t_end in CASES:
    _, _, _, ou = run(deck(name), "--t-end", str(t_end), "--set", "solver.linear_solver=umfpack")
    _, out, _, ok = run(deck(name), "--t-end", str(t_end), *KLU)
    u, k = load(ou), load(ok)
    same_grid = np.array_equal(u["time"], k["time"])
    dq = np.max(np.abs(u["state/q"] - k["state/q"])) if same_grid else np.inf
    # measured: dq up to 1.2e-11 (free_body_torque_window), energy up to 4.3e-12
    # (torque_profile), violation up to 8.3e-14 (double_spherical_pendulum)
    check(same_grid and dq <= 4e-11, "%s: klu and umfpack records agree (max |dq| %.1e)"
          % (name, dq))
    e = energy_error(k)
    viol = np.max(k["constraints/violation"])
    check(e <= 1.5e-11 and viol <= 3e-13, "%s with klu: energy balance %.1e, violation %.1e"
          % (name, e, viol))

# the spacecraft: the discrete balance of angular momentum with klu, N = 5 steps
_, _, _, out = run(deck("spacecraft.yaml"), "--dt", "1", *KLU)
J = load(out)["momentum/angular"]
dJ = np.max(np.abs(J - J[0])) / np.max(np.abs(J[0]))
# measured 4.7e-15
check(dJ <= 2e-14, "spacecraft, 5 steps, klu: J constant to 2e-14 relative (%.1e)" % dJ)

# a long conservative run: energy and constraints over [0, 20]
_, _, _, out = run(deck("double_spherical_pendulum.yaml"), "--t-end", "20", *KLU)
r = load(out)
# measured: energy 4.8e-12, violation 8.3e-14
check(energy_error(r) <= 1.5e-11 and np.max(r["constraints/violation"]) <= 3e-13,
      "double spherical pendulum [0, 20] with klu: energy %.1e, violation %.1e"
      % (energy_error(r), np.max(r["constraints/violation"])))

# restart with klu and modified Newton: [0, 2] equals [0, 1] + [1, 2] bit for bit
DP = deck("quickstart.yaml")
_, _, _, full = run(DP, "--t-end", "2", *KLU)
_, _, _, half = run(DP, "--t-end", "1", *KLU)
rest = os.path.join(TMP, "restart_klu.h5")
p = subprocess.run([MBSIM, DP, "--restart", half, "--t-end", "2", "-o", rest, "--quiet"] +
                   list(KLU), capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "klu restart runs (%s)" % p.stderr.strip())
a, b = load(full), load(rest)
i0 = int(np.searchsorted(a["time"], b["time"][0]))
diff = max(np.max(np.abs(a[n][i0:] - b[n])) for n in ("state/q", "state/v", "state/multipliers"))
check(np.array_equal(a["time"][i0:], b["time"]) and diff == 0.0,
      "klu restart: every record after the restart equals the uninterrupted run (max diff %.1e)"
      % diff)

# the summary and the file say which solver ran
_, out, _, o = run(DP, "--t-end", "0.1", *KLU, "--set", "output.every=10")
o_text = subprocess.run([MBSIM, DP, "--t-end", "0.1", "-o", os.path.join(TMP, "s.h5"),
                         "--set", "solver.linear_solver=klu"], capture_output=True, text=True)
check("klu" in o_text.stdout and load(o)["attrs"].get("linear_solver") == "klu",
      "summary and root attribute linear_solver name klu")
done()

"""A 20-link chain runs and keeps its constraints (the benchmark's deck generator)."""
import importlib.machinery
import importlib.util
import os

import numpy as np

from common import ROOT, TMP, check, done, energy_error, load, run

loader = importlib.machinery.SourceFileLoader("chain", os.path.join(ROOT, "scripts", "bench", "chain"))
spec = importlib.util.spec_from_loader("chain", loader)
chain = importlib.util.module_from_spec(spec)
loader.exec_module(chain)
path = os.path.join(TMP, "chain20.yaml")
with open(path, "w") as f:
    f.write(chain.chain_deck(20, 500, 1e-3))
_, _, _, out = run(path, "--set", "output.every=10")
r = load(out)
check(r["state/q"].shape[1] == 240, "240 coordinates")
# measured: violation 6.9e-14, energy 1.8e-13
check(np.max(r["constraints/violation"]) <= 2e-13, "constraints hold (%.1e)"
      % np.max(r["constraints/violation"]))
check(energy_error(r) <= 6e-13, "energy conserved (%.2e)" % energy_error(r))
done()

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
check(np.max(r["constraints/violation"]) <= 1e-10, "constraints hold")
check(energy_error(r) <= 1e-9, "energy conserved (%.2e)" % energy_error(r))
done()

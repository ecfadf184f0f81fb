#!/usr/bin/env python3
"""Identify a damper's coefficient from a measured trace with scipy.optimize, running the deck
in process (docs/library.md).

The "measurement" is a run of decks/damped_oscillator.yaml with a known damping c_true plus
Gaussian noise on the mass's position x(t); the identification minimizes the squared error
between that trace and runs of the same deck with the damping set from Python
(set={"loads.spring.damping": c}), each a few thousand steps without any file.

usage: python/examples/identify_damper.py [--c-true C] [--noise M] [--t-end S] [--seed N]
Prints the identified coefficient, its error and the number of runs."""
import argparse
import os
import sys

import numpy as np
from scipy.optimize import minimize_scalar

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import mbsim  # noqa: E402

DECK = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "decks",
                    "damped_oscillator.yaml")


def trace(c, t_end, samples):
    """x(t) of the mass at the sample times, damping c"""
    with mbsim.Simulation(DECK, set={"loads.spring.damping": c, "solver.t_end": t_end}) as s:
        x = []
        for t in samples:
            s.advance(t)
            x.append(s.bodies["mass"].position[0])
        return np.array(x)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--c-true", type=float, default=0.5, help="damping of the measurement")
    ap.add_argument("--noise", type=float, default=2e-4, help="[m] noise of the measurement")
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    samples = np.linspace(0.02, a.t_end, 100)
    rng = np.random.default_rng(a.seed)
    measured = trace(a.c_true, a.t_end, samples) + a.noise * rng.standard_normal(len(samples))
    runs = [0]

    def cost(c):
        runs[0] += 1
        return float(np.sum((trace(c, a.t_end, samples) - measured) ** 2))

    res = minimize_scalar(cost, bounds=(0.01, 5.0), method="bounded",
                          options={"xatol": 1e-5})
    print("identified damping c = %.5f N s/m (true %.5f, error %.2e), %d runs, residual "
          "%.3e m rms" % (res.x, a.c_true, res.x - a.c_true, runs[0],
                          np.sqrt(res.fun / len(samples))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""An in-process parameter sweep with multiprocessing: the damped oscillator
(decks/damped_oscillator.yaml) over a range of damping coefficients, each case a
mbsim.Simulation in a worker process, no files. For each case it prints the energy the
damper dissipated and the decay rate of the mechanical energy fitted to the run, against the
closed form c / m of a lightly damped oscillator (the energy decays as e^(-c t / m) on
average over a period).

usage: python/examples/sweep.py [--cases N] [--workers W] [--t-end S]"""
import argparse
import multiprocessing
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import mbsim  # noqa: E402

DECK = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "decks",
                    "damped_oscillator.yaml")
MASS = 0.5  # kg, of the deck


def case(args):
    """(c, dissipated energy [J], fitted decay rate of the energy [1/s], final q)"""
    c, t_end = args
    with mbsim.Simulation(DECK, set={"loads.spring.damping": c, "solver.t_end": t_end}) as s:
        ts, es = [], []
        while not s.done:
            s.advance(s.time + 0.01)
            ts.append(s.time)
            es.append(s.energy["total"])
        # the energy's envelope: a straight line through log E over whole periods
        rate = -np.polyfit(ts, np.log(es), 1)[0]
        return c, s.energy["dissipated"], rate, s.q


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--t-end", type=float, default=3.0)
    a = ap.parse_args(argv)
    cs = np.linspace(0.1, 1.0, a.cases)
    with multiprocessing.get_context("spawn").Pool(a.workers) as pool:
        results = pool.map(case, [(float(c), a.t_end) for c in cs])
    print("%10s %14s %14s %14s" % ("c [N s/m]", "dissipated [J]", "decay [1/s]", "c/m [1/s]"))
    for c, dissipated, rate, _ in results:
        print("%10.4f %14.6f %14.6f %14.6f" % (c, dissipated, rate, c / MASS))
    return results


if __name__ == "__main__":
    main()

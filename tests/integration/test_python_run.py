"""The Python package runs decks in process (python/mbsim, libmbsim through ctypes):
- mbsim.run(deck, set=...) gives the numbers of the command's file bit for bit, every dataset,
  and the same status, each deck cut to three steps with the same overrides on both sides: a
  representative set of the shipped decks (each integrator, beams, contacts, assembly,
  profiles, expressions, springs, planar and fixed joints) to keep the test short; with
  MBSIM_ALL_DECKS=1 every shipped deck (about 30 s);
- a parameter set from Python acts exactly as --set (a changed mass changes the run, the same
  way as the command's);
- a Simulation advanced in pieces (step(), advance()) ends in the state of one run;
- two Simulations in one process are independent (interleaved steps, and threads);
- a bad deck raises DeckError with file:line:column, a failing run SolverError."""
import glob
import os
import threading

import h5py
import numpy as np

from common import ROOT, TMP, check, deck, done, python_package, run, write_deck

# the library beside the command under test (a sanitizer build has its own)
mbsim = python_package("mbsim in process")


def datasets(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset)
                     else None)
        status = f.attrs["status"]
    return out, status


def same(a, b):
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


SUBSET = [("double_pendulum.yaml", {}), ("slider_crank.yaml", {"solver.integrator": "genalpha"}),
          ("four_bar_assembled.yaml", {"solver.integrator": "midpoint"}),
          ("static_truss.yaml", {}), ("contacts/dice_bowl.yaml", {}),
          ("spacetime_pendulum.yaml", {}), ("beams/flexible_arm.yaml", {}),
          ("torque_profile.yaml", {"solver.integrator": "euler"}), ("expressions.yaml", {}),
          ("rotational_spring.yaml", {}), ("planar_and_fixed.yaml", {})]
if os.environ.get("MBSIM_ALL_DECKS", "") not in ("", "0"):
    SUBSET = [(os.path.relpath(p, os.path.join(ROOT, "decks")), {}) for p in sorted(
        glob.glob(os.path.join(ROOT, "decks", "*.yaml")) +
        glob.glob(os.path.join(ROOT, "decks", "beams", "*.yaml")) +
        glob.glob(os.path.join(ROOT, "decks", "contacts", "*.yaml")))]
decks = [deck(n) for n, _ in SUBSET]
bad = []
for name, extra in SUBSET:
    path = deck(name)
    with mbsim.Simulation(path) as s:
        dt = float(s.get("dt")[0])
    # three steps, and a record of each
    over = dict({"solver.t_end": repr(3 * dt), "output.every": "1", "output.xdmf": "false"},
                **extra)
    args = []
    for k, v in over.items():
        args += ["--set", "%s=%s" % (k, v)]
    _, _, _, out_cli = run(path, *args)
    out_py = os.path.join(TMP, "py_" + name.replace("/", "_") + ".h5")
    r = mbsim.run(path, set=over, output=out_py)
    a, sa = datasets(out_cli)
    b, sb = datasets(out_py)
    diff = sorted(k for k in set(a) | set(b) if k not in a or k not in b or not same(a[k], b[k]))
    if diff or sa != sb or len(r.time) != 4:
        bad.append("%s: %s%s" % (name, ", ".join(diff[:4]), "" if sa == sb else " status"))
check(not bad, "mbsim.run of %d shipped decks (3 steps) gives the command's file "
      "bit for bit, every dataset and the status%s" % (len(decks), "; " + "; ".join(bad)
                                                          if bad else ""))

# --set from Python: a heavier second link changes the motion, exactly as on the command line
dp = deck("double_pendulum.yaml")
over = {"solver.t_end": 0.05, "bodies.bob2.mass": 2.5}
r_py = mbsim.run(dp, set=over)
_, _, _, out_cli = run(dp, "--set", "solver.t_end=0.05", "--set", "bodies.bob2.mass=2.5")
q_cli = datasets(out_cli)[0]["state/q"]
r_base = mbsim.run(dp, set={"solver.t_end": 0.05})
check(np.array_equal(r_py.q, q_cli) and not np.array_equal(r_py.q, r_base.q),
      "set={'bodies.bob2.mass': 2.5} acts as --set bodies.bob2.mass=2.5 (q bit for bit; "
      "it differs from the deck's mass by %.2e)" % np.max(np.abs(r_py.q - r_base.q)))

# pieces: steps one by one, then advance(), end in the state of one run
with mbsim.Simulation(dp, set={"solver.t_end": 0.1}) as whole, \
        mbsim.Simulation(dp, set={"solver.t_end": 0.1}) as pieces:
    whole.advance(1.0)
    for _ in range(7):
        pieces.step()
    pieces.energy  # an observation between steps changes nothing
    pieces.advance(0.05)
    pieces.advance(0.1)
    check(whole.time == pieces.time == 0.1 and np.array_equal(whole.q, pieces.q) and
          np.array_equal(whole.v, pieces.v) and pieces.status == "completed",
          "a run advanced in pieces (7 steps, an observation, advance to 0.05, 0.1) ends in "
          "the state of one advance, bit for bit, status %r" % pieces.status)
    try:
        pieces.step()
        over_ok = False
    except mbsim.SolverError as e:
        over_ok = "over" in str(e)
    check(over_ok, "a step past t_end raises SolverError")

# independence: two models interleaved, and two threads, give the results of separate runs
fb = deck("four_bar.yaml")
ref_dp = mbsim.Simulation(dp, set={"solver.t_end": 0.1})
ref_dp.advance(0.1)
ref_fb = mbsim.Simulation(fb, set={"solver.t_end": 0.1})
ref_fb.advance(0.1)
a = mbsim.Simulation(dp, set={"solver.t_end": 0.1})
b = mbsim.Simulation(fb, set={"solver.t_end": 0.1})
while not (a.done and b.done):
    for s in (a, b):
        if not s.done:
            s.step()
check(np.array_equal(a.q, ref_dp.q) and np.array_equal(b.q, ref_fb.q),
      "two Simulations stepped alternately end as each alone, bit for bit")
threads_q = {}


def work(key, path):
    with mbsim.Simulation(path, set={"solver.t_end": 0.1}) as s:
        s.advance(0.1)
        threads_q[key] = s.q


ts = [threading.Thread(target=work, args=(k, p)) for k, p in (("dp", dp), ("fb", fb))]
for t in ts:
    t.start()
for t in ts:
    t.join()
check(np.array_equal(threads_q["dp"], ref_dp.q) and np.array_equal(threads_q["fb"], ref_fb.q),
      "two Simulations in two threads end as each alone, bit for bit")
for s in (ref_dp, ref_fb, a, b):
    s.close()

# a Simulation restarted from the command's file at t = 1 ends where the command's
# uninterrupted run ends, bit for bit (the restart's contract, in process)
_, _, _, half = run(dp, "--t-end", "1")
_, _, _, whole = run(dp, "--t-end", "2")
with mbsim.Simulation(dp, set={"solver.t_end": 2}, restart=half) as s:
    t_start = s.time
    s.advance(2.0)
    q_end, v_end = s.q, s.v
ref = mbsim.load(whole)
check(t_start == 1.0 and np.array_equal(q_end, ref["state/q"][-1]) and
      np.array_equal(v_end, ref["state/v"][-1]),
      "restart=: from the record at t = %g to t = 2, q and v bit for bit as the command's "
      "uninterrupted run" % t_start)

# errors: DeckError with file:line:column; SolverError with the status
text = open(dp).read().replace("solver:", "solver:\n  dtt: 1", 1)
bad_deck = write_deck("bad.yaml", text)
line = text.split("\n").index("  dtt: 1") + 1
try:
    mbsim.Simulation(bad_deck)
    err = None
except mbsim.DeckError as e:
    err = e
check(err is not None and err.file == bad_deck and err.line == line and err.column == 3 and
      str(err).startswith("%s:%d:3: " % (bad_deck, line)),
      "a bad key raises DeckError at file:line:column (%s)" % err)
try:
    mbsim.Simulation(None, text=text)
    err = None
except mbsim.DeckError as e:
    err = e
check(err is not None and err.line == line, "deck text: DeckError at its line (%s)" % err)
try:
    mbsim.run(dp, set={"solver.t_end": 0.5, "solver.dt": 0.1, "solver.max_halvings": 0,
                       "solver.newton.max_iterations": 1})
    serr = None
except mbsim.SolverError as e:
    serr = e
except mbsim.DeckError as e:
    serr = e
check(isinstance(serr, mbsim.SolverError) and serr.status.startswith("failed: Newton"),
      "a run whose steps fail raises SolverError with the status (%s)" % serr)
done()

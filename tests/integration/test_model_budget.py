"""The model-size budget (docs/decks.md "Solver and output", solver.memory_limit): a model
whose estimated memory exceeds what the machine allows, or the deck's or command line's
limit, is refused with exit status 1 before anything of its size is allocated, the estimate
and the key in the message; the documented maximum sizes check quickly.
- a beam of the documented maximum, 100,000 elements: --check in a few seconds; 100,001
  elements refused at the value;
- the same beam with --memory-limit 1 (GB), with solver.memory_limit in the deck, and under
  `ulimit -v` of 2 GB: exit 1, "needs about 3.75 GB", naming the limit and the key, within a
  second (before: a run of it under such limits was killed or failed without a message);
- twenty beams of 100,000 elements (each within its own bound) refused as a whole;
- a space-time block of 100,000 elements on a 5-step run holds 5 elements (before: 9.7 GB
  and still running after 200 s)."""
import os
import resource
import subprocess

from common import MBSIM, TMP, check, deck, done, skip, write_deck

BEAM = """mbsim: 1
gravity: [0, 0, -9.81]
beams:
%s
joints:
  - {name: clamp, type: fixed, bodies: [ground, "b0[0]"], point: [0, 0, 0]}
solver: {dt: 1.0e-3, t_end: 0.002%s}
output: {xdmf: false}
"""
ONE = """  - name: b%d
    from: [0, %d, 0]
    to: [1, %d, 0]
    elements: %d
    up: [0, 0, 1]
    section: {E: 2.1e11, nu: 0.3, density: 7850, rectangle: [0.01, 0.02]}"""


def beams(n, elements, extra=""):
    return BEAM % ("\n".join(ONE % (i, i, i, elements) for i in range(n)), extra)


def mbsim(args, limit_as=None, timeout=120):
    def pre():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    # CPU seconds of the child, not wall time: a loaded machine must not fail the bound
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([MBSIM] + args, capture_output=True, text=True, timeout=timeout,
                       preexec_fn=pre)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return p.returncode, p.stdout, p.stderr, cpu


big = write_deck("beam_max.yaml", beams(1, 100000))
rc, out, err, secs = mbsim([big, "--check"])
check(rc == 0 and secs < 10.0 and "coordinates:  1200012" in out,
      "--check of a beam of the documented maximum (100,000 elements): exit %d in %.1f s" % (rc, secs))
rc, _, err, _ = mbsim([write_deck("beam_over.yaml", beams(1, 100001)), "--check"])
check(rc == 1 and "beam_over.yaml:7:15:" in err and "elements must be in 1 .. 100000" in err,
      "100,001 elements: exit 1 at the value (%s)" % err.strip())

# AddressSanitizer reserves terabytes of address space at start: no ulimit -v under it
with open(MBSIM, "rb") as f:
    ASAN = b"__asan_init" in f.read()

outp = os.path.join(TMP, "budget.h5")
for what, args, path, limit_as, want in (
        ("--memory-limit 1", ["--memory-limit", "1"], big, None, "solver.memory_limit = 1 GB"),
        ("solver.memory_limit: 1 in the deck", [],
         write_deck("beam_limit.yaml", beams(1, 100000, ", memory_limit: 1")), None,
         "solver.memory_limit = 1 GB"),
        ("ulimit -v 2 GB", [], big, 2 * 1024 ** 3, "the address-space limit (ulimit -v)")):
    if limit_as and ASAN:
        skip("a 100,000-element beam with %s" % what, "AddressSanitizer needs the address space")
        continue
    if os.path.exists(outp):
        os.remove(outp)
    rc, _, err, secs = mbsim([path, "-o", outp] + args, limit_as=limit_as)
    check(rc == 1 and "the model needs about 3.75 GB of memory" in err and want in err
          and "solver.memory_limit (GB; --memory-limit GB)" in err and secs < 5.0
          and not os.path.exists(outp),
          "a 100,000-element beam with %s: exit 1 with the estimate, the limit and the key in "
          "%.2f s, nothing written (%d: %s)" % (what, secs, rc, err.strip()[:300]))

# several beams, each within its bound, together beyond the machine
many = write_deck("beams_many.yaml", beams(20, 100000))
rc, _, err, secs = mbsim([many, "--check"])
check(rc == 1 and "the model needs about 73.8 GB" in err and "24000240 coordinates" in err,
      "twenty beams of 100,000 elements: exit 1, the estimate for all of them (%.1f s: %s)"
      % (secs, err.strip()[:300]))

# a space-time block never holds more elements than the run has steps
rc, _, err, secs = mbsim([deck("double_pendulum.yaml"), "--integrator", "spacetime", "--set",
                          "solver.spacetime.elements_per_block=100000", "--set",
                          "solver.spacetime.degree=2", "--t-end", "0.005", "--dt", "0.001",
                          "-o", outp, "--overwrite", "--quiet"])
check(rc == 0 and secs < 5.0,
      "a space-time block of 100,000 elements on a 5-step run: exit %d in %.2f s (before: 9.7 GB, "
      "still running after 200 s) %s" % (rc, secs, err.strip()[:200]))
rc, _, err, _ = mbsim([deck("double_pendulum.yaml"), "--integrator", "spacetime", "--set",
                       "solver.spacetime.elements_per_block=100000", "--dt", "1e-6",
                       "--memory-limit", "0.5", "--check"])
check(rc == 1 and "a space-time block of 100000 elements of degree 1 holds 100000 stages" in err,
      "a block of 100,000 elements on a long run counts in the budget (%s)" % err.strip()[:300])
done()

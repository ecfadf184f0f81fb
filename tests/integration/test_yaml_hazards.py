"""YAML hazards: every bad deck of tests/bad/expected.tsv and generated hostile decks (a
huge list, a deck just under the node limit, a file over the size limit, deep nesting, the
worst anchor/alias pattern libyaml allows us, a huge mapping with a late duplicate key, wide
merge keys) are rejected with exit 1 within bounded time and memory. The bounds are those of
the robustness table of docs/robustness.md: at most 1,000,000 YAML nodes (aliases expanded), 256 anchors,
64 levels, 64 MiB; under 10 s and 400 MB each here."""
import os
import subprocess
import time

from common import MBSIM, QUICK, ROOT, TMP, check, done

BAD = os.path.join(ROOT, "tests", "bad")
ONE = "bodies:\n  - {name: bob, type: point, mass: 1, position: [0, 0, 0]}\n"
# sanitizers make everything slower and larger
TIME_LIMIT = 60.0 if QUICK else 10.0
MEM_LIMIT_MB = None if QUICK else 400


def measure(path, cwd=None):
    """run mbsim-run --check on path: exit code, stderr, wall time, peak memory [MB]"""
    t0 = time.time()
    p = subprocess.Popen([MBSIM, path, "--check"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, cwd=cwd)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err, time.time() - t0, ru.ru_maxrss / 1024.0


def bounded(what, path, want, cwd=None):
    rc, err, secs, mb = measure(path, cwd)
    ok_mem = MEM_LIMIT_MB is None or mb < MEM_LIMIT_MB
    check(rc == 1 and want in err and secs < TIME_LIMIT and ok_mem,
          "%s: exit 1, '%s', %.2f s, %.0f MB%s" % (what, want, secs, mb,
                                                  "" if rc == 1 and want in err else
                                                  " (got %d: %s)" % (rc, err.strip()[:200])))


def write(name, parts):
    """a deck from an iterable of text pieces (so that no huge string is held)"""
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        for piece in parts:
            f.write(piece)
    return path


# every bad deck of the table
with open(os.path.join(BAD, "expected.tsv")) as f:
    rows = [line.rstrip("\n").split("\t", 1) for line in f if line.strip() and line[0] != "#"]
worst_t, worst_m, wrong = 0.0, 0.0, []
for name, want in rows:
    rc, err, secs, mb = measure(name, cwd=BAD)
    worst_t, worst_m = max(worst_t, secs), max(worst_m, mb)
    if rc != 1 or want not in err or secs >= TIME_LIMIT:
        wrong.append("%s (exit %d in %.2f s: %s)" % (name, rc, secs, err.strip()[:120]))
check(len(rows) > 50 and not wrong, "%d bad decks: exit 1 each with the expected message "
      "within %g s, slowest %.2f s, largest %.0f MB%s" %
      (len(rows), TIME_LIMIT, worst_t, worst_m, "; wrong: " + ", ".join(wrong) if wrong else ""))
check(MEM_LIMIT_MB is None or worst_m < 100, "the bad decks stay under 100 MB")

if not QUICK:
    # a list of 1.1 million numbers: refused while streaming, before the loader allocates
    path = write("huge_list.yaml", ["mbsim: 1\npad: [", "0, " * 1100000, "0]\n", ONE])
    bounded("huge list", path, "the deck has more than 1000000 YAML nodes")
    # just under the node limit: loaded, then refused for its unknown key
    path = write("under_limit.yaml", ["mbsim: 1\npad: [", "0, " * 990000, "0]\n", ONE])
    bounded("990,000 nodes", path, "unknown key 'pad'")
    # a file larger than 64 MiB
    path = write("too_big.yaml", ["mbsim: 1\n"] + ["# " + "x" * 1022 + "\n"] * 65600 + [ONE])
    bounded("65 MiB file", path, "larger than 67108864 bytes")
    # 200,000 levels of flow lists
    path = write("deep.yaml", ["mbsim: 1\ntitle: ", "[" * 200000, "]" * 200000, "\n", ONE])
    bounded("200,000 levels", path, "nested deeper than 64 levels")
    # the worst alias pattern within the limits: 256 anchors, a million aliases of the last
    anchors = ", ".join("&a%d 0" % i for i in range(256))
    path = write("aliases.yaml", ["mbsim: 1\na: [", anchors, "]\nb: [", "*a255, " * 999000,
                                  "*a255]\n", ONE])
    bounded("256 anchors, 999,000 aliases", path, "unknown key 'a'")
    # 300,000 keys, the duplicate at the very end (found by sorting, not pairwise)
    keys = ("p%d: %d, " % (i, i) for i in range(300000))
    path = write("dup.yaml", ["mbsim: 1\nparameters: {"] + list(keys) + ["p7: 1}\n", ONE])
    bounded("300,000 keys, a late duplicate", path, "duplicate key 'p7'")
    # merge keys: one body merging 200 mappings of 1000 keys each (hash lookups, each source
    # visited once)
    srcs = ["m%d: &m%d {%s}\n" % (i, i, ", ".join("k%d_%d: 1" % (i, k) for k in range(1000)))
            for i in range(200)]
    path = write("merge.yaml", ["mbsim: 1\n"] + srcs +
                 ["bodies:\n  - {<<: [%s], name: b, type: point, mass: 1, "
                  "position: [0, 0, 0]}\n" % ", ".join("*m%d" % i for i in range(200))])
    bounded("200 merged mappings of 1000 keys", path, "unknown key 'm0'")
done()

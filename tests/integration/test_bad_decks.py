"""Bad input: every deck in tests/bad/expected.tsv fails with exit status 1, the expected
message (file:line:column and the key) and no output file; plus a missing deck file and an
unwritable output path."""
import os
import subprocess

from common import MBSIM, ROOT, TMP, check, deck, done

BAD = os.path.join(ROOT, "tests", "bad")
cases = []
with open(os.path.join(BAD, "expected.tsv")) as f:
    for line in f:
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        name, want = line.split("\t", 1)
        cases.append((name, want))


def expect_fail(args, want, what, cwd=BAD, out=None):
    p = subprocess.run([MBSIM] + args, capture_output=True, text=True, cwd=cwd)
    ok = p.returncode == 1 and want in p.stderr
    if out is not None:
        ok = ok and not os.path.exists(out)
    check(ok, "%s: exit 1 and '%s'%s" % (what, want, "" if ok else
                                        " (got %d: %s)" % (p.returncode, p.stderr.strip())))


for name, want in cases:
    out = os.path.join(TMP, name + ".h5")
    expect_fail([name, "-o", out], want, name, out=out)

# CLI cases
out = os.path.join(TMP, "missing.h5")
expect_fail(["no_such_deck.yaml", "-o", out], "no_such_deck.yaml: cannot open", "missing file",
            out=out)
expect_fail([deck("quickstart.yaml"), "-o", "/nonexistent-dir/x.h5"],
            "cannot create output file '/nonexistent-dir/x.h5'", "unwritable output path",
            cwd=TMP)
expect_fail([deck("quickstart.yaml"), "--set", "bodies.nobody.mass=1"], "nobody",
            "--set naming an unknown body", cwd=TMP)
expect_fail([deck("quickstart.yaml"), "--bogus"], "unknown option '--bogus'", "unknown option",
            cwd=TMP)
expect_fail([], "no deck given", "no deck", cwd=TMP)
check(len(cases) >= 15, "at least 15 bad decks in the table (%d)" % len(cases))
done()

"""scripts/check-layering (make check-layering): it passes on the built tree, and it fails,
naming each violation, on a copy of the tree with forbidden edges added: a solver object that
calls the deck reader, a model object that calls the solver, a kernel source that includes
mbsim/deck.h, util including a model header, <yaml.h> outside src/deck/, the compiler
including the elements' private parameter layout (elements/elem_internal.h), and a module with
no layer. The objects are those next to $MBSIM (its build directory's src/)."""
import os
import shutil
import subprocess

from common import MBSIM, PYTHON_BIN, ROOT, TMP, check, done, skip

SCRIPT = os.path.join(ROOT, "scripts", "check-layering")
OBJ = os.path.join(os.path.dirname(os.path.abspath(MBSIM)), "src")
CC = os.environ.get("CC", "cc")


def layering(obj, src, inc):
    p = subprocess.run([PYTHON_BIN, SCRIPT, "--obj", obj, "--src", src, "--include", inc],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def compile_obj(path, text):
    """a throwaway object from the C text; False when no compiler runs here"""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        p = subprocess.run([CC, "-c", "-x", "c", "-", "-o", path], input=text,
                           capture_output=True, text=True)
    except OSError:
        return False
    return p.returncode == 0


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


if not os.path.isdir(OBJ):
    skip("check-layering on the build", "no objects in %s" % OBJ)
    done()

# the real tree
rc, out = layering(OBJ, os.path.join(ROOT, "src"), os.path.join(ROOT, "include", "mbsim"))
check(rc == 0 and "layering ok" in out, "the built tree passes check-layering (%s)"
      % out.strip().splitlines()[-1] if out.strip() else "no output")

# a copy of it, clean: passes too (so that the failures below come from what is added)
obj = os.path.join(TMP, "obj")
src = os.path.join(TMP, "src")
inc = os.path.join(TMP, "include", "mbsim")
shutil.copytree(OBJ, obj, ignore=shutil.ignore_patterns("*.d"))
shutil.copytree(os.path.join(ROOT, "src"), src)
shutil.copytree(os.path.join(ROOT, "include", "mbsim"), inc)
rc, out = layering(obj, src, inc)
check(rc == 0, "the copied tree passes check-layering")

# forbidden symbols: the kernel calling the reader, the model calling the solver
ok = compile_obj(os.path.join(obj, "solver", "zz_forbidden.o"),
                 "int mbs_deck_load(void);\nint zz_solver(void) { return mbs_deck_load(); }\n")
ok = ok and compile_obj(os.path.join(obj, "model", "zz_upward.o"),
                        "int mbs_data_create(void);\n"
                        "int zz_model(void) { return mbs_data_create(); }\n")
ok = ok and compile_obj(os.path.join(obj, "zznew", "zz_new.o"), "int zz_contact(void);\n"
                        "int zz_contact(void) { return 0; }\n")
if not ok:
    skip("check-layering on forbidden objects", "the C compiler %s does not run" % CC)
else:
    # forbidden includes
    write(os.path.join(src, "solver", "zz_forbidden.c"), '#include "mbsim/deck.h"\n')
    write(os.path.join(src, "util", "zz_forbidden.h"), '#include "mbsim/model.h"\n')
    write(os.path.join(src, "output", "zz_forbidden.c"), "#include <yaml.h>\n")
    write(os.path.join(src, "model", "zz_private.c"), '#include "elements/elem_internal.h"\n')
    rc, out = layering(obj, src, inc)
    check(rc == 1, "check-layering fails on the tree with forbidden edges (exit %d)" % rc)
    for want in ("solver/zz_forbidden.o: needs mbs_deck_load from deck/",
                 "model/zz_upward.o: needs mbs_data_create from solver/",
                 "module 'zznew' has no layer",
                 'src/solver/zz_forbidden.c:1: includes "mbsim/deck.h" of deck/',
                 'src/util/zz_forbidden.h:1: includes "mbsim/model.h" of model/',
                 "src/output/zz_forbidden.c:1: includes <yaml.h> (only src/deck/ may)",
                 'src/model/zz_private.c:1: includes "elements/elem_internal.h", private to '
                 'elements/',
                 "7 violation(s)"):
        check(want in out, "check-layering reports '%s'" % want)
    # each object alone
    shutil.rmtree(os.path.join(obj, "zznew"))
    os.remove(os.path.join(obj, "model", "zz_upward.o"))
    for f in ("solver/zz_forbidden.c", "util/zz_forbidden.h", "output/zz_forbidden.c",
              "model/zz_private.c"):
        os.remove(os.path.join(src, f))
    rc, out = layering(obj, src, inc)
    check(rc == 1 and "1 violation(s)" in out,
          "one kernel object calling the reader alone fails the check")

done()

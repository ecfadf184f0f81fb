"""--restart of moreau runs with contacts, bit for bit: what the stepper carries from step to
step (the last step's contacts with their identities, impulses and tangents: the next step's
warm starts and the next record's contacts) is in every record as /state/contacts, and the run
itself goes on from what it wrote. For each deck, a run of [0, T] and a run of [0, T/2]
restarted to T agree exactly (np.array_equal): the final q, v and energies, and every record
after the restart of /contacts/table (but its record column), /contacts/impulse_since_record
and /contacts/tangent1 (the first record of the restarted file repeats the restart record's
rows: the contacts gone since the previous record and the impulse sums too). Hostile /state/contacts (non-finite impulses, shapes that do not
exist or are not paired, a negative normal impulse, a duplicate row, a table of the wrong
width, a record claiming rows the table does not have) is refused with exit status 1 and a
message naming /state/contacts, nothing written."""
import os
import shutil
import subprocess

import h5py
import numpy as np

from common import MBSIM, TMP, check, deck, done, load, run, write_deck

SURFACE = write_deck("surface.yaml", """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
%s  - {name: die1, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.1, position: [0.02, -0.01, 0.08],
     orientation: {axis: [1, 2, 0], angle: 0.3}}
  - {name: die2, shape: {box: [0.1, 0.1, 0.1]}, mass: 0.1, position: [-0.3, 0.25, 0.1]}
loads:
%ssurfaces:
  - {name: sheet, nodes: [%s], grid: [3, 3]}
contacts:
  - {name: dice_sheet, between: [die*, sheet], friction: 0.3}
  - {name: dice, between: [die*, die*], friction: 0.3}
solver: {dt: 1.0e-3, t_end: 0.3}
output: {every: 10, xdmf: false}
""" % ("".join("  - {name: n%d%d, type: point, mass: 1, position: [%d, %d, 0]}\n"
               % (i, j, j - 1, i - 1) for i in range(3) for j in range(3)),
       "".join("  - {name: k%d%d, type: spring, bodies: [ground, n%d%d], points: [[%d, %d, 0], "
               "[%d, %d, 0]], stiffness: 750, rest_length: 0}\n"
               % (i, j, i, j, j - 1, i - 1, j - 1, i - 1) for i in range(3) for j in range(3)),
       ", ".join("n%d%d" % (i, j) for i in range(3) for j in range(3))))

# (deck, t_end, t_half, options): t_half is a record of the run, n dt in floating point (the
# shorter run's last step ends at its t_end: at 0.0072 = 720 x 1e-5 + 9e-19 it would differ
# from the step the longer run takes there by an ulp)
CASES = [
    ("dice_bowl", deck("contacts/dice_bowl.yaml"), 0.8, 0.4, []),
    ("incline", deck("contacts/incline.yaml"), 1.0, 0.5, []),
    ("incline, explicit", deck("contacts/incline.yaml"), 1.0, 0.5,
     ["--set", "solver.moreau.variant=explicit"]),
    ("bouncing_ball", deck("contacts/bouncing_ball.yaml"), 3.0, 1.5, []),
    ("beam_obstacle", deck("beams/beam_obstacle.yaml"), 0.008, 0.00725, []),
    # two dice on a sprung surface of 2 x 2 patches, one across its middle node
    ("surface", SURFACE, 0.3, 0.15, []),
]
FINAL = ("state/q", "state/v", "state/scheme_velocity", "energy/kinetic", "energy/potential",
         "energy/total", "energy/dissipated", "energy/contact_dissipated",
         "energy/numerical_dissipation", "bodies/position")


def restarted(path, half, t_end, extra, out):
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([MBSIM, path, "--restart", half, "--t-end", repr(t_end), "-o", out,
                        "--quiet"] + extra, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stderr


half_ball = None
for what, path, t_end, t_half, extra in CASES:
    _, _, _, full = run(path, "--t-end", repr(t_end), *extra)
    _, _, _, half = run(path, "--t-end", repr(t_half), *extra)
    if what == "incline":
        half_inc = half
    out = os.path.join(TMP, "rest_%s.h5" % what.replace(",", "").replace(" ", "_"))
    rc, err = restarted(path, half, t_end, extra, out)
    check(rc == 0 and "does not repeat" not in err,
          "%s: the restart from t = %g runs, with no note (exit %d: %s)" % (what, t_half, rc,
                                                                             err.strip()))
    if rc != 0:
        continue
    a, b, h = load(full), load(out), load(half)
    n_carried = h["state/contacts/count"][-1]
    check(n_carried > 0, "%s: the restart record carries %d contacts in /state/contacts"
          % (what, n_carried))
    same = [n for n in FINAL if n in a and not np.array_equal(a[n][-1], b[n][-1])]
    check(not same, "%s: final %s bit-identical to the uninterrupted run%s"
          % (what, ", ".join(n.split("/")[-1] for n in FINAL if n in a),
             "" if not same else " (differ: %s, q by %.1e)"
             % (same, np.max(np.abs(a["state/q"][-1] - b["state/q"][-1])))))
    i0 = int(np.searchsorted(a["time"], b["time"][0]))
    ok = np.array_equal(a["time"][i0:], b["time"])
    for k in range(len(b["time"])):
        for name in ("table", "impulse_since_record", "tangent1"):
            ra = a["contacts/" + name][a["contacts/offsets"][i0 + k]:
                                      a["contacts/offsets"][i0 + k] + a["contacts/count"][i0 + k]]
            rb = b["contacts/" + name][b["contacts/offsets"][k]:
                                      b["contacts/offsets"][k] + b["contacts/count"][k]]
            if name == "table":
                ra, rb = ra[:, 1:], rb[:, 1:]
            ok = ok and ra.shape == rb.shape and np.array_equal(ra, rb)
    check(ok, "%s: every record's /contacts rows after the restart bit-identical (%d records)"
          % (what, len(b["time"])))
    rows = b["contacts/count"][1:].sum()
    check(rows > 0, "%s: the restarted run has contact rows (%d)" % (what, rows))

# ---- hostile /state/contacts -----------------------------------------------------------------
INC = deck("contacts/incline.yaml")
OUT = os.path.join(TMP, "hostile_out.h5")


def craft(name, edit):
    path = os.path.join(TMP, name + ".h5")
    shutil.copy(half_inc, path)
    with h5py.File(path, "r+") as f:
        edit(f)
    return path


def last_rows(f):
    off, cnt = f["state/contacts/offsets"][-1], f["state/contacts/count"][-1]
    return int(off), int(cnt)


def set_cell(row, col, value):
    def edit(f):
        off, cnt = last_rows(f)
        t = f["state/contacts/table"]
        r = np.array(t[off + row])
        r[col] = value
        t[off + row] = r
    return edit


def duplicate(f):
    off, cnt = last_rows(f)
    t = f["state/contacts/table"]
    t[off + 1] = t[off]


def widen(f):
    t = f["state/contacts/table"][()]
    del f["state/contacts/table"]
    f.create_dataset("state/contacts/table", data=np.hstack([t, np.zeros((len(t), 1))]),
                     maxshape=(None, t.shape[1] + 1), chunks=True)


def overrun(f):
    c = f["state/contacts/count"]
    c[-1] = f["state/contacts/table"].shape[0] + 5


with h5py.File(half_inc, "r") as f:
    NSHAPE = int(f["shapes/table"].shape[0])
    _, NROW = last_rows(f)
check(NROW >= 2, "incline's restart record carries %d contacts (>= 2 for the hostile cases)"
      % NROW)
for name, edit, want in [
        ("nan_impulse", set_cell(0, 6, np.nan), "never holds in /state/contacts/table"),
        ("inf_tangent", set_cell(1, 19, np.inf), "never holds in /state/contacts/table"),
        ("shape_out_of_range", set_cell(0, 0, 9999), "shape indices"),
        ("shape_fraction", set_cell(0, 1, 0.5), "shape indices"),
        ("feature_fraction", set_cell(0, 2, 1.5), "feature"),
        ("negative_impulse", set_cell(0, 6, -1.0), "negative normal impulse"),
        ("bad_flag", set_cell(0, 4, 7), "warm_start"),
        ("warm_not_current", lambda f: (set_cell(0, 3, 0)(f), set_cell(0, 4, 1)(f)), "warm_start"),
        ("not_unit", set_cell(0, 15, 3.0), "unit vector"),
        ("duplicate", duplicate, "twice"),
        ("too_wide", widen, "/state/contacts"),
        ("count_overrun", overrun, "/state/contacts")]:
    p = craft(name, edit)
    if os.path.exists(OUT):
        os.remove(OUT)
    r = subprocess.run([MBSIM, INC, "--restart", p, "-o", OUT, "--quiet"], capture_output=True,
                       text=True, timeout=120)
    ok = (r.returncode == 1 and want in r.stderr and "/state/contacts" in r.stderr and
          not os.path.exists(OUT))
    check(ok, "hostile /state/contacts (%s): exit 1, '%s', nothing written (got %d: %s)"
          % (name, want, r.returncode, r.stderr.strip()[-300:]))

# shapes that exist but no contacts entry pairs: two shapes of the same body, or a shape with
# itself
with h5py.File(half_inc, "r") as f:
    off, cnt = last_rows(f)
    row = f["state/contacts/table"][off]
p = craft("unpaired", set_cell(0, 1, row[0]))
r = subprocess.run([MBSIM, INC, "--restart", p, "-o", OUT, "--quiet"], capture_output=True,
                   text=True, timeout=120)
check(r.returncode == 1 and "no contacts entry pairs" in r.stderr and not os.path.exists(OUT),
      "hostile /state/contacts (a shape paired with itself): exit 1, named (got %d: %s)"
      % (r.returncode, r.stderr.strip()[-300:]))

done()

"""Every shipped deck (decks/*.yaml, decks/contacts/*.yaml, decks/beams/*.yaml) in ParaView 5.11
(Debian's pvpython, "XDMF Reader"), run short with a few records each and the sidecar on:
- the reader opens the sidecar at every record, in order and back again, without a crash, and
  its blocks hold what the HDF5 file holds at that record: one point per body and per joint,
  a beam's nodes, the record's contact points (none: an empty block); each contact deck has
  records with and without contact points, among them records in the middle of the run;
- scripts/paraview/view.py renders each to a PNG that is not blank (enough colours and enough
  pixels off the background) and reports (--report) what it drew: the bodies' shapes as
  /shapes lists them (a drawn shape, else the contact shapes, else arrows or a ball), one
  tube per beam, links for the joints, and for a contact deck, at its record with the most
  contact points, the ground's shapes (none where it has none), every contact point and force
  arrows (and for the bouncing ball and the dice bowl, that picture differs from the one drawn
  without contacts and ground: --no-contacts --no-ground); decks with beams are framed at the screenshot's
  record (--fit shot).
One pvpython process opens all sidecars and one renders all decks (ParaView starts once)."""
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

import h5py
import matplotlib.image as mpimg
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from common import MBSIM, ROOT, TMP, check, done  # noqa: E402

PVPYTHON = shutil.which("pvpython")
VIEW = os.path.join(ROOT, "scripts", "paraview", "view.py")
# view.py's own Xvfb starter (a display of its own, as view.py takes without a DISPLAY)
_spec = importlib.util.spec_from_file_location("mbsim_paraview_view", VIEW)
view_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(view_module)
SIZE = (480, 360)

# contact decks: end and record spacing that give records with and without contact points
# (and options: the elastic rocking rod at the rigid deck's step, 1e-4 s, to reach its first
# impact at 0.31 s in a second)
CONTACT_RUNS = {"bouncing_ball": (0.6, 50), "dice_bowl": (0.3, 50), "incline": (0.2, 50),
                "rocking_rod": (0.5, 500), "woodpecker": (0.1, 400),
                "beam_obstacle": (0.008, 100),
                "elastic_rocking_rod": (0.4, 250, "--set", "solver.dt=1e-4"),
                "woodpecker_elastic": (0.1, 800), "woodpecker_spatial": (0.1, 800),
                "elastic_bowl": (0.3, 50)}
# contact decks also drawn without contacts and ground, to see that those show (the staircase
# of tests/tools/test_paraview.py is another)
BARE = ("bouncing_ball", "dice_bowl")


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def picture(path):
    """(distinct colours, fraction of pixels off the background: the corner's colour)"""
    if not os.path.isfile(path):
        return 0, 0.0
    img = (mpimg.imread(path)[:, :, :3] * 255).astype(int)
    flat = img.reshape(-1, 3)
    off = np.any(np.abs(img - img[2, 2]) > 6, axis=2)
    return len(np.unique(flat, axis=0)), float(np.mean(off))


check(PVPYTHON is not None and shutil.which("Xvfb") is not None,
      "pvpython and Xvfb installed (scripts/install-deps --viewer)")
xserver = None
if not os.environ.get("DISPLAY"):
    xserver = view_module.start_xvfb("1280x1024x24")

start = time.time()


def phase(what):
    print("      %s: %.1f s" % (what, time.time() - start))


# ---- the runs ----
decks = sorted(glob.glob(os.path.join(ROOT, "decks", "*.yaml"))) + \
    sorted(glob.glob(os.path.join(ROOT, "decks", "contacts", "*.yaml"))) + \
    sorted(glob.glob(os.path.join(ROOT, "decks", "beams", "*.yaml")))
runs = {}
for d in decks:
    name = os.path.splitext(os.path.basename(d))[0]
    p = subprocess.run([MBSIM, d, "--check"], capture_output=True, text=True, timeout=120)
    line = [ln.split() for ln in p.stdout.splitlines() if ln.startswith("time:")]
    dt, t_end = float(line[0][3]), float(line[0][7])
    steps = max(1, min(200, int(round(t_end / dt))))
    t, every, *extra = CONTACT_RUNS.get(name, (steps * dt, max(1, steps // 4)))
    out = os.path.join(TMP, name + ".h5")
    p = subprocess.run([MBSIM, d, "-o", out, "--quiet", "--t-end", repr(t), "--set",
                        "output.every=%d" % every, "--set", "output.xdmf=true"] + extra,
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0 or not os.path.isfile(out[:-3] + ".xmf"):
        check(False, "%s: runs to t = %g with its sidecar (%s)" % (name, t, p.stderr[-300:]))
        continue
    with h5py.File(out, "r") as f:
        info = {"h5": out, "time": f["time"][()].tolist(),
                "nbody": len(f["bodies/names"]), "njoint": len(f["joints/names"]),
                "beams": {b: f["beams/%s/position" % b].shape[1] for b in f["beams"]}
                if "beams" in f else {},
                "contacts": f["contacts/count"][()].tolist() if "contacts" in f else None,
                "shapes": f["shapes/table"][()], "kinds": [text(k) for k in
                                                           f["shapes/table"].attrs["kinds"]],
                "coords": set(text(n) for n in f["state/names"][()]),
                "names": [text(n) for n in f["bodies/names"][()]]}
    runs[name] = info
phase("runs")
check(len(runs) == len(decks) and len(decks) >= 30,
      "%d shipped decks ran with a sidecar (%d decks)" % (len(runs), len(decks)))
for name in CONTACT_RUNS:
    c = runs.get(name, {}).get("contacts") or []
    mid = [k for k in range(1, len(c) - 1)]
    check(any(c[k] > 0 for k in mid) and any(n == 0 for n in c),
          "%s: records with contact points (in the middle of the run) and without: %s" %
          (name, c))

# ---- the reader at every record ----
PROBE = r'''
import json, sys
from paraview import simple as pv
from paraview import servermanager as sm
for xmf in sys.argv[1:]:
    print("OPEN " + xmf); sys.stdout.flush()
    r = pv.XDMFReader(FileNames=[xmf])
    r.UpdatePipelineInformation()
    times = list(r.TimestepValues) if r.TimestepValues else [0.0]
    order = list(range(len(times))) + list(range(len(times) - 1, -1, -1))
    seen = {}
    for k in order:
        r.UpdatePipeline(times[k])
        d = sm.Fetch(r)
        blocks = {}
        if d.IsA("vtkMultiBlockDataSet"):
            for b in range(d.GetNumberOfBlocks()):
                blk = d.GetBlock(b)
                blocks[d.GetMetaData(b).Get(d.NAME())] = blk.GetNumberOfPoints() if blk else -1
        else:
            blocks[""] = d.GetNumberOfPoints()
        seen.setdefault(k, blocks)
        if seen[k] != blocks:
            seen[k] = {"changed": 1}
    print("JSON" + json.dumps({"xmf": xmf, "times": times,
                               "blocks": [seen[k] for k in range(len(times))]}))
    sys.stdout.flush()
    pv.Delete(r)
import os
os._exit(0)
'''
probe = os.path.join(TMP, "probe.py")
with open(probe, "w") as f:
    f.write(PROBE)
xmfs = [info["h5"][:-3] + ".xmf" for info in runs.values()]
p = subprocess.run([PVPYTHON, "--force-offscreen-rendering", probe] + xmfs,
                   capture_output=True, text=True, timeout=600)
phase("every sidecar at every record")
opened = [ln[5:] for ln in p.stdout.splitlines() if ln.startswith("OPEN ")]
check(p.returncode == 0, "pvpython opened every sidecar at every record (exit %d%s)" % (
    p.returncode, "; it died in " + opened[-1] if p.returncode and opened else ""))
got = {}
for ln in p.stdout.splitlines():
    if ln.startswith("JSON"):
        res = json.loads(ln[4:])
        got[os.path.splitext(os.path.basename(res["xmf"]))[0]] = res
for name, info in runs.items():
    res = got.get(name)
    if res is None:
        check(False, "%s: the reader's answer" % name)
        continue
    want = []
    for k in range(len(info["time"])):
        w = {}
        if info["nbody"]:
            w["bodies"] = info["nbody"]
        if info["njoint"]:
            w["joints"] = info["njoint"]
        if info["contacts"] is not None:
            w["contacts"] = info["contacts"][k]
        for b, n in info["beams"].items():
            w["beam_" + b] = n
        want.append(w if len(w) > 1 else {"": list(w.values())[0]})
    ok = (np.allclose(res["times"], info["time"], rtol=0, atol=1e-12) and
          res["blocks"] == want)
    bad = [(k, res["blocks"][k], want[k]) for k in range(min(len(want), len(res["blocks"])))
           if res["blocks"][k] != want[k]][:2]
    check(ok, "%s: %d records read, forwards and back, each block as in the HDF5 file%s" % (
        name, len(info["time"]), (": " + str(bad)) if bad else ""))

# ---- view.py on every deck ----
DRIVER = r'''
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("mbsim_paraview_view", sys.argv[1])
view = importlib.util.module_from_spec(spec)
spec.loader.exec_module(view)
for job in json.loads(open(sys.argv[2]).read()):
    print("VIEW " + " ".join(job)); sys.stdout.flush()
    code = view.main(job)
    print("DONE %d" % code); sys.stdout.flush()
import os
os._exit(0)
'''
driver = os.path.join(TMP, "driver.py")
with open(driver, "w") as f:
    f.write(DRIVER)
jobs, shots = [], {}
for name, info in runs.items():
    c = info["contacts"]
    k = int(np.argmax(c)) if c is not None and max(c) > 0 else len(info["time"]) - 1
    t = info["time"][k]
    base = [info["h5"], "--time", repr(t), "--size", str(SIZE[0]), str(SIZE[1])]
    if info["beams"]:
        base += ["--fit", "shot"]
    png, rep = os.path.join(TMP, name + ".png"), os.path.join(TMP, name + ".json")
    jobs.append(base + ["-o", png, "--report", rep])
    shots[name] = (k, png, rep, None)
    if name in BARE:
        bare = os.path.join(TMP, name + "-bare.png")
        jobs.append(base + ["-o", bare, "--no-contacts", "--no-ground"])
        shots[name] = (k, png, rep, bare)
# one process for all; a crash of pvpython itself (not of view.py: an exit status) is
# reported and the rest run in a new process, twice on the same picture fails
codes, crashes, left = [], [], list(jobs)
while left:
    jobfile = os.path.join(TMP, "jobs.json")
    with open(jobfile, "w") as f:
        json.dump(left, f)
    p = subprocess.run([PVPYTHON, "--force-offscreen-rendering", driver, VIEW, jobfile],
                       capture_output=True, text=True, timeout=900)
    lines = p.stdout.splitlines()
    finished = [int(ln.split()[1]) for ln in lines if ln.startswith("DONE ")]
    codes += finished
    left = left[len(finished):]
    if p.returncode == 0 or not left:
        break
    why = [ln for ln in p.stderr.splitlines() if "ERR" in ln or "rror" in ln][:6]
    crashes.append((" ".join(left[0]), p.returncode, "\n".join(why) or p.stderr[-400:]))
    job, rc, err = crashes[-1]
    print("      pvpython crashed (exit %d) drawing %s: %s" % (rc, job, err))
    if len(crashes) > 1 and crashes[-1][0] == crashes[-2][0]:
        break
phase("%d pictures" % len(jobs))
check(len(codes) == len(jobs) and all(c == 0 for c in codes) and len(crashes) <= 2,
      "view.py drew all %d pictures (%d drawn, exit statuses %s, pvpython crashed %d times)"
      % (len(jobs), len(codes), sorted(set(codes)), len(crashes)))

for name, info in runs.items():
    k, png, rep, bare = shots[name]
    colours, off = picture(png)
    check(colours >= 20 and off > 0.005,
          "%s: a picture (%d colours, %.1f %% off the background)" % (name, colours, 100 * off))
    report = json.load(open(rep)) if os.path.isfile(rep) else {"layers": {}}
    layers = report["layers"]
    drawn = {k2: v.get("drawn", {}) for k2, v in layers.items()}
    # what /shapes says each body shows
    S, kinds = info["shapes"], info["kinds"]
    expect = {}
    for b in range(info["nbody"]):
        rows = [r for r in S if r[0] == b and r[1] == 0] or \
            [r for r in S if r[0] == b and r[1] == 1]
        for r in rows:
            kind = kinds[int(r[2])]
            expect[kind] = expect.get(kind, 0) + (int(r[19]) if kind == "points" else 1)
        if all(kinds[int(r[2])] in ("points", "patch") for r in rows):
            # nothing solid: a point mass (a position without directors) as a ball, a rigid
            # body by its three director arrows (a surface's patch is listed on its first
            # corner node, and drawn over its four nodes, each still a ball)
            n = info["names"][b]
            point = n + ".phi.x" in info["coords"] and n + ".d1.x" not in info["coords"]
            what, many = ("point mass", 1) if point else ("director arrows", 3)
            expect[what] = expect.get(what, 0) + many
    check(drawn.get("bodies", {}) == expect,
          "%s: the bodies as /shapes lists them: %s (drawn %s)" % (
              name, expect, drawn.get("bodies")))
    check(drawn.get("beams", {}).get("beams", 0) == len(info["beams"]),
          "%s: %d beam tubes" % (name, len(info["beams"])))
    if info["njoint"]:
        check(drawn.get("joints", {}).get("joint points", 0) == info["njoint"],
              "%s: %d joint points with links" % (name, info["njoint"]))
    if info["contacts"] is not None:
        n = info["contacts"][k]
        # (a deck whose contacts are all between bodies and beams, as the elastic
        # woodpecker's sleeve on its pole, has no ground shapes: nothing drawn for it)
        ground = sum(int(r[19]) if kinds[int(r[2])] == "points" else 1 for r in S if r[0] < 0)
        check(sum((drawn.get("ground") or {}).values()) == ground,
              "%s: the ground's %d shapes drawn: %s" % (name, ground, drawn.get("ground")))
        cd = drawn.get("contacts", {})
        check(cd.get("points", 0) == n and n > 0 and
              (cd.get("arrows", 0) > 0) == (report.get("contact_force_max", 0) > 0),
              "%s: record %d's %d contact points and their force arrows: %s (largest force "
              "%.3g N)" % (name, k, n, cd, report.get("contact_force_max", 0)))
        if bare is None:
            continue
        a = (mpimg.imread(png)[:, :, :3] * 255).astype(int) if os.path.isfile(png) else None
        b2 = (mpimg.imread(bare)[:, :, :3] * 255).astype(int) if os.path.isfile(bare) else None
        differ = float(np.mean(np.any(np.abs(a - b2) > 6, axis=2))) \
            if a is not None and b2 is not None and a.shape == b2.shape else 0.0
        check(differ > 0.002, "%s: contacts and ground change the picture (%.1f %% of its "
              "pixels)" % (name, 100 * differ))
if xserver is not None:
    xserver.terminate()
    xserver.wait(timeout=30)
done()

"""ParaView 5.11 (Debian's pvpython) opens the XDMF sidecar of a shipped deck with its "XDMF
Reader": the time steps are the records, the bodies and joints are points whose positions
and vector attributes equal the HDF5 datasets at the last and at a middle record, and it
renders offscreen; scripts/paraview/view.py draws the run as PNG (one shot and frames), the
scene of issue 24 (a box of expression sizes down a staircase of ground boxes, with the
ground, contact points and force arrows: --report says what it drew) and contact forces from
/contacts/impulse_since_record or, in files without it, from the table's last-step impulses.
tests/tools/test_paraview_decks.py draws every shipped deck."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import h5py
import matplotlib.image as mpimg
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from common import ROOT, TMP, check, deck, done, run  # noqa: E402

PVPYTHON = shutil.which("pvpython")
VIEW = os.path.join(ROOT, "scripts", "paraview", "view.py")
# view.py's own Xvfb starter (a display of its own, as view.py takes without a DISPLAY)
_spec = importlib.util.spec_from_file_location("mbsim_paraview_view", VIEW)
view_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(view_module)


def pvpython(*args, timeout=300):
    """pvpython offscreen on the test's X server; a crash (not an exit status of the
    script) is retried once and reported"""
    for attempt in range(2):
        p = subprocess.run([PVPYTHON, "--force-offscreen-rendering"] + list(args),
                           capture_output=True, text=True, timeout=timeout)
        if p.returncode in (0, 1, 2):
            break
        print("    pvpython %s: exit %d, retried: %s" % (
            os.path.basename(args[0]), p.returncode, p.stderr.strip()[-400:]))
    return p


def is_picture(path, min_colours=20):
    """A PNG that shows something: more than a few distinct colours."""
    if not os.path.isfile(path) or os.path.getsize(path) < 1000:
        return False
    img = mpimg.imread(path)
    flat = (img[:, :, :3] * 255).astype(np.uint8).reshape(-1, 3)
    return len(np.unique(flat, axis=0)) >= min_colours


check(PVPYTHON is not None and shutil.which("Xvfb") is not None,
      "pvpython and Xvfb installed (scripts/install-deps --viewer)")
xserver = None
if not os.environ.get("DISPLAY"):
    xserver = view_module.start_xvfb("1920x1200x24")

# a shipped deck: the spherical double pendulum of two rigid links, 2 joints
_, _, _, h5 = run(deck("quickstart.yaml"), "--t-end", "1.0")
xmf = h5[:-3] + ".xmf"
with h5py.File(h5, "r") as f:
    t = f["time"][()]
    pos = f["bodies/position"][()]
    rot = f["bodies/orientation"][()]
    vel = f["bodies/velocity"][()]
    omega = f["bodies/angular_velocity"][()]
    jpos = f["joints/position"][()]
    reac = f["joints/reaction"][()]
N, nb, nj = len(t), pos.shape[1], jpos.shape[1]
mid = N // 2

probe = os.path.join(TMP, "probe.py")
shot = os.path.join(TMP, "probe.png")
with open(probe, "w") as f:
    f.write(r'''
import json, sys
import numpy as np
from paraview import simple as pv
from paraview import servermanager as sm
from vtkmodules.numpy_interface import dataset_adapter as dsa
xmf, shot, mid = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = pv.XDMFReader(FileNames=[xmf])
r.UpdatePipelineInformation()
times = list(r.TimestepValues)
out = {"times": times, "class": None, "at": {}}
for label, k in (("last", len(times) - 1), ("mid", mid)):
    r.UpdatePipeline(times[k])
    data = sm.Fetch(r)
    out["class"] = data.GetClassName()
    blocks = {}
    for b in range(data.GetNumberOfBlocks()):
        w = dsa.WrapDataObject(data.GetBlock(b))
        blocks[data.GetMetaData(b).Get(data.NAME())] = {
            "npoints": data.GetBlock(b).GetNumberOfPoints(),
            "points": np.asarray(w.Points).tolist(),
            "arrays": {n: np.asarray(w.PointData[n]).tolist() for n in w.PointData.keys()}}
    out["at"][label] = blocks
# render offscreen: points as spheres
view = pv.CreateView("RenderView")
view.ViewSize = [640, 480]
d = pv.Show(r, view)
d.SetRepresentationType("Points")
d.RenderPointsAsSpheres = 1
d.PointSize = 20
view.ViewTime = times[-1]
pv.ResetCamera(view)
pv.Render(view)
pv.SaveScreenshot(shot, view, ImageResolution=[640, 480])
print("JSON" + json.dumps(out))
sys.stdout.flush()
import os
os._exit(0)
''')
p = pvpython(probe, xmf, shot, str(mid))
check(p.returncode == 0, "pvpython loads the sidecar (exit %d: %s)" % (p.returncode,
                                                                       p.stderr.strip()[-300:]))
line = [ln for ln in p.stdout.splitlines() if ln.startswith("JSON")]
res = json.loads(line[0][4:]) if line else {"times": [], "at": {}, "class": None}
check(len(res["times"]) == N and np.allclose(res["times"], t, rtol=0, atol=1e-15),
      "time steps: the %d records of the HDF5 file" % N)
check(res["class"] == "vtkMultiBlockDataSet", "two blocks: bodies and joints")
for label, k in (("last", N - 1), ("mid", mid)):
    at = res["at"].get(label, {})
    bodies, joints = at.get("bodies"), at.get("joints")
    check(bodies is not None and bodies["npoints"] == nb and joints is not None and
          joints["npoints"] == nj, "%s record: %d body points and %d joint points" %
          (label, nb, nj))
    if bodies is None or joints is None:
        continue
    check(np.array_equal(np.array(bodies["points"]), pos[k]),
          "%s record (t = %g): body positions equal /bodies/position" % (label, t[k]))
    check(np.allclose(np.array(bodies["points"])[1], pos[k, 1], rtol=0, atol=1e-15),
          "%s record: position of link2 = %s" % (label, np.round(pos[k, 1], 6)))
    a = bodies["arrays"]
    check(all(np.array_equal(np.array(a["d%d" % (i + 1)]), rot[k, :, :, i]) for i in range(3)),
          "%s record: d1, d2, d3 equal the columns of /bodies/orientation" % label)
    check(np.array_equal(np.array(a["velocity"]), vel[k]) and
          np.array_equal(np.array(a["angular_velocity"]), omega[k]),
          "%s record: velocity and angular_velocity" % label)
    check(np.array_equal(np.array(joints["points"]), jpos[k]) and
          np.array_equal(np.array(joints["arrays"]["force"]), reac[k, :, :3]) and
          np.array_equal(np.array(joints["arrays"]["torque"]), reac[k, :, 3:]),
          "%s record: joint points, force and torque equal /joints/position and reaction" % label)
check(is_picture(shot, 3), "rendered a PNG offscreen")

# view.py: one screenshot with shapes, and frames
png = os.path.join(TMP, "view.png")
p = pvpython(VIEW, h5, "-o", png, "--time", "0.5", "--size", "800", "600", "--no-trails",
             "--fit", "shot")
check(p.returncode == 0 and is_picture(png), "view.py writes a screenshot (%s)" %
      p.stderr.strip()[-300:])
if os.path.isfile(png):
    img = mpimg.imread(png)
    check(img.shape[:2] == (600, 800), "screenshot of the requested size")
    # without trails, what is not background is the two links (boxes), the joints and the
    # orientation axes in the corner: the boxes alone (framed at that record: --fit shot) cover
    # far more than the axes
    rgb = (img[:, :, :3] * 255).astype(int)
    background = np.all(np.abs(rgb - rgb[5, 400]) <= 3, axis=2)
    body = np.count_nonzero(~background[:, 200:])
    check(body > 1500, "the body shapes are drawn (%d pixels off the background)" % body)
frames = os.path.join(TMP, "frames")
p = pvpython(VIEW, h5, "--frames", frames, "--every", "25", "--no-trails")
got = sorted(os.listdir(frames)) if os.path.isdir(frames) else []
want = len(range(0, N, 25))
check(p.returncode == 0 and len(got) == want and all(is_picture(os.path.join(frames, g), 3)
                                                     for g in got),
      "view.py --frames writes %d frames (got %d) %s" % (want, len(got), p.stderr[-800:] if len(got) != want else ""))

# a deck without joints (one grid, arrows for a body without shape), and a missing sidecar
_, _, _, fb = run(deck("free_body.yaml"), "--t-end", "0.5")
png = os.path.join(TMP, "free_body.png")
p = pvpython(VIEW, fb, "-o", png)
check(p.returncode == 0 and is_picture(png), "view.py draws a run without joints")
_, _, _, nox = run(deck("free_body.yaml"), "--t-end", "0.1", "--set", "output.xdmf=false")
p = pvpython(VIEW, nox)
check(p.returncode == 2 and "XDMF sidecar" in p.stderr, "view.py without a sidecar: exit 2")

# the user's scenes of issue 24: a box whose sizes are expressions ("0.8 * $a") falling down a
# staircase of ground boxes onto a floor plane (drawn as a box, not as arrows, on visible
# ground), with its contact points and forces
STAIRS = """
mbsim: 1
title: a box down a staircase
parameters: {a: 0.2}
gravity: [0, 0, -9.81]
bodies:
  - name: crate
    shape: {box: ["0.8 * $a", "$a / 2", "$a / 2"]}
    density: 500
    position: [0.05, 0, 0.75]
    velocity: [0.8, 0, 0]
ground:
  collision:
    - {name: floor, plane: {point: [0, 0, 0], normal: [0, 0, 1]}}
    - {name: step1, box: [0.6, 1, 0.6], offset: [0, 0, 0.3]}
    - {name: step2, box: [0.6, 1, 0.4], offset: [0.6, 0, 0.2]}
    - {name: step3, box: [0.6, 1, 0.2], offset: [1.2, 0, 0.1]}
contacts:
  - {name: crate_ground, between: [crate, ground], friction: 0.3}
solver: {integrator: moreau, dt: 1.0e-3, t_end: 0.8}
output: {every: 20}
"""
stairs = os.path.join(TMP, "stairs.yaml")
with open(stairs, "w") as f:
    f.write(STAIRS)
_, _, _, sh5 = run(stairs)
with h5py.File(sh5, "r") as f:
    count = f["contacts/count"][()]
k = int(np.argmax(count))
png, bare, rep = (os.path.join(TMP, n) for n in ("stairs.png", "stairs-bare.png", "stairs.json"))
t_k = float(h5py.File(sh5, "r")["time"][k])
p = pvpython(VIEW, sh5, "-o", png, "--time", repr(t_k), "--report", rep, "--size", "800", "600")
q = pvpython(VIEW, sh5, "-o", bare, "--time", repr(t_k), "--no-ground", "--no-contacts",
             "--size", "800", "600")
report = json.load(open(rep)) if os.path.isfile(rep) else {"layers": {}}
drawn = {n: v["drawn"] for n, v in report["layers"].items()}
check(p.returncode == 0 and q.returncode == 0 and is_picture(png) and is_picture(bare),
      "view.py draws the staircase (%s)" % (p.stderr + q.stderr).strip()[-300:])
check(drawn.get("bodies") == {"box": 1},
      "the crate of sizes '0.8 * $a', '$a / 2' is a box, no arrows: %s" % drawn.get("bodies"))
check(drawn.get("ground") == {"plane": 1, "box": 3},
      "the ground: the floor plane and the three steps: %s" % drawn.get("ground"))
check(count[k] > 0 and drawn.get("contacts", {}).get("points") == count[k] and
      drawn.get("contacts", {}).get("arrows", 0) > 0,
      "record %d's %d contact points with force arrows: %s" % (k, count[k], drawn.get("contacts")))
if os.path.isfile(png) and os.path.isfile(bare):
    a, b = (np.round(mpimg.imread(x)[:, :, :3] * 255).astype(int) for x in (png, bare))
    differ = float(np.mean(np.any(np.abs(a - b) > 6, axis=2)))
    check(differ > 0.05, "the ground and the contacts show: %.1f %% of the picture changes "
          "without them" % (100 * differ))

# contact forces: the mean since the previous record from /contacts/impulse_since_record
# when the file has it (the impulse on the second body: the first takes minus it), else the
# normal impulse of the record's last step over its step size
_, _, _, bh5 = run(deck("contacts/bouncing_ball.yaml"), "--t-end", "0.6", "--set",
                   "output.every=50")
with h5py.File(bh5, "r") as f:
    table, bt = f["contacts/table"][()], f["time"][()]
    kb = int(f["contacts/count"][()].argmax())
    rows = slice(int(f["contacts/offsets"][kb]), int(f["contacts/offsets"][kb] +
                                                      f["contacts/count"][kb]))
    written = f["contacts/impulse_since_record"][()] \
        if "contacts/impulse_since_record" in f else None
span = bt[kb] - bt[kb - 1]
rep = os.path.join(TMP, "ball.json")


def ball_report():
    p = pvpython(VIEW, bh5, "-o", os.path.join(TMP, "ball.png"), "--time", repr(float(bt[kb])),
                 "--report", rep, "--size", "400", "300")
    r = json.load(open(rep)) if p.returncode == 0 and os.path.isfile(rep) else {}
    return r.get("force_source"), r.get("contact_force_max", -1.0), \
        r.get("layers", {}).get("contacts", {}).get("drawn", {})


if written is not None:
    src, fmax, _ = ball_report()
    want = np.max(np.linalg.norm(written[rows], axis=1)) / span
    check(src == "impulse_since_record" and np.isclose(fmax, want, rtol=1e-9),
          "the run's impulse_since_record over the %.3g s since the previous record: the impact's "
          "mean force %.6g N (got %s, %s)" % (span, want, src, fmax))
# without it (files of earlier versions): the box and ball resting on the incline, whose
# contacts push in every step
_, _, _, ih5 = run(deck("contacts/incline.yaml"), "--t-end", "0.1", "--set", "output.every=50")
with h5py.File(ih5, "a") as f:
    if "contacts/impulse_since_record" in f:
        del f["contacts/impulse_since_record"]
    itable, it = f["contacts/table"][()], f["time"][()]
    irows = slice(int(f["contacts/offsets"][-1]), int(f["contacts/offsets"][-1] +
                                                       f["contacts/count"][-1]))
    want = np.max(np.abs(itable[irows, 10])) / f["solver/step_size"][-1]
p = pvpython(VIEW, ih5, "-o", os.path.join(TMP, "incline.png"), "--report", rep, "--size", "400",
             "300")
r = json.load(open(rep)) if p.returncode == 0 and os.path.isfile(rep) else {}
check(r.get("force_source") == "table" and want > 1.0 and
      np.isclose(r.get("contact_force_max", -1.0), want, rtol=1e-9),
      "without impulse_since_record: the last step's normal impulse / dt = %.6g N on the incline "
      "(got %s, %s)" % (want, r.get("force_source"), r.get("contact_force_max")))
with h5py.File(bh5, "a") as f:
    if "contacts/impulse_since_record" in f:
        del f["contacts/impulse_since_record"]
    isr = np.zeros((len(table), 3))
    isr[:, 2] = -4.0   # on the ground: 4 N s downwards, so the ball gets 4 N s upwards
    f.create_dataset("contacts/impulse_since_record", data=isr)
src, fmax, drawn = ball_report()
check(src == "impulse_since_record" and np.isclose(fmax, 4.0 / span, rtol=1e-9) and
      drawn.get("arrows") == 1,
      "with impulse_since_record: 4 N s over the %.3g s since the previous record = %.6g N, one "
      "arrow (got %s, %s, %s)" % (span, 4.0 / span, src, fmax, drawn))

# view.py starts its own virtual display when there is none
env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
png = os.path.join(TMP, "no_display.png")
p = subprocess.run([PVPYTHON, "--force-offscreen-rendering", VIEW, fb, "-o", png],
                   capture_output=True, text=True, timeout=300, env=env)
check(p.returncode == 0 and is_picture(png), "view.py without DISPLAY: renders under Xvfb")
if xserver is not None:
    xserver.terminate()
    xserver.wait(timeout=30)
done()

"""view.py: draw an mbsim-run result in ParaView, offscreen, as PNG.

usage:
  pvpython --force-offscreen-rendering scripts/paraview/view.py RUN.h5 [-o SHOT.png]
           [--time T] [--frames DIR] [--every K] [--size W H] [--no-trails]

Loads RUN.xmf (the XDMF sidecar beside RUN.h5) with ParaView's "XDMF Reader" and draws
every rigid body with the shape of its deck entry (box, sphere or cylinder, oriented by its
directors d1, d2, d3), rigid bodies without a shape as their three director arrows (d1 red,
d2 green, d3 blue), point masses as small spheres, joints as white points and the path of
every body centre over the whole run as a thin line, and every beam as a tube along its nodes. The deck is the root attribute `deck`
of RUN.h5 (read with h5py, parsed with PyYAML when available; without them every body is
drawn as arrows). Writes one screenshot (-o, at --time T, default the last record) and/or
one PNG per record (--frames DIR, every K-th record). Also runs under pvbatch.

Debian's ParaView renders through X: without a display (DISPLAY unset) the script starts
a virtual one, Xvfb (Debian package xvfb), for the time it runs.
"""
import argparse
# ParaView runs a Programmable Filter's script in __main__'s namespace after importing
# numpy-style sum/min/max there: this script calls Python's own through the module
import builtins as py
import json
import os
import shutil
import subprocess
import sys

from paraview import servermanager as sm
from paraview import simple as pv


def deck_shapes(h5_path):
    """({body name: ("box", [a, b, c]) | ("sphere", r) | ("cylinder", r, l) | ("point",) |
    None}, [(joint name, body 1, body 2, ground point or None)]) from the deck text in the
    result file; a body's shape is None when it has none (drawn as arrows)."""
    try:
        import h5py
        import yaml
    except ImportError as e:
        print("view.py: %s: drawing every body as arrows" % e, file=sys.stderr)
        return {}, []
    with h5py.File(h5_path, "r") as f:
        text = f.attrs.get("deck", "")
    text = text.decode() if isinstance(text, bytes) else text
    try:
        deck = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        print("view.py: the deck does not parse (%s): arrows only" % e, file=sys.stderr)
        return {}, []
    params = deck.get("parameters") or {}

    def num(v):
        if isinstance(v, str) and v.startswith("$"):
            v = params.get(v[1:], v)
        return float(v)

    shapes = {}
    for b in deck.get("bodies") or []:
        if not isinstance(b, dict) or "name" not in b:
            continue
        name = str(b["name"])
        if b.get("type") == "point":
            shapes[name] = ("point",)
            continue
        sh = b.get("shape")
        try:
            if isinstance(sh, dict) and "box" in sh:
                shapes[name] = ("box", [num(x) for x in sh["box"]])
            elif isinstance(sh, dict) and "sphere" in sh:
                shapes[name] = ("sphere", num(sh["sphere"]))
            elif isinstance(sh, dict) and "cylinder" in sh:
                c = sh["cylinder"]
                shapes[name] = ("cylinder", num(c["radius"]), num(c["length"]))
            else:
                shapes[name] = None
        except (TypeError, ValueError, KeyError):
            shapes[name] = None

    # joints: the two bodies, and the world point where the first is the ground
    joints = []
    for j in deck.get("joints") or []:
        try:
            b1, b2 = [str(b) for b in j["bodies"]]
            pt = j.get("point")
            if j.get("type") == "distance" and j.get("points"):
                pt = j["points"][0]
            ground = [num(c) for c in pt] if b1 == "ground" and pt is not None else None
            joints.append((str(j.get("name")), b1, b2, ground))
        except (TypeError, ValueError, KeyError):
            continue
    return shapes, joints


def trajectories(h5_path):
    """Body names, all centre positions [N, nb, 3], the number of joints, and the beams'
    names with their node positions [N, nodes, 3] (h5py)."""
    import h5py
    with h5py.File(h5_path, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in f["bodies/names"][()]]
        beams = {k: f["beams/%s/position" % k][()] for k in f["beams"]} if "beams" in f else {}
        return names, f["bodies/position"][()], len(f["joints/names"]), beams


# the Programmable Filter that turns body points and directors into oriented shapes; it
# re-runs at every time step. SHAPES is a JSON list in body order.
SHAPE_SCRIPT = r"""
import json
import numpy as np
from vtkmodules.vtkCommonCore import vtkIntArray
from vtkmodules.vtkCommonTransforms import vtkTransform
from vtkmodules.vtkFiltersCore import vtkAppendPolyData
from vtkmodules.vtkFiltersGeneral import vtkTransformPolyDataFilter
from vtkmodules.vtkFiltersSources import vtkCubeSource, vtkCylinderSource, vtkSphereSource
from vtkmodules.numpy_interface import dataset_adapter as dsa

shapes = json.loads(SHAPES_JSON)
inp = self.GetInputDataObject(0, 0)
grid = inp
if inp.IsA("vtkMultiBlockDataSet"):
    grid = None
    for k in range(inp.GetNumberOfBlocks()):
        if inp.GetMetaData(k).Get(inp.NAME()) == "bodies":
            grid = inp.GetBlock(k)
w = dsa.WrapDataObject(grid)
x = np.asarray(w.Points).reshape(-1, 3)
d = [np.asarray(w.PointData[n]).reshape(-1, 3) for n in ("d1", "d2", "d3")]
append = vtkAppendPolyData()
for i, sh in enumerate(shapes):
    if not sh or i >= len(x):
        continue
    if sh[0] == "box":
        src = vtkCubeSource()
        src.SetXLength(sh[1][0]); src.SetYLength(sh[1][1]); src.SetZLength(sh[1][2])
    elif sh[0] == "sphere":
        src = vtkSphereSource()
        src.SetRadius(sh[1]); src.SetThetaResolution(32); src.SetPhiResolution(16)
    elif sh[0] == "cylinder":
        src = vtkCylinderSource()
        src.SetRadius(sh[1]); src.SetHeight(sh[2]); src.SetResolution(32)
    else:
        continue
    # body axes -> world: p = x + [d1 d2 d3] p_body (a VTK cylinder lies along y: turn it
    # onto d3, the deck's cylinder axis)
    R = np.column_stack([d[0][i], d[1][i], d[2][i]])
    if sh[0] == "cylinder":
        R = R @ np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])
    M = np.eye(4)
    M[:3, :3] = R
    M[:3, 3] = x[i]
    t = vtkTransform()
    t.SetMatrix(M.ravel().tolist())
    f = vtkTransformPolyDataFilter()
    f.SetTransform(t)
    f.SetInputConnection(src.GetOutputPort())
    f.Update()
    out = f.GetOutput()
    ids = vtkIntArray()
    ids.SetName("body")
    for _ in range(out.GetNumberOfCells()):
        ids.InsertNextValue(i)
    out.GetCellData().AddArray(ids)
    append.AddInputData(out)
if append.GetNumberOfInputConnections(0) > 0:
    append.Update()
    self.GetOutput().ShallowCopy(append.GetOutput())
"""


# the links drawn for the joints: body 1 (or its ground point) -> joint point -> body 2
LINK_SCRIPT = r"""
import json
import numpy as np
from vtkmodules.vtkCommonCore import vtkPoints
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.numpy_interface import dataset_adapter as dsa

links = json.loads(LINKS_JSON)
inp = self.GetInputDataObject(0, 0)
blocks = {}
for k in range(inp.GetNumberOfBlocks()):
    blocks[inp.GetMetaData(k).Get(inp.NAME())] = inp.GetBlock(k)
xb = (np.asarray(dsa.WrapDataObject(blocks["bodies"]).Points).reshape(-1, 3)
      if "bodies" in blocks else np.zeros((0, 3)))
xj = np.asarray(dsa.WrapDataObject(blocks["joints"]).Points).reshape(-1, 3)
pts = vtkPoints()
lines = vtkCellArray()
for j, b1, b2, ground in links:
    chain = [ground if b1 < 0 else xb[b1], xj[j]] if (b1 >= 0 or ground) else [xj[j]]
    if b2 >= 0:
        chain.append(xb[b2])
    if len(chain) < 2:
        continue
    lines.InsertNextCell(len(chain))
    for p in chain:
        lines.InsertCellPoint(pts.InsertNextPoint(*[float(c) for c in p]))
out = vtkPolyData()
out.SetPoints(pts)
out.SetLines(lines)
self.GetOutput().ShallowCopy(out)
"""


def block(reader, name, multiblock):
    """The block of the reader's multiblock output with this name (bodies, joints,
    beam_NAME); multiblock: False when the sidecar has that one collection only"""
    if not multiblock:
        return reader
    return pv.MergeBlocks(Input=pv.ExtractBlock(Input=reader, Selectors=["/Root/" + name]))


def main(argv):
    doc = (__doc__ or "").split("\n")
    ap = argparse.ArgumentParser(prog="view.py", description=doc[0],
                                 epilog="\n".join(doc[5:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", metavar="RUN.h5", help="the result file (or its .xmf sidecar)")
    ap.add_argument("-o", "--output", metavar="SHOT.png", help="one screenshot")
    ap.add_argument("--time", type=float, help="time of the screenshot (default: the last)")
    ap.add_argument("--frames", metavar="DIR", help="one PNG per record into DIR")
    ap.add_argument("--every", type=int, default=1, metavar="K", help="with --frames: every "
                    "K-th record")
    ap.add_argument("--size", type=int, nargs=2, default=[1200, 800], metavar=("W", "H"))
    ap.add_argument("--no-trails", action="store_true", help="no paths of the body centres")
    args = ap.parse_args(argv)

    stem = args.run[:-4] if args.run.endswith(".xmf") else \
        args.run[:-3] if args.run.endswith(".h5") else args.run
    h5, xmf = stem + ".h5", stem + ".xmf"
    for p in (h5, xmf):
        if not os.path.isfile(p):
            print("view.py: error: '%s' not found (the run needs its XDMF sidecar: "
                  "output.xdmf: true)" % p, file=sys.stderr)
            return 2
    if not args.output and not args.frames:
        args.output = stem + ".png"

    names, traj, njoint, beams = trajectories(h5)
    shapes, deck_joints = deck_shapes(h5)
    per_body = [shapes.get(n) for n in names]

    reader = pv.XDMFReader(FileNames=[xmf])
    reader.UpdatePipelineInformation()
    steps = list(reader.TimestepValues) if reader.TimestepValues else [0.0]
    # the sidecar has a temporal collection each for the bodies, the joints (if any) and
    # every beam ("beam_NAME"); with more than one the reader gives one block per collection
    multiblock = (len(names) > 0) + (njoint > 0) + len(beams) > 1
    bodies = block(reader, "bodies", multiblock) if names else None
    joints = block(reader, "joints", multiblock) if njoint > 0 else None

    view = pv.CreateView("RenderView")
    view.ViewSize = list(args.size)
    view.Background = [0.12, 0.13, 0.16]
    view.OrientationAxesVisibility = 1
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass

    # scene size: the bounding box of every body centre over the run
    flat = [p for p in traj.reshape(-1, 3)] + [p for b in beams.values() for p in b.reshape(-1, 3)]
    flat = flat or [[0.0, 0.0, 0.0]]
    lo = [py.min(p[k] for p in flat) for k in range(3)]
    hi = [py.max(p[k] for p in flat) for k in range(3)]
    extent = py.max(py.max(h - l for h, l in zip(hi, lo)), 1e-3)
    mark = 0.03 * extent

    # shaped bodies
    colors = [[0.90, 0.55, 0.20], [0.30, 0.65, 0.90], [0.55, 0.80, 0.35], [0.85, 0.35, 0.55],
              [0.75, 0.70, 0.30], [0.60, 0.50, 0.85]]
    if bodies is not None and any(s and s[0] != "point" for s in per_body):
        pf = pv.ProgrammableFilter(Input=bodies)
        pf.OutputDataSetType = "vtkPolyData"
        pf.Script = "SHAPES_JSON = %r\n" % json.dumps(
            [list(s) if s and s[0] != "point" else None for s in per_body]) + SHAPE_SCRIPT
        d = pv.Show(pf, view)
        pv.ColorBy(d, ("CELLS", "body"))
        lut = pv.GetColorTransferFunction("body")
        lut.InterpretValuesAsCategories = 1
        lut.Annotations = [a for i, n in enumerate(names) for a in (str(i), n)]
        lut.IndexedColors = [c for i in range(len(names)) for c in colors[i % len(colors)]]
        d.Specular = 0.3
        d.Ambient = 0.35
        d.Diffuse = 0.85

    # rigid bodies without a shape (or without a readable deck): director arrows
    arrows = [i for i, s in enumerate(per_body) if s is None and bodies is not None]
    if arrows:
        sel = bodies
        if len(arrows) < len(names):
            sel = pv.ExtractSelection(Input=bodies, Selection=pv.IDSelectionSource(
                IDs=[v for i in arrows for v in (0, i)], FieldType="POINT"))
        for k, rgb in enumerate(([0.9, 0.2, 0.2], [0.2, 0.8, 0.2], [0.3, 0.4, 1.0])):
            g = pv.Glyph(Input=sel, GlyphType="Arrow")
            g.OrientationArray = ["POINTS", "d%d" % (k + 1)]
            g.ScaleArray = ["POINTS", "No scale array"]
            g.ScaleFactor = 0.15 * extent
            g.GlyphMode = "All Points"
            d = pv.Show(g, view)
            d.ColorArrayName = ["POINTS", ""]
            d.DiffuseColor = rgb
            d.AmbientColor = rgb

    # point masses: spheres
    points = [i for i, s in enumerate(per_body) if s and s[0] == "point"]
    if points:
        sel = bodies
        if len(points) < len(names):
            sel = pv.ExtractSelection(Input=bodies, Selection=pv.IDSelectionSource(
                IDs=[v for i in points for v in (0, i)], FieldType="POINT"))
        g = pv.Glyph(Input=sel, GlyphType="Sphere")
        g.ScaleArray = ["POINTS", "No scale array"]
        g.ScaleFactor = 2.5 * mark
        g.GlyphMode = "All Points"
        d = pv.Show(g, view)
        d.ColorArrayName = ["POINTS", ""]
        d.DiffuseColor = [0.90, 0.55, 0.20]

    # beams: a tube along the nodes
    for b in sorted(beams):
        tube = pv.Tube(Input=pv.ExtractSurface(Input=block(reader, "beam_" + b, multiblock)))
        tube.Radius = 0.6 * mark
        tube.NumberofSides = 16
        d = pv.Show(tube, view)
        d.ColorArrayName = ["POINTS", ""]
        d.DiffuseColor = [0.85, 0.75, 0.45]
        d.AmbientColor = [0.85, 0.75, 0.45]

    # joints: white points, and grey links from body to joint point to body
    if joints is not None and deck_joints:
        index = {n: i for i, n in enumerate(names)}
        links = [(j, index.get(b1, -1), index.get(b2, -1), ground)
                 for j, (_, b1, b2, ground) in enumerate(deck_joints)]
        lf = pv.ProgrammableFilter(Input=reader)
        lf.OutputDataSetType = "vtkPolyData"
        lf.Script = "LINKS_JSON = %r\n" % json.dumps(links) + LINK_SCRIPT
        d = pv.Show(lf, view)
        d.ColorArrayName = ["POINTS", ""]
        d.DiffuseColor = [0.75, 0.75, 0.78]
        d.AmbientColor = [0.75, 0.75, 0.78]
        d.LineWidth = 3.0
        d.RenderLinesAsTubes = 1
    if joints is not None:
        d = pv.Show(joints, view)
        d.SetRepresentationType("Points")
        d.RenderPointsAsSpheres = 1
        d.PointSize = 12
        d.ColorArrayName = ["POINTS", ""]
        d.DiffuseColor = [1.0, 1.0, 1.0]
        d.AmbientColor = [1.0, 1.0, 1.0]

    # paths of the body centres over the whole run (static polylines)
    if not args.no_trails and traj.shape[0] > 1:
        for b in range(traj.shape[1]):
            path = traj[:, b, :]
            step = py.max(1, len(path) // 2000)
            ps = pv.PolyLineSource(Points=[float(c) for p in path[::step] for c in p])
            d = pv.Show(ps, view)
            d.DiffuseColor = colors[b % len(colors)]
            d.AmbientColor = colors[b % len(colors)]
            d.LineWidth = 1.5
            d.Opacity = 0.6

    # camera: the whole run in view, from the side and above (z up, as gravity is usually -z)
    centre = [(h + l) / 2 for h, l in zip(hi, lo)]
    view.CameraFocalPoint = centre
    view.CameraPosition = [centre[0] + 1.2 * extent, centre[1] - 2.2 * extent,
                           centre[2] + 1.1 * extent]
    view.CameraViewUp = [0.0, 0.0, 1.0]
    pv.SetActiveView(view)
    view.ResetCamera(False)
    view.GetActiveCamera().Dolly(1.4)

    def shot(t, path):
        view.ViewTime = t
        pv.Render(view)
        pv.SaveScreenshot(path, view, ImageResolution=list(args.size))

    if args.frames:
        os.makedirs(args.frames, exist_ok=True)
        chosen = steps[::py.max(1, args.every)]
        for k, t in enumerate(chosen):
            shot(t, os.path.join(args.frames, "frame_%05d.png" % k))
        print("%s: %d frames" % (args.frames, len(chosen)))
    if args.output:
        t = steps[-1] if args.time is None else py.min(steps, key=lambda s: py.abs(s - args.time))
        shot(t, args.output)
        print("%s (t = %g s)" % (args.output, t))
    return 0


def start_xvfb():
    """A virtual X server on a free display (Xvfb picks it and reports it on -displayfd,
    so two at once never collide); sets DISPLAY and returns the process, or None."""
    xvfb = shutil.which("Xvfb")
    if not xvfb:
        print("view.py: warning: no DISPLAY and no Xvfb (Debian: xvfb): rendering may fail",
              file=sys.stderr)
        return None
    r, w = os.pipe()
    p = subprocess.Popen([xvfb, "-displayfd", str(w), "-screen", "0", "2560x1600x24",
                          "-nolisten", "tcp"], pass_fds=(w,), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as f:
        number = f.readline().strip()
    if not number:
        p.kill()
        print("view.py: warning: Xvfb did not start", file=sys.stderr)
        return None
    os.environ["DISPLAY"] = ":" + number
    return p


if __name__ == "__main__":
    xserver = start_xvfb() if not os.environ.get("DISPLAY") else None
    try:
        code = main(sys.argv[1:])
    finally:
        if xserver is not None:
            xserver.terminate()
            xserver.wait()
    # leave without VTK's teardown: under Xvfb its OpenGL context is released twice
    # (GLXBadContext), which would turn a finished run into exit status 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

"""view.py: draw an mbsim-run result in ParaView, offscreen, as PNG.

usage:
  pvpython --force-offscreen-rendering scripts/paraview/view.py RUN.h5 [-o SHOT.png]
           [--time T] [--frames DIR] [--every K] [--size W H] [--no-trails]
           [--no-contacts] [--no-ground] [--up AXIS] [--fit run|shot]
           [--report FILE.json]

Loads RUN.xmf (the XDMF sidecar beside RUN.h5) with ParaView's "XDMF Reader" and draws, at
each record, every body with the shapes the result file lists in /shapes (docs/output.md:
no deck is read): a body's drawn `shape` (box, sphere or cylinder), else its contact shapes
(box, sphere, capsule, points), placed by its centre and directors d1, d2, d3; a rigid body
without shapes as its three director arrows (d1 red, d2 green, d3 blue), a point mass without
one as a small sphere; the ground's shapes (a plane as a square patch around the scene, boxes,
spheres, capsules, points); every beam as a tube of its section (a rectangle h x w along its
directors d2, d3, or a circle) along its nodes; joints as white points with grey links from
body to joint point to body (/joints/bodies, /joints/points); contact points as red dots with
the contact force on the first body of each contact (the ground is always the second) as a
yellow arrow, the mean force since the previous record (/contacts/impulse_since_record divided
by the time between the records; files without it: the normal impulse of the record's last
step divided by its step size), all arrows on one scale (printed, and in the report); and the
path of every body centre over the whole run as a thin line. Bodies are drawn translucent
when contact arrows are, so that the arrows inside them show.

Writes one screenshot (-o, at --time T, default the last record) and/or one PNG per record
(--frames DIR, every K-th record); --report FILE.json writes what was drawn at the screenshot's
record (the number of shapes of each kind, contact points and arrows, ground shapes, beams,
joints, the force scale). The view looks from the side and above with z up, or with y up when
everything moves in an x-y plane (--up x|y|z overrides), at the whole run (--fit shot: at the
screenshot's record only). Also runs under pvbatch.

Debian's ParaView renders through X: without a display (DISPLAY unset) the script starts
a virtual one, Xvfb (Debian package xvfb), for the time it runs.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# /shapes/table columns (docs/output.md)
OWNER, ROLE, KIND, SIZE, OFFSET, AXES, PT_FIRST, PT_COUNT, SEGMENT = 0, 1, 2, 3, 6, 9, 18, 19, 20
DRAWN, COLLISION, SECTION = 0, 1, 2
COLORS = [[0.90, 0.55, 0.20], [0.30, 0.65, 0.90], [0.55, 0.80, 0.35], [0.85, 0.35, 0.55],
          [0.75, 0.70, 0.30], [0.60, 0.50, 0.85]]


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


class Run:
    """What view.py reads of a result file with h5py: names, the whole run's positions (for the
    camera and the paths), shapes, joints, the collections of the sidecar and the contacts."""

    def __init__(self, h5):
        import h5py
        with h5py.File(h5, "r") as f:
            self.time = f["time"][()]
            self.names = [text(n) for n in f["bodies/names"][()]]
            self.traj = f["bodies/position"][()]
            self.rot = f["bodies/orientation"][()]
            self.njoint = len(f["joints/names"]) if "joints/names" in f else 0
            # beams in the order of the model (their node numbering): /shapes' section rows
            self.beams = {k: f["beams/%s/position" % k][()] for k in f["beams"]} \
                if "beams" in f else {}
            if "shapes/table" in f:
                self.shapes = f["shapes/table"][()]
                self.shape_names = [text(n) for n in f["shapes/names"][()]]
                self.kinds = [text(k) for k in f["shapes/table"].attrs["kinds"]]
                self.points = f["shapes/points"][()]
            else:
                print("view.py: %s has no /shapes (a file of an earlier mbsim-run): bodies "
                      "are drawn as arrows, beams as round tubes, joints not at all"
                      % h5, file=sys.stderr)
                self.shapes = np.zeros((0, 21))
                self.shape_names, self.kinds, self.points = [], [], np.zeros((0, 3))
            self.joint_bodies = f["joints/bodies"][()] if "joints/bodies" in f else None
            self.joint_points = f["joints/points"][()] if "joints/points" in f else None
            # point masses: a position "<name>.phi.x" without directors ("<name>.d1.x")
            coords = set(text(n) for n in f["state/names"][()]) if "state/names" in f else set()
            self.point_masses = {b for b, n in enumerate(self.names)
                                 if n + ".phi.x" in coords and n + ".d1.x" not in coords}
            self.has_contacts = "contacts/table" in f
            self.contact_rows = len(f["contacts/table"]) if self.has_contacts else 0
            self.force_source = None
            if self.has_contacts:
                self.force_source = ("impulse_since_record" if "contacts/impulse_since_record"
                                     in f else "table")
        self.nbody = len(self.names)
        # beam order: the section rows (role 2) list the beams in the model's order with their
        # first node; nodes are numbered over all beams in that order
        sec = [(int(r[OWNER]), self.shape_names[i]) for i, r in enumerate(self.shapes)
               if r[ROLE] == SECTION]
        self.beam_order = [n for _, n in sorted(sec)] or sorted(self.beams)
        # the sidecar's collections, in the order the writer adds them
        self.collections = (["bodies"] if self.nbody else []) + \
            (["joints"] if self.njoint else []) + \
            (["contacts"] if self.has_contacts else []) + \
            ["beam_" + b for b in self.beam_order]
        self.h5 = h5

    def contact_forces(self):
        """Per record k: (points [n, 3], force on the first body of each contact [n, 3]),
        from the file: the mean force since the previous record (impulse_since_record), or
        the normal impulse of the record's last step over its step size."""
        import h5py
        out = []
        with h5py.File(self.h5, "r") as f:
            if not self.has_contacts:
                return [(np.zeros((0, 3)), np.zeros((0, 3)))] * len(self.time)
            table = f["contacts/table"][()]
            count, offsets = f["contacts/count"][()], f["contacts/offsets"][()]
            isr = f["contacts/impulse_since_record"][()] \
                if self.force_source == "impulse_since_record" else None
            step = f["solver/step_size"][()] if "solver/step_size" in f else None
            dt0 = float(f.attrs.get("dt", 0.0))
        for k in range(len(self.time)):
            rows = slice(int(offsets[k]), int(offsets[k] + count[k]))
            p = table[rows, 3:6]
            if isr is not None:
                span = self.time[k] - self.time[k - 1] if k > 0 else 0.0
                # the impulse on the second body; the first body takes minus it
                F = -isr[rows] / span if span > 0 else np.zeros_like(p)
            else:
                # the normal impulse pushes the second body along the normal (from the first
                # towards the second), the first against it
                h = step[k] if step is not None and step[k] > 0 else dt0
                F = -table[rows, 10:11] * table[rows, 6:9] / h if h > 0 else np.zeros_like(p)
            out.append((p, F))
        return out


# ---- the Programmable Filters' scripts ----
# ParaView runs them in __main__'s namespace (hence the mbs_ prefix of their functions), after
# importing numpy-style abs, all, min, max, sum there (so they call numpy's own); each gets
# CFG_JSON (its configuration) prepended.
PRELUDE = r"""
import json
import numpy as np
from vtkmodules.vtkCommonCore import vtkPoints, vtkStringArray, vtkUnsignedCharArray
from vtkmodules.vtkCommonDataModel import vtkCellArray, vtkPolyData
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline
from vtkmodules.vtkCommonTransforms import vtkTransform
from vtkmodules.vtkFiltersCore import vtkAppendPolyData
from vtkmodules.vtkFiltersGeneral import vtkTransformPolyDataFilter
from vtkmodules.vtkFiltersSources import (vtkArrowSource, vtkCubeSource, vtkCylinderSource,
                                          vtkPlaneSource, vtkSphereSource)
from vtkmodules.numpy_interface import dataset_adapter as mbs_dsa

mbs_parts = json.loads(CFG_JSON)
mbs_app = vtkAppendPolyData()
mbs_drawn = {}


def mbs_blocks(inp):
    # the sidecar's collections by name (one collection: the reader gives the grid itself)
    if inp is None:
        return {}
    if not inp.IsA("vtkMultiBlockDataSet"):
        return {mbs_cfg["collections"][0]: inp} if mbs_cfg["collections"] else {}
    return {inp.GetMetaData(k).Get(inp.NAME()): inp.GetBlock(k)
            for k in range(inp.GetNumberOfBlocks())}


def mbs_frames(grid, d1=True):
    # points [n, 3] and directors [n, 3, 3] (column i = d_i) of a bodies or beam grid
    if grid is None or not grid.IsA("vtkDataSet") or grid.GetNumberOfPoints() == 0:
        return np.zeros((0, 3)), np.zeros((0, 3, 3))
    w = mbs_dsa.WrapDataObject(grid)
    x = np.asarray(w.Points).reshape(-1, 3)
    d2 = np.asarray(w.PointData["d2"]).reshape(-1, 3)
    d3 = np.asarray(w.PointData["d3"]).reshape(-1, 3)
    dd1 = np.asarray(w.PointData["d1"]).reshape(-1, 3) if d1 else np.cross(d2, d3)
    return x, np.stack([dd1, d2, d3], axis=2)


def mbs_source(kind, size, res=24):
    # a shape in its own axes, about its centre (cylinders and capsules along axis 3)
    if kind == "box":
        s = vtkCubeSource()
        s.SetXLength(size[0]); s.SetYLength(size[1]); s.SetZLength(size[2])
    elif kind == "sphere":
        s = vtkSphereSource()
        s.SetRadius(size[0]); s.SetThetaResolution(res); s.SetPhiResolution(res // 2 + 2)
    elif kind in ("cylinder", "capsule", "ring"):
        # a ring (a bore: a circle of radius size[0]) drawn as a band a tenth of it wide
        s = vtkCylinderSource()
        s.SetRadius(size[0]); s.SetResolution(res)
        s.SetHeight(0.1 * size[0] if kind == "ring" else size[1])
        s.SetCapping(kind == "cylinder")
        s.Update()
        # VTK's cylinder lies along y: onto z
        out = mbs_place(s.GetOutput(), np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]),
                        np.zeros(3))
        if kind == "capsule":
            app = vtkAppendPolyData()
            app.AddInputData(out)
            for z in (-0.5 * size[1], 0.5 * size[1]):
                sp = vtkSphereSource()
                sp.SetRadius(size[0]); sp.SetCenter(0, 0, z)
                sp.SetThetaResolution(res); sp.SetPhiResolution(res // 2 + 2)
                sp.Update()
                app.AddInputData(sp.GetOutput())
            app.Update()
            out = app.GetOutput()
        return out
    else:
        return None
    s.Update()
    return s.GetOutput()


def mbs_place(poly, R, x):
    # poly moved by p -> x + R p
    M = np.eye(4)
    M[:3, :3] = R
    M[:3, 3] = x
    t = vtkTransform()
    t.SetMatrix(M.ravel().tolist())
    f = vtkTransformPolyDataFilter()
    f.SetTransform(t)
    f.SetInputData(poly)
    f.Update()
    out = vtkPolyData()
    out.ShallowCopy(f.GetOutput())
    return out


def mbs_add(app, poly, rgb, counts=None, what=None):
    # poly into the append filter with the cell colour rgb (0..1)
    if poly is None or poly.GetNumberOfCells() == 0:
        return
    c = vtkUnsignedCharArray()
    c.SetName("rgb")
    c.SetNumberOfComponents(3)
    v = [int(255 * k) for k in rgb]
    for _ in range(poly.GetNumberOfCells()):
        c.InsertNextTuple3(*v)
    poly.GetCellData().AddArray(c)
    app.AddInputData(poly)
    if counts is not None and what:
        counts[what] = counts.get(what, 0) + 1


def mbs_arrow(p, v, width):
    # an arrow from p along v (its length |v|), of constant width
    L = float(np.linalg.norm(v))
    if L <= 0.0:
        return None
    e1 = v / L
    a = np.array([1.0, 0, 0]) if np.abs(e1[0]) < 0.9 else np.array([0, 1.0, 0])
    e2 = np.cross(e1, a); e2 /= np.linalg.norm(e2)
    e3 = np.cross(e1, e2)
    s = vtkArrowSource()
    s.SetTipResolution(12); s.SetShaftResolution(12)
    s.SetTipLength(float(np.minimum(0.35, 3.0 * width / L)))
    s.SetTipRadius(0.1)
    s.SetShaftRadius(0.04)
    s.Update()
    # unit arrow along x of radius ~0.1: length L, radius width
    R = np.column_stack([e1 * L, e2 * width / 0.1, e3 * width / 0.1])
    return mbs_place(s.GetOutput(), R, p)


def mbs_time(alg):
    info = alg.GetOutputInformation(0)
    key = vtkStreamingDemandDrivenPipeline.UPDATE_TIME_STEP()
    return info.Get(key) if info.Has(key) else None


def mbs_finish(alg, app, drawn):
    # the output, with what each part drew as a field data string (view.py's --report)
    out = vtkPolyData()
    if app.GetNumberOfInputConnections(0) > 0:
        app.Update()
        out.ShallowCopy(app.GetOutput())
    alg.GetOutput().ShallowCopy(out)
    a = vtkStringArray()
    a.SetName("drawn")
    a.InsertNextValue(json.dumps(drawn))
    alg.GetOutput().GetFieldData().AddArray(a)
"""

# the parts: each runs with mbs_cfg (its configuration), app (the layer's append filter) and
# counts (what it drew) set

# the bodies: shapes at their owners' frames of the record, arrows, point-mass spheres
BODIES_SCRIPT = r"""
blocks = mbs_blocks(self.GetInputDataObject(0, 0))
x, R = mbs_frames(blocks.get("bodies"))
for b, body in enumerate(mbs_cfg["bodies"]):
    if b >= len(x):
        break
    rgb = mbs_cfg["colors"][b % len(mbs_cfg["colors"])]
    for sh in body["shapes"]:
        if sh["kind"] == "points":
            for p in sh["points"]:
                src = mbs_source("sphere", [mbs_cfg["dot"]], 12)
                poly = mbs_place(src, np.eye(3), np.asarray(sh["offset"]) +
                                 np.asarray(sh["axes"]) @ np.asarray(p))
                mbs_add(app, mbs_place(poly, R[b], x[b]), rgb, counts, "points")
            continue
        src = mbs_source(sh["kind"], sh["size"])
        poly = mbs_place(src, R[b] @ np.asarray(sh["axes"]), x[b] + R[b] @ np.asarray(sh["offset"]))
        mbs_add(app, poly, rgb, counts, sh["kind"])
    if body["arrows"]:
        for k, col in enumerate(([0.9, 0.2, 0.2], [0.2, 0.8, 0.2], [0.3, 0.4, 1.0])):
            mbs_add(app, mbs_arrow(x[b], R[b][:, k] * mbs_cfg["arrow"], 0.08 * mbs_cfg["arrow"]),
                    col, counts, "director arrows")
    if body["marker"]:
        poly = mbs_place(mbs_source("sphere", [mbs_cfg["marker"]]), np.eye(3), x[b])
        mbs_add(app, poly, rgb, counts, "point mass")
# the surfaces' patches: a quadrilateral over the record's positions of its four corner nodes
# (a point mass's, or beam node k's phi as owner nbody + k, the beams' nodes in order)
xr = x
if mbs_cfg["patches"] and int(np.max(np.asarray(mbs_cfg["patches"]))) >= len(x):
    xr = np.concatenate([x] + [mbs_frames(blocks.get("beam_" + n), d1=False)[0]
                               for n in mbs_cfg["beam_order"]])
for corners in mbs_cfg["patches"]:
    if int(np.max(np.asarray(corners))) >= len(xr):
        continue
    pts = vtkPoints()
    cells = vtkCellArray()
    cells.InsertNextCell(4)
    for c in corners:
        cells.InsertCellPoint(pts.InsertNextPoint(*[float(v) for v in xr[c]]))
    poly = vtkPolyData()
    poly.SetPoints(pts)
    poly.SetPolys(cells)
    mbs_add(app, poly, [0.75, 0.6, 0.35], counts, "patch")
"""

# the beams: the section swept along the nodes, turned with the directors d2, d3
BEAMS_SCRIPT = r"""
blocks = mbs_blocks(self.GetInputDataObject(0, 0))
for beam in mbs_cfg["beams"]:
    x, R = mbs_frames(blocks.get("beam_" + beam["name"]), d1=False)
    n = len(x)
    if n < 2:
        continue
    # the section's outline in (d2, d3): a rectangle's corners or a circle's points
    h, w = beam["section"]
    if beam["circle"]:
        a = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        ring = np.column_stack([0.5 * h * np.cos(a), 0.5 * w * np.sin(a)])
    else:
        ring = 0.5 * np.array([[h, w], [-h, w], [-h, -w], [h, -w]])
    m = len(ring)
    pts = vtkPoints()
    for i in range(n):
        for c2, c3 in ring:
            pts.InsertNextPoint(*(x[i] + c2 * R[i][:, 1] + c3 * R[i][:, 2]))
    cells = vtkCellArray()
    for i in range(n - 1):
        for j in range(m):
            k = (j + 1) % m
            cells.InsertNextCell(4)
            for p in (i * m + j, i * m + k, (i + 1) * m + k, (i + 1) * m + j):
                cells.InsertCellPoint(p)
    for i in (0, n - 1):
        cells.InsertNextCell(m)
        for j in range(m):
            cells.InsertCellPoint(i * m + j)
    poly = vtkPolyData()
    poly.SetPoints(pts)
    poly.SetPolys(cells)
    mbs_add(app, poly, [0.85, 0.75, 0.45], counts, "beams")
"""

# the ground's shapes (static): a plane as a square patch, boxes, spheres, capsules, points
GROUND_SCRIPT = r"""
for sh in mbs_cfg["ground"]:
    R, x = np.asarray(sh["axes"]), np.asarray(sh["offset"])
    if sh["kind"] == "plane":
        # the patch: centred where the scene's centre projects onto the plane
        n = R[:, 2]
        c = np.asarray(mbs_cfg["centre"])
        c = c - np.dot(c - x, n) * n
        half = mbs_cfg["patch"]
        s = vtkPlaneSource()
        s.SetResolution(20, 20)
        s.SetOrigin(*(c - half * R[:, 0] - half * R[:, 1]))
        s.SetPoint1(*(c + half * R[:, 0] - half * R[:, 1]))
        s.SetPoint2(*(c - half * R[:, 0] + half * R[:, 1]))
        s.Update()
        mbs_add(app, s.GetOutput(), [0.55, 0.57, 0.60], counts, "plane")
    elif sh["kind"] == "points":
        for p in sh["points"]:
            poly = mbs_place(mbs_source("sphere", [mbs_cfg["dot"]], 12), np.eye(3), x + R @ p)
            mbs_add(app, poly, [0.75, 0.75, 0.78], counts, "points")
    else:
        src = mbs_source(sh["kind"], sh["size"])
        if src is not None:
            mbs_add(app, mbs_place(src, R, x), [0.62, 0.64, 0.68], counts, sh["kind"])
"""

# contact points and forces of the record (from the file, by the record's time)
CONTACTS_SCRIPT = r"""
t = mbs_time(self)
times = np.asarray(mbs_cfg["times"])
k = int(np.argmin(np.abs(times - t))) if t is not None and len(times) else len(times) - 1
data = np.load(mbs_cfg["forces"])
rows = slice(int(data["offsets"][k]), int(data["offsets"][k] + data["count"][k]))
P, F = data["points"][rows], data["forces"][rows]
for p, f in zip(P, F):
    poly = mbs_place(mbs_source("sphere", [mbs_cfg["dot"]], 12), np.eye(3), p)
    mbs_add(app, poly, [0.95, 0.25, 0.20], counts, "points")
    v = f * mbs_cfg["scale"]
    L = float(np.linalg.norm(v))
    if L > mbs_cfg["cap"]:
        v *= mbs_cfg["cap"] / L
    if L > 1e-3 * mbs_cfg["dot"]:
        mbs_add(app, mbs_arrow(p, v, mbs_cfg["dot"] * 0.6), [1.0, 0.85, 0.15], counts, "arrows")
"""

# joints: grey links from body (or its joint point) to joint point to body, white points
JOINTS_SCRIPT = r"""
blocks = mbs_blocks(self.GetInputDataObject(0, 0))
xb, Rb = mbs_frames(blocks.get("bodies"))
nodes = []
for beam in mbs_cfg["beam_nodes"]:
    nodes.append(mbs_frames(blocks.get("beam_" + beam), d1=False))


def mbs_owner(o):
    # the frame (x, R) of owner o: -1 the ground, a body, nbody + k beam node k
    if o < 0:
        return np.zeros(3), np.eye(3), False
    if o < len(xb):
        return xb[o], Rb[o], True
    k = o - mbs_cfg["nbody"]
    for x, R in nodes:
        if k < len(x):
            return x[k], R[k], True
        k -= len(x)
    return None, None, False


pts = vtkPoints()
lines = vtkCellArray()
for (o1, o2), pp in zip(mbs_cfg["bodies"], mbs_cfg["points"]):
    chain = []
    x1, R1, body1 = mbs_owner(o1)
    x2, R2, body2 = mbs_owner(o2)
    if x1 is None or x2 is None:
        continue
    if body1:
        chain.append(x1)
    chain.append(x1 + R1 @ np.asarray(pp[:3]))
    p2 = x2 + R2 @ np.asarray(pp[3:])
    if np.linalg.norm(p2 - chain[-1]) > 0:
        chain.append(p2)
    chain.append(x2)
    lines.InsertNextCell(len(chain))
    for p in chain:
        lines.InsertCellPoint(pts.InsertNextPoint(*[float(c) for c in p]))
    poly = mbs_place(mbs_source("sphere", [mbs_cfg["dot"] * 1.3], 12), np.eye(3), p2)
    mbs_add(app, poly, [1.0, 1.0, 1.0], counts, "joint points")
link = vtkPolyData()
link.SetPoints(pts)
link.SetLines(lines)
mbs_add(app, link, [0.75, 0.75, 0.78], counts, "links")
"""

# the paths of the body centres over the run (static)
TRAILS_SCRIPT = r"""
data = np.load(mbs_cfg["trails"])
for b, path in enumerate(data["paths"]):
    pts = vtkPoints()
    line = vtkCellArray()
    line.InsertNextCell(len(path))
    for p in path:
        line.InsertCellPoint(pts.InsertNextPoint(*[float(c) for c in p]))
    poly = vtkPolyData()
    poly.SetPoints(pts)
    poly.SetLines(line)
    mbs_add(app, poly, mbs_cfg["colors"][b % len(mbs_cfg["colors"])], counts, "paths")
"""


def half_box(run, r):
    """the centre (in the shape's axes) and half edges of a box around shape row r"""
    kind, size = run.kinds[int(r[KIND])], r[SIZE:SIZE + 3]
    if kind == "points":
        k0, n = int(r[PT_FIRST]), int(r[PT_COUNT])
        p = run.points[k0:k0 + n] if n else np.zeros((1, 3))
        return (p.max(axis=0) + p.min(axis=0)) / 2, (p.max(axis=0) - p.min(axis=0)) / 2
    half = {"sphere": [size[0]] * 3, "box": 0.5 * size,
            "capsule": [size[0], size[0], size[0] + 0.5 * size[1]],
            "cylinder": [size[0], size[0], 0.5 * size[1]]}.get(kind, [0.0] * 3)
    return np.zeros(3), np.asarray(half, float)


def scene(run, contacts, records=None):
    """The box around what moves at the records (default: the whole run; the bodies' shapes,
    beam nodes, the joints' ground points, contact points; the ground's finite shapes when
    nothing moves): centre, extent (its largest side), its bounds, and whether everything
    moves in an x-y plane"""
    if records is None:
        records = np.arange(0, len(run.time), max(1, len(run.time) // 500))
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    # every body shape's box in the world at the records: centre x + R (offset + A c), half
    # edges |R A| h (A the shape's axes)
    x, R = run.traj[records], run.rot[records]
    for r in run.shapes:
        b = int(r[OWNER])
        if not 0 <= b < run.nbody or r[ROLE] not in (DRAWN, COLLISION) or not len(x):
            continue
        c, h = half_box(run, r)
        A = r[AXES:AXES + 9].reshape(3, 3)
        mid = x[:, b] + R[:, b] @ (r[OFFSET:OFFSET + 3] + A @ c)
        ext = np.abs(R[:, b] @ A) @ h
        lo, hi = np.minimum(lo, (mid - ext).min(axis=0)), np.maximum(hi, (mid + ext).max(axis=0))
    pts = [x.reshape(-1, 3)] + [b[records].reshape(-1, 3) for b in run.beams.values()]
    if run.joint_bodies is not None:
        pts += [run.joint_points[j, :3][None] for j in range(len(run.joint_bodies))
                if run.joint_bodies[j, 0] < 0]
    pts += [contacts[k][0] for k in records if k < len(contacts) and len(contacts[k][0])]
    if not np.all(np.isfinite(lo)) and not any(len(p) for p in pts):
        pts = [r[OFFSET:OFFSET + 3][None] for r in run.shapes
               if r[OWNER] < 0 and run.kinds[int(r[KIND])] != "plane"] or [np.zeros((1, 3))]
    for p in pts:
        if len(p):
            lo, hi = np.minimum(lo, p.min(axis=0)), np.maximum(hi, p.max(axis=0))
    # what moves (body centres, beam nodes, contact points) stays in an x-y plane?
    moving = np.concatenate([p for p in pts if len(p)] or [np.zeros((1, 3))])
    span = moving.max(axis=0) - moving.min(axis=0)
    planar = span[2] < 1e-9 * max(1.0, float(np.max(np.abs(moving)))) and span[1] > 0
    return (lo + hi) / 2, max(float(np.max(hi - lo)), 1e-3), lo, hi, planar


def shape_cfg(run, r):
    kind = run.kinds[int(r[KIND])]
    d = {"kind": kind, "size": [float(v) for v in r[SIZE:SIZE + 3]],
         "offset": [float(v) for v in r[OFFSET:OFFSET + 3]],
         "axes": r[AXES:AXES + 9].reshape(3, 3).tolist()}
    if kind == "points":
        k0, n = int(r[PT_FIRST]), int(r[PT_COUNT])
        d["points"] = run.points[k0:k0 + n].tolist()
    return d


def main(argv):
    doc = (__doc__ or "").split("\n")
    ap = argparse.ArgumentParser(prog="view.py", description=doc[0],
                                 epilog="\n".join(doc[6:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", metavar="RUN.h5", help="the result file (or its .xmf sidecar)")
    ap.add_argument("-o", "--output", metavar="SHOT.png", help="one screenshot")
    ap.add_argument("--time", type=float, help="time of the screenshot (default: the last)")
    ap.add_argument("--frames", metavar="DIR", help="one PNG per record into DIR")
    ap.add_argument("--every", type=int, default=1, metavar="K", help="with --frames: every "
                    "K-th record")
    ap.add_argument("--size", type=int, nargs=2, default=[1200, 800], metavar=("W", "H"))
    ap.add_argument("--no-trails", action="store_true", help="no paths of the body centres")
    ap.add_argument("--no-contacts", action="store_true", help="no contact points and forces")
    ap.add_argument("--no-ground", action="store_true", help="no ground shapes")
    ap.add_argument("--up", choices=("x", "y", "z"), help="the axis shown upwards")
    ap.add_argument("--fit", choices=("run", "shot"), default="run",
                    help="the camera takes in the whole run (default: the same view for every "
                    "frame) or the screenshot's record only")
    ap.add_argument("--report", metavar="FILE.json", help="what was drawn at the screenshot")
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

    from paraview import servermanager as sm
    from paraview import simple as pv

    run = Run(h5)
    contacts = run.contact_forces() if run.has_contacts and not args.no_contacts else []
    centre, extent, lo, hi, planar = scene(run, contacts)
    mark = 0.03 * extent
    dot = 0.25 * mark

    reader = pv.XDMFReader(FileNames=[xmf])
    reader.UpdatePipelineInformation()
    steps = list(reader.TimestepValues) if reader.TimestepValues else [0.0]

    # the screenshot's time (else the first frame's) before anything is shown: showing a
    # layer runs its pipeline at the view's time, which the screenshot then reuses
    t_shot = steps[-1] if args.time is None else min(steps, key=lambda s: abs(s - args.time))
    view = pv.CreateView("RenderView")
    view.ViewTime = t_shot if args.output else steps[0]
    view.ViewSize = list(args.size)
    view.Background = [0.12, 0.13, 0.16]
    view.OrientationAxesVisibility = 1
    try:
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    layers = {}
    # the contact forces and paths go to the Programmable Filters as .npz files
    tmp = tempfile.mkdtemp(prefix="mbsim-view-")

    def layer(name, parts, source=False, **display):
        """a Programmable Filter (source: Source) drawing the parts [(name, script, cfg)]"""
        script = "CFG_JSON = %r\n" % json.dumps(
            {n: dict(cfg, collections=run.collections, colors=COLORS) for n, _, cfg in parts})
        script += PRELUDE
        for n, body, _ in parts:
            script += "mbs_cfg = mbs_parts[%r]\napp = mbs_app\ncounts = mbs_drawn.setdefault(%r, {})\n" % (n, n)
            script += body
        script += "mbs_finish(self, mbs_app, mbs_drawn)\n"
        alg = pv.ProgrammableSource() if source else pv.ProgrammableFilter(Input=reader)
        alg.OutputDataSetType = "vtkPolyData"
        alg.Script = script
        d = pv.Show(alg, view)
        d.ColorArrayName = ["CELLS", "rgb"]
        d.MapScalars = 0
        for k, v in display.items():
            setattr(d, k, v)
        layers[name] = alg
        return alg

    # bodies: the drawn shape, else the contact shapes (points as dots); arrows for a rigid
    # body with nothing else to show, a sphere for a point mass
    bodies = []
    patch = [k for k, w in enumerate(run.kinds) if w == "patch"]
    # a surface's patch (its row's owner and sizes: the owners of its four corners) is drawn
    # over its nodes, not as one of them
    patches = [[int(r[OWNER])] + [int(v) for v in r[SIZE:SIZE + 3]] for r in run.shapes
               if int(r[KIND]) in patch and r[ROLE] == COLLISION]
    for b in range(run.nbody):
        rows = [r for r in run.shapes if r[OWNER] == b and r[ROLE] == DRAWN]
        rows = rows or [r for r in run.shapes if r[OWNER] == b and r[ROLE] == COLLISION
                        and int(r[KIND]) not in patch]
        shapes = [shape_cfg(run, r) for r in rows]
        solid = [s for s in shapes if s["kind"] != "points"]
        bodies.append({"shapes": shapes, "arrows": False, "marker": False})
        if not solid:
            bodies[-1]["marker" if b in run.point_masses else "arrows"] = True
    contact_alpha = 0.45 if contacts and run.contact_rows > 0 else 1.0
    if run.nbody:
        layer("bodies", [("bodies", BODIES_SCRIPT, {"bodies": bodies, "patches": patches,
                                                    "beam_order": list(run.beam_order),
                                                    "dot": dot,
                                                    "marker": 2.5 * mark,
                                                    "arrow": 0.15 * extent})],
              Specular=0.3, Ambient=0.35, Diffuse=0.85, Opacity=contact_alpha)
    # the rest in two layers (each layer costs ParaView about half a second to show): what
    # moves (beams, joints, contacts) and what does not (the ground, the paths)
    moving, still = [], []

    # beams: the section along the nodes (never thinner than 0.6 % of the scene to be seen)
    beams = []
    for i, r in enumerate(run.shapes):
        if r[ROLE] != SECTION:
            continue
        circle = run.kinds[int(r[KIND])] == "cylinder"
        h, w = (2 * r[SIZE], 2 * r[SIZE]) if circle else (r[SIZE + 1], r[SIZE + 2])
        thin = 0.006 * extent
        beams.append({"name": run.shape_names[i], "circle": circle,
                      "section": [max(float(h), thin), max(float(w), thin)]})
    if not beams:
        # files without /shapes: a round section 1.2 % of the scene across
        beams = [{"name": b, "circle": True, "section": [0.012 * extent] * 2}
                 for b in run.beam_order]
    if beams:
        moving.append(("beams", BEAMS_SCRIPT, {"beams": beams}))

    # the ground
    ground = [shape_cfg(run, r) for r in run.shapes if r[OWNER] < 0 and r[ROLE] == COLLISION]
    if ground and not args.no_ground:
        still.append(("ground", GROUND_SCRIPT, {"ground": ground, "centre": centre.tolist(),
                                                "patch": 0.8 * extent + 2 * mark,
                                                "dot": 1.6 * dot}))

    # contacts: points and force arrows on one scale: the 90th percentile of the run's
    # forces is 20 % of the scene, none longer than 40 %
    scale = 0.0
    if contacts:
        mags = np.concatenate([np.linalg.norm(F, axis=1) for _, F in contacts])
        mags = mags[mags > 0]
        scale = 0.2 * extent / np.percentile(mags, 90) if len(mags) else 0.0
        forces = os.path.join(tmp, "forces.npz")
        counts = np.array([len(p) for p, _ in contacts], dtype=np.int64)
        np.savez(forces, count=counts, offsets=np.concatenate([[0], np.cumsum(counts)[:-1]]),
                 points=np.concatenate([p for p, _ in contacts] + [np.zeros((0, 3))]),
                 forces=np.concatenate([F for _, F in contacts] + [np.zeros((0, 3))]))
        moving.append(("contacts", CONTACTS_SCRIPT, {"times": [float(t) for t in run.time],
                                                     "forces": forces, "scale": scale,
                                                     "cap": 0.4 * extent, "dot": dot}))
        if scale > 0:
            print("view.py: contact force arrows: %.4g N per m (%.3g m for the 90th percentile, "
                  "%.4g N)" % (1.0 / scale, 0.2 * extent, 0.2 * extent / scale))

    # joints
    if run.njoint and run.joint_bodies is not None:
        moving.append(("joints", JOINTS_SCRIPT, {"bodies": run.joint_bodies.tolist(),
                                                 "points": run.joint_points.tolist(),
                                                 "nbody": run.nbody,
                                                 "beam_nodes": run.beam_order, "dot": dot}))

    # paths of the body centres over the whole run
    if not args.no_trails and run.traj.shape[0] > 1 and run.nbody:
        every = max(1, len(run.traj) // 2000)
        trails = os.path.join(tmp, "trails.npz")
        np.savez(trails, paths=np.transpose(run.traj[::every], (1, 0, 2)))
        still.append(("trails", TRAILS_SCRIPT, {"trails": trails}))

    # (the line widths are those of the joints' links and the paths)
    if moving:
        layer("moving", moving, Specular=0.3, Ambient=0.3, LineWidth=3.0, RenderLinesAsTubes=1)
    if still:
        layer("still", still, source=True, Ambient=0.25, LineWidth=1.5)

    # camera: the whole run (or the screenshot's record) in view, from the side and above;
    # when everything moves in an x-y plane, from above that plane with y up
    if args.fit == "shot" and args.output:
        k_shot = int(np.argmin(np.abs(run.time - t_shot)))
        centre, _, lo, hi, _ = scene(run, contacts, np.array([k_shot]))
    # room for director arrows and markers beyond the centres, and never a flat box (a body
    # at rest without a shape)
    if any(b["arrows"] or b["marker"] for b in bodies):
        lo, hi = lo - 0.15 * extent, hi + 0.15 * extent
    lo, hi = np.minimum(lo, centre - 0.15 * extent), np.maximum(hi, centre + 0.15 * extent)
    up = args.up or ("y" if planar else "z")
    e = np.eye(3)
    k = {"x": 0, "y": 1, "z": 2}[up]
    u, a, b = e[k], e[(k + 1) % 3], e[(k + 2) % 3]
    where = (np.array([0.5, 0.6, 2.4]) if planar and not args.up else
             1.2 * a - 2.2 * b + 1.1 * u)
    # as close as the box's corners all stay in the view (30 degrees high), with a margin
    back = where / np.linalg.norm(where)
    top = u - np.dot(u, back) * back
    top /= np.linalg.norm(top)
    right = np.cross(top, back)
    ty = np.tan(np.radians(15))
    tx = ty * args.size[0] / args.size[1]
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                        for z in (lo[2], hi[2])]) - centre
    dist = max(float(np.dot(c, back)) + max(abs(np.dot(c, right)) / tx,
                                             abs(np.dot(c, top)) / ty) for c in corners)
    view.CameraFocalPoint = centre.tolist()
    view.CameraPosition = (centre + back * 1.08 * dist).tolist()
    view.CameraViewUp = u.tolist()
    view.CameraViewAngle = 30
    pv.SetActiveView(view)
    # (ParaView would reset the camera to every layer's bounds, the ground's included, at the
    # first render)
    pv._DisableFirstRenderCameraReset()

    def shot(t, path):
        view.ViewTime = t
        pv.Render(view)
        pv.SaveScreenshot(path, view, ImageResolution=list(args.size))

    try:
        if args.frames:
            os.makedirs(args.frames, exist_ok=True)
            chosen = steps[::max(1, args.every)]
            for k, t in enumerate(chosen):
                shot(t, os.path.join(args.frames, "frame_%05d.png" % k))
            print("%s: %d frames" % (args.frames, len(chosen)))
        if args.output:
            t = t_shot
            shot(t, args.output)
            print("%s (t = %g s)" % (args.output, t))
            if args.report:
                rep = {"time": t, "record": int(np.argmin(np.abs(run.time - t))),
                       "extent": extent, "force_source": run.force_source,
                       "force_scale_N_per_m": (1.0 / scale) if scale > 0 else None,
                       "layers": {}}
                if contacts:
                    F = contacts[rep["record"]][1]
                    rep["contact_force_max"] = float(np.max(np.linalg.norm(F, axis=1))) \
                        if len(F) else 0.0
                for alg in layers.values():
                    fd = sm.Fetch(alg).GetFieldData().GetAbstractArray("drawn")
                    for part, drawn in (json.loads(fd.GetValue(0)) if fd else {}).items():
                        rep["layers"][part] = {"drawn": drawn}
                with open(args.report, "w") as f:
                    json.dump(rep, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        # what this call made goes (main may run again in the same process)
        for alg in layers.values():
            pv.Delete(alg)
        pv.Delete(reader)
        pv.Delete(view)
    return 0


def start_xvfb(screen="2560x1600x24"):
    """A virtual X server on a display of its own; sets DISPLAY and returns the process, or
    None. The display is a random number from 100 up (reported back on -displayfd): X servers
    of other sessions sharing /tmp take the low ones, and where two claim one display, the
    first to exit removes the other's socket. A number in use makes Xvfb exit at once, and
    another is tried. -noreset: an X server resets when its last client leaves, and ParaView
    connecting during that reset aborts ("bad X server connection"), which happened to about
    one pvpython start in three on a loaded machine."""
    xvfb = shutil.which("Xvfb")
    if not xvfb:
        print("view.py: warning: no DISPLAY and no Xvfb (Debian: xvfb): rendering may fail",
              file=sys.stderr)
        return None
    pick = random.SystemRandom()
    for _ in range(10):
        r, w = os.pipe()
        p = subprocess.Popen([xvfb, ":%d" % pick.randrange(100, 30000), "-displayfd", str(w),
                              "-screen", "0", screen, "-nolisten", "tcp", "-noreset"],
                             pass_fds=(w,), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(w)
        with os.fdopen(r) as f:
            number = f.readline().strip()
        if number:
            os.environ["DISPLAY"] = ":" + number
            return p
        p.wait()
    print("view.py: warning: Xvfb did not start", file=sys.stderr)
    return None


def cli(argv):
    xserver = start_xvfb() if not os.environ.get("DISPLAY") else None
    try:
        code = main(argv)
    finally:
        if xserver is not None:
            xserver.terminate()
            xserver.wait()
    return code


if __name__ == "__main__":
    # ParaView runs Programmable Filter scripts in __main__'s namespace, importing names there
    # (numpy's block, sum, min, ...) over this script's: its code runs from a module of its own
    import importlib.util
    spec = importlib.util.spec_from_file_location("mbsim_paraview_view",
                                                  os.path.abspath(__file__))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    code = module.cli(sys.argv[1:])
    # leave without VTK's teardown: under Xvfb its OpenGL context is released twice
    # (GLXBadContext), which would turn a finished run into exit status 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

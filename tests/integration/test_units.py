"""Every numeric dataset of a result carries a `units` attribute; the per-column units of the
/state series follow the coordinate names (positions m, directors 1, gamma rad), and the
per-joint units of /joints/coordinates and /joints/rates follow the joint types of the deck;
mbsim.units() returns the attribute."""
import os
import sys

import h5py

from common import ROOT, TMP, check, done, run

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import mbsim  # noqa: E402

# one body on each joint type (at rest), a point mass on a distance joint, joint torques (an
# augmented one adds the coordinate gamma [rad]); run with genalpha too, so that the
# acceleration datasets exist
DECK = """mbsim: 1
gravity: [0, 0, -9.81]
bodies:
%s  - {name: p, type: point, mass: 1, position: [0, 0, -10]}
joints:
%s  - {name: j_distance, type: distance, bodies: [ground, p], points: [[0, 0, -9], [0, 0, -10]]}
loads:
  - {name: push, type: joint_torque, joint: j_revolute, value: 0.5}
  - {name: turn, type: joint_torque, joint: j_cylindrical, value: 0.2, method: augmented}
solver: {integrator: %s, dt: 1.0e-3, t_end: 0.01}
"""
TYPES = ["revolute", "prismatic", "cylindrical", "universal", "planar", "spherical", "fixed"]
bodies = joints = ""
for i, t in enumerate(TYPES):
    x = 2.0 * i
    bodies += ("  - {name: b_%s, mass: 1, inertia: [1, 1, 1], position: [%g, 0, 0]}\n" % (t, x))
    extra = "axes: [[1, 0, 0], [0, 1, 0]]" if t == "universal" else "axis: [0, 0, 1]"
    if t in ("spherical", "fixed"):
        extra = ""
    joints += ("  - {name: j_%s, type: %s, bodies: [ground, b_%s], point: [%g, 0, 0]%s}\n"
               % (t, t, t, x, (", " + extra) if extra else ""))

# the units each joint type's coordinates have (docs/output.md: angles rad, lengths m)
COORD = {"revolute": ["rad"], "prismatic": ["m"], "cylindrical": ["rad", "m"],
         "universal": ["rad", "rad"], "planar": ["m", "m", "rad"],
         "spherical": ["rad", "rad", "rad"], "fixed": [], "distance": []}


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


for integ in ("genalpha", "em"):
    path = os.path.join(TMP, "units_%s.yaml" % integ)
    with open(path, "w") as f:
        f.write(DECK % (bodies, joints, integ))
    _, _, _, out = run(path)
    missing, numeric = [], []
    with h5py.File(out, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset) and obj.dtype.kind not in ("S", "O"):
                numeric.append(name)
                if not isinstance(obj.attrs.get("units"), (str, bytes)) or not text(
                        obj.attrs["units"]).strip():
                    missing.append(name)
        f.visititems(visit)
        check(len(numeric) >= (29 if integ == "genalpha" else 27) and not missing,
              "%s: all %d numeric datasets have a units string (missing: %s)"
              % (integ, len(numeric), missing))
        # datasets of a single unit
        want = {"time": "s", "energy/kinetic": "J", "energy/dissipated": "J",
                "momentum/linear": "kg m/s", "momentum/angular": "kg m^2/s",
                "bodies/position": "m", "bodies/velocity": "m/s",
                "bodies/angular_velocity": "rad/s", "bodies/orientation": "1",
                "joints/position": "m", "joints/reaction": "N, N m", "loads/force": "N, N m",
                "solver/step_size": "s", "solver/iterations": "1"}
        bad = [(k, text(f[k].attrs["units"])) for k in want if text(f[k].attrs["units"]) != want[k]]
        check(not bad, "%s: units of the single-unit datasets (wrong: %s)" % (integ, bad))
        # per column: from the coordinate names
        qnames = [text(n) for n in f["state/names"][()]]
        exp_q = ["m" if ".phi." in n else "1" if any(".d%d." % k in n for k in (1, 2, 3))
                 else "rad" if n.endswith(".gamma") else "?" for n in qnames]
        got_q = [text(u) for u in f["state/q"].attrs["column_units"]]
        check("?" not in exp_q and got_q == exp_q and exp_q.count("m") == 3 * 8 and
              exp_q.count("rad") == 1,
              "%s: /state/q column_units follow /state/names (%d m, %d 1, %d rad)"
              % (integ, got_q.count("m"), got_q.count("1"), got_q.count("rad")))
        series = {"state/v": "/s", "state/scheme_velocity": "/s"}
        if integ == "genalpha":
            series.update({"state/acceleration": "/s^2", "state/algorithmic_acceleration": "/s^2"})
        for k, suffix in series.items():
            got = [text(u) for u in f[k].attrs["column_units"]]
            check(got == [u + suffix for u in exp_q], "%s: %s column_units are /state/q's %s"
                  % (integ, k, suffix))
        check(("state/acceleration" in f) == (integ == "genalpha"),
              "%s: acceleration datasets only for genalpha" % integ)
        # per joint: from the joint types
        jnames = [text(n) for n in f["joints/names"][()]]
        exp_j = [", ".join(COORD[n[2:]]) or "none" for n in jnames]
        exp_r = [", ".join(u + "/s" for u in COORD[n[2:]]) or "none" for n in jnames]
        got_j = [text(u) for u in f["joints/coordinates"].attrs["joint_units"]]
        got_r = [text(u) for u in f["joints/rates"].attrs["joint_units"]]
        check(len(jnames) == 8 and got_j == exp_j and got_r == exp_r,
              "%s: joint_units by joint type: %s" % (integ, dict(zip(jnames, got_j))))
    # mbsim.units() returns the attribute
    r = mbsim.Run(out)
    with h5py.File(out, "r") as f:
        same = all(mbsim.units(r, "/" + k) == text(f[k].attrs["units"]) for k in numeric)
    check(same and mbsim.units(r, "joints/coordinates").startswith("rad or m") and
          mbsim.units(r, "momentum/angular") == "kg m^2/s",
          "%s: mbsim.units() gives each dataset's attribute" % integ)
done()

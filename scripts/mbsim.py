"""mbsim.py: read mbsim-run result files (README "Output", "mbsim-run/1") with numpy and h5py.

    import sys; sys.path.insert(0, "scripts")
    import mbsim
    run = mbsim.load("build/quickstart.h5")
    run.time, run.energy["total"], run.q[:, run.coordinate_names.index("link1.phi.x")]
    run.body("link2")["position"][-1]       # centre of mass of link2 at the last record
    run.deck                                 # the deck text that produced the run
    run.energy_error()                       # relative energy error as the summary prints it

Everything is read into memory when the file is loaded (the file is closed again), so a
run still being written can be loaded at any time: it shows the records flushed so far.
"""
import h5py
import numpy as np

__all__ = ["Run", "load", "datasets", "energy_balance", "energy_scale", "relative_energy_error",
           "columns", "units", "write_csv"]


def _text(x):
    """An HDF5 string (bytes or str, scalar or array) as str or list of str."""
    if isinstance(x, bytes):
        return x.decode("utf-8")
    if isinstance(x, np.ndarray):
        if x.dtype.kind in ("S", "O", "U"):
            return [_text(v) for v in x.tolist()]
        return x
    if isinstance(x, (list, tuple)):
        return [_text(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def datasets(path, units=None):
    """Every dataset of an HDF5 file as {"group/name": numpy array} (strings decoded); the
    `units` attribute of each, where it has one, into the dict units if given."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                value = obj[()]
                if obj.dtype.kind in ("S", "O"):
                    value = _text(value)
                out[name] = value
                if units is not None and "units" in obj.attrs:
                    units[name] = _text(obj.attrs["units"])
        f.visititems(visit)
    return out


# units of the datasets, for files written before datasets carried a `units` attribute
UNITS = {"time": "s", "energy": "J", "momentum/linear": "kg m/s", "momentum/angular": "kg m^2/s",
         "bodies/position": "m", "bodies/velocity": "m/s", "bodies/angular_velocity": "rad/s",
         "bodies/orientation": "1", "joints/position": "m", "joints/reaction": "N, N m",
         "loads/force": "N, N m", "joints/coordinates": "rad or m", "joints/rates": "rad/s or m/s",
         "solver/iterations": "1", "solver/factorizations": "1", "solver/solves": "1",
         "solver/step_size": "s"}

_VEC = ("x", "y", "z")
_WRENCH = ("Fx", "Fy", "Fz", "Mx", "My", "Mz")
_STRAIN = ("Gamma1", "Gamma2", "Gamma3", "K1", "K2", "K3")


def units(run, path):
    """The units of a dataset: its `units` attribute, else those this version writes"""
    path = path.lstrip("/")
    if path in run.units:
        return run.units[path]
    for key in (path, path.split("/")[0]):
        if key in UNITS:
            return UNITS[key]
    return ""


def columns(run, path):
    """The time series of one dataset as a list of (label, values [N], units): one column per
    component, labelled by body, joint, load or coordinate name and by x/y/z, Fx..Mz or the
    matrix entry; components that are NaN throughout (padding) are left out."""
    path = path.lstrip("/")
    a = np.asarray(run[path])
    if a.ndim == 0 or len(a) != len(run.time):
        raise KeyError("%s is not a time series of this run" % path)
    group = path.split("/")[0]
    names = {"bodies": run.bodies.get("names", []), "joints": run.joints.get("names", []),
             "loads": run.data.get("loads/names", [])}.get(group)
    out = []
    u = units(run, path)
    if a.ndim == 1:
        return [(path, a, u)]
    if a.ndim == 2:
        n = a.shape[1]
        if path in ("state/q", "state/v", "state/scheme_velocity", "state/acceleration",
                    "state/algorithmic_acceleration") and len(run.coordinate_names) == n:
            labels = ["%s[%s]" % (path, c) for c in run.coordinate_names]
        elif n == 3:
            labels = ["%s.%s" % (path, c) for c in _VEC]
        else:
            labels = ["%s[%d]" % (path, i) for i in range(n)]
        out = [(labels[i], a[:, i], u) for i in range(n)]
    else:
        k = int(np.prod(a.shape[2:]))
        rows = a.reshape(a.shape[0], a.shape[1], k)
        comp = _VEC if k == 3 else _WRENCH if k == 6 else ["%d" % i for i in range(k)]
        if group == "beams" and path.endswith("/strain"):
            comp = _STRAIN
        if path == "bodies/orientation" or (group == "beams" and path.endswith("/directors")):
            comp = ["R%d%d" % (r + 1, c + 1) for r in range(3) for c in range(3)]
        if path == "joints/coordinates" or path == "joints/rates":
            comp = ["%d" % i for i in range(k)]
        for j in range(rows.shape[1]):
            who = names[j] if names is not None and j < len(names) else str(j)
            for c in range(k):
                cu = ("N" if comp[c][0] == "F" else "N m") if comp is _WRENCH else u
                if comp is _STRAIN:
                    cu = "1" if c < 3 else "1/m"
                out.append(("%s[%s].%s" % (path, who, comp[c]), rows[:, j, c], cu))
    return [col for col in out if not np.all(np.isnan(col[1]))]


class Run:
    """One result file in memory.

    Attributes: path; attrs (all root attributes: format, version, title, deck, integrator,
    dt, t_end, status, n_coordinates, n_constraints, n_dof, ...); deck (the deck text after
    --set overrides); status; time [N]; energy {kinetic, potential, total, external_work,
    dissipated} [N]; momentum {linear, angular} [N,3]; violation [N]; iterations [N];
    q, v [N,n]; coordinate_names [n]; multipliers [N,ncon] (None in files that predate it);
    acceleration [N,n] (genalpha runs only, else None);
    bodies {names, position, orientation, velocity, angular_velocity}; joints {names,
    reaction, position}; beams {name: {position, directors, strain}} (energy["strain"] too,
    in files of models with beams); data (every dataset by path, e.g. data["bodies/position"]).
    """

    def __init__(self, path):
        self.path = str(path)
        self.units = {}
        self.data = datasets(self.path, self.units)
        with h5py.File(self.path, "r") as f:
            self.attrs = {k: _text(f.attrs[k]) for k in f.attrs}
            # /state/names (any model); files before it: the attribute names of /state/q
            names = f["state/names"][()] if "state/names" in f else None
            q = f.get("state/q")
            if names is None and q is not None:
                names = q.attrs.get("names")
            self.coordinate_names = _text(names) if names is not None else []
        self.coordinate_names = list(self.coordinate_names)
        d = self.data
        self.deck = self.attrs.get("deck", "")
        self.status = self.attrs.get("status", "")
        self.title = self.attrs.get("title", "")
        self.time = d.get("time", np.zeros(0))
        self.energy = {k: d["energy/" + k] for k in
                       ("kinetic", "potential", "total", "external_work", "dissipated",
                        "strain")
                       if "energy/" + k in d}
        self.momentum = {k: d["momentum/" + k] for k in ("linear", "angular")
                         if "momentum/" + k in d}
        self.violation = d.get("constraints/violation")
        self.iterations = d.get("solver/iterations")
        self.q = d.get("state/q")
        self.v = d.get("state/v")
        self.multipliers = d.get("state/multipliers")
        self.acceleration = d.get("state/acceleration")
        self.bodies = {k.split("/", 1)[1]: v for k, v in d.items() if k.startswith("bodies/")}
        self.joints = {k.split("/", 1)[1]: v for k, v in d.items() if k.startswith("joints/")}
        self.bodies.setdefault("names", [])
        self.joints.setdefault("names", [])
        # beams: {name: {position [N,nodes,3], directors [N,nodes,3,3], strain [N,elements,6]}}
        self.beams = {}
        for k, v in d.items():
            parts = k.split("/")
            if len(parts) == 3 and parts[0] == "beams":
                self.beams.setdefault(parts[1], {})[parts[2]] = v

    def __len__(self):
        return len(self.time)

    def __getitem__(self, path):
        """A dataset by its path ("energy/total" or "/energy/total")."""
        return self.data[path.lstrip("/")]

    def __repr__(self):
        return "<mbsim.Run %r: %d records to t=%g, %d bodies, status %r>" % (
            self.path, len(self), self.time[-1] if len(self) else 0.0,
            len(self.bodies["names"]), self.status)

    def body(self, name):
        """{position, orientation, velocity, angular_velocity} of one body over time."""
        i = list(self.bodies["names"]).index(name)
        return {k: v[:, i] for k, v in self.bodies.items() if k != "names"}

    def joint(self, name):
        """{reaction, position} of one joint over time."""
        i = list(self.joints["names"]).index(name)
        return {k: v[:, i] for k, v in self.joints.items() if k != "names"}

    def beam(self, name):
        """{position, directors, strain} of one beam over time (README "Output")."""
        return self.beams[name]

    def coordinate(self, name):
        """q and v of one coordinate (by label, e.g. "link1.phi.x") over time."""
        i = self.coordinate_names.index(name)
        return self.q[:, i], self.v[:, i]

    def energy_balance(self):
        """E - W_ext + D: constant when the scheme conserves energy."""
        return energy_balance(self)

    def energy_error(self):
        """max_t |B(t) - B(0)| / E_scale, B = E - W_ext + D, E_scale = max(|E(0)|,
        max_t (B(0) + W_ext - D - V)): the kinetic energy the balance allows, which does not
        grow when the motion blows up (what mbsim-run's summary prints)."""
        return relative_energy_error(self)


def load(path):
    """Read the result file at path into a Run."""
    return Run(path)


def energy_balance(run):
    e = run.energy
    return e["total"] - e.get("external_work", 0.0) + e.get("dissipated", 0.0)


def energy_scale(run):
    """max(|E(0)|, max_t (B(0) + W_ext - D - V)), B = E - W_ext + D: the largest of the
    initial energy and the kinetic energy the energy balance allows (an exact solution's T)"""
    e = run.energy
    B0 = energy_balance(run)[0]
    allowed = B0 + e.get("external_work", 0.0) - e.get("dissipated", 0.0) - e["potential"]
    return max(abs(float(e["total"][0])), float(np.max(allowed)))


def relative_energy_error(run):
    """The relative energy error of the summary; 0 for a run that never moved, NaN when empty."""
    if len(run.time) == 0:
        return float("nan")
    E = energy_balance(run)
    denom = energy_scale(run)
    err = float(np.max(np.abs(E - E[0])))
    if denom == 0.0:
        return 0.0 if err == 0.0 else float("inf")
    return err / denom


def write_csv(run, paths, out):
    """Write the time series of the datasets at paths (all time series when empty) as CSV to
    the text stream out: a header row "time [s]", "<label> [units]", ..., one row per record,
    numbers with 17 significant digits (they read back exactly)."""
    if not paths:
        paths = sorted(k for k, v in run.data.items()
                       if k != "time" and isinstance(v, np.ndarray) and v.ndim >= 1
                       and v.dtype.kind in "fi" and len(v) == len(run.time))
    cols = [("time", run.time, "s")]
    for p in paths:
        cols += columns(run, p)
    out.write(",".join('"%s [%s]"' % (label, u) if u else '"%s"' % label
                       for label, _, u in cols) + "\n")
    for i in range(len(run.time)):
        out.write(",".join(repr(float(v[i])) for _, v, _ in cols) + "\n")

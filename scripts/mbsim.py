"""mbsim.py: read mbsim-run result files (FORMAT.md, "mbsim-run/1") with numpy and h5py.

    import sys; sys.path.insert(0, "scripts")
    import mbsim
    run = mbsim.load("build/quickstart.h5")
    run.time, run.energy["total"], run.q[:, run.coordinate_names.index("link1.phi.x")]
    run.body("link2")["position"][-1]       # centre of mass of link2 at the last record
    run.deck                                 # the deck text that produced the run
    run.energy_error()                       # relative energy error as FORMAT.md defines it

Everything is read into memory when the file is loaded (the file is closed again), so a
run still being written can be loaded at any time: it shows the records flushed so far.
"""
import h5py
import numpy as np

__all__ = ["Run", "load", "datasets", "energy_balance", "relative_energy_error"]


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


def datasets(path):
    """Every dataset of an HDF5 file as {"group/name": numpy array} (strings decoded)."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                value = obj[()]
                if obj.dtype.kind in ("S", "O"):
                    value = _text(value)
                out[name] = value
        f.visititems(visit)
    return out


class Run:
    """One result file in memory.

    Attributes: path; attrs (all root attributes: format, version, title, deck, integrator,
    dt, t_end, status, n_coordinates, n_constraints, n_dof, ...); deck (the deck text after
    --set overrides); status; time [N]; energy {kinetic, potential, total, external_work,
    dissipated} [N]; momentum {linear, angular} [N,3]; violation [N]; iterations [N];
    q, v [N,n]; coordinate_names [n]; multipliers [N,ncon] (None in files that predate it);
    acceleration [N,n] (genalpha runs only, else None);
    bodies {names, position, orientation, velocity, angular_velocity}; joints {names,
    reaction, position}; data (every dataset by path, e.g. data["bodies/position"]).
    """

    def __init__(self, path):
        self.path = str(path)
        self.data = datasets(self.path)
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
                       ("kinetic", "potential", "total", "external_work", "dissipated")
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

    def coordinate(self, name):
        """q and v of one coordinate (by label, e.g. "link1.phi.x") over time."""
        i = self.coordinate_names.index(name)
        return self.q[:, i], self.v[:, i]

    def energy_balance(self):
        """E - W_ext + D: constant when the scheme conserves energy."""
        return energy_balance(self)

    def energy_error(self):
        """max_t |E(t) - E(0)| / max(|E(0)|, max_t T(t)) (FORMAT.md)."""
        return relative_energy_error(self)


def load(path):
    """Read the result file at path into a Run."""
    return Run(path)


def energy_balance(run):
    e = run.energy
    return e["total"] - e.get("external_work", 0.0) + e.get("dissipated", 0.0)


def relative_energy_error(run):
    """The relative energy error of FORMAT.md; 0 for a run that never moved, NaN when empty."""
    if len(run.time) == 0:
        return float("nan")
    E = energy_balance(run)
    denom = max(abs(E[0]), float(np.max(run.energy["kinetic"])))
    err = float(np.max(np.abs(E - E[0])))
    if denom == 0.0:
        return 0.0 if err == 0.0 else float("inf")
    return err / denom

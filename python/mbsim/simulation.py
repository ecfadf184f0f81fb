"""Runs of decks in process: libmbsim's run object (include/mbsim/run.h) through ctypes.

    import mbsim
    sim = mbsim.Simulation("decks/double_pendulum.yaml", set={"solver.t_end": 2})
    sim.advance(1.0)                  # steps of the deck's grid up to t = 1
    sim.time, sim.q, sim.v            # numpy copies
    sim.bodies["link2"].position      # centre of mass, orientation (3 x 3), velocity, ...
    sim.energy["total"]               # the record's energies
    r = mbsim.run("decks/four_bar.yaml", set={"solver.t_end": 0.5})   # an mbsim.Run

The library is build/libmbsim.so of the checkout (make all), the one `make install` put
beside the package, or the file named by the environment variable MBSIM_LIBRARY. ctypes
releases the GIL during each call into it, so threads can step simulations in parallel.
"""
import ctypes
import os
import shutil
import tempfile

import numpy as np

__all__ = ["Simulation", "run", "DeckError", "SolverError", "Body", "Joint", "library",
           "CONTACT_COLUMNS"]

# mbsStatus values (include/mbsim/error.h)
_DECK_STATUSES = {-1, -3, -4, -5, -6}  # io, syntax, deck, model, args
CONTACT_COLUMNS = ("shape_a", "shape_b", "status", "point_x", "point_y", "point_z", "normal_x",
                   "normal_y", "normal_z", "gap", "impulse_n", "impulse_t1", "impulse_t2",
                   "feature")


class DeckError(ValueError):
    """A deck (or an override) that cannot be run: the message starts with file:line:column
    where the deck says so; .file, .line, .column and .status hold them."""

    def __init__(self, message, file="", line=0, column=0, status=0):
        super().__init__(message)
        self.file, self.line, self.column, self.status = file, line, column, status


class SolverError(RuntimeError):
    """A run that failed: a step the solver could not take, an energy blow-up, a record that
    could not be written; .status is the run's status ("failed: ...")."""

    def __init__(self, message, status=""):
        super().__init__(message)
        self.status = status


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("file", ctypes.c_char * 512), ("line", ctypes.c_int),
                ("col", ctypes.c_int), ("msg", ctypes.c_char * 1024)]

    def text(self):
        buf = ctypes.create_string_buffer(2048)
        _lib().mbs_error_format(ctypes.byref(self), buf, len(buf))
        return buf.value.decode("utf-8", "replace")


class _Override(ctypes.Structure):
    _fields_ = [("path", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class _Options(ctypes.Structure):
    _fields_ = [("deck_path", ctypes.c_char_p), ("deck_text", ctypes.c_char_p),
                ("overrides", ctypes.POINTER(_Override)), ("noverrides", ctypes.c_int),
                ("override_option", ctypes.POINTER(ctypes.c_char_p))]


_LIB = None


def _candidates():
    env = os.environ.get("MBSIM_LIBRARY", "")
    if env:
        return [env]
    here = os.path.dirname(os.path.realpath(__file__))
    return [os.path.join(here, "..", "..", "build", "libmbsim.so"),  # a checkout
            os.path.join(here, "libmbsim.so"),
            os.path.join(here, "..", "..", "..", "libmbsim.so"),  # PREFIX/lib/python3/...
            os.path.join(here, "..", "..", "..", "..", "lib", "libmbsim.so"),  # share/...
            "libmbsim.so"]


def library():
    """The loaded libmbsim (ctypes.CDLL), loaded on first use."""
    global _LIB
    if _LIB is not None:
        return _LIB
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    else:
        raise ImportError("libmbsim.so not found (build it with `make all`, or set "
                          "MBSIM_LIBRARY): tried " + ", ".join(tried))
    P, I, D, L, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_long, ctypes.c_char_p
    E = ctypes.POINTER(_Error)
    sigs = {
        "mbs_run_create": (P, [ctypes.POINTER(_Options), E]),
        "mbs_run_destroy": (None, [P]),
        "mbs_run_warnings": (S, [P]),
        "mbs_run_start": (I, [P, S, S, P, E]),
        "mbs_run_attach": (I, [P, S, I, E]),
        "mbs_run_detach": (I, [P, ctypes.POINTER(L), E]),
        "mbs_run_record": (I, [P, E]),
        "mbs_run_step": (I, [P, E]),
        "mbs_run_advance": (I, [P, D, E]),
        "mbs_run_done": (I, [P]),
        "mbs_run_failure": (I, [P]),
        "mbs_run_status": (S, [P]),
        "mbs_run_finish": (I, [P, ctypes.POINTER(L), E]),
        "mbs_run_summary": (ctypes.c_size_t, [P, ctypes.c_char_p, ctypes.c_size_t]),
        "mbs_run_get": (L, [P, S, ctypes.POINTER(D), L, E]),
        "mbs_run_name": (S, [P, S, I]),
        "mbs_error_format": (None, [E, ctypes.c_char_p, ctypes.c_size_t]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _LIB = lib
    return lib


_lib = library


def _override_text(value):
    """a Python value as the YAML text of --set KEY=VALUE"""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_override_text(v) for v in value) + "]"
    raise TypeError("an override value must be a string, a number or a list, not %r" % (value,))


def _overrides(set):
    """[(key, text)] from a dict {key: value} or a list of "KEY=VALUE" strings"""
    if set is None:
        return []
    if isinstance(set, dict):
        return [(str(k), _override_text(v)) for k, v in set.items()]
    out = []
    for item in set:
        if isinstance(item, str):
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise DeckError("an override is KEY=VALUE, got %r" % item)
            out.append((key, value))
        else:
            key, value = item
            out.append((str(key), _override_text(value)))
    return out


class Body:
    """A body's kinematics at the current state (numpy copies)."""

    def __init__(self, name, position, orientation, velocity, angular_velocity):
        self.name = name
        self.position, self.orientation = position, orientation
        self.velocity, self.angular_velocity = velocity, angular_velocity

    def __repr__(self):
        return "Body(%r, position=%s)" % (self.name, self.position)


class Joint:
    """A joint at the current state: reaction (force, torque on its second body), joint
    point position, coordinates and rates (NaN beyond the joint's count)."""

    def __init__(self, name, reaction, position, coordinates, rates):
        self.name, self.reaction, self.position = name, reaction, position
        self.coordinates, self.rates = coordinates, rates

    def __repr__(self):
        return "Joint(%r, coordinates=%s)" % (self.name, self.coordinates)


class _Named(dict):
    """a dict keyed by name that also takes an index"""

    def __init__(self, names, make):
        super().__init__((n, make(i, n)) for i, n in enumerate(names))
        self._names = names

    def __getitem__(self, key):
        if isinstance(key, int):
            key = self._names[key]
        return super().__getitem__(key)


_ENERGIES = ("kinetic", "potential", "total", "external_work", "dissipated")
_CONTACT_ENERGIES = ("contact_dissipated", "impact_dissipated", "friction_dissipated",
                     "numerical_dissipation")


class Simulation:
    """A run of a deck in this process (docs/library.md).

    deck: the deck file (with text: the name its messages use); set: overrides as --set
    gives them, a dict {"solver.t_end": 2, "bodies.link1.mass": "3"} or a list of
    "KEY=VALUE" strings; text: the deck's YAML instead of reading the file; restart: a
    result file whose last record the run continues from. Raises DeckError."""

    def __init__(self, deck, set=None, text=None, restart=None):
        lib = _lib()
        self._run = None
        self._output = None
        pairs = _overrides(set)
        self._keep = [(k.encode(), v.encode()) for k, v in pairs]
        ovs = (_Override * max(1, len(pairs)))(*[_Override(k, v) for k, v in self._keep])
        opt = _Options(os.fsencode(deck) if deck is not None else b"<text>",
                       text.encode() if text is not None else None, ovs, len(pairs), None)
        err = _Error()
        run = lib.mbs_run_create(ctypes.byref(opt), ctypes.byref(err))
        if not run:
            raise DeckError(err.text(), err.file.decode("utf-8", "replace"), err.line, err.col,
                            err.status)
        self._run = run
        st = lib.mbs_run_start(run, os.fsencode(restart) if restart else None, None, None,
                               ctypes.byref(err))
        if st != 0:
            msg = err.text()
            self.close()
            if st in _DECK_STATUSES:
                raise DeckError(msg, err.file.decode("utf-8", "replace"), err.line, err.col,
                                st)
            raise SolverError(msg)
        self.warnings = [w for w in lib.mbs_run_warnings(run).decode("utf-8", "replace")
                         .split("\n") if w]
        self.body_names = self._names("bodies")
        self.joint_names = self._names("joints")
        self.coordinate_names = self._names("coordinates")

    # ---- life ----
    def close(self):
        """Release the run (an attached output is closed with the status it has)."""
        if self._run:
            if self._output:
                self._detach()
            _lib().mbs_run_destroy(self._run)
            self._run = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001: at interpreter exit the library may be gone
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._run:
            raise ValueError("the simulation is closed")
        return self._run

    def _names(self, kind):
        out, i = [], 0
        lib = _lib()
        while True:
            n = lib.mbs_run_name(self._handle(), kind.encode(), i)
            if n is None:
                return out
            out.append(n.decode("utf-8", "replace"))
            i += 1

    def _fail(self, st, err):
        raise SolverError(err.text(), self.status)

    # ---- stepping ----
    def step(self):
        """One step of the grid t_n = n dt (with its record when an output is attached and
        one is due). Raises SolverError when it fails or the run is over."""
        err = _Error()
        st = _lib().mbs_run_step(self._handle(), ctypes.byref(err))
        if st != 0:
            self._fail(st, err)

    def advance(self, t):
        """Steps until the time reaches t (on the grid; beyond t_end: to t_end)."""
        err = _Error()
        st = _lib().mbs_run_advance(self._handle(), float(t), ctypes.byref(err))
        if st != 0:
            self._fail(st, err)

    @property
    def done(self):
        """True once the last step is taken, or the run failed"""
        return bool(_lib().mbs_run_done(self._handle()))

    # ---- observing ----
    def get(self, what):
        """One quantity of the current state by its record name ("q", "bodies/position",
        "energy/kinetic", ...; docs/library.md) as a numpy array."""
        err = _Error()
        lib = _lib()
        n = lib.mbs_run_get(self._handle(), what.encode(), None, 0, ctypes.byref(err))
        if n < 0:
            raise (KeyError(what) if err.status == -6 else SolverError(err.text()))
        buf = np.empty(max(n, 1))
        lib.mbs_run_get(self._handle(), what.encode(),
                        buf.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), n,
                        ctypes.byref(err))
        return buf[:n]

    @property
    def time(self):
        return float(self.get("time")[0])

    @property
    def q(self):
        return self.get("q")

    @property
    def v(self):
        """the record's velocities (on the constraints), as /state/v"""
        return self.get("v")

    @property
    def bodies(self):
        pos = self.get("bodies/position").reshape(-1, 3)
        rot = self.get("bodies/orientation").reshape(-1, 3, 3)
        vel = self.get("bodies/velocity").reshape(-1, 3)
        om = self.get("bodies/angular_velocity").reshape(-1, 3)
        return _Named(self.body_names, lambda i, n: Body(n, pos[i], rot[i], vel[i], om[i]))

    @property
    def joints(self):
        rea = self.get("joints/reaction").reshape(-1, 6)
        pos = self.get("joints/position").reshape(-1, 3)
        co = self.get("joints/coordinates").reshape(-1, 3)
        ra = self.get("joints/rates").reshape(-1, 3)
        return _Named(self.joint_names, lambda i, n: Joint(n, rea[i], pos[i], co[i], ra[i]))

    @property
    def energy(self):
        """the record's energies [J]: kinetic, potential, total, external_work, dissipated
        (with contact shapes: the parts of the dissipation; with beams: strain)"""
        keys = list(_ENERGIES)
        if self._names("shapes"):
            keys += _CONTACT_ENERGIES
        out = {k: float(self.get("energy/" + k)[0]) for k in keys}
        if self._names("beams"):
            out["strain"] = float(self.get("energy/strain")[0])
        return out

    @property
    def momentum(self):
        return {"linear": self.get("momentum/linear"), "angular": self.get("momentum/angular")}

    @property
    def contacts(self):
        """(n x 14) rows of the contacts of the last step and since the last record
        (CONTACT_COLUMNS)"""
        return self.get("contacts").reshape(-1, len(CONTACT_COLUMNS))

    @property
    def status(self):
        return _lib().mbs_run_status(self._handle()).decode("utf-8", "replace")

    def summary(self):
        """the summary the command prints at the end (status, steps, Newton, energy, ...)"""
        lib = _lib()
        n = lib.mbs_run_summary(self._handle(), None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        lib.mbs_run_summary(self._handle(), buf, n + 1)
        return buf.value.decode("utf-8", "replace")

    # ---- output ----
    def save(self, path, overwrite=False):
        """Write this run to the result file at path from now on: a record of the current
        state, then one every output.every steps; closed (with the status) by finish() or
        close()."""
        if self._output:
            raise ValueError("the simulation writes %s already" % self._output)
        err = _Error()
        lib = _lib()
        if lib.mbs_run_attach(self._handle(), os.fsencode(path), int(bool(overwrite)),
                              ctypes.byref(err)) != 0:
            raise SolverError(err.text())
        self._output = path
        self.record()

    def record(self):
        """a record of the current state to the file of save() (once per step)"""
        err = _Error()
        if _lib().mbs_run_record(self._handle(), ctypes.byref(err)) != 0:
            raise SolverError(err.text())

    def _detach(self):
        err = _Error()
        n = ctypes.c_long(0)
        st = _lib().mbs_run_detach(self._run, ctypes.byref(n), ctypes.byref(err))
        self._output = None
        if st != 0:
            raise SolverError(err.text())
        return n.value

    def finish(self):
        """The final status ("completed", ...) into the output file, which is closed;
        returns the number of records written."""
        err = _Error()
        n = ctypes.c_long(0)
        st = _lib().mbs_run_finish(self._handle(), ctypes.byref(n), ctypes.byref(err))
        self._output = None
        if st != 0:
            raise SolverError(err.text())
        return n.value


def run(deck, set=None, output=None, text=None, overwrite=False):
    """The whole run of a deck in process, as `mbsim-run DECK --set ... -o OUTPUT` does:
    returns its result as mbsim.load returns it (every record in memory); with output, the
    file is kept there. Raises DeckError and SolverError (the file so far is kept at
    output)."""
    from . import load
    tmp = None
    if output is None:
        tmp = tempfile.mkdtemp(prefix="mbsim-")
        path = os.path.join(tmp, "run.h5")
    else:
        path = output
    try:
        with Simulation(deck, set=set, text=text) as sim:
            sim.save(path, overwrite=overwrite or tmp is not None)
            err = _Error()
            lib = _lib()
            while not lib.mbs_run_done(sim._run):
                if lib.mbs_run_step(sim._run, ctypes.byref(err)) != 0:
                    msg = err.text()
                    sim.finish()
                    raise SolverError(msg, sim.status)
            sim.finish()
        return load(path)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

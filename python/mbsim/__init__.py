"""mbsim: read mbsim-run result files (docs/output.md, "mbsim-run/1") with numpy and h5py,
and run decks in process (mbsim.Simulation, mbsim.run: docs/library.md).

    import sys; sys.path.insert(0, "python")     # a checkout (or: PYTHONPATH=python)
    import mbsim
    run = mbsim.load("build/quickstart.h5")
    run.time, run.energy["total"], run.q[:, run.coordinate_names.index("link1.phi.x")]
    run.body("link2")["position"][-1]       # centre of mass of link2 at the last record
    run.deck                                 # the deck text that produced the run
    run.energy_error()                       # relative energy error as the summary prints it
    mbsim.select(run, "joints/reaction[shoulder, Mz]")   # columns picked by name
    run.contacts(), run.contact_force("box")             # contact rows, forces on a body

Everything is read into memory when the file is loaded (the file is closed again), so a
run still being written can be loaded at any time: it shows the records flushed so far.

A result file is untrusted input: HDF5 itself crashes, loops or allocates without bound on
some damaged files. Every file is therefore read by a separate process with limits on its
CPU time, wall time and address space (read_isolated; MBSIM_READ_SECONDS, default 120, and
MBSIM_READ_MEMORY, default 4G), which sends the data back through a pipe; a file that cannot
be read, or is not what the tools read, raises ReadError (an OSError) with a message.
"""
import math
import os
import pickle
import resource
import signal
import stat
import threading

import h5py
import numpy as np

__all__ = ["Run", "load", "ReadError", "read_isolated", "read_result", "read_root_attrs",
           "datasets", "energy_balance", "energy_scale", "relative_energy_error", "columns",
           "select", "parse_spec", "reduce_series", "units", "write_csv", "csv_cell", "CSV_FORMULA",
           "Contacts", "REDUCTIONS"]


class ReadError(OSError):
    """A result file that cannot be read: missing, damaged, hostile, not an mbsim-run
    result, or larger than the limits of the reading process."""


# ---------- reading a file in a separate process ----------

def _env_number(name, default, suffixes=None):
    """a positive number from the environment ("4G" with suffixes), else default"""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    scale = 1
    if suffixes and text[-1:].upper() in suffixes:
        scale = suffixes[text[-1:].upper()]
        text = text[:-1]
    try:
        value = float(text) * scale
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


def read_limits():
    """(seconds, bytes): the CPU and wall time and the address space (beyond what the
    process uses when it starts reading) of a reading process"""
    seconds = _env_number("MBSIM_READ_SECONDS", 120.0)
    memory = _env_number("MBSIM_READ_MEMORY", 4.0 * 2 ** 30,
                         {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40})
    return seconds, int(memory)


def _size_text(n):
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale:
            return "%.3g %s" % (n / scale, unit)
    return "%d bytes" % n


def _address_space():
    """the address space of this process now [bytes], 0 when unknown"""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def read_isolated(path, reader, *args):
    """reader(path, budget, *args) in a child process: its value, or ReadError saying why
    there is none. The child limits its CPU time and address space (read_limits) before it
    opens the file; the parent kills it at the wall-time limit. HDF5 crashes (SIGSEGV,
    SIGABRT), loops or allocates gigabytes on some damaged files: that must end in a
    message, not take the tool down or hang it."""
    seconds, memory = read_limits()
    try:
        st = os.stat(path)
    except OSError as e:
        raise ReadError(e.strerror or str(e)) from None
    if not stat.S_ISREG(st.st_mode):
        # a FIFO would block the reader, a device never end
        raise ReadError("not a regular file")
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: limits, the reading, the answer pickled into the pipe
        code = 0
        try:
            os.close(rfd)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)  # HDF5's and glibc's complaints are not the tool's output
            cpu = max(1, int(math.ceil(seconds)))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            base = _address_space()
            if base > 0:
                hard = resource.getrlimit(resource.RLIMIT_AS)[1]
                limit = base + memory
                if hard != resource.RLIM_INFINITY:
                    limit = min(limit, hard)
                resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
            try:
                msg = ("ok", reader(path, memory, *args))
            except MemoryError:
                msg = ("error", "reading it needs more than the %s of memory the reader may "
                       "use (MBSIM_READ_MEMORY)" % _size_text(memory))
            except RecursionError:
                msg = ("error", "it is nested too deeply to be read")
            except ReadError as e:
                msg = ("error", str(e))
            except Exception as e:  # noqa: BLE001: h5py raises many kinds on a damaged file
                msg = ("error", "%s: %s" % (type(e).__name__, str(e)[:300] or "unreadable"))
            try:
                with os.fdopen(wfd, "wb") as w:
                    pickle.dump(msg, w, protocol=pickle.HIGHEST_PROTOCOL)
            except MemoryError:
                code = 3
        except BaseException:  # noqa: BLE001: nothing may escape into the parent's code
            code = 4
        finally:
            os._exit(code)
    os.close(wfd)
    timed_out = []

    def kill():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    def on_time():
        timed_out.append(True)
        kill()
    timer = threading.Timer(seconds, on_time)
    timer.daemon = True
    timer.start()
    answer = None
    try:
        with os.fdopen(rfd, "rb") as r:
            answer = pickle.load(r)
    except Exception:  # noqa: BLE001: a child that died half way leaves a broken stream
        answer = None
    finally:
        timer.cancel()
        if answer is None:
            kill()  # (a child still running without an answer is of no use)
        _, status = os.waitpid(pid, 0)
    if timed_out and answer is None:
        raise ReadError("reading it did not finish within %g s (MBSIM_READ_SECONDS): the "
                        "file is damaged or too large" % seconds)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            raise ReadError("reading it took more than %g s of CPU time (MBSIM_READ_SECONDS): "
                            "the file is damaged or too large" % seconds)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "?"
        raise ReadError("HDF5 crashed reading it (signal %d, %s): the file is damaged" %
                        (sig, name))
    if answer is None:
        code = os.waitstatus_to_exitcode(status)
        raise ReadError("the reading process ended without an answer (exit status %d%s)" %
                        (code, ": out of memory" if code == 3 else ""))
    kind, value = answer
    if kind != "ok":
        raise ReadError(value)
    return value


def _text(x):
    """An HDF5 string (bytes or str, scalar or array) as str or list of str; bytes that are
    not UTF-8 are kept as backslash escapes."""
    if isinstance(x, bytes):
        return x.decode("utf-8", "backslashreplace")
    if isinstance(x, np.ndarray):
        if x.dtype.kind in ("S", "O", "U"):
            return [_text(v) for v in x.tolist()]
        return x
    if isinstance(x, (list, tuple)):
        return [_text(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


# HDF5's own filters: deflate, shuffle, fletcher32, nbit, scaleoffset (the writer uses the
# first two); any other would make HDF5 look for a plugin library
_FILTERS = (1, 2, 3, 5, 6)


def _check_dataset(name, obj, budget):
    """refuse what the reader does not read: storage outside the file, filter plugins,
    types other than numbers and strings, declared sizes beyond the memory budget"""
    if obj.is_virtual or obj.external:
        raise ReadError("dataset /%s is stored outside the file (external or virtual): "
                        "refused" % name)
    dcpl = obj.id.get_create_plist()
    for i in range(dcpl.get_nfilters()):
        code = dcpl.get_filter(i)[0]
        if code not in _FILTERS:
            raise ReadError("dataset /%s needs the HDF5 filter %d, which is not HDF5's "
                            "own: refused" % (name, code))
    kind = obj.dtype.kind
    # numbers, strings, and compounds of them (a sweep's summary.h5); no references, no
    # opaque bytes
    compound = obj.dtype.names is not None and all(
        obj.dtype.fields[k][0].kind in "fiub" or
        h5py.check_string_dtype(obj.dtype.fields[k][0]) is not None for k in obj.dtype.names)
    if kind not in "fiub" and h5py.check_string_dtype(obj.dtype) is None and not compound:
        raise ReadError("dataset /%s has an HDF5 type the tools do not read (%s)" %
                        (name, obj.dtype))
    nbytes = float(np.prod([float(n) for n in obj.shape])) * obj.dtype.itemsize
    if nbytes > budget:
        raise ReadError("dataset /%s declares %s values (%s): more than the %s the reader "
                        "may use (MBSIM_READ_MEMORY)" % (
                            name, " x ".join(str(n) for n in obj.shape) or "1",
                            _size_text(nbytes), _size_text(budget)))
    return nbytes


def _attrs(obj):
    out = {}
    for k in obj.attrs:
        out[k] = _text(obj.attrs[k])
    return out


def read_result(path, budget):
    """(in the reading process) {"attrs": root attributes, "datasets": {path: array or
    list of str}, "dataset_attrs": {path: {name: value}}}, strings decoded"""
    data, dattrs = {}, {}
    total = [0.0]
    with h5py.File(path, "r") as f:
        attrs = _attrs(f)

        def visit(name, obj):
            if not isinstance(name, str):
                # h5py gives a name that is not UTF-8 (a damaged link) as bytes
                raise ReadError("an object's name is not text (%r): a damaged file" %
                                (name[:40],))
            if isinstance(obj, h5py.Dataset):
                total[0] += _check_dataset(name, obj, budget)
                if total[0] > budget:
                    raise ReadError("its datasets hold more than the %s the reader may use "
                                    "(MBSIM_READ_MEMORY)" % _size_text(budget))
                value = obj[()]
                if h5py.check_string_dtype(obj.dtype) is not None or \
                        obj.dtype.kind in ("S", "O"):
                    value = _text(value)
                data[name] = value
                dattrs[name] = _attrs(obj)
        f.visititems(visit)
    return {"attrs": attrs, "datasets": data, "dataset_attrs": dattrs}


def read_root_attrs(path, budget):
    """(in the reading process) the root attributes only"""
    with h5py.File(path, "r") as f:
        return _attrs(f)


def datasets(path, units=None):
    """Every dataset of a result file as {"group/name": numpy array} (strings decoded); the
    `units` attribute of each, where it has one, into the dict units if given."""
    raw = read_isolated(str(path), read_result)
    if units is not None:
        for k, a in raw["dataset_attrs"].items():
            if "units" in a:
                units[k] = a["units"]
    return raw["datasets"]


# ---------- units and names of columns ----------

# units of the datasets, for files written before datasets carried a `units` attribute
UNITS = {"time": "s", "energy": "J", "momentum/linear": "kg m/s", "momentum/angular": "kg m^2/s",
         "bodies/position": "m", "bodies/velocity": "m/s", "bodies/angular_velocity": "rad/s",
         "bodies/orientation": "1", "joints/position": "m", "joints/reaction": "N, N m",
         "joints/drive": "N, N m", "loads/force": "N, N m", "joints/coordinates": "rad or m",
         "joints/rates": "rad/s or m/s",
         "solver/iterations": "1", "solver/factorizations": "1", "solver/solves": "1",
         "solver/step_size": "s"}

_VEC = ("x", "y", "z")
_WRENCH = ("Fx", "Fy", "Fz", "Mx", "My", "Mz")
_AXES_WRENCH = ("F1", "F2", "F3", "M1", "M2", "M3")  # along/about a joint's axes d'_1..d'_3
_STRAIN = ("Gamma1", "Gamma2", "Gamma3", "K1", "K2", "K3")
_ROT = tuple("R%d%d" % (r + 1, c + 1) for r in range(3) for c in range(3))
_STATE_2D = ("state/q", "state/v", "state/scheme_velocity", "state/acceleration",
             "state/algorithmic_acceleration")


def units(run, path):
    """The units of a dataset: its `units` attribute, else those this version writes"""
    path = path.lstrip("/")
    if path in run.units:
        return run.units[path]
    for key in (path, path.split("/")[0]):
        if key in UNITS:
            return UNITS[key]
    return ""


def split_units(text):
    """A `units` text listing the columns' units ("1, index, index, m (3), N s (3: ...)")
    as one unit per column: items separated by commas outside parentheses, "U (k)" and
    "U (k: ...)" repeated k times, other remarks in parentheses dropped ("N s (on body b)"
    is ["N s"])"""
    items, depth, cur = [], 0, ""
    for ch in str(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    items.append(cur.strip())
    out = []
    for it in items:
        k = it.find("(")
        unit, rep = (it[:k].strip(), it[k + 1:]) if k >= 0 else (it, "")
        n = 1
        digits = ""
        for ch in rep:
            if not ch.isdigit():
                break
            digits += ch
        # "(3)" or "(3: ...)" is a count; "(0 open, 1 stick)" a remark
        if digits and len(digits) < 4 and rep[len(digits):len(digits) + 1] in (")", ":"):
            n = int(digits)
        out += [unit] * n
    return out


def _names_of(run, path, n):
    """labels of the second dimension of a dataset (bodies, joints, loads, coordinates),
    None when it has none of that length"""
    group = path.split("/")[0]
    names = {"bodies": run.bodies.get("names"), "joints": run.joints.get("names"),
             "loads": run.data.get("loads/names")}.get(group)
    if path in _STATE_2D or path == "state/multipliers":
        names = run.coordinate_names if path != "state/multipliers" else None
    if isinstance(names, list) and len(names) == n and all(isinstance(s, str) for s in names):
        return names
    return None


class Column(tuple):
    """(label, values [N], units) of one component, with where it came from: path, entity
    (body, joint, load or coordinate name; None for datasets of one entity), component
    (x, Fz, R12, ...; None for one value per entity) and index (its indices in the dataset
    after the first)"""

    def __new__(cls, label, values, unit, path, entity=None, component=None, index=()):
        self = tuple.__new__(cls, (label, values, unit))
        self.path, self.entity, self.component, self.index = path, entity, component, index
        return self

    label = property(lambda self: self[0])
    values = property(lambda self: self[1])
    unit = property(lambda self: self[2])


def _component_names(run, path, a, k):
    """names of the k components of each entity of dataset a (flattened trailing dims)"""
    group = path.split("/")[0]
    cols = run.dataset_attrs.get(path, {}).get("columns")
    if isinstance(cols, list) and len(cols) == k and all(isinstance(c, str) for c in cols):
        return list(cols)
    if path == "bodies/orientation" or (group == "beams" and path.endswith("/directors")):
        return list(_ROT)
    if group == "beams" and path.endswith("/strain") and k == 6:
        return list(_STRAIN)
    if path in ("joints/coordinates", "joints/rates"):
        return [str(i) for i in range(k)]
    if k == 3:
        return list(_VEC)
    if k == 6 and path in ("joints/reaction", "loads/force"):
        return list(_WRENCH)
    if k == 6 and path == "joints/drive":
        return list(_AXES_WRENCH)
    return [str(i) for i in range(k)]


def _virtual(run, path):
    """the columns of a derived series: contact_force:BODY, contact_torque:BODY"""
    kind, _, body = path.partition(":")
    f = run.contact_force(body, torque=True)
    sel = slice(0, 3) if kind == "contact_force" else slice(3, 6)
    u = "N" if kind == "contact_force" else "N m"
    return [Column("%s.%s" % (path, c), f[:, sel][:, i], u, path, None, c, (i,))
            for i, c in enumerate(_VEC)]


def _all_columns(run, path):
    """every column of a time series (Column), NaN-only padding included"""
    path = path.strip().lstrip("/")
    if path.startswith(("contact_force:", "contact_torque:")):
        return _virtual(run, path)
    if path not in run.data:
        raise KeyError("%s is not a time series of this run" % path)
    a = run.data[path]
    if not isinstance(a, np.ndarray) or a.dtype.kind not in "fiub" or a.ndim == 0 or \
            len(a) != len(run.time):
        raise KeyError("%s is not a time series of this run" % path)
    u = units(run, path)
    at = run.dataset_attrs.get(path, {})
    if a.ndim == 1:
        return [Column(path, a, u, path)]
    if a.ndim == 2:
        n = a.shape[1]
        names = _names_of(run, path, n)
        cu = at.get("column_units")
        cu = cu if isinstance(cu, list) and len(cu) == n else None
        if names is not None:
            return [Column("%s[%s]" % (path, names[i]), a[:, i], cu[i] if cu else u, path,
                           names[i], None, (i,)) for i in range(n)]
        comp = _component_names(run, path, a, n)
        per = split_units(u)
        return [Column("%s.%s" % (path, comp[i]) if n == 3 and comp[i] in _VEC else
                       "%s[%s]" % (path, comp[i]), a[:, i],
                       cu[i] if cu else per[i] if len(per) == n else u, path, None, comp[i],
                       (i,)) for i in range(n)]
    k = int(np.prod(a.shape[2:]))
    rows = a.reshape(a.shape[0], a.shape[1], k)
    comp = _component_names(run, path, a, k)
    names = _names_of(run, path, a.shape[1])
    ju = at.get("joint_units")
    ju = ju if isinstance(ju, list) and len(ju) == a.shape[1] else None
    per = split_units(u)
    out = []
    for j in range(rows.shape[1]):
        who = names[j] if names is not None else str(j)
        jper = split_units(ju[j]) if ju else None
        for c in range(k):
            if comp in (list(_WRENCH), list(_AXES_WRENCH)):
                cu = "N" if comp[c][0] == "F" else "N m"
            elif comp[0] == "Gamma1":
                cu = "1" if c < 3 else "1/m"
            elif jper is not None:
                cu = jper[c] if c < len(jper) else "none"
            elif len(per) == k:
                cu = per[c]
            else:
                cu = u
            out.append(Column("%s[%s].%s" % (path, who, comp[c]), rows[:, j, c], cu, path, who,
                              comp[c], (j,) + tuple(int(i) for i in np.unravel_index(
                                  c, a.shape[2:]))))
    return out


def columns(run, path):
    """The time series of one dataset as a list of (label, values [N], units): one column per
    component, labelled by body, joint, load or coordinate name and by x/y/z, Fx..Mz or the
    matrix entry; components that are NaN throughout (padding) are left out. Each column is
    a Column (a tuple with .path, .entity, .component and .index). KeyError when path is not
    a time series of the run. Also the derived series contact_force:BODY and
    contact_torque:BODY (Run.contact_force)."""
    return [c for c in _all_columns(run, path) if not np.all(np.isnan(c[1]))]


MAX_SPEC = 1000  # characters of one PATH[index, ...] spec


def parse_spec(spec):
    """"bodies/position[bob2, z]" as ("bodies/position", ["bob2", "z"]); no index: None.
    KeyError when it is not DATASET or DATASET[index, ...]. Linear in the length."""
    if not isinstance(spec, str) or len(spec) > MAX_SPEC:
        raise KeyError("'%s' is longer than %d characters" % (str(spec)[:60] + "...", MAX_SPEC))
    text = spec.strip()
    idx = None
    if text.endswith("]"):
        k = text.find("[")
        if k < 0:
            raise KeyError("'%s' is not DATASET or DATASET[index, ...]" % spec)
        idx = text[k + 1:-1]
        text = text[:k].rstrip()
    dset = text[1:] if text.startswith("/") else text
    if not dset or any(c in dset for c in "[]") or (idx is not None and "]" in idx) or \
            any(not c.isprintable() for c in dset):
        raise KeyError("'%s' is not DATASET or DATASET[index, ...]" % spec)
    tokens = [t.strip() for t in idx.split(",")] if idx is not None and idx.strip() else None
    return dset, tokens


def _matches(col, k, tok, shape):
    """whether index token tok (a name or a whole number, negative from the end) picks
    column col in dimension k + 1 of a dataset of the given shape (after the first)"""
    if k >= len(col.index):
        return False
    try:
        i = int(tok)
    except ValueError:
        i = None
    if i is not None:
        n = shape[k]
        return -n <= i < n and col.index[k] == i % n
    if k == 0 and col.entity is not None:
        return tok == col.entity
    if col.component is None:
        return False
    # a component name covers the trailing dimensions from here (R13 of a 3 x 3 matrix)
    if tok == col.component and (col.entity is None) == (k == 0):
        return True
    return tok in _VEC and shape[k] == 3 and col.index[k] == _VEC.index(tok)


def select(run, spec):
    """The columns of spec, "PATH" or "PATH[index, ...]": each index picks along the next
    dimension after time, by name (a body, joint, load or coordinate; a component such as
    x, Fz, Mz, R13 or a `columns` name) or by number (negative from the end); dimensions
    not given keep all their columns. E.g. joints/reaction[shoulder, Mz],
    bodies/position[link1] (x, y, z), state/q[link1.phi.x], contact_force:box[z].
    KeyError when the dataset or an index is unknown."""
    path, tokens = parse_spec(spec)
    cols = _all_columns(run, path)
    if not tokens:
        return [c for c in cols if not np.all(np.isnan(c[1]))]
    a = run.data.get(path)
    shape = a.shape[1:] if isinstance(a, np.ndarray) else (3,)
    if len(tokens) > max(1, len(shape)):
        raise KeyError("'%s': %d indices for records of shape %s" % (spec, len(tokens), shape))
    for k, tok in enumerate(tokens):
        picked = [c for c in cols if _matches(c, k, tok, shape)]
        if not picked:
            raise KeyError("'%s': no %s '%s' (%s)" % (
                spec, "entity or component" if k == 0 else "component", tok,
                _choices(cols, k)))
        cols = picked
    return cols


def _choices(cols, k):
    seen = []
    for c in cols:
        v = c.entity if k == 0 and c.entity is not None else c.component
        if v is not None and v not in seen:
            seen.append(v)
    text = ", ".join(seen[:12]) + (", ..." if len(seen) > 12 else "")
    return "known: " + text if text else "no names"


REDUCTIONS = ("final", "max", "min", "mean")


def reduce_series(run, values, how):
    """One number of a column over time: final (the last record), max, min, or mean (the
    time average, trapezoidal over the records; the value itself for a single record)"""
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0:
        return math.nan
    if how == "final":
        return float(v[-1])
    if how == "max":
        return float(np.max(v))
    if how == "min":
        return float(np.min(v))
    if how == "mean":
        t = np.asarray(run.time, dtype=np.float64)
        if len(v) == 1 or t[-1] == t[0]:
            return float(np.mean(v))
        return float(np.sum(0.5 * (v[1:] + v[:-1]) * np.diff(t)) / (t[-1] - t[0]))
    raise KeyError("unknown reduction '%s' (known: %s)" % (how, ", ".join(REDUCTIONS)))


# ---------- contacts ----------

class Contacts:
    """The rows of /contacts/table, one per contact of each record (docs/output.md), as
    arrays over all rows. A record lists every contact since the previous record: those of
    its last step, and those gone since (status 0, no impulse in the last step).

    record [R] (the record index), time [R] (of the record), body_a, body_b [R] (names:
    "ground", a body, or a beam node "cable[3]"), index_a, index_b [R] (as in the table),
    point, normal [R, 3], gap [R], impulse [R, 3] (normal, t1, t2 of the last step, N s),
    step [R] (that step's size, s), force_n [R] and force_t [R, 2] (the last step's impulse
    over its size, N), force [R, 3] (that force on body b in world components; NaN in files
    without /contacts/tangent1), impulse_since_record [R, 3] (world, on body b, N s; NaN in
    files without it), interval [R] (t_k - t_(k-1), 0 at the first record), mean_force
    [R, 3] (impulse_since_record / interval: the mean force on b over the interval; 0 at
    the first record), status [R] (0 open, 1 stick, 2 slip), offsets, count [N]; rows(k):
    the slice of record k's rows."""

    def __init__(self, run):
        d = run.data
        table = d.get("contacts/table")
        n = len(run.time)
        if table is None:
            table = np.zeros((0, 14))
            off = np.zeros(n, dtype=np.int64)
            cnt = np.zeros(n, dtype=np.int64)
        else:
            off, cnt = d.get("contacts/offsets"), d.get("contacts/count")
            if not (isinstance(table, np.ndarray) and table.ndim == 2 and table.shape[1] >= 14
                    and isinstance(off, np.ndarray) and isinstance(cnt, np.ndarray) and
                    off.shape == (n,) and cnt.shape == (n,)):
                raise ReadError("/contacts is not a table of this run's records")
            off, cnt = off.astype(np.int64), cnt.astype(np.int64)
            if np.any(cnt < 0) or np.any(off < 0) or np.any(off + cnt > len(table)):
                raise ReadError("/contacts/offsets and count point outside the table")
        rec = np.repeat(np.arange(n), cnt)
        take = np.concatenate([np.arange(o, o + c) for o, c in zip(off, cnt)]) if n else \
            np.zeros(0, dtype=np.int64)
        take = take.astype(np.int64)
        t = table[take]
        self.offsets = np.concatenate([[0], np.cumsum(cnt)[:-1]]).astype(np.int64) if n else off
        self.count = cnt
        self.record = rec
        times = np.asarray(run.time, dtype=np.float64)
        self.time = times[rec]
        self.index_a = t[:, 1].astype(np.int64)
        self.index_b = t[:, 2].astype(np.int64)
        self.body_a = [run.body_label(i) for i in self.index_a]
        self.body_b = [run.body_label(i) for i in self.index_b]
        self.point, self.normal, self.gap = t[:, 3:6], t[:, 6:9], t[:, 9]
        self.impulse = t[:, 10:13]
        self.status = t[:, 13].astype(np.int64)
        h = d.get("solver/step_size")
        step = np.asarray(h, dtype=np.float64)[rec] if isinstance(h, np.ndarray) and \
            h.shape == (n,) else np.full(len(rec), np.nan)
        self.step = step
        with np.errstate(divide="ignore", invalid="ignore"):
            self.force_n = np.where(step > 0, self.impulse[:, 0] / step, 0.0)
            self.force_t = np.where(step[:, None] > 0, self.impulse[:, 1:] / step[:, None], 0.0)
        t1 = self._aligned(d, "contacts/tangent1", table, take)
        t2 = np.cross(self.normal, t1)
        self.force = (self.force_n[:, None] * self.normal + self.force_t[:, :1] * t1 +
                      self.force_t[:, 1:] * t2)
        self.impulse_since_record = self._aligned(d, "contacts/impulse_since_record", table,
                                                  take)
        prev = np.concatenate([[times[0]], times[:-1]]) if n else times
        interval = (times - prev)[rec]
        self.interval = interval
        with np.errstate(divide="ignore", invalid="ignore"):
            self.mean_force = np.where(interval[:, None] > 0,
                                       self.impulse_since_record / interval[:, None], 0.0)

    @staticmethod
    def _aligned(d, path, table, take):
        a = d.get(path)
        if isinstance(a, np.ndarray) and a.ndim == 2 and a.shape == (len(table), 3):
            return a[take]
        return np.full((len(take), 3), np.nan)

    def __len__(self):
        return len(self.record)

    def rows(self, k):
        """the slice of record k's rows in these arrays"""
        return slice(int(self.offsets[k]), int(self.offsets[k] + self.count[k]))


# ---------- a run in memory ----------

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
    in files of models with beams); beam_order (beam names in the model's order); data
    (every dataset by path, e.g. data["bodies/position"]); dataset_attrs ({path: {name:
    value}}); units ({path: units attribute}).
    Raises ReadError when the file cannot be read or is not an mbsim-run result.
    """

    def __init__(self, path, raw=None):
        """raw: what read_result returned for path (read here when None)"""
        self.path = str(path)
        if raw is None:
            raw = read_isolated(self.path, read_result)
        self.attrs = raw["attrs"]
        self.data = raw["datasets"]
        self.dataset_attrs = raw["dataset_attrs"]
        self.units = {k: a["units"] for k, a in self.dataset_attrs.items()
                      if isinstance(a.get("units"), str)}
        d = self.data
        t = d.get("time")
        if t is None:
            raise ReadError("not an mbsim-run result: it has no /time")
        if not isinstance(t, np.ndarray) or t.dtype.kind not in "fiu":
            raise ReadError("not an mbsim-run result: /time holds text, not numbers")
        if t.ndim != 1:
            raise ReadError("not an mbsim-run result: /time has the shape %s, not [records]" %
                            (t.shape,))
        self.time = t.astype(np.float64)
        for k in ("bodies/names", "joints/names", "loads/names", "state/names"):
            if k in d and not (isinstance(d[k], list) and all(isinstance(s, str) for s in d[k])):
                raise ReadError("not an mbsim-run result: /%s is not a list of names" % k)
        names = d.get("state/names")
        if names is None:
            names = self.dataset_attrs.get("state/q", {}).get("names")
        self.coordinate_names = list(names) if isinstance(names, list) else []
        self.deck = self._attr_text("deck")
        self.status = self._attr_text("status")
        self.title = self._attr_text("title")
        self.energy = {k: d["energy/" + k] for k in
                       ("kinetic", "potential", "total", "external_work", "dissipated",
                        "strain")
                       if self._series("energy/" + k)}
        self.momentum = {k: d["momentum/" + k] for k in ("linear", "angular")
                         if self._series("momentum/" + k)}
        self.violation = d.get("constraints/violation") if self._series(
            "constraints/violation") else None
        self.iterations = d.get("solver/iterations") if self._series(
            "solver/iterations") else None
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
        # the model's order of the beams (contact rows count their nodes in it): that of
        # their coordinates "<beam>[0].phi.x"
        order = []
        for c in self.coordinate_names:
            if c.endswith("].phi.x") and "[" in c:
                b = c[:c.rindex("[")]
                if b in self.beams and b not in order:
                    order.append(b)
        self.beam_order = order + sorted(b for b in self.beams if b not in order)

    def _attr_text(self, key):
        v = self.attrs.get(key, "")
        return v if isinstance(v, str) else str(v)

    def _series(self, path):
        """a numeric dataset with one row per record"""
        a = self.data.get(path)
        return isinstance(a, np.ndarray) and a.dtype.kind in "fiub" and a.ndim >= 1 and \
            len(a) == len(self.time)

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
        """{position, directors, strain} of one beam over time (docs/output.md)."""
        return self.beams[name]

    def coordinate(self, name):
        """q and v of one coordinate (by label, e.g. "link1.phi.x") over time."""
        i = self.coordinate_names.index(name)
        return self.q[:, i], self.v[:, i]

    def body_label(self, index):
        """The name of body index `index` of /contacts/table: "ground" for -1, a body's name,
        or a beam node "cable[3]" for nbody + k (k counted over the beams' nodes in the
        model's order, docs/decks.md "Contacts")."""
        index = int(index)
        names = self.bodies["names"]
        if index == -1:
            return "ground"
        if 0 <= index < len(names):
            return names[index]
        k = index - len(names)
        for b in self.beam_order:
            pos = self.beams[b].get("position")
            nodes = pos.shape[1] if isinstance(pos, np.ndarray) and pos.ndim == 3 else 0
            if 0 <= k < nodes:
                return "%s[%d]" % (b, k)
            k -= nodes
        return "#%d" % index

    def contacts(self):
        """The contact rows of every record (Contacts)."""
        return Contacts(self)

    def contact_force(self, body, other=None, torque=False):
        """[N, 3]: the total mean contact force on `body` (a name, "ground", or a beam node
        "cable[3]") at each record over the interval since the previous record, from
        /contacts/impulse_since_record (0 at the first record); with other, only the
        contacts with that body. torque=True: [N, 6], the force and the torque about the
        body's centre of mass (sum of (point - centre) x force with the record's contact
        points and centre: exact while they stay put over the interval, e.g. for every step
        recorded or a body at rest; the ground and beam nodes: about the world origin)."""
        c = self.contacts()
        n = len(self.time)
        out = np.zeros((n, 6 if torque else 3))
        nb = len(self.bodies["names"])
        known = {"ground"} | set(self.bodies["names"]) | \
            {self.body_label(nb + k) for k in range(self._nodes())}
        if body not in known or (other is not None and other not in known):
            raise KeyError("no body '%s' in this run" % (body if body not in known else other))
        on_b = np.array([b == body for b in c.body_b], dtype=bool)
        on_a = np.array([a == body for a in c.body_a], dtype=bool)
        if other is not None:
            on_b &= np.array([a == other for a in c.body_a], dtype=bool)
            on_a &= np.array([b == other for b in c.body_b], dtype=bool)
        sign = np.where(on_b, 1.0, 0.0) - np.where(on_a, 1.0, 0.0)
        f = c.mean_force * sign[:, None]
        f = np.where(sign[:, None] != 0.0, f, 0.0)  # (NaN of other rows stays out)
        np.add.at(out[:, :3], c.record, f)
        if torque:
            centre = np.zeros((n, 3))
            names = self.bodies["names"]
            pos = self.bodies.get("position")
            if body in names and isinstance(pos, np.ndarray):
                centre = pos[:, names.index(body)]
            r = c.point - centre[c.record]
            np.add.at(out[:, 3:], c.record, np.cross(r, f))
        return out

    def _nodes(self):
        return sum(self.beams[b]["position"].shape[1] for b in self.beam_order
                   if isinstance(self.beams[b].get("position"), np.ndarray) and
                   self.beams[b]["position"].ndim == 3)

    def energy_balance(self):
        """E - W_ext + D: constant when the scheme conserves energy."""
        return energy_balance(self)

    def energy_error(self):
        """max_t |B(t) - B(0)| / E_scale, B = E - W_ext + D, E_scale = max(|E(0)|,
        max_t (B(0) + W_ext - D - V)): the kinetic energy the balance allows, which does not
        grow when the motion blows up (what mbsim-run's summary prints)."""
        return relative_energy_error(self)


def load(path):
    """Read the result file at path into a Run (ReadError when it cannot be read)."""
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
    """The relative energy error of the summary; 0 for a run that never moved, NaN when empty
    or without energies."""
    if len(run.time) == 0 or "total" not in run.energy or "potential" not in run.energy:
        return float("nan")
    E = energy_balance(run)
    denom = energy_scale(run)
    err = float(np.max(np.abs(E - E[0])))
    if denom == 0.0:
        return 0.0 if err == 0.0 else float("inf")
    return err / denom


# ---------- CSV ----------

CSV_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text, from_file=True):
    """One CSV cell as RFC 4180 writes it: in double quotes, quotes inside doubled (newlines
    and commas stay inside the quotes). Text from a file (names, units, messages) that a
    spreadsheet would read as a formula (starting with = + - @, a tab or CR) gets a leading
    ' so that it shows as text."""
    text = str(text)
    if from_file and text.startswith(CSV_FORMULA):
        text = "'" + text
    return '"%s"' % text.replace('"', '""')


def write_csv(run, paths, out):
    """Write the time series of the datasets at paths (all time series when empty; a path may
    pick columns, "joints/reaction[shoulder, Mz]") as CSV to the text stream out: a header
    row "time [s]", "<label> [units]", ..., one row per record, numbers with 17
    significant digits (they read back exactly). Every cell is quoted (RFC 4180, CRLF line
    ends); header cells that a spreadsheet would take for a formula are prefixed with '."""
    if not paths:
        paths = sorted(k for k, v in run.data.items()
                       if k != "time" and isinstance(v, np.ndarray) and v.ndim >= 1
                       and v.dtype.kind in "fiub" and len(v) == len(run.time))
    cols = [("time", run.time, "s")]
    for p in paths:
        cols += select(run, p)
    out.write(",".join(csv_cell("%s [%s]" % (label, u) if u else label)
                       for label, _, u in cols) + "\r\n")
    for i in range(len(run.time)):
        out.write(",".join('"%r"' % float(v[i]) for _, v, _ in cols) + "\r\n")


# ---------- the command-line tools ----------

def guarded(prog, main, argv):
    """main(argv) for a command-line tool: an exception that escapes it (a file that holds
    what no check foresaw) ends as "PROG: error: ..." with exit status 2, never a traceback
    (MBSIM_DEBUG=1 shows the traceback too); Ctrl-C exits 130."""
    import sys
    import traceback
    try:
        return main(argv)
    except KeyboardInterrupt:
        return 130
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001: the tool's last word on anything unforeseen
        if os.environ.get("MBSIM_DEBUG", "") not in ("", "0"):
            traceback.print_exc()
        print("%s: error: %s: %s" % (prog, type(e).__name__, str(e)[:300] or "(no message)"),
              file=sys.stderr)
        return 2


# ---------- runs in process (libmbsim through ctypes) ----------

from .simulation import (CONTACT_COLUMNS, Body, DeckError, Joint, Simulation,  # noqa: E402
                         SolverError, library, run)

__all__ += ["Simulation", "run", "DeckError", "SolverError", "Body", "Joint", "library",
            "CONTACT_COLUMNS"]

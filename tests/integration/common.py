"""Helpers shared by the integration tests: run mbsim-run, read its HDF5 output. Each test
works in its own temporary directory, removed when it ends (MBSIM_KEEP_TMP=1 keeps it)."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MBSIM = os.environ.get("MBSIM", os.path.join(ROOT, "build", "mbsim-run"))
PYTHON_BIN = os.environ.get("PYTHON", "/usr/bin/python3")
QUICK = os.environ.get("QUICK", "") not in ("", "0")
TMP = tempfile.mkdtemp(prefix="mbsim-test-")
if os.environ.get("MBSIM_KEEP_TMP", "") in ("", "0"):
    atexit.register(shutil.rmtree, TMP, ignore_errors=True)
failures = []


def load_script(path, name):
    """a Python script without the .py suffix (scripts/bench/*, scripts/mbsim-*) as a module"""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def deck(name):
    return os.path.join(ROOT, "decks", name)


def write_deck(name, text):
    """Write text as the deck TMP/name; return its path."""
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(deck_path, *args, out=None, check=True, timeout=600, quiet=True):
    """Run mbsim-run (with --quiet unless quiet is false); return (returncode, stdout, stderr,
    output path)."""
    if out is None:
        out = os.path.join(TMP, "run%d.h5" % len(os.listdir(TMP)))
    cmd = [MBSIM, deck_path, "-o", out] + (["--quiet"] if quiet else []) + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    return p.returncode, p.stdout, p.stderr, out


def load(path):
    """Every dataset of a result as numpy arrays, plus the root attributes."""
    res = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                res[name] = obj[()]
        f.visititems(visit)
        res["attrs"] = {k: f.attrs[k] for k in f.attrs}
        res["q_names"] = [n.decode() if isinstance(n, bytes) else n
                          for n in f["state/names"][()]]
    return res


def energy_error(r):
    """Relative energy error: max |B - B0| / E_scale with B = E - W + D and E_scale the
    largest of |E0| and the kinetic energy the balance allows, B0 + W - D - V (which does not
    grow when the motion blows up)."""
    W, D = r["energy/external_work"], r["energy/dissipated"]
    B = r["energy/total"] - W + D
    allowed = B[0] + W - D - r["energy/potential"]
    denom = max(abs(r["energy/total"][0]), np.max(allowed))
    return np.max(np.abs(B - B[0])) / denom


def balance(r):
    """(max |E - E0 - W + D| with E = kinetic + potential, the energy monitor's scale:
    max(|E0|, the kinetic energy the balance allows, B0 + W - D - V))"""
    T, V = r["energy/kinetic"], r["energy/potential"]
    W, D = r["energy/external_work"], r["energy/dissipated"]
    B = T + V - W + D
    scale = max(abs(T[0] + V[0]), np.max(B[0] + W - D - V))
    return np.max(np.abs(B - B[0])), scale


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def skip(what, why):
    """a check that cannot run here: printed as SKIP with the reason, counted by
    tests/run-integration (never silently dropped)"""
    print("SKIP  %s: %s" % (what, why))


def done():
    sys.exit(1 if failures else 0)


def python_package(what):
    """the Python package (python/mbsim) over the libmbsim.so beside the command under test
    (a sanitizer build has its own); imported and returned. A sanitizer build's library needs
    the AddressSanitizer runtime, which the Python interpreter does not load: the script's
    checks are then one SKIP (counted by the runner) and it ends here; the command's own tests
    cover that build"""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    lib = os.path.join(os.path.dirname(os.path.abspath(MBSIM)), "libmbsim.so")
    if os.path.exists(lib):
        os.environ.setdefault("MBSIM_LIBRARY", lib)
    import mbsim
    from mbsim import simulation
    try:
        simulation.library()
    except ImportError as e:
        if "__asan" not in str(e) and "__ubsan" not in str(e):
            raise
        skip(what, "the sanitizer build's libmbsim.so needs the AddressSanitizer runtime, "
             "which the Python interpreter does not load")
        done()
    return mbsim


def attempt(what, path, *args):
    """run a deck; a run that fails is one failed check (the caller skips the rest of its
    section on None), else the loaded result"""
    return attempt_summary(what, path, *args, quiet=True)[0]


def attempt_summary(what, path, *args, quiet=False, out=None):
    """attempt(), returning (the loaded result or None, the run's stdout: its summary unless
    quiet); out: the output path (default: a new one under TMP)"""
    rc, stdout, err, out = run(path, *args, out=out, check=False, quiet=quiet)
    r = load(out) if rc == 0 else None
    status = None
    if r is not None:
        status = r["attrs"].get("status")
        status = status.decode() if isinstance(status, bytes) else status
    ok = rc == 0 and status is not None and status.startswith("completed")
    check(ok, "%s runs: exit %d, status %r%s" % (what, rc, status,
                                                 "" if ok else ": " + err.strip()[-300:]))
    return (r if ok else None), stdout


def contact_rows(r, k):
    """the /contacts/table rows of record k"""
    off, cnt = r["contacts/offsets"], r["contacts/count"]
    return r["contacts/table"][off[k]:off[k] + cnt[k]]


def heavy_top_deck(solver):
    """the heavy symmetric top of the conservation tests (m = 1, inertia (0.05, 0.05, 0.08)
    about the centre of mass 0.5 from the tip, tilted 30 deg, spinning at 50 rad/s, on a
    spherical joint at the origin) with the given `solver:` flow mapping"""
    return """mbsim: 1
title: heavy symmetric top
gravity: [0, 0, -9.81]
bodies:
  - name: top
    mass: 1.0
    inertia: [0.05, 0.05, 0.08]
    position: [0.25, 0, 0.4330127018922193]
    orientation: {axis: [0, 1, 0], angle_deg: 30}
    angular_velocity: [25.0, 0, 43.30127018922193]
joints:
  - {name: tip, type: spherical, bodies: [ground, top], point: [0, 0, 0]}
solver: %s
output: {xdmf: false}
""" % solver


def crossings(t, x):
    """times where x changes sign (linear interpolation)"""
    k = np.nonzero(np.sign(x[1:]) != np.sign(x[:-1]))[0]
    return t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])


def bead_ring_deck(k0, t_end, planar=False, extra=""):
    """a 50 g bead launched at 4 m/s along a free flexible ring (8 quadratic elements,
    circumference about 1 m, closed by a fixed joint) from its node k0, guided by a
    slide_on_beam joint named guide (extra: more of the joint's keys, as ", param: x"), in
    the x-y plane if planar; the deck text and the ring's nodes"""
    ne, rr, v0 = 8, 1.0 / (2.0 * np.pi), 4.0
    ang = np.linspace(0.0, 2.0 * np.pi, 2 * ne + 1)
    nodes = [(rr * np.cos(a), rr * np.sin(a)) for a in ang]
    nodes[-1] = nodes[0]
    text = """mbsim: 1
title: bead around a ring
%(planar)sbodies:
  - {name: bead, mass: 0.05, inertia: [1.0e-6, 1.0e-6, 1.0e-6], position: [%(bx).17g, %(by).17g, 0],
     velocity: [%(vx).17g, %(vy).17g, 0]}
beams:
  - name: ring
    nodes: [%(nodes)s]
    order: 2
    up: [0, 0, 1]
    section: {E: 2.5e10, nu: 0.3, density: 2500.0, rectangle: [0.005, 0.005]}
joints:
  - {name: close, type: fixed, bodies: ["ring[0]", "ring[-1]"], point: [%(rx).17g, 0, 0]}
  - {name: guide, type: slide_on_beam, bodies: [bead, ring], point: [0, 0, 0]%(extra)s}
solver: {integrator: em, dt: 1.0e-3, t_end: %(t_end)g}
output: {every: 1, xdmf: false}
""" % {"planar": "planar: {normal: [0, 0, 1]}\n" if planar else "",
       "bx": nodes[k0][0], "by": nodes[k0][1], "vx": -v0 * np.sin(ang[k0]),
       "vy": v0 * np.cos(ang[k0]), "rx": rr, "extra": extra, "t_end": t_end,
       "nodes": ", ".join("[%.17g, %.17g, 0]" % p for p in nodes)}
    return text, nodes

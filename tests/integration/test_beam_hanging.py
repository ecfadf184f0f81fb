"""A beam given by its end points and its `length` (docs/decks.md "Beams": length, sag)
starts on the curve of that length hanging between them under gravity, its nodes at equal
arc lengths, against curves computed here with scipy (nothing of the program's geometry):
- `sag: catenary` (the default), ends at different heights: every node on the catenary
  y = a (cosh((x - c) / a) - cosh(c / a)) whose a and c scipy's brentq finds from the span,
  rise and length (1e-9 m), at the arc length L k / (n - 1) from the first end (1e-9 m);
- `sag: parabola`: every node on the parabola of that length (its sag from brentq over
  scipy's quad of the arc length), at equal arc lengths (quad, 1e-8 m);
- the catenary under `static` with pinned ends and default settings (gravity raised with the
  load factor to t = 1): completes, moves less
  than 1 mm (the cable's stretch and bending), and the ends' vertical reactions carry its
  weight rho A l g, l the length of the node polygon the elements span (1e-9);
- errors at file:line:column: a length not longer than the chord, sag without length,
  length with nodes, no gravity."""
import math

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq

from common import attempt, check, done, run, write_deck

L, X1, Z1, N = 11.477, 10.0, 2.0, 20
RHO, R, G = 7800.0, 0.005, 9.81


def cable(name, extra="", elements=N, integrator="em", joints="", timing="dt: 0.001, t_end: 0.002"):
    return write_deck(name, f"""mbsim: 1
gravity: [0, 0, -{G}]
beams:
  - name: cable
    from: [0, 0, 0]
    to: [{X1}, 0, {Z1}]
    length: {L}
    elements: {elements}
    section: {{E: 2.0e11, nu: 0.3, density: {RHO}, circle: {R}}}
{extra}{joints}
solver: {{integrator: {integrator}, {timing}}}
output: {{xdmf: false}}
""")


what = "catenary"
r = attempt(what, cable("cat.yaml"))
if r is not None:
    p = r["beams/cable/position"][0]
    a = brentq(lambda a: 2 * a * math.sinh(X1 / (2 * a)) - math.sqrt(L ** 2 - Z1 ** 2), 0.1, 1e3,
               xtol=1e-15, rtol=1e-15)
    c = X1 / 2 - a * math.atanh(Z1 / L)
    x, z = p[:, 0], p[:, 2]
    on = np.max(np.abs(z - a * (np.cosh((x - c) / a) - math.cosh(c / a))))
    s = a * (np.sinh((x - c) / a) - math.sinh(-c / a))
    want = L * np.arange(len(x)) / (len(x) - 1)
    check(on <= 1e-9 and np.max(np.abs(p[:, 1])) == 0.0,
          "%s: every node on scipy's catenary (a = %.6f m): %.1e m" % (what, a, on))
    check(np.max(np.abs(s - want)) <= 1e-9,
          "%s: nodes at equal arc lengths L k / n: %.1e m" % (what, np.max(np.abs(s - want))))

what = "parabola"
r = attempt(what, cable("par.yaml", "    sag: parabola\n"))
if r is not None:
    p = r["beams/cable/position"][0]

    def arc(d, x):
        return quad(lambda t: math.sqrt(1 + (Z1 / X1 - 4 * d * (X1 - 2 * t) / X1 ** 2) ** 2),
                    0, x, epsabs=1e-13, epsrel=1e-13)[0]

    d = brentq(lambda d: arc(d, X1) - L, 0.0, L, xtol=1e-14)
    x, z = p[:, 0], p[:, 2]
    on = np.max(np.abs(z - (Z1 * x / X1 - 4 * d * x * (X1 - x) / X1 ** 2)))
    s = np.array([arc(d, xi) for xi in x])
    want = L * np.arange(len(x)) / (len(x) - 1)
    check(on <= 1e-8, "%s: every node on scipy's parabola (sag %.6f m): %.1e m" % (what, d, on))
    check(np.max(np.abs(s - want)) <= 1e-8,
          "%s: nodes at equal arc lengths: %.1e m" % (what, np.max(np.abs(s - want))))

what = "catenary under static, pinned ends"
pins = """joints:
  - {name: a, type: spherical, bodies: [ground, "cable[0]"], point: [0, 0, 0]}
  - {name: b, type: spherical, bodies: [ground, "cable[-1]"], point: [%g, 0, %g]}
""" % (X1, Z1)
# static raises gravity with the load factor min(t, 1): to t = 1, the cable's full weight
r = attempt(what, cable("static.yaml", joints=pins, elements=40, integrator="static",
                        timing="dt: 0.25, t_end: 1.0"))
if r is not None:
    p = r["beams/cable/position"]
    move = np.max(np.abs(p[-1] - p[0]))
    check(move <= 1e-3, "%s: the equilibrium is within %.2e m of the catenary (< 1 mm: "
          "stretch and bending)" % (what, move))
    fz = r["joints/reaction"][-1][:, 2]
    # the joints' forces on the cable's end nodes hold it up against its weight: rho A g times
    # the length of the node polygon (the elements' straight chords of the curve)
    chords = np.sum(np.linalg.norm(np.diff(p[0], axis=0), axis=1))
    weight = RHO * math.pi * R ** 2 * chords * G
    check(abs(np.sum(fz) - weight) <= 1e-9 * weight,
          "%s: the ends' vertical reactions carry the weight rho A l g = %.9f N (l = %.6f m, "
          "the chords): %.9f N (1e-9)" % (what, weight, chords, np.sum(fz)))

for name, extra, length, where, msg in (
        ("short.yaml", "", 10.1, ":7:13:", "is not longer than the distance between from and to"),
        ("sagonly.yaml", "    sag: parabola\n", None, ":9:10:", "sag: the curve of a hanging beam "
         "needs its 'length'"),
        ("bad_sag.yaml", "    sag: hyperbola\n", L, ":10:10:", "sag: expected catenary or parabola")):
    text = open(cable(name, extra)).read()
    text = text.replace("    length: %s\n" % L, "" if length is None else "    length: %s\n" % length)
    rc, _, err, _ = run(write_deck(name, text), check=False)
    check(rc == 1 and where in err and msg in err, "%s: exit 1 at %s '%s' (got %d: %s)"
          % (name, where, msg, rc, err.strip()[-200:]))
text = open(cable("nograv.yaml")).read().replace("gravity: [0, 0, -%s]\n" % G, "")
rc, _, err, _ = run(write_deck("nograv.yaml", text), check=False)
check(rc == 1 and "sags along gravity, and the deck has none" in err,
      "no gravity: exit 1 (%s)" % err.strip()[-160:])
done()

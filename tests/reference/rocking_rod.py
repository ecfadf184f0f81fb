#!/usr/bin/python3
"""Independent event-driven reference for the rigid rocking rod of seed 002 sec. 6.2
(Zander 2008, Table 6.2, figure 6.4), written without any code of mbsim-run.

The rod moves in the vertical x-z plane (z up); its state is q = (x, z, phi) of the centre of
mass and the angle of its axis t = (cos phi, sin phi) against the x axis (counterclockwise
positive, so phi > 0 lifts the right end), u = (vx, vz, omega). Two pins are fixed at
p_1 = (-a, 0) and p_2 = (+a, 0); they touch the rod's lower face, the line at distance hh = h/2
below the axis, whose outward normal is -n with n = (-sin phi, cos phi).

  gap        g_i   = n . (c - p_i) - hh
  normal     g'_i  = W_N,i . u,  W_N,i = (n, -t . (c - p_i))
             g''_i = W_N,i . u' + wN_i,  wN_i = -2 omega t . v - omega^2 n . (c - p_i)
  tangential gT_i  = W_T,i . u,  W_T,i = (t, n . (c - p_i))   (velocity of the rod's material
             point at the pin along t)
             gT'_i = W_T,i . u' + wT_i,  wT_i = 2 omega n . v - omega^2 t . (c - p_i)

Phases:
  free flight   closed form (parabola, constant omega); the next impact is the first root of a
                pin gap, bracketed on a fine grid and refined by brentq.
  impact        M (u+ - u-) = sum W_N P_N + W_T P_T over the closed pins; each closed pin is
                open (P = 0, g'+ + e g'- >= 0), sticking (g'+ = -e g'-, gT+ = 0, |P_T| <= mu P_N)
                or slipping (g'+ = -e g'-, P_T = -mu P_N sign(gT+)); every combination is solved
                as a linear system and the one whose inequalities hold is taken (it must be
                unique; the script says so if it is not).
  contact phase the same enumeration on acceleration level (lift-off g'' >= 0 with lambda = 0,
                or lambda_N >= 0 with stick / slip), then scipy's solve_ivp (DOP853, rtol 1e-12)
                with events: a free pin's gap reaching 0 (impact), lambda_N reaching 0
                (lift-off), |lambda_T| reaching mu lambda_N (stick -> slip), gT reaching 0
                (slip -> stick or reversal). Friction work while slipping is integrated as D.

Energy E = T + m g z (pins at z = 0). Self-checks: E constant in free flight and while
sticking, E + D constant while slipping (1e-10 relative), the gap of a closed pin and (sticking)
the drift of the material point stay below 1e-9, the first impact time by root finding equals
the closed form sqrt(2 g_1(0) / (g cos phi0)).

Run it to print the reference numbers; reference() returns them as a dict.
"""
import itertools
import sys

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

# ---- parameters: seed 002 (Zander 2008) sec. 6.2, Table 6.2
# (each value with the row of the table it comes from, quoted as the table reads)
RHO = 7.88e3       # Table 6.2 "mass density rho 7.88e3 kg/m^3"
L = 0.8            # Table 6.2 "rod length l 0.8 m"
H = 20.0e-3        # Table 6.2 "cross sectional height and width h, w: 20.0e-3 m, 80.0e-3 m"
W = 80.0e-3        #   (height in the plane of motion, width out of it)
A = 0.1            # Table 6.2 "half distance between point obstacles a 0.1 m"
G = 9.81           # Table 6.2 "gravity g 9.81 m/s^2"
MU = 0.3           # Table 6.2 "friction coefficient mu 0.3"
H0 = 0.5           # Table 6.2 "initial values h 0.5 m": height of the centre of gravity above
                   #   the level of the pins (sec. 6.2 "Mechanical Setup"); the rod starts at rest
PHI0 = np.radians(3.0)  # Table 6.2 "initial values phi_0 3.0 deg": the tilt, left end lower
E_RESTITUTION = 0.0     # sec. 6.2: "All contacts are modeled rigid without impact restitution"
# The modulus E (2.1e9 ... 2.1e11) and the theta-integrator's dt = 1e-6, theta = 0.5 belong to
# the flexible model and the seed's time stepping; the rigid model does not use them.

M = RHO * L * H * W                      # 10.0864 kg
J = M * (L ** 2 + H ** 2) / 12.0         # about the out-of-plane axis through the centre
HH = H / 2.0
PINS = np.array([[-A, 0.0], [A, 0.0]])   # pin 1 under the lower (left) end
MASS = np.diag([M, M, J])
MINV = np.diag([1.0 / M, 1.0 / M, 1.0 / J])
FORCE = np.array([0.0, -M * G, 0.0])
TOL = 1e-10


def frame(phi):
    return np.array([np.cos(phi), np.sin(phi)]), np.array([-np.sin(phi), np.cos(phi)])


def gap(q, i):
    t, n = frame(q[2])
    return n @ (q[:2] - PINS[i]) - HH


def kin(q, u, i):
    """W_N, wN, W_T, wT of pin i (see the module doc)"""
    t, n = frame(q[2])
    r = q[:2] - PINS[i]
    v, om = u[:2], u[2]
    WN = np.array([n[0], n[1], -t @ r])
    WT = np.array([t[0], t[1], n @ r])
    wN = -2.0 * om * (t @ v) - om ** 2 * (n @ r)
    wT = 2.0 * om * (n @ v) - om ** 2 * (t @ r)
    return WN, wN, WT, wT


def energy(q, u):
    return 0.5 * u @ MASS @ u + M * G * q[1]


# ---- the impact problem, exactly, by enumerating open / stick / slip+ / slip- per closed pin
def impact(q, um, closed, e=E_RESTITUTION, mu=MU):
    sols = []
    for modes in itertools.product(("open", "stick", "slip+", "slip-"), repeat=len(closed)):
        # unknowns: u+ (3), then per pin P_N, P_T
        nc = len(closed)
        nu = 3 + 2 * nc
        Amat = np.zeros((nu, nu))
        b = np.zeros(nu)
        Amat[:3, :3] = MASS
        b[:3] = MASS @ um
        rows = 3
        info = []
        for k, (i, mode) in enumerate(zip(closed, modes)):
            WN, _, WT, _ = kin(q, um, i)
            jn, jt = 3 + 2 * k, 4 + 2 * k
            Amat[:3, jn] = -WN
            Amat[:3, jt] = -WT
            info.append((i, mode, WN, WT, jn, jt))
            if mode == "open":
                Amat[rows, jn] = 1.0
                Amat[rows + 1, jt] = 1.0
            else:
                Amat[rows, :3] = WN              # Newton: g'+ = -e g'-
                b[rows] = -e * (WN @ um)
                if mode == "stick":
                    Amat[rows + 1, :3] = WT
                else:                            # P_T = -mu P_N sign(gT+)
                    s = 1.0 if mode == "slip+" else -1.0
                    Amat[rows + 1, jt] = 1.0
                    Amat[rows + 1, jn] = s * mu
            rows += 2
        try:
            x = np.linalg.solve(Amat, b)
        except np.linalg.LinAlgError:
            continue
        up = x[:3]
        scale = max(1.0, np.max(np.abs(um))) * 1e-10
        ok = True
        for (i, mode, WN, WT, jn, jt) in info:
            PN, PT = x[jn], x[jt]
            gNp, gNm, gTp = WN @ up, WN @ um, WT @ up
            if mode == "open":
                ok &= gNp + e * gNm >= -scale
            else:
                ok &= PN >= -scale * M
                if mode == "stick":
                    ok &= abs(PT) <= mu * PN + scale * M
                elif mode == "slip+":
                    ok &= gTp >= -scale
                else:
                    ok &= gTp <= scale
        if ok:
            sols.append((modes, up, {i: (x[jn], x[jt]) for (i, _, _, _, jn, jt) in info}))
    if not sols:
        raise RuntimeError("impact: no stick/slip/open combination is consistent")
    for s in sols[1:]:
        if np.max(np.abs(s[1] - sols[0][1])) > 1e-8 * max(1.0, np.max(np.abs(um))):
            raise RuntimeError("impact: %d consistent modes with different velocities" % len(sols))
    # prefer the one with the fewest active pins among equivalent solutions
    sols.sort(key=lambda s: sum(m != "open" for m in s[0]))
    return sols[0]


# ---- the contact problem on acceleration level for a given mode
def accel(q, u, modes, mu=MU):
    """modes: {pin: 'stick' | 'slip+' | 'slip-'} for pins held closed; returns u', lambdas"""
    pins = sorted(modes)
    nc = len(pins)
    nu = 3 + 2 * nc
    Amat = np.zeros((nu, nu))
    b = np.zeros(nu)
    Amat[:3, :3] = MASS
    b[:3] = FORCE
    for k, i in enumerate(pins):
        WN, wN, WT, wT = kin(q, u, i)
        jn, jt = 3 + 2 * k, 4 + 2 * k
        Amat[:3, jn] = -WN
        Amat[:3, jt] = -WT
        Amat[jn, :3] = WN
        b[jn] = -wN
        if modes[i] == "stick":
            Amat[jt, :3] = WT
            b[jt] = -wT
        else:
            s = 1.0 if modes[i] == "slip+" else -1.0
            Amat[jt, jt] = 1.0
            Amat[jt, jn] = s * mu
    x = np.linalg.solve(Amat, b)
    lam = {i: (x[3 + 2 * k], x[4 + 2 * k]) for k, i in enumerate(pins)}
    return x[:3], lam


def select_modes(q, u, closed, mu=MU, why=(None, None)):
    """the consistent acceleration-level mode of the pins with g = 0 and g' = 0; why is the
    event that ended the previous phase: at the boundary it ended on both the old and the new
    mode satisfy the inequalities (with equality), so the old one is excluded"""
    cands = []
    for choice in itertools.product(("open", "stick", "slip+", "slip-"), repeat=len(closed)):
        modes = {}
        ok = True
        for i, m in zip(closed, choice):
            if i == why[1] and (why[0] == "slip" and m == "stick"
                                or why[0] == "liftoff" and m != "open"):
                ok = False
            _, _, WT, _ = kin(q, u, i)
            gT = WT @ u
            if abs(gT) > 1e-9 and m == "stick":
                ok = False                      # a sliding pin cannot stick at once
            if gT > 1e-9 and m == "slip-" or gT < -1e-9 and m == "slip+":
                ok = False
            if m != "open":
                modes[i] = m
        if not ok:
            continue
        try:
            ud, lam = accel(q, u, modes, mu)
        except np.linalg.LinAlgError:
            continue
        for i, m in zip(closed, choice):
            WN, wN, WT, wT = kin(q, u, i)
            gT = WT @ u
            if m == "open":
                ok &= WN @ ud + wN >= -1e-9
            else:
                lN, lT = lam[i]
                ok &= lN >= -1e-9
                if m == "stick":
                    ok &= abs(lT) <= mu * lN + 1e-9
                elif abs(gT) <= 1e-9:           # slip starting from rest: acceleration agrees
                    ok &= (WT @ ud + wT) * (1.0 if m == "slip+" else -1.0) >= -1e-9
        if ok:
            cands.append(modes)
    if not cands:
        raise RuntimeError("no consistent contact mode")
    cands.sort(key=lambda md: len(md))
    return cands[0]


def free_flight(q0, u0, t0, tmax):
    """closed form until the first pin gap root (brentq) or tmax; returns (t, pin) or None"""
    def state(t):
        s = t - t0
        q = q0 + u0 * s + 0.5 * np.array([0.0, -G, 0.0]) * s ** 2
        u = u0 + np.array([0.0, -G, 0.0]) * s
        return q, u
    grid = np.linspace(t0, tmax, 20001)
    best = None
    for i in range(2):
        gs = np.array([gap(state(t)[0], i) for t in grid])
        k = np.nonzero((gs[:-1] > 0) & (gs[1:] <= 0))[0]
        if len(k):
            ti = brentq(lambda t: gap(state(t)[0], i), grid[k[0]], grid[k[0] + 1],
                        xtol=1e-15, rtol=1e-15)
            if best is None or ti < best[0]:
                best = (ti, i)
    return best, state


def contact_phase(q0, u0, t0, modes, tmax, checks):
    """integrate the mode {pin: stick/slip+/slip-} until an event; returns (t, q, u, D, why)"""
    pins = sorted(modes)
    free = [i for i in range(2) if i not in modes]

    def rhs(t, y):
        q, u = y[:3], y[3:6]
        ud, lam = accel(q, u, modes)
        dD = 0.0
        for i in pins:
            if modes[i] != "stick":
                _, _, WT, _ = kin(q, u, i)
                dD -= lam[i][1] * (WT @ u)      # friction power, >= 0
        return np.concatenate([u, ud, [dD]])

    events = []
    for i in free:
        ev = (lambda i: lambda t, y: gap(y[:3], i))(i)
        ev.terminal, ev.direction = True, -1
        events.append(("impact", i, ev))
    for i in pins:
        ev = (lambda i: lambda t, y: accel(y[:3], y[3:6], modes)[1][i][0])(i)
        ev.terminal, ev.direction = True, -1
        events.append(("liftoff", i, ev))
        if modes[i] == "stick":
            ev = (lambda i: lambda t, y: MU * accel(y[:3], y[3:6], modes)[1][i][0]
                  - abs(accel(y[:3], y[3:6], modes)[1][i][1]))(i)
            ev.terminal, ev.direction = True, -1
            events.append(("slip", i, ev))
        else:
            # the sliding velocity returning to zero (it starts at zero or with the sign of
            # the mode, so only the crossing back counts)
            ev = (lambda i: lambda t, y: kin(y[:3], y[3:6], i)[2] @ y[3:6])(i)
            ev.terminal, ev.direction = True, (-1 if modes[i] == "slip+" else 1)
            events.append(("stick", i, ev))
    y0 = np.concatenate([q0, u0, [0.0]])
    sol = solve_ivp(rhs, (t0, tmax), y0, method="DOP853", rtol=1e-12, atol=1e-14,
                    events=[e[2] for e in events], dense_output=True)
    # self-checks over the phase on a fine grid
    ts = np.linspace(t0, sol.t[-1], 400)
    ys = sol.sol(ts)
    E0 = energy(q0, u0)
    eb = max(abs(energy(y[:3], y[3:6]) + y[6] - E0) for y in ys.T) / energy_scale()
    checks["energy"] = max(checks["energy"], eb)
    gmax = max(abs(gap(y[:3], i)) for y in ys.T for i in pins) if pins else 0.0
    checks["gap"] = max(checks["gap"], gmax)
    for i in pins:
        if modes[i] == "stick":                  # the material point at the pin stays there
            t_, n_ = frame(q0[2])
            body = np.array([t_ @ (PINS[i] - q0[:2]), n_ @ (PINS[i] - q0[:2])])
            drift = 0.0
            for y in ys.T:
                t1, n1 = frame(y[2])
                drift = max(drift, np.linalg.norm(y[:2] + body[0] * t1 + body[1] * n1 - PINS[i]))
            checks["drift"] = max(checks["drift"], drift)
    why = ("end", None)
    for k, (kind, i, _) in enumerate(events):
        if len(sol.t_events[k]) and abs(sol.t_events[k][0] - sol.t[-1]) < 1e-14:
            why = (kind, i)
    y = sol.y[:, -1]
    return sol.t[-1], y[:3], y[3:6], y[6], why


def energy_scale():
    return M * G * H0


def simulate(n_impacts=3, t_after=0.02, verbose=False):
    """from release to n_impacts impacts (or t_after past the last one reached)"""
    checks = {"energy": 0.0, "gap": 0.0, "drift": 0.0}
    q = np.array([0.0, H0, PHI0])
    u = np.zeros(3)
    t = 0.0
    impacts = []
    phases = []
    # free flight
    hit, state = free_flight(q, u, t, 2.0)
    t1, pin = hit
    g10 = gap(q, pin)
    closed_form = np.sqrt(2.0 * g10 / (G * np.cos(PHI0)))
    ts = np.linspace(0.0, t1, 200)
    checks["energy"] = max(abs(energy(*state(s)) - energy(q, u)) for s in ts) / energy_scale()
    q, u = state(t1)
    t = t1
    Dtot = 0.0
    tend = None
    while True:
        closed = [i for i in range(2) if abs(gap(q, i)) < 1e-9]
        Em = energy(q, u)
        modes, up, P = impact(q, u, closed)
        # the pins that hit (closing velocity), as against pins already in contact
        hitting = [i for i in closed if kin(q, u, i)[0] @ u < -1e-9]
        impacts.append({"t": t, "pin": hitting, "closed": closed,
                        "modes": dict(zip(closed, modes)), "u_minus": u.copy(),
                        "u_plus": up.copy(), "impulses": P, "E_minus": Em,
                        "E_plus": energy(q, up), "D_before": Dtot, "q": q.copy()})
        u = up
        why = (None, None)
        if len(impacts) == n_impacts:
            tend = t + t_after
        # contact phases until the next impact
        while True:
            closed = [i for i in range(2) if abs(gap(q, i)) < 1e-9 and
                      abs(kin(q, u, i)[0] @ u) < 1e-9]
            modes = select_modes(q, u, closed, why=why) if closed else {}
            tmax = tend if tend is not None else t + 2.0
            if not modes:
                hit, state = free_flight(q, u, t, tmax)
                if hit is None:
                    q, u = state(tmax)
                    t = tmax
                    why = ("end", None)
                else:
                    q, u = state(hit[0])
                    t = hit[0]
                    why = ("impact", hit[1])
                phases.append((t, "free", why))
            else:
                t_old = t
                t, q, u, D, why = contact_phase(q, u, t, modes, tmax, checks)
                Dtot += D
                phases.append((t_old, t, dict(modes), why))
            if verbose:
                print("  phase", phases[-1])
            if len(phases) > 200:
                raise RuntimeError("more than 200 phases: mode switching does not settle")
            if why[0] in ("impact", "end"):
                break
        if why[0] == "end":
            break
    return {"impacts": impacts, "checks": checks, "t1_closed_form": closed_form,
            "phases": phases, "E0": M * G * H0, "q_end": q, "u_end": u, "t_end": t,
            "D_friction": Dtot}


def reference():
    """the numbers the integration test compares with (energies E = T + m g z, pins at z = 0)"""
    s = simulate(n_impacts=3)
    imp = s["impacts"]
    return {
        "mass": M, "inertia": J, "E0": s["E0"],
        "t1": imp[0]["t"], "pin1": imp[0]["pin"], "t1_closed_form": s["t1_closed_form"],
        "u_after_1": imp[0]["u_plus"], "modes_1": imp[0]["modes"], "impulse_1": imp[0]["impulses"],
        "E_after_1": imp[0]["E_plus"],
        "t2": imp[1]["t"], "pin2": imp[1]["pin"], "u_after_2": imp[1]["u_plus"],
        "modes_2": imp[1]["modes"], "impulse_2": imp[1]["impulses"], "E_after_2": imp[1]["E_plus"],
        "t3": imp[2]["t"], "pin3": imp[2]["pin"], "E_after_3": imp[2]["E_plus"],
        "phases": s["phases"], "checks": s["checks"],
    }


def main():
    r = reference()
    names = {0: "pin 1 (x = -a)", 1: "pin 2 (x = +a)"}
    print("rigid rocking rod, seed 002 sec. 6.2, Table 6.2 (m = %.4f kg, J = %.6f kg m^2)"
          % (r["mass"], r["inertia"]))
    print("E0 = m g h = %.10f J" % r["E0"])
    print("first impact:  t1 = %.12f s on %s (closed form %.12f s)"
          % (r["t1"], ", ".join(names[i] for i in r["pin1"]), r["t1_closed_form"]))
    print("  modes %s, impulses %s" % (r["modes_1"], r["impulse_1"]))
    print("  after: vx = %.10f, vz = %.10f m/s, omega = %.10f rad/s"
          % tuple(r["u_after_1"]))
    print("  energy after: %.10f J" % r["E_after_1"])
    print("second impact: t2 = %.12f s on %s" % (r["t2"], ", ".join(names[i] for i in r["pin2"])))
    print("  modes %s, impulses %s" % (r["modes_2"], r["impulse_2"]))
    print("  after: vx = %.10f, vz = %.10f m/s, omega = %.10f rad/s"
          % tuple(r["u_after_2"]))
    print("  energy after: %.10f J" % r["E_after_2"])
    print("third impact:  t3 = %.12f s on %s, energy after %.10f J"
          % (r["t3"], ", ".join(names[i] for i in r["pin3"]), r["E_after_3"]))
    print("phases:")
    for p in r["phases"]:
        print("  ", p)
    c = r["checks"]
    print("self-checks: energy (E + D) drift %.2e of m g h, closed-pin gap %.2e m, sticking "
          "point drift %.2e m, t1 - closed form %.2e s"
          % (c["energy"], c["gap"], c["drift"], r["t1"] - r["t1_closed_form"]))
    ok = (c["energy"] <= 1e-10 and c["gap"] <= 1e-9 and c["drift"] <= 1e-9
          and abs(r["t1"] - r["t1_closed_form"]) <= 1e-12)
    print("self-checks", "pass" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""decks/beams/robot_cable.yaml (seed 000 sec. 8.2): the KUKA-DLR lightweight robot, written as
a `chains:` DH table, grips the plug of a flexible cable at t = 1 s (a holder releases it as an
engaging `fixed` joint takes it) and bends the cable, its seven joints driven by computed-torque
control along a smooth reference. Run to t = 1.5 s (the approach to 1 s, the hand-over, the
start of the bending) to keep the test short; the shipped run to 6 s takes about 13 s of CPU.
- E - E0 - W + D closes to round-off (W: the computed torques' work, the only source; D: the
  capture's loss);
- every joint follows its reference (two quintic start-stop profiles, computed here) to
  round-off;
- the hand-over: the holder holds up to the record at 1 s, the grip after it; the plug rests
  until then; the arm arrives at rest, so the capture takes out (to round-off) nothing;
- no halved steps, and few Newton iterations per step;
- the holder, the grip, the socket and the clamp hold (constraint violation at round-off);
- the strain energy is positive, of the size the cable's bending takes: against the bending
  energy sum 1/2 EI kappa^2 ds computed here from the angles between neighbouring nodes'
  tangents (a geometric estimate that does not use the beam element's strain measures), and
  against 1/2 sum C_k Gamma_k^2 l_e from the recorded section strains and the section's
  stiffnesses computed here from E, nu and the radius;
- --check lists the chain's seven links and joints."""
import re
import subprocess

import numpy as np

from common import MBSIM, TMP, balance, check, deck, done, load

DECK = deck("beams/robot_cable.yaml")
T_END = 1.5
out = TMP + "/robot_cable.h5"
p = subprocess.run([MBSIM, DECK, "-o", out, "--set", "solver.t_end=%g" % T_END],
                   capture_output=True, text=True, timeout=600)
check(p.returncode == 0, "robot_cable.yaml runs to t = %g s (exit %d%s)"
      % (T_END, p.returncode, ": " + p.stderr[-300:] if p.returncode else ""))
if p.returncode != 0:
    done()
check("redundant:" not in p.stdout, "neither phase repeats a row: nothing dropped (holder and "
      "grip together would repeat five of the grip's)")
r = load(out)
t = r["time"]

# energy balance
err, scale = balance(r)
check(err / scale < 1e-12, "E - E0 - W + D closes: %.2g J of %.3g J (relative %.2g)"
      % (err, scale, err / scale))
W = r["energy/external_work"][-1]
check(abs(W) > 1.0, "the computed torques did work on the arm and cable: W = %.3g J" % W)

# tracking: the references of the deck, d x quintic(t / 1) + v x quintic((t - 1) / 4)
def quintic(u):
    u = np.clip(u, 0, 1)
    return 6 * u ** 5 - 15 * u ** 4 + 10 * u ** 3


ref = (np.outer(quintic(t), np.radians([20, -15, 0, 20, 0, -20, 0])) +
       np.outer(quintic((t - 1.0) / 4.0), np.radians([60, 15, 0, -25, 0, 10, 45])))
names = [n.decode() for n in r["joints/names"]]
idx = [names.index("lwr.joint%d" % (i + 1)) for i in range(7)]
track = np.max(np.abs(r["joints/coordinates"][:, idx, 0] - ref))
check(track < 1e-10, "the seven joints follow their references: max error %.2g rad" % track)
moved = np.max(np.abs(r["joints/coordinates"][-1, idx, 0]))
check(moved > 0.2, "the arm moved: up to %.2f rad by t = %g s" % (moved, T_END))

# the hand-over at t = 1 s
i1 = int(np.argmin(np.abs(t - 1.0)))
act = r["joints/active"]
hk, gk = names.index("holder"), names.index("grip")
check(np.all(act[: i1 + 1, hk] == 1) and np.all(act[i1 + 1:, hk] == 0) and
      np.all(act[: i1 + 1, gk] == 0) and np.all(act[i1 + 1:, gk] == 1),
      "the holder holds up to the record at t = 1 s, the grip after it")
bodies = [n.decode() for n in r["bodies/names"]]
vp = r["bodies/velocity"][:, bodies.index("plug")]
vf = np.abs(r["bodies/velocity"][i1, bodies.index("lwr.link7")]).max()
check(np.abs(vp[: i1 + 1]).max() == 0.0 and np.abs(vp[-1]).max() > 0.01,
      "the plug rests in the holder until t = 1 s, then moves with the arm (%.3f m/s at t = %g s)"
      % (np.abs(vp[-1]).max(), T_END))
D = r["energy/capture_dissipated"][-1]
check(vf < 1e-12 and 0.0 <= D < 1e-12 and np.all(r["energy/dissipated"] == r["energy/capture_dissipated"]),
      "the arm arrives at rest (flange %.1e m/s at t = 1 s): the capture takes out %.1e J, the "
      "only dissipation" % (vf, D))

# step control and Newton
dt = 5e-3
halved = int(np.sum(r["solver/step_size"][1:] < dt * (1 - 1e-9)))
m = re.search(r"step control: (\d+) steps rejected", p.stdout)
rejected = int(m.group(1)) if m else -1
check(halved == 0 and rejected == 0,
      "no halved steps (%d records after a smaller step, %d steps rejected)" % (halved, rejected))
it = r["solver/iterations"][1:]
check(np.mean(it) < 15 and np.max(it) < 60,
      "Newton iterations per step: mean %.1f, max %d" % (np.mean(it), np.max(it)))
viol = np.max(r["constraints/violation"])
check(viol < 1e-10, "holder, grip, socket, clamp and the joints hold: violation %.2g" % viol)

# strain energy: positive and plausible
E, NU, RAD = 2.0e8, 0.45, 0.006
G = E / (2 * (1 + NU))
A, I = np.pi * RAD ** 2, np.pi * RAD ** 4 / 4
Vs = r["energy/strain"]
X, D = r["beams/cable/position"], r["beams/cable/directors"]
k = len(t) - 1
tang = D[k][:, :, 0]  # d1 of each node (column 0)
ds = np.linalg.norm(np.diff(X[k], axis=0), axis=1)
ang = np.arccos(np.clip(np.sum(tang[1:] * tang[:-1], axis=1), -1, 1))
bend = 0.5 * E * I * np.sum(ang ** 2 / ds)
check(Vs[k] > 0.1 and np.all(Vs >= -1e-12),
      "strain energy positive: %.3g J at t = %g s" % (Vs[k], t[k]))
check(0.95 * bend < Vs[k] < 1.5 * bend,
      "strain energy %.3g J against the geometric bending estimate sum EI/2 kappa^2 ds = %.3g J "
      "from the nodes' tangents (the rest: torsion, shear, stretch)" % (Vs[k], bend))
C = np.array([E * A, 6 / 7 * G * A, 6 / 7 * G * A, G * 2 * I, E * I, E * I])
gam = r["beams/cable/strain"][k]
est = 0.5 * np.sum(gam ** 2 * C) * 0.7 / gam.shape[0]
check(abs(est - Vs[k]) < 0.05 * Vs[k],
      "strain energy %.4g J against 1/2 sum C Gamma^2 l_e from the recorded strains: %.4g J"
      % (Vs[k], est))

# --check lists the chain
p = subprocess.run([MBSIM, DECK, "--check"], capture_output=True, text=True, timeout=120)
want = ["lwr: standard convention, base ground, 7 links: bodies lwr.link1 .. lwr.link7, "
        "joints lwr.joint1 .. lwr.joint7", "  lwr.link7: rigid, mass 0.8 kg",
        "  lwr.joint7: revolute, lwr.link6 - lwr.link7", "  grip: fixed, lwr.link7 - plug",
        "tau7: joint_torque on joint lwr.joint7, computed torque"]
missing = [w for w in want if w not in p.stdout]
check(p.returncode == 0 and not missing, "--check lists the chain's links and joints%s"
      % ("" if not missing else ": missing %s" % missing))
done()

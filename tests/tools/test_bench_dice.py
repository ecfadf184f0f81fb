"""scripts/bench/dice without its peers: the scene (50 cubes of 0.1 kg, nothing touching at
t = 0, all inside the box, rotations that are what they say), the mbsim-run deck it writes
(YAML with the keys of the deck reference: bodies, ground planes, contact entries, the
moreau solver; its bodies as mbsim-run's own reader lists them with --check), the MJCF
(well-formed, 50 free bodies, 5 planes), the rest test, the drivers' output parser and the
table with its ratios. Runs in about a second; neither MuJoCo nor Siconos is needed."""
import itertools
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import yaml
from scipy.spatial.transform import Rotation

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
from common import MBSIM, ROOT, TMP, check, done, load_script, skip  # noqa: E402

dice = load_script(os.path.join(ROOT, "scripts", "bench", "dice"), "bench_dice")

sc = dice.scene(1e-3, 2.0)
check(sc == dice.scene(1e-3, 2.0), "scene: deterministic")
D = sc["dice"]
check(len(D) == 50 and [d["name"] for d in D] == ["die%d" % i for i in range(1, 51)],
      "scene: die1..die50")

# rotations: the quaternion is the rotation by angle about axis (scipy), small, not zero
ok = True
for d in D:
    w, x, y, z = d["quaternion"]
    r1 = Rotation.from_quat([x, y, z, w])
    r2 = Rotation.from_rotvec(d["angle"] * np.asarray(d["axis"]))
    ok &= np.allclose(r1.as_matrix(), r2.as_matrix(), atol=1e-14)
    ok &= 0.15 <= d["angle"] <= 0.40 and abs(np.linalg.norm(d["axis"]) - 1) < 1e-14
check(ok, "scene: quaternions are the axis-angle rotations, 0.15-0.40 rad")

# nothing touches at t = 0: cube corners (rotated) inside the box, above the floor; every
# pair of dice separated along some axis of the 15 of the separating axis theorem
half = sc["edge"] / 2
corners = np.array(list(itertools.product((-half, half), repeat=3)))
R = [Rotation.from_quat(d["quaternion"][1:] + d["quaternion"][:1]).as_matrix() for d in D]
X = [np.asarray(d["position"]) for d in D]
world = [X[i] + corners @ R[i].T for i in range(50)]
check(all(np.all(np.abs(c[:, :2]) < sc["half_width"] - 0.005) and np.all(c[:, 2] > 0.05)
          for c in world), "scene: every corner inside the walls and 5 cm above the floor")


def separated(i, j, R=R, world=world):
    axes = [R[i][:, k] for k in range(3)] + [R[j][:, k] for k in range(3)]
    axes += [np.cross(R[i][:, k], R[j][:, m]) for k in range(3) for m in range(3)]
    for n in axes:
        if np.linalg.norm(n) < 1e-12:
            continue
        pi, pj = world[i] @ n, world[j] @ n
        if pi.max() < pj.min() or pj.max() < pi.min():
            return True
    return False


check(all(separated(i, j) for i in range(50) for j in range(i + 1, 50)),
      "scene: no two dice overlap at t = 0 (separating axes)")

# the deck: YAML with the documented keys
text = dice.dice_deck(sc, every=5)
deck = yaml.safe_load(text)
check(deck["mbsim"] == 1 and deck["gravity"] == [0, 0, -9.81], "deck: header and gravity")
b = deck["bodies"]
check(len(b) == 50 and all(x["shape"] == {"box": [0.1, 0.1, 0.1]} and "collision" not in x
                           for x in b),
      "deck: 50 bodies, shape box 0.1, collision left to its default (the shape)")
check(all(abs(x["density"] * 0.1 ** 3 - 0.1) < 1e-15 for x in b), "deck: density gives 0.1 kg")
check(all(x["position"] == d["position"] and x["orientation"]["quaternion"] == d["quaternion"]
          for x, d in zip(b, D)), "deck: positions and quaternions of the scene, round-tripped")
planes = deck["ground"]["collision"]
check(len(planes) == 5 and all(set(p) == {"name", "plane"} and
                                set(p["plane"]) == {"point", "normal"} for p in planes),
      "deck: ground.collision holds five named planes (point, normal)")
inside = np.zeros(3) + [0, 0, 0.3]
check(all((inside - np.asarray(p["plane"]["point"])) @ np.asarray(p["plane"]["normal"]) > 0
          for p in planes), "deck: every plane's normal points into the box")
c = {e["name"]: e for e in deck["contacts"]}
check(c["dice_ground"]["between"] == ["die*", "ground"] and
      c["dice_dice"]["between"] == ["die*", "die*"] and
      all(e["law"] == "unilateral" and e["friction"] == 0.3 and e["restitution"] == 0.0
          for e in c.values()), "deck: contacts dice-ground and dice-dice, unilateral, 0.3, 0")
s = deck["solver"]
check(s == {"dt": 1e-3, "t_end": 2.0} and deck["output"] == {"every": 5, "xdmf": False},
      "deck: solver dt and t_end only (default settings), output")

# mbsim-run's own reader on the bodies (contacts and moreau are not needed for that)
if os.path.exists(MBSIM):
    plain = dict(deck)
    del plain["ground"], plain["contacts"]
    plain["solver"] = {"integrator": "em", "dt": 1e-3, "t_end": 2.0}
    p_deck = os.path.join(TMP, "dice_bodies.yaml")
    with open(p_deck, "w") as f:
        yaml.safe_dump(plain, f)
    p = subprocess.run([MBSIM, p_deck, "--check"], capture_output=True, text=True, timeout=60)
    listed = {}
    for ln in p.stdout.splitlines():
        m = re.match(r"\s+(die\d+): rigid, mass (\S+) kg, inertia (\S+), (\S+), (\S+) kg m\^2, "
                     r"at \[(\S+), (\S+), (\S+)\] m", ln)
        if m:
            listed[m.group(1)] = [float(v) for v in m.groups()[1:]]
    I = 0.1 * 0.1 ** 2 / 6  # a cube's moment of inertia, m a^2 / 6
    check(p.returncode == 0 and "bodies:       50 (50 rigid" in p.stdout and len(listed) == 50 and
          all(np.allclose(listed[d["name"]], [0.1, I, I, I] + d["position"], rtol=1e-5)
              for d in D),
          "deck: mbsim-run --check lists 50 rigid dice of 0.1 kg, inertia m a^2/6, at the "
          "scene's centres (exit %d %s)" % (p.returncode, (p.stderr or "").strip()[:200]))
else:
    skip("deck: mbsim-run --check", "no binary at %s" % MBSIM)

# MJCF: well-formed, 5 planes, 50 free bodies of one box of 0.1 kg, the scene's step
root = ET.fromstring(dice.mjcf(sc))
wb = root.find("worldbody")
check(root.find("option").get("timestep") == "0.001" and
      len([g for g in wb.findall("geom") if g.get("type") == "plane"]) == 5 and
      len(wb.findall("body")) == 50 and
      all(bb.find("freejoint") is not None and bb.find("geom").get("mass") == "0.10000000000000001"
          for bb in wb.findall("body")), "mjcf: 5 planes, 50 free bodies of 0.1 kg, timestep")

# at rest
still = {"die%d" % i: ([0.1, 0.2, 0.05], [0.001, 0, 0], [0, 0.01, 0]) for i in range(50)}
check(dice.at_rest(still)[0], "at_rest: slow dice inside the box are at rest")
moving = dict(still, die7=([0.1, 0.2, 0.05], [0, 0.02, 0], [0, 0, 0]))
out = dict(still, die7=([0.52, 0.2, 0.05], [0, 0, 0], [0, 0, 0]))
below = dict(still, die7=([0.1, 0.2, -0.01], [0, 0, 0], [0, 0, 0]))
spinning = dict(still, die7=([0.1, 0.2, 0.05], [0, 0, 0], [0, 0, 0.5]))
check(not any(dice.at_rest(x)[0] for x in (moving, out, below, spinning)),
      "at_rest: one die too fast, outside a wall, below the floor or spinning: not at rest")

# the drivers' output
r = dice.parse_driver("steps 2000\nmax_contacts 205\nmin_gap -0.016\nloop_cpu 2.0\n"
                      "body die1 1 2 3 4 5 6 7 8 9\nNo module named x.\n")
check(r["steps"] == 2000 and r["min_gap"] == -0.016 and
      r["bodies"] == {"die1": ([1, 2, 3], [4, 5, 6], [7, 8, 9])}, "parse_driver")

# mbsim-run's summary (its per-step statistics)
r = dice.parse_summary(
    "steps:        2001 to t = 2 s (dt = 0.001 s)\n"
    "contacts:     1475 shape pairs, at most 186 points in one step's contact problem, 17970 "
    "solver iterations (8.98 per step), smallest gap -9.607e-11 m, dissipated 7.29 J\n")
check(r == {"steps": 2001, "max_contacts": 186, "min_gap": -9.607e-11}, "parse_summary")

# the table: ratios mbsim/peer of CPU time, penetration in mm, failed rows
row = {"cpu": 1.0, "steps": 2000, "max_contacts": 300, "min_gap": -2e-4, "rest": True,
       "vmax": 0, "wmax": 0}
t = dice.table([("mbsim-run", row), ("MuJoCo", dict(row, cpu=4.0, min_gap=-0.016)),
                ("Siconos", "skipped: Siconos is not installed")]).splitlines()
check(t[0].split()[:3] == ["peer", "CPU", "[s]"] and t[2].split() == [
    "mbsim-run", "1.000", "2000", "300", "0.200", "yes", "1.000"] and
      t[3].split() == ["MuJoCo", "4.000", "2000", "300", "16.000", "yes", "0.250"] and
      t[4].split()[:2] == ["Siconos", "skipped:"], "table: values, mm, ratios, skipped row")
t = dice.table([("mbsim-run", "failed: exit 1: no"), ("MuJoCo", row)]).splitlines()
check(t[3].split()[-1] == "-" and "failed: exit 1" in t[2], "table: no ratio without mbsim-run")
# decks/contacts/dice_bowl.yaml is what --write-bowl writes; its sides' inner faces start on
# the edges of the central square at z = 0 and point into the bowl at the slope (scipy's
# rotation of the box's axis 3)
with open(os.path.join(ROOT, "decks", "contacts", "dice_bowl.yaml")) as f:
    shipped = f.read()
check(shipped == dice.bowl_deck(sc), "bowl: decks/contacts/dice_bowl.yaml is what "
      "scripts/bench/dice --write-bowl writes")
ok = True
a = np.radians(dice.BOWL_SLOPE_DEG)
for name, c, e, axis, ang in dice.bowl_sides():
    R = Rotation.from_rotvec(np.radians(ang) * np.asarray(axis, float)).as_matrix()
    n = R[:, 2]
    inner = np.asarray(c) + 0.5 * e[2] * n          # centre of the inner face
    out = np.array([inner[0], inner[1], 0.0])
    out /= np.linalg.norm(out)
    foot = inner - 0.5 * dice.BOWL_SIDE * np.array([out[0] * np.cos(a), out[1] * np.cos(a),
                                                    np.sin(a)])
    ok &= abs(n[2] - np.cos(a)) < 1e-12 and abs(foot[2]) < 1e-12
    ok &= abs(np.max(np.abs(foot[:2])) - 0.5 * dice.BOWL_EDGE) < 1e-12
check(ok, "bowl: four sides rising at %g deg from the edges of the %g m square"
      % (dice.BOWL_SLOPE_DEG, dice.BOWL_EDGE))

# --bodies N: N / 25 staggered layers, the first 50 dice those of the default scene, no two
# dice overlapping (separating axes between neighbours, centres closer than 0.25 m), all inside
# the box; the MJCF's contact room grows with N; the growth exponent of a known power law
big = dice.scene(1e-3, 2.0, 400)["dice"]
heights = sorted({d["position"][2] for d in big})
check(len(big) == 400 and big[:50] == D and len(heights) == 16 and
      np.allclose(heights, [0.2 * (k + 1) for k in range(16)], atol=1e-12),
      "--bodies 400: 16 layers 0.2 m apart, the first 50 dice the default scene's")
Rb = [Rotation.from_quat(d["quaternion"][1:] + d["quaternion"][:1]).as_matrix() for d in big]
Xb = [np.asarray(d["position"]) for d in big]
wb = [Xb[i] + corners @ Rb[i].T for i in range(400)]

close = [(i, j) for i in range(400) for j in range(i + 1, 400)
         if np.linalg.norm(Xb[i] - Xb[j]) < 0.25]
check(all(separated(i, j, Rb, wb) for i, j in close) and
      all(np.all(np.abs(c[:, :2]) < 0.5 - 0.005) and np.all(c[:, 2] > 0.05) for c in wb),
      "--bodies 400: no two dice overlap (%d neighbouring pairs checked), every "
      "corner inside the walls" % len(close))
check(len(close) > 1000, "--bodies 400: neighbours within 0.25 m checked: %d pairs" % len(close))
for bad in (0, 30, -25):
    try:
        dice.scene(1e-3, 2.0, bad)
        check(False, "--bodies %d refused" % bad)
    except ValueError as e:
        check("multiple of 25" in str(e), "--bodies %d refused: %s" % (bad, e))
size = ET.fromstring(dice.mjcf(dice.scene(1e-3, 2.0, 200))).find("size")
check(int(size.get("nconmax")) == 2000, "--bodies 200: MJCF nconmax %s (10 per die: about twice the "
      "1024 contacts MuJoCo's 200-dice pile takes)" % size.get("nconmax"))
check(int(size.get("njmax")) == 4 * int(size.get("nconmax")),
      "--bodies 200: MJCF njmax %s (4 pyramid rows a contact)" % size.get("njmax"))
g = dice.growth_text([(50, 200, 2.0), (100, 400, 2.0 * 2 ** 1.5), (200, 800, 16.0)])
check("p = 1.50" in g, "growth: the exponent of CPU = c contacts^1.5 is 1.50 (%s)"
      % g.splitlines()[-1])

done()

"""Siconos driver of scripts/bench/dice: the dice scene (a JSON file the script wrote) with
Siconos' mechanics toolbox as its users drive it (siconos.io.mechanics_run, Bullet contact
detection, MoreauJeanOSI with theta = 0.5 in TimeStepping, FrictionContact solved by the
default solver), one step size for the whole run. After every step a hook reads the active
contacts (index set 1): their count and their normal gaps. Prints "key value" lines like
dice_mujoco.c: steps, max_contacts, min_gap, loop_cpu (process time of io.run alone), then
"body NAME x y z vx vy vz wx wy wz" at the end. Usage: dice_siconos.py SCENE.json WORKDIR"""
import json
import os
import sys
import time

import numpy as np
from siconos.io.mechanics_run import MechanicsHdf5Runner
from siconos.mechanics.collision.tools import Contactor
import siconos.kernel as sk


def main():
    with open(sys.argv[1]) as f:
        sc = json.load(f)
    os.chdir(sys.argv[2])
    fn = os.path.join(sys.argv[2], "dice_siconos.hdf5")
    a, L = sc["edge"], sc["half_width"]
    inertia = sc["mass"] * a * a / 6.0
    with MechanicsHdf5Runner(mode="w", io_filename=fn, verbose=False) as io:
        io.add_primitive_shape("Die", "Box", (a, a, a))
        # floor and walls: boxes 0.2 m thick, their inner faces on the box's inside
        big, t = 2.0 * L + 0.4, 0.2
        io.add_primitive_shape("Floor", "Box", (big, big, t))
        io.add_primitive_shape("WallX", "Box", (t, big, big))
        io.add_primitive_shape("WallY", "Box", (big, t, big))
        io.add_Newton_impact_friction_nsl("contact", mu=sc["friction"], e=sc["restitution"])
        for d in sc["dice"]:
            io.add_object(d["name"], [Contactor("Die")], translation=d["position"],
                          orientation=d["quaternion"], velocity=[0.0] * 6,
                          mass=sc["mass"], inertia=[inertia] * 3)
        io.add_object("floor", [Contactor("Floor")], translation=[0, 0, -t / 2])
        io.add_object("wall_xp", [Contactor("WallX")], translation=[L + t / 2, 0, big / 2])
        io.add_object("wall_xm", [Contactor("WallX")], translation=[-L - t / 2, 0, big / 2])
        io.add_object("wall_yp", [Contactor("WallY")], translation=[0, L + t / 2, big / 2])
        io.add_object("wall_ym", [Contactor("WallY")], translation=[0, -L - t / 2, big / 2])

    stats = {"steps": 0, "max_contacts": 0, "min_gap": 1.0}

    def after_step(runner):
        stats["steps"] += 1
        cp = runner._io.contactPoints(runner._nsds, 1)
        if cp is not None and cp.shape[0] > 0:
            stats["max_contacts"] = max(stats["max_contacts"], cp.shape[0])
            # columns: mu, point A (3), point B (3), normal (3), reaction (3), y (3: the
            # normal gap first), relative velocity (3), impulse (3), ids
            stats["min_gap"] = min(stats["min_gap"], float(np.min(cp[:, 13])))

    steps = int(round(sc["t_end"] / sc["dt"]))
    with MechanicsHdf5Runner(mode="r+", io_filename=fn, verbose=False) as io:
        c0 = time.process_time()
        io.run(t0=0.0, T=steps * sc["dt"], h=sc["dt"], theta=0.5, osi=sk.MoreauJeanOSI,
               Newton_max_iter=1, verbose=False, verbose_progress=False,
               output_frequency=10 * steps, end_run_iteration_hook=after_step)
        cpu = time.process_time() - c0
        print("steps %d\nmax_contacts %d\nmin_gap %.9g\nloop_cpu %.6f" % (
            stats["steps"], stats["max_contacts"], stats["min_gap"], cpu))
        nsds = io._nsds
        for ds in nsds.dynamicalSystemsVector():
            name = nsds.name(ds)
            q, v = np.array(ds.q()), np.array(ds.velocity())
            print("body %s %s" % (name, " ".join("%.9g" % x for x in list(q[:3]) + list(v[:6]))))


if __name__ == "__main__":
    main()

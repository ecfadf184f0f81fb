"""revolute_pair.yaml (seed 004 example 1, Fig. 3-4): two prisms on a revolute joint, a dead
force for t < 1 and a constant joint torque M* throughout, dt = 1e-2. After t = 1 linear and
angular momentum are conserved with the contravariant torque and with coordinate augmentation,
not with the naive torque. The kinetic energy of the variable augmentation (eq. 23) follows a
fine-dt contravariant reference; the classical augmentation (eq. 21) jumps to a spurious root
of its constraint near its singular angle and its energy leaves the reference."""
import numpy as np

from common import check, deck, done, energy_error, load, run

D = deck("revolute_pair.yaml")
variants = {
    "contravariant": [],
    "naive": ["--set", "loads.motor.method=naive"],
    "variable": ["--set", "loads.motor.method=augmented",
                 "--set", "loads.motor.augmentation=variable"],
    "classical": ["--set", "loads.motor.method=augmented",
                  "--set", "loads.motor.augmentation=classical"],
}
_, _, _, out = run(D, "--dt", "1e-4", "--set", "output.every=20")
ref = load(out)
t_ref, T_ref = ref["time"], ref["energy/kinetic"]
print("reference (contravariant, dt = 1e-4): T(1) = %.6f, T(5) = %.6f"
      % (np.interp(1.0, t_ref, T_ref), T_ref[-1]))

res = {}
for name, args in variants.items():
    rc, _, _, out = run(D, *args, check=False)
    r = load(out)
    res[name] = r
    t, T = r["time"], r["energy/kinetic"]
    after = t > 1.0 + 1e-9
    J, L = r["momentum/angular"][after], r["momentum/linear"][after]
    jrel = np.max(np.abs(J - J[0])) / np.linalg.norm(J[0])
    lrel = np.max(np.abs(L - L[0])) / np.linalg.norm(L[0])
    dev = np.max(np.abs(T - np.interp(t, t_ref, T_ref))) / np.max(T_ref)
    print("%-13s status %-9s t_end %.2f: after t = 1 |dJ|/|J| = %.2e, |dL|/|L| = %.2e; "
          "T(t_end) = %.4f (reference %.4f), max |T - T_ref| / max T_ref = %.2e"
          % (name, str(r["attrs"]["status"])[:9], t[-1], jrel, lrel, T[-1],
             np.interp(t[-1], t_ref, T_ref), dev))
    res[name] = (rc, jrel, lrel, dev, r)

for name in ("contravariant", "variable"):
    rc, jrel, lrel, dev, r = res[name]
    check(rc == 0, "%s: completes" % name)
    check(jrel <= 1e-10, "%s: angular momentum conserved after t = 1 to 1e-10 (%.1e)"
          % (name, jrel))
    check(lrel <= 1e-10, "%s: linear momentum conserved after t = 1 to 1e-10 (%.1e)"
          % (name, lrel))
    e = energy_error(r)
    check(e <= 1e-9, "%s: total - external_work constant to 1e-9 relative (%.1e)" % (name, e))
rc, jrel, lrel, dev, r = res["naive"]
check(rc == 0 and jrel > 1e-4, "naive: angular momentum NOT conserved after t = 1 (%.1e)" % jrel)
check(lrel <= 1e-10, "naive: linear momentum still conserved (internal forces) (%.1e)" % lrel)
check(res["contravariant"][3] <= 1e-3,
      "contravariant, dt = 1e-2: T follows the reference to 0.1%% (%.1e)" % res["contravariant"][3])
check(res["variable"][3] <= 1e-2,
      "variable augmentation: T follows the reference (correct increase) to 1%% (%.1e)"
      % res["variable"][3])
rc, jrel, lrel, dev, r = res["classical"]
t, T = r["time"], r["energy/kinetic"]
Tv = res["variable"][4]["energy/kinetic"][: len(t)]
d = np.abs(T - Tv) / np.max(T_ref)
k0 = int(np.argmax(d > 1e-6))
check(k0 > 0 and np.max(d[:k0]) <= 1e-8,
      "classical = variable augmentation (same root) up to t = %.2f (%.1e)"
      % (t[k0], np.max(d[:k0])))
Tr = np.interp(t, t_ref, T_ref)
k1 = min(k0 + 10, len(t))
print("classical augmentation jumps to a spurious root of eq. 21 at t = %.2f (gamma %.2f -> "
      "%.2f): T %.3f -> %.3f at t = %.2f (reference %.3f), then max T = %.1f (reference %.1f)"
      % (t[k0], r["state/q"][k0 - 1, -1], r["state/q"][k0, -1], T[k0 - 1], T[k1 - 1],
         t[k1 - 1], Tr[k1 - 1], np.max(T), np.max(T_ref)))
# after the jump the energy is unphysical: it changes by far more in one step than the
# motor's power allows (the reference's largest change per step), up or down
jump = np.max(np.abs(np.diff(T[k0 - 1:])))
ref_jump = np.max(np.abs(np.diff(Tr)))
check(jump > 10 * ref_jump,
      "classical augmentation: spurious energy jump of %.1f in one step (reference at most %.2f)"
      % (jump, ref_jump))
check(dev > 0.1, "classical augmentation: T departs from the reference by %.0f%% of max T_ref"
      % (100 * dev))
done()

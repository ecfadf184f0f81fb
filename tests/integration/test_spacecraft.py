"""spacecraft.yaml (seed 000 sec. 8.1, Table 1, Fig. 4-5): a base and three reaction wheels
driven by motor torques u = 200 as joint torques. With the contravariant director forces
(eq. 61) the total angular momentum stays at its initial value for any step (eq. 69); with the
naive covariant forces (eq. 70) it does not, and its error shrinks as N grows. The kinetic
energy at t = 5 from N = 5 steps is much closer to the N = 500 value with contravariant than
with naive."""
import numpy as np

from common import check, deck, done, energy_error, load, run

J_err, T_end = {}, {}
for method in ("contravariant", "naive"):
    sets = []
    for k in (1, 2, 3):
        sets += ["--set", "loads.motor%d.method=%s" % (k, method)]
    for N in (5, 10, 50, 500):
        _, _, _, out = run(deck("spacecraft.yaml"), "--dt", repr(5.0 / N), *sets)
        r = load(out)
        check(abs(r["time"][-1] - 5.0) < 1e-12 and len(r["time"]) == N + 1,
              "%s, N = %d: reaches t = 5 in N steps" % (method, N))
        J = r["momentum/angular"]
        J_err[method, N] = np.max(np.abs(J - J[0])) / np.linalg.norm(J[0])
        T_end[method, N] = r["energy/kinetic"][-1]
        e = energy_error(r)
        check(e <= 1e-9, "%s, N = %d: total - external_work constant to 1e-9 relative (%.1e)"
              % (method, N, e))
        print("%-13s N = %3d: max |J - J0| / |J0| = %.3e, J3(5) = %.6f, T(5) = %.6f"
              % (method, N, J_err[method, N], J[-1, 2], T_end[method, N]))

for N in (5, 10, 50, 500):
    check(J_err["contravariant", N] <= 1e-10,
          "contravariant, N = %d: J constant to 1e-10 relative (%.1e)"
          % (N, J_err["contravariant", N]))
    check(J_err["naive", N] > 1e-5, "naive, N = %d: J not conserved (%.1e)"
          % (N, J_err["naive", N]))
naive = [J_err["naive", N] for N in (5, 10, 50, 500)]
check(all(a > b for a, b in zip(naive, naive[1:])),
      "naive: the error in J shrinks as N grows (%s)" % ", ".join("%.2e" % x for x in naive))
dk = abs(T_end["contravariant", 5] - T_end["contravariant", 500])
dn = abs(T_end["naive", 5] - T_end["naive", 500])
print("T(5): contravariant N = 5: %.3f, N = 500: %.3f (difference %.3f, %.2f%%)"
      % (T_end["contravariant", 5], T_end["contravariant", 500], dk,
         100 * dk / T_end["contravariant", 500]))
print("T(5): naive         N = 5: %.3f, N = 500: %.3f (difference %.3f, %.2f%%)"
      % (T_end["naive", 5], T_end["naive", 500], dn, 100 * dn / T_end["naive", 500]))
check(dk < 0.1 * dn, "T(5) with N = 5 is much closer to N = 500 with contravariant (%.1f) than "
      "with naive (%.1f)" % (dk, dn))
done()

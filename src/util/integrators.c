/* integrators.c: what each integrator is (mbsIntegratorPolicy, types.h), one entry per
 * integrator, which the compiler, the run and the command query instead of branching on its
 * name. Auto is resolved by the compiler (model/compile.c: choose_integrator); its entry is
 * the defaults. */
#include "mbsim/types.h"

static const mbsIntegratorPolicy table[MBS_INTEGRATOR_COUNT] = {
    [MBS_INTEGRATOR_AUTO] = {.energy_warning = 1e-2, .error_control = 1},
    /* the discrete gradients close the energy balance to round-off */
    [MBS_INTEGRATOR_EM] = {.stepwise = 1, .pin_pivots = 1, .energy_warning = 1e-6, .error_control = 1},
    [MBS_INTEGRATOR_MIDPOINT] = {.stepwise = 1,
                                 .pin_pivots = 1,
                                 .energy_warning = 1e-2,
                                 .error_control = 1},
    /* loses energy at first order */
    [MBS_INTEGRATOR_EULER] = {.stepwise = 1, .pin_pivots = 1, .energy_warning = 0.2},
    [MBS_INTEGRATOR_GENALPHA] = {.stepwise = 1,
                                 .pin_pivots = 1,
                                 .energy_warning = 1e-2,
                                 .error_control = 1,
                                 .unstable_advice = "genalpha is not energy-stable for fast "
                                                    "nonlinear rotation: use em, or a smaller "
                                                    "dt"},
    [MBS_INTEGRATOR_STATIC] = {.equilibrium = 1, .energy_warning = 1e-2},
    /* the theta method counts the contacts' work and its own damping (theta > 1/2) exactly;
     * the semi-explicit variant is first order and conserves nothing */
    [MBS_INTEGRATOR_MOREAU] = {.stepwise = 1,
                               .contacts = 1,
                               .numerical_dissipation = 1,
                               .energy_warning = 1e-6,
                               .energy_warning_explicit = 0.2},
    [MBS_INTEGRATOR_SPACETIME] = {.action = 1, .energy_warning = 1e-2, .error_control = 1},
};

const mbsIntegratorPolicy *mbs_integrator_policy(mbsIntegrator k) {
  return (unsigned)k < MBS_INTEGRATOR_COUNT ? &table[k] : &table[MBS_INTEGRATOR_AUTO];
}

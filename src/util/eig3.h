/* eig3.h: eigenvalues of a symmetric 3x3 matrix (principal moments of inertia), declared
 * with the public types (mbsim/types.h) so that the command's listing can use it */
#ifndef MBS_UTIL_EIG3_H
#define MBS_UTIL_EIG3_H

#include "mbsim/types.h"

#endif

/* memory.c: the memory this process may use (memory.h). */
#include "util/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* a cgroup limit file: its number of bytes, 0 when absent, unlimited ("max") or unreadable */
static double cgroup_limit(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    return 0.0;
  }
  char buf[64] = "";
  char *ok = fgets(buf, sizeof(buf), f);
  fclose(f);
  if (!ok || !strncmp(buf, "max", 3)) {
    return 0.0;
  }
  char *end;
  double v = strtod(buf, &end);
  /* cgroup v1 says "no limit" with a number near 2^63 */
  return end != buf && v > 0.0 && v < 1e18 ? v : 0.0;
}

double mbs_memory_machine(char *what, size_t nwhat) {
  double best = 0.0;
  snprintf(what, nwhat, "no limit known");
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0) {
    best = (double)pages * (double)size;
    snprintf(what, nwhat, "the physical memory");
  }
  static const char *const cg[] = {"/sys/fs/cgroup/memory.max",
                                   "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
  for (size_t k = 0; k < sizeof(cg) / sizeof(cg[0]); k++) {
    double v = cgroup_limit(cg[k]);
    if (v > 0.0 && (best == 0.0 || v < best)) {
      best = v;
      snprintf(what, nwhat, "the cgroup limit in %s", cg[k]);
    }
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    double v = (double)rl.rlim_cur;
    if (best == 0.0 || v < best) {
      best = v;
      snprintf(what, nwhat, "the address-space limit (ulimit -v)");
    }
  }
  return best;
}

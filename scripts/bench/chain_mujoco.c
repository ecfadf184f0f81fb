/* The chain of the peers benchmark (scripts/bench/peers) in MuJoCo: the model file written by
 * the script (N nested bodies on ball joints, RK4, no contacts), stepped with the given time
 * step to t_end. Prints the far end of every link at t_end (sites e0, e1, ...; x y z per line)
 * and, on stderr, the CPU seconds of the stepping and the steps taken.
 * Usage: chain_mujoco MODEL.xml DT T_END */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODEL.xml DT T_END\n", argv[0]);
    return 2;
  }
  char err[1000] = "";
  mjModel *m = mj_loadXML(argv[1], NULL, err, sizeof(err));
  if (!m) {
    fprintf(stderr, "chain_mujoco: %s\n", err);
    return 1;
  }
  m->opt.timestep = atof(argv[2]);
  double t_end = atof(argv[3]);
  long steps = (long)(t_end / m->opt.timestep + 0.5);
  mjData *d = mj_makeData(m);
  clock_t c0 = clock();
  for (long k = 0; k < steps; k++) {
    mj_step(m, d);
  }
  double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
  mj_forward(m, d);
  for (int i = 0; i < m->nsite; i++) {
    printf("%.17g %.17g %.17g\n", d->site_xpos[3 * i], d->site_xpos[3 * i + 1],
           d->site_xpos[3 * i + 2]);
  }
  fprintf(stderr, "cpu %.6f steps %ld\n", cpu, steps);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}

/* MuJoCo driver of scripts/bench/dice: loads the MJCF scene the script wrote, steps it with
 * mj_step for the given number of steps and prints, one "key value" per line: steps, the
 * largest number of contacts at any step (mjData.ncon), the most negative contact distance
 * (mjContact.dist, m; positive when no contact was ever seen), the CPU time of the stepping
 * loop alone, then one line per free body: "body NAME x y z vx vy vz wx wy wz" at the end
 * (qvel of a free joint: linear velocity in world axes, angular velocity in body axes).
 * Usage: dice_mujoco SCENE.xml STEPS */
#include <mujoco/mujoco.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s SCENE.xml STEPS\n", argv[0]);
    return 1;
  }
  char err[1000] = "";
  mjModel *m = mj_loadXML(argv[1], NULL, err, sizeof err);
  if (!m) {
    fprintf(stderr, "dice_mujoco: %s\n", err);
    return 1;
  }
  mjData *d = mj_makeData(m);
  if (!d) {
    fprintf(stderr, "dice_mujoco: mj_makeData failed\n");
    mj_deleteModel(m);
    return 1;
  }
  long steps = strtol(argv[2], NULL, 10);
  int max_con = 0;
  double min_dist = 1.0;
  clock_t c0 = clock();
  for (long s = 0; s < steps; s++) {
    mj_step(m, d);
    /* d->contact holds the contacts found at the start of this step */
    if (d->ncon > max_con)
      max_con = d->ncon;
    for (int i = 0; i < d->ncon; i++)
      if (d->contact[i].dist < min_dist)
        min_dist = d->contact[i].dist;
  }
  /* the final state's contacts too */
  mj_forward(m, d);
  for (int i = 0; i < d->ncon; i++)
    if (d->contact[i].dist < min_dist)
      min_dist = d->contact[i].dist;
  double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
  /* a full contact or constraint buffer drops contacts: the run does not count */
  int full = d->warning[mjWARN_CONTACTFULL].number + d->warning[mjWARN_CNSTRFULL].number;
  if (full > 0) {
    fprintf(stderr,
            "dice_mujoco: contact or constraint buffer full at %d steps "
            "(raise nconmax/njmax)\n",
            full);
    mj_deleteData(d);
    mj_deleteModel(m);
    return 2;
  }
  printf("steps %ld\nmax_contacts %d\nmin_gap %.9g\nloop_cpu %.6f\n", steps, max_con, min_dist,
         cpu);
  for (int j = 0; j < m->njnt; j++) {
    if (m->jnt_type[j] != mjJNT_FREE)
      continue;
    int b = m->jnt_bodyid[j];
    const mjtNum *q = d->qpos + m->jnt_qposadr[j];
    const mjtNum *v = d->qvel + m->jnt_dofadr[j];
    printf("body %s %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", mj_id2name(m, mjOBJ_BODY, b),
           q[0], q[1], q[2], v[0], v[1], v[2], v[3], v[4], v[5]);
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  return 0;
}

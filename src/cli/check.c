/* check.c: what mbsim-run prints of the model: the listing of `mbsim-run --check` after the
 * summary (gravity, each body's mass and principal moments of inertia, each joint's type,
 * bodies, point and axes, each load: all world, t = 0, as the deck reader normalised them),
 * the summary itself, and the messages of the initial state (assembly, projection). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "mbsim/types.h"

/* entries listed per section: a deck of 60,000 bodies gets a count, not 60,000 lines */
#define CHECK_LIST_MAX 1000


static const char *vec(char *buf, size_t n, const double v[3]) {
  snprintf(buf, n, "[%.6g, %.6g, %.6g]", v[0], v[1], v[2]);
  return buf;
}

static const char *body_name(const mbsDeck *deck, int b, char *buf, size_t n) {
  int node = 0, k = mbs_deck_ref_beam(deck, b, &node);
  if (k >= 0) {
    char full[MBS_NAME_MAX + 16];
    snprintf(full, sizeof(full), "%s[%d]", deck->beams[k].name, node);
    return cli_escape(buf, n, full);
  }
  return b < 0 ? "ground" : cli_escape(buf, n, deck->bodies[b].name);
}

static int more(FILE *f, int i, int n, const char *what) {
  if (i == CHECK_LIST_MAX) {
    fprintf(f, "  ... %d more %s not listed\n", n - i, what);
    return 1;
  }
  return 0;
}

static void print_bodies(FILE *f, const mbsDeck *deck) {
  char name[256], p[96];
  if (deck->nbody == 0) {
    return;
  }
  fprintf(f, "bodies (mass; principal moments of inertia about the centre of mass; centre of "
             "mass, world, t = 0):\n");
  for (int b = 0; b < deck->nbody && !more(f, b, deck->nbody, "bodies"); b++) {
    const mbsDeckBody *db = &deck->bodies[b];
    fprintf(f, "  %s: %s%s, mass %.6g kg", cli_escape(name, sizeof(name), db->name),
            mbs_body_type_word(db->type), db->fixed ? " (fixed)" : "", db->mass);
    if (db->type == MBS_BODY_RIGID) {
      double lam[3];
      mbs_sym3_eigenvalues(db->inertia, lam);
      fprintf(f, ", inertia %.6g, %.6g, %.6g kg m^2", lam[0], lam[1], lam[2]);
    }
    fprintf(f, ", at %s m\n", vec(p, sizeof(p), db->position));
  }
}

static void print_joints(FILE *f, const mbsDeck *deck) {
  char n0[256], n1[256], n2[256], p[96], q[96];
  if (deck->njoint == 0) {
    return;
  }
  fprintf(f, "joints (type, first body - second body, point and axes, world, t = 0):\n");
  for (int j = 0; j < deck->njoint && !more(f, j, deck->njoint, "joints"); j++) {
    const mbsDeckJoint *dj = &deck->joints[j];
    fprintf(f, "  %s: %s, %s - %s", cli_escape(n0, sizeof(n0), dj->name),
            mbs_joint_type_word(dj->type), body_name(deck, dj->body[0], n1, sizeof(n1)),
            body_name(deck, dj->body[1], n2, sizeof(n2)));
    switch (dj->type) {
      case MBS_JOINT_DISTANCE: {
        double d[3];
        for (int c = 0; c < 3; c++) {
          d[c] = dj->points[1][c] - dj->points[0][c];
        }
        double dist = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        fprintf(f, ", points %s and %s m, length %.6g m", vec(p, sizeof(p), dj->points[0]),
                vec(q, sizeof(q), dj->points[1]), dj->has_length ? dj->length : dist);
        if (dj->has_length) {
          fprintf(f, " (%.6g m apart)", dist);
        }
        break;
      }
      case MBS_JOINT_UNIVERSAL:
        fprintf(f, ", point %s m, axes %s and %s", vec(p, sizeof(p), dj->point),
                vec(q, sizeof(q), dj->axes[0]), vec(n0, sizeof(n0), dj->axes[1]));
        break;
      case MBS_JOINT_REVOLUTE:
      case MBS_JOINT_CYLINDRICAL:
      case MBS_JOINT_PRISMATIC:
      case MBS_JOINT_PLANAR:
        fprintf(f, ", point %s m, %s %s", vec(p, sizeof(p), dj->point),
                dj->type == MBS_JOINT_PLANAR ? "normal" : "axis", vec(q, sizeof(q), dj->axis));
        break;
      default: /* spherical, fixed: the frames are the bodies' own at t = 0 */
        fprintf(f, ", point %s m", vec(p, sizeof(p), dj->point));
        break;
    }
    if (dj->type != MBS_JOINT_DISTANCE && dj->has_body_points) {
      /* `point` above is the one on the second body */
      double d[3];
      for (int c = 0; c < 3; c++) {
        d[c] = dj->points[1][c] - dj->points[0][c];
      }
      fprintf(f, " (on %s: %s m, %.6g m apart)", body_name(deck, dj->body[0], n1, sizeof(n1)),
              vec(p, sizeof(p), dj->points[0]), sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
    if (dj->has_active) {
      /* a joint that engages and releases (docs/decks.md) */
      if (dj->active_from > 0.0) {
        fprintf(f, ", engages at %.6g s", dj->active_from);
      }
      if (isfinite(dj->active_until)) {
        fprintf(f, ", releases at %.6g s", dj->active_until);
      }
    }
    if (dj->has_motion) {
      fprintf(f, ", motion %.6g %s x profile", dj->motion_value,
              dj->type == MBS_JOINT_REVOLUTE ? "rad" : "m");
    }
    fprintf(f, "\n");
  }
}

static void print_loads(FILE *f, const mbsDeck *deck) {
  char n0[256], n1[256], n2[256], p[96], q[96];
  if (deck->nload == 0) {
    return; /* no heading over nothing ("loads: 0" above says so) */
  }
  fprintf(f, "loads (world, t = 0):\n");
  for (int l = 0; l < deck->nload && !more(f, l, deck->nload, "loads"); l++) {
    const mbsDeckLoad *dl = &deck->loads[l];
    fprintf(f, "  %s: %s", cli_escape(n0, sizeof(n0), dl->name), mbs_load_type_word(dl->type));
    switch (dl->type) {
      case MBS_LOAD_FORCE:
      case MBS_LOAD_TORQUE:
        fprintf(f, " on %s, %s %s (%s frame)", body_name(deck, dl->body, n1, sizeof(n1)),
                vec(p, sizeof(p), dl->value), dl->type == MBS_LOAD_FORCE ? "N" : "N m",
                dl->frame == MBS_FRAME_BODY ? "body" : "world");
        if (dl->type == MBS_LOAD_FORCE && dl->has_point) {
          fprintf(f, " at %s m", vec(q, sizeof(q), dl->point));
        }
        break;
      case MBS_LOAD_JOINT_TORQUE:
      case MBS_LOAD_JOINT_FORCE:
        if (dl->computed_torque) {
          int tq = dl->type == MBS_LOAD_JOINT_TORQUE;
          fprintf(f, " on joint %s, computed torque kp %.6g 1/s^2, kd %.6g 1/s, reference %.6g %s",
                  cli_escape(n1, sizeof(n1), deck->joints[dl->joint].name), dl->kp, dl->kd,
                  dl->target_value, tq ? "rad" : "m");
          break;
        }
        if (dl->has_control) {
          int tq = dl->type == MBS_LOAD_JOINT_TORQUE;
          fprintf(f, " on joint %s, control kp %.6g %s, kd %.6g %s, ki %.6g %s, target %.6g %s",
                  cli_escape(n1, sizeof(n1), deck->joints[dl->joint].name), dl->kp,
                  tq ? "N m/rad" : "N/m", dl->kd, tq ? "N m s/rad" : "N s/m", dl->ki,
                  tq ? "N m/(rad s)" : "N/(m s)", dl->target_value, tq ? "rad" : "m");
          break;
        }
        fprintf(f, " on joint %s, %.6g %s",
                cli_escape(n1, sizeof(n1), deck->joints[dl->joint].name), dl->value[0],
                dl->type == MBS_LOAD_JOINT_FORCE ? "N" : "N m");
        break;
      case MBS_LOAD_SPRING:
        fprintf(f,
                ", %s - %s, points %s and %s m, stiffness %.6g N/m, damping %.6g N s/m, rest "
                "length %.6g m",
                body_name(deck, dl->bodies[0], n1, sizeof(n1)),
                body_name(deck, dl->bodies[1], n2, sizeof(n2)), vec(p, sizeof(p), dl->points[0]),
                vec(q, sizeof(q), dl->points[1]), dl->stiffness, dl->damping, dl->rest_length);
        break;
      case MBS_LOAD_DISTRIBUTED_FORCE:
        fprintf(f, " on beam %s, %s N/m", cli_escape(n1, sizeof(n1), deck->beams[dl->beam].name),
                vec(p, sizeof(p), dl->value));
        break;
      case MBS_LOAD_ROTATIONAL_SPRING:
        fprintf(f,
                " on joint %s, stiffness %.6g N m/rad, damping %.6g N m s/rad, rest angle "
                "%.6g rad",
                cli_escape(n1, sizeof(n1), deck->joints[dl->joint].name), dl->stiffness,
                dl->damping, dl->rest_angle);
        break;
      default:
        break;
    }
    fprintf(f, "\n");
  }
}

static void print_beams(FILE *f, const mbsDeck *deck) {
  char name[256], p[96], q[96];
  if (deck->nbeam == 0) {
    return;
  }
  fprintf(f, "beams (nodes, elements, order, length, mass; ends, world, t = 0):\n");
  for (int i = 0; i < deck->nbeam && !more(f, i, deck->nbeam, "beams"); i++) {
    const mbsDeckBeam *b = &deck->beams[i];
    fprintf(f, "  %s: %d nodes, %d elements of order %d, length %.6g m, mass %.6g kg, %s - %s m\n",
            cli_escape(name, sizeof(name), b->name), b->nnode, b->nelem, b->order, b->length,
            b->density * b->A * b->length, vec(p, sizeof(p), b->pos),
            vec(q, sizeof(q), b->pos + 3 * (b->nnode - 1)));
  }
}

/* each chain and the bodies and joints it expanded into (listed with the others below) */
static void print_chains(FILE *f, const mbsDeck *deck) {
  char name[256], b0[256], b1[256], j0[256], j1[256], base[256];
  if (deck->nchain == 0) {
    return;
  }
  fprintf(f, "chains (Denavit-Hartenberg; expanded into the bodies and joints listed below):\n");
  for (int i = 0; i < deck->nchain && !more(f, i, deck->nchain, "chains"); i++) {
    const mbsDeckChain *c = &deck->chains[i];
    fprintf(f, "  %s: %s convention, base %s, %d link%s: bodies %s .. %s, joints %s .. %s\n",
            cli_escape(name, sizeof(name), c->name), c->modified ? "modified" : "standard",
            body_name(deck, c->base, base, sizeof(base)), c->nlink, c->nlink == 1 ? "" : "s",
            cli_escape(b0, sizeof(b0), deck->bodies[c->body0].name),
            cli_escape(b1, sizeof(b1), deck->bodies[c->body0 + c->nlink - 1].name),
            cli_escape(j0, sizeof(j0), deck->joints[c->joint0].name),
            cli_escape(j1, sizeof(j1), deck->joints[c->joint0 + c->nlink - 1].name));
  }
}

void cli_print_check(FILE *f, const mbsDeck *deck) {
  char g[96];
  fprintf(f, "gravity:      %s m/s^2\n", vec(g, sizeof(g), deck->gravity));
  print_chains(f, deck);
  print_bodies(f, deck);
  print_beams(f, deck);
  print_joints(f, deck);
  print_loads(f, deck);
}

/* ---- the model summary of --check and the messages of the initial state ---- */

void cli_print_summary(FILE *f, const mbsModel *m, const mbsDeck *deck) {
  int nrigid = 0, npoint = 0, nfixed = 0;
  for (int b = 0; b < m->nbody; b++) {
    nfixed += m->body_fixed[b];
    if (m->body_type[b] == MBS_BODY_RIGID) {
      nrigid++;
    } else {
      npoint++;
    }
  }
  fprintf(f, "deck:         %s%s%s%s\n", deck->path, deck->title[0] ? " (" : "", deck->title,
          deck->title[0] ? ")" : "");
  fprintf(f, "bodies:       %d (%d rigid, %d point, %d fixed)\n", m->nbody, nrigid, npoint, nfixed);
  if (m->nbeam > 0) {
    int nnode = 0, nelem = 0;
    for (int i = 0; i < m->nbeam; i++) {
      nnode += m->beam[i].nnode;
      nelem += m->beam[i].nelem;
    }
    fprintf(f, "beams:        %d (%d nodes, %d elements)\n", m->nbeam, nnode, nelem);
  }
  int npatch = 0;
  for (int i = 0; i < m->nshape; i++) {
    npatch += m->shape[i].kind == MBS_SHAPE_PATCH;
  }
  if (npatch > 0) {
    fprintf(f, "surfaces:     %d bilinear patch%s over nodes\n", npatch,
            npatch == 1 ? "" : "es");
  }
  fprintf(f, "joints:       %d\n", m->njoint);
  fprintf(f, "loads:        %d\n", m->nload);
  if (m->ncontact > 0) {
    fprintf(f,
            "contacts:     %d entr%s, %d shape%s (%d in pairs, found at each step), storage "
            "for %d contact points\n",
            m->ncontact, m->ncontact == 1 ? "y" : "ies", m->nshape, m->nshape == 1 ? "" : "s",
            m->nshape_paired, m->contact_max);
  }
  fprintf(f, "coordinates:  %d\n", m->nq);
  fprintf(f, "constraints:  %d\n", m->ncon);
  if (m->ndrop > 0) {
    char dropped[512];
    mbs_model_describe_dropped(m, dropped, sizeof(dropped));
    fprintf(f, "redundant:    dropped %d equation%s that repeat%s the others: %s\n", m->ndrop,
            m->ndrop == 1 ? "" : "s", m->ndrop == 1 ? "s" : "", dropped);
  }
  fprintf(f, "dof:          %d\n", m->ndof);
  fprintf(f, "integrator:   %s (%s)\n", mbs_integrator_word(m->integrator), m->integrator_reason);
  fprintf(f, "linear:       %s sparse LU (solver.linear_solver)\n",
          mbs_linear_solver_word(m->linear_solver));
  if (m->tolerance > 0.0) {
    fprintf(f, "time:         steps chosen for solver.tolerance = %g, at most dt = %g s, t_end = %g s\n",
            m->tolerance, m->dt, m->t_end);
  } else {
    fprintf(f, "time:         dt = %g s, t_end = %g s\n", m->dt, m->t_end);
  }
}

/* initial.assemble: how far each body moved (its centre of mass) and turned, those that did */
static void print_assembly_moves(const mbsModel *m, const double *q0, const double *q1) {
  int shown = 0, more = 0;
  for (int b = 0; b < m->nbody; b++) {
    int n0 = m->body_node[b];
    if (n0 < 0) {
      continue;
    }
    int rigid = m->body_type[b] == MBS_BODY_RIGID;
    double dx[3], tr = 0.0;
    for (int c = 0; c < 3; c++) {
      dx[c] = q1[3 * n0 + c] - q0[3 * n0 + c];
      for (int i = 0; rigid && i < 3; i++) {
        /* x_c = phi - r^i d_i */
        dx[c] -= m->body_ref[3 * b + i] * (q1[3 * (n0 + 1 + i) + c] - q0[3 * (n0 + 1 + i) + c]);
        tr += q1[3 * (n0 + 1 + i) + c] * q0[3 * (n0 + 1 + i) + c];
      }
    }
    double move = sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
    double turn = rigid ? acos(fmax(-1.0, fmin(1.0, 0.5 * (tr - 1.0)))) : 0.0;
    if (!(move > 1e-12 || turn > 1e-12)) {
      continue;
    }
    if (shown == 20) {
      more++;
      continue;
    }
    printf("              %s: centre moved %.4g m%s", m->body_name[b], move,
           rigid ? ", turned " : "\n");
    if (rigid) {
      printf("%.4g deg\n", turn * 180.0 / 3.14159265358979323846);
    }
    shown++;
  }
  if (more) {
    printf("              ... and %d more bodies\n", more);
  }
}

/* what initial.assemble and initial.project_velocities did */
void cli_print_initial(const mbsModel *m, const mbsData *d, const mbsRunStart *s) {
  const mbsAssembly *a = &s->assembly;
  if (s->assembled && !s->restarted && a->iterations == 0) {
    printf("initial:      positions already satisfy the joints (violation %.2g): nothing to "
           "assemble\n",
           a->residual);
  } else if (s->assembled && !s->restarted) {
    printf("initial:      positions assembled onto the joints (%d Gauss-Newton steps, "
           "violation %.2g left): largest move %.4g m (%s '%s'), directors turned by up to "
           "%.4g deg\n",
           a->iterations, a->residual, a->max_move,
           a->frame >= 0 && m->attach_kind[a->frame] == MBS_ATTACH_BEAM_NODE ? "beam node"
                                                                            : "body",
           a->frame >= 0 ? m->attach_name[a->frame] : "none",
           2.0 * asin(fmin(1.0, 0.5 * a->max_turn)) * 180.0 / 3.14159265358979323846);
    print_assembly_moves(m, s->q_deck, d->q);
  }
  if (s->projected) {
    int f = s->projection_frame;
    printf("initial:      velocities projected onto the joints: largest change %.4g (%s "
           "'%s')\n",
           s->projection_change,
           f >= 0 && m->attach_kind[f] == MBS_ATTACH_BEAM_NODE ? "beam node" : "body",
           f >= 0 ? m->attach_name[f] : "none");
  }
}

/* contact.h: contact geometry (src/contact/): where a shape is, the closest points of two
 * shapes (narrow phase, one function per pair of kinds) and the candidate pairs of a model at
 * a configuration (broad phase). The solver (src/solver/moreau.c) turns the points into
 * contact rows; everything here is pure geometry in world coordinates and allocates nothing
 * but the broad phase's own storage (at its creation). */
#ifndef MBSIM_CONTACT_H
#define MBSIM_CONTACT_H

#include "mbsim/model.h"

/* a shape's placement in the world: centre and axes (row-major, column i = axis i) */
typedef struct {
  double x[3];
  double R[9];
  double half; /* a capsule's half length along axis 3 here: size[1], or a beam segment's
                  (mbsShape.segment) half the distance of its two points */
} mbsPose;

/* one contact point of a pair of shapes (a, b) */
typedef struct {
  double pa[3], pb[3]; /* closest points on the surfaces of a and b (world) */
  double n[3];         /* unit normal, from a towards b (world) */
  double gap;          /* signed distance (pb - pa) . n: negative in penetration */
  int feature;         /* which features touch (a vertex, an edge pair, a point's index ...):
                          the same number while the contact persists, for warm starts */
} mbsContactPoint;

/* the world pose of shape s at the configuration q (the frame's point c and directions C,
 * mbs_attach_point) */
void mbs_shape_pose(const mbsModel *m, const mbsShape *s, const double *q, mbsPose *pose);

/* 1 if the narrow phase handles shapes of kinds a and b (in either order), else 0 */
int mbs_collide_supported(mbsShapeKind a, mbsShapeKind b);

/* "sphere-plane, sphere-sphere, ..." (static string): the supported pairs, for messages */
const char *mbs_collide_supported_list(void);

/* the most contact points the pair (a, b) can give at once (box-plane 8, box-box 8, a point
 * set its count ...), 0 for an unsupported pair */
int mbs_collide_max(const mbsShape *a, const mbsShape *b);

/* The contact points of shapes a and b (poses pa, pb; pts: the model's contact_pts) whose
 * gap is below margin, at most max (mbs_collide_max suffices) into out, normals from a to b.
 * Returns their count, or -1 for an unsupported pair. Deterministic: the same poses give the
 * same points in the same order. */
int mbs_collide(const mbsShape *a, const mbsPose *pa, const mbsShape *b, const mbsPose *pb,
                const double *pts, double margin, mbsContactPoint *out, int max);

/* the model's shapes at q0 must not overlap (by more than 1e-9 m): MBS_ERR_DECK at the
 * deck position of the first such pair (its body shape), naming both, the depth and
 * the contacts entry (src/contact/check.c; mbs_model_compile calls it) */
mbsStatus mbs_contact_check_initial(const mbsModel *m, mbsError *err);

/* [m] the overlap a state to restart from may hold: the small penetrations that
 * velocity-level contact leaves in a run's records (1e-10 m in the shipped decks) pass, a
 * deck whose shapes cut into the state does not */
#define MBS_OVERLAP_STATE_TOL 1e-6

/* the model's shapes at the positions q (time t) must not overlap by more than
 * MBS_OVERLAP_STATE_TOL: the check of mbs_contact_check_initial for a state that a restart
 * takes over (a deck whose shapes moved since the earlier run) */
mbsStatus mbs_contact_check_state(const mbsModel *m, const double *q, double t, mbsError *err);

/* ---- broad phase (src/contact/broad.c) ---- */
typedef struct mbsBroad mbsBroad;

/* storage for the model's pairs and shapes; NULL when out of memory (err filled) */
mbsBroad *mbs_broad_create(const mbsModel *m, mbsError *err);
void mbs_broad_destroy(mbsBroad *bp);

/* The model's candidate pairs (indices into m->pair, ascending) whose shapes' bounding
 * spheres (poses: one per shape, m->nshape), each widened by extra[shape] (may be NULL:
 * none; how far the shape can move within a step), come closer than the pair's margin;
 * planes are always candidates. At most max into out; returns their count (a sweep and prune
 * along the axis of largest spread: cost grows with the shapes and the overlaps, not with
 * npair). */
int mbs_broad_pairs(mbsBroad *bp, const mbsModel *m, const mbsPose *poses, const double *extra,
                    int *out, int max);

#endif

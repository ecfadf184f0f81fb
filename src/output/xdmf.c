/* xdmf.c: the XDMF 2 sidecar of the result file (FORMAT.md, "ParaView").
 *
 * ParaView's "XDMF Reader" (Xdmf2) reads a temporal collection of Uniform grids; each
 * grid is the set of body centres of mass at one record (Polyvertex topology with the
 * default connectivity 0 .. nb-1) carrying velocity, angular velocity and the three
 * directors as node vectors. A second temporal collection holds the joint points
 * (/joints/position) with the reaction force and torque; the reader shows the two as the
 * blocks "bodies" and "joints" of one multiblock data set. All arrays are HyperSlabs of
 * the time-major datasets (/bodies/position [N,nb,3], /bodies/orientation [N,nb,3,3],
 * /joints/position [N,nj,3], /joints/reaction [N,nj,6]), so nothing is copied. */
#include "output/xdmf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *mbs_xdmf_path(const char *h5_path) {
  size_t len = strlen(h5_path);
  size_t stem = len;
  if (len >= 3 && strcmp(h5_path + len - 3, ".h5") == 0) {
    stem = len - 3;
  }
  char *xmf = malloc(stem + sizeof(".xmf"));
  if (!xmf) {
    return NULL;
  }
  memcpy(xmf, h5_path, stem);
  memcpy(xmf + stem, ".xmf", sizeof(".xmf"));
  return xmf;
}

/* the file name escaped for XML text (&, <, >); malloc'd */
static char *xml_escape(const char *s) {
  size_t n = 1;
  for (const char *p = s; *p; p++) {
    n += (*p == '&') ? 5 : (*p == '<' || *p == '>') ? 4 : 1;
  }
  char *out = malloc(n);
  if (!out) {
    return NULL;
  }
  char *o = out;
  for (const char *p = s; *p; p++) {
    const char *rep = (*p == '&') ? "&amp;" : (*p == '<') ? "&lt;" : (*p == '>') ? "&gt;" : NULL;
    if (rep) {
      size_t r = strlen(rep);
      memcpy(o, rep, r);
      o += r;
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
  return out;
}

/* a node vector (rows x 3) of record k: components off .. off+2 of the last dimension of
 * the [N,rows,width] dataset at dset */
static void slab_vec(FILE *f, const char *h5, const char *dset, long k, long n, int rows, int width,
                     int off) {
  fprintf(f,
          "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%d 3\" Type=\"HyperSlab\">\n"
          "            <DataItem Dimensions=\"3 3\" Format=\"XML\">%ld 0 %d 1 1 1 1 %d 3"
          "</DataItem>\n"
          "            <DataItem Dimensions=\"%ld %d %d\" NumberType=\"Float\" Precision=\"8\" "
          "Format=\"HDF\">%s:%s</DataItem>\n"
          "          </DataItem>\n",
          rows, k, off, rows, n, rows, width, h5, dset);
}

/* a node vector (nb x 3) of record k taken from the [N,nb,3] dataset at dset */
static void slab_vec3(FILE *f, const char *h5, const char *dset, long k, long n, int nb) {
  slab_vec(f, h5, dset, k, n, nb, 3, 0);
}

/* director d_(col+1) of record k: column col of the row-major rotation matrices */
static void slab_director(FILE *f, const char *h5, long k, long n, int nb, int col) {
  fprintf(f,
          "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%d 3\" Type=\"HyperSlab\">\n"
          "            <DataItem Dimensions=\"3 4\" Format=\"XML\">%ld 0 0 %d 1 1 1 1 1 %d 3 1"
          "</DataItem>\n"
          "            <DataItem Dimensions=\"%ld %d 3 3\" NumberType=\"Float\" Precision=\"8\" "
          "Format=\"HDF\">%s:/bodies/orientation</DataItem>\n"
          "          </DataItem>\n",
          nb, k, col, nb, n, nb, h5);
}

/* the shortest of 15, 16 or 17 significant digits that reads back as t */
static void format_time(char *buf, size_t n, double t) {
  for (int digits = 15; digits < 17; digits++) {
    snprintf(buf, n, "%.*g", digits, t);
    if (strtod(buf, NULL) == t) {
      return;
    }
  }
  snprintf(buf, n, "%.17g", t);
}

/* the opening of a Uniform grid "<label> k" of npoint points at time t */
static void grid_open(FILE *f, const char *label, long k, double t, int npoint) {
  char time[32];
  format_time(time, sizeof(time), t);
  fprintf(f,
          "      <Grid Name=\"%s %ld\" GridType=\"Uniform\">\n"
          "        <Time Value=\"%s\"/>\n"
          "        <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%d\" "
          "NodesPerElement=\"1\"/>\n",
          label, k, time, npoint);
}

/* one Uniform grid: the bodies at record k */
static void write_grid(FILE *f, const char *h5, long k, long n, int nb, double t) {
  grid_open(f, "record", k, t, nb);
  if (nb == 0) {
    /* nothing to draw: the grid only carries its time */
    fputs("      </Grid>\n", f);
    return;
  }
  fputs("        <Geometry GeometryType=\"XYZ\">\n", f);
  slab_vec3(f, h5, "/bodies/position", k, n, nb);
  fputs("        </Geometry>\n", f);

  /* node vectors: velocities, then the directors d1, d2, d3 */
  static const char *const vec_name[2] = {"velocity", "angular_velocity"};
  static const char *const vec_dset[2] = {"/bodies/velocity", "/bodies/angular_velocity"};
  for (int i = 0; i < 2; i++) {
    fprintf(f, "        <Attribute Name=\"%s\" AttributeType=\"Vector\" Center=\"Node\">\n",
            vec_name[i]);
    slab_vec3(f, h5, vec_dset[i], k, n, nb);
    fputs("        </Attribute>\n", f);
  }
  for (int col = 0; col < 3; col++) {
    fprintf(f, "        <Attribute Name=\"d%d\" AttributeType=\"Vector\" Center=\"Node\">\n",
            col + 1);
    slab_director(f, h5, k, n, nb, col);
    fputs("        </Attribute>\n", f);
  }
  fputs("      </Grid>\n", f);
}

/* one Uniform grid: the joint points at record k, with force and torque on body 2 */
static void write_joint_grid(FILE *f, const char *h5, long k, long n, int nj, double t) {
  grid_open(f, "joints", k, t, nj);
  fputs("        <Geometry GeometryType=\"XYZ\">\n", f);
  slab_vec(f, h5, "/joints/position", k, n, nj, 3, 0);
  fputs("        </Geometry>\n", f);
  static const char *const name[2] = {"force", "torque"};
  for (int i = 0; i < 2; i++) {
    fprintf(f, "        <Attribute Name=\"%s\" AttributeType=\"Vector\" Center=\"Node\">\n",
            name[i]);
    slab_vec(f, h5, "/joints/reaction", k, n, nj, 6, 3 * i);
    fputs("        </Attribute>\n", f);
  }
  fputs("      </Grid>\n", f);
}

void mbs_xdmf_remove_stale(const char *xmf_path, const char *h5_name) {
  FILE *f = fopen(xmf_path, "r");
  if (!f) {
    return;
  }
  /* the header and the first grid's first DataItem fit in the first 2 kB */
  char head[2048];
  size_t n = fread(head, 1, sizeof(head) - 1, f);
  fclose(f);
  head[n] = '\0';
  char *h5 = xml_escape(h5_name);
  if (!h5) {
    return;
  }
  size_t len = strlen(h5);
  char *ref = malloc(len + sizeof(":/bodies/position<"));
  if (ref) {
    memcpy(ref, h5, len);
    memcpy(ref + len, ":/bodies/position<", sizeof(":/bodies/position<"));
    if (strncmp(head, "<?xml", 5) == 0 && strstr(head, "<Xdmf Version=\"2.0\">") &&
        strstr(head, ref)) {
      remove(xmf_path);
    }
  }
  free(ref);
  free(h5);
}

mbsStatus mbs_xdmf_write(const char *xmf_path, const char *h5_name, int nbody, int njoint,
                         long nrecord, const double *time, mbsError *err) {
  mbsStatus st = MBS_OK;
  char *tmp = NULL;
  char *h5 = NULL;
  FILE *f = NULL;

  size_t len = strlen(xmf_path);
  tmp = malloc(len + sizeof(".tmp"));
  h5 = xml_escape(h5_name);
  if (!tmp || !h5) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing XDMF file '%s'",
                       xmf_path);
    goto done;
  }
  memcpy(tmp, xmf_path, len);
  memcpy(tmp + len, ".tmp", sizeof(".tmp"));

  /* write the whole text to the temporary file */
  f = fopen(tmp, "w");
  if (!f) {
    st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "cannot write XDMF file '%s': %s", tmp,
                       strerror(errno));
    goto done;
  }
  fputs("<?xml version=\"1.0\" ?>\n"
        "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
        "<Xdmf Version=\"2.0\">\n"
        "  <Domain>\n"
        "    <Grid Name=\"bodies\" GridType=\"Collection\" CollectionType=\"Temporal\">\n",
        f);
  for (long k = 0; k < nrecord; k++) {
    write_grid(f, h5, k, nrecord, nbody, time[k]);
  }
  fputs("    </Grid>\n", f);

  /* the joints, when there are any, as a second temporal collection */
  if (njoint > 0) {
    fputs("    <Grid Name=\"joints\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", f);
    for (long k = 0; k < nrecord; k++) {
      write_joint_grid(f, h5, k, nrecord, njoint, time[k]);
    }
    fputs("    </Grid>\n", f);
  }
  fputs("  </Domain>\n"
        "</Xdmf>\n",
        f);

  /* a write error may only show at fclose (full disk) */
  int bad = ferror(f);
  int saved = errno;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    saved = errno;
  }
  f = NULL;
  if (bad) {
    st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "cannot write XDMF file '%s': %s", tmp,
                       strerror(saved));
    remove(tmp);
    goto done;
  }

  /* atomic replacement: readers see the old or the new sidecar, never half of one */
  if (rename(tmp, xmf_path) != 0) {
    st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "cannot rename '%s' to '%s': %s", tmp,
                       xmf_path, strerror(errno));
    remove(tmp);
    goto done;
  }

done:
  free(h5);
  free(tmp);
  return st;
}

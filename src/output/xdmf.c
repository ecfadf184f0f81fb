/* xdmf.c: the XDMF 2 sidecar of the result file (docs/paraview.md).
 *
 * ParaView's "XDMF Reader" (Xdmf2) reads temporal collections of Uniform grids and shows
 * them as the blocks of one multiblock data set. The sidecar is built from a list of grids
 * (mbsGridSpec, added by the code that owns the data): each is one temporal collection with
 * one Uniform grid per record, of a kind
 *
 *   points          npoint points (Polyvertex with the default connectivity): the body
 *                   centres of mass with velocity, angular velocity and the three directors
 *                   (columns of /bodies/orientation); the joint points with force and torque
 *   polyline        npoint nodes joined in order (a beam's centreline), with node vectors
 *   ragged points   a varying number of points per record: the rows offsets[k] ..
 *                   offsets[k] + count[k] - 1 of a ragged table (contacts)
 *
 * A record without points is an empty spatial collection with its time (grid_empty), which
 * ParaView reads as an empty block.
 *
 * All arrays are HyperSlabs of the time-major datasets ([N,np,width], [N,np,3,3], or the
 * table [R,width]), so nothing is copied.
 *
 * The file is laid out so that it grows in place (see xdmf.h):
 *
 *   head        the record count N (and the rows R1, R2, ... of each ragged grid's table)
 *               as internal entities of fixed width, which every HyperSlab's dataset
 *               dimensions use (&N;), so each changes in one place
 *   grids 0     the first collection, one grid per record, then its reserve: 4 KiB units
 *               "<!-- ... -->\n" that new grids overwrite, the rest of a partly used unit
 *               blanked with spaces
 *   grids 1 ..  the end of the collection before, the start of this one, its grids and
 *               (all but the last) a reserve
 *   tail        the closing tags, rewritten after every append
 *
 * Every write leaves well-formed XML behind it (a kill -9 between two writes leaves a file
 * that opens), and a failed append at the end of the file puts the old tail back. */
/* realpath() is an XSI function; O_TMPFILE and linkat's AT_EMPTY_PATH are Linux's */
#define _GNU_SOURCE

#include "output/xdmf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RESERVE_UNIT 4096
#define RESERVE_MIN (64 * 1024)
#define COUNT_WIDTH 20
/* a full write goes to the file in blocks of about this size */
#define WRITE_BLOCK (1 << 20)

static const char tail_text[] = "    </Grid>\n  </Domain>\n</Xdmf>\n";
static const char marker[] = "<!-- written by mbsim-run";

/* one vector of a grid (see mbsGridVector); strings owned */
typedef struct {
  char *name;
  char *path;
  int width, component, director;
} xvec;

/* one temporal collection (see mbsGridSpec) and where its grids end in the file */
typedef struct {
  mbsGridKind kind;
  char *name, *label;
  int npoint;
  xvec position;
  int nvec;
  xvec *vec;
  const mbsXdmfTable *table; /* ragged grids: the writer's offsets and counts */
  char *table_path;          /* ragged grids: the table dataset */
  int table_width;
  int entity;        /* ragged grids: its table's row count is the entity R<entity> */
  off_t end;           /* end of its last grid */
  off_t reserve_start; /* the reserve after it (all but the last collection): where it */
  off_t reserve_end;   /* started when the file was written, and its end */
} xgrid;

struct mbsXdmf {
  char *path;        /* the sidecar path as given (messages) */
  char *target;      /* where it is written (a symbolic link at path resolved) */
  char *h5;          /* the HDF5 file name, escaped for XML */
  int ngrid;
  xgrid *grid;       /* (ngrid) the collections, in the file's order */
  int nentity;       /* 1 + ragged grids: the entities N, R1, R2, ... */
  int fd;            /* open for appends; -1 before the first update */
  long nrec;         /* records listed */
  off_t *count_off;  /* (nentity) where the COUNT_WIDTH characters of each entity are */
  int no_unnamed;    /* 1: unnamed files (O_TMPFILE) cannot be given a name here */
};

/* ---------- text ---------- */

/* a growing string; oom is set once an allocation failed (everything after is dropped) */
typedef struct {
  char *p;
  size_t n, cap;
  int oom;
} strbuf;

static void sb_reserve(strbuf *b, size_t more) {
  if (b->oom || b->n + more + 1 <= b->cap) {
    return;
  }
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->n + more + 1) {
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return;
  }
  b->p = p;
  b->cap = cap;
}

static void sb_printf(strbuf *b, const char *fmt, ...) {
  va_list ap, ap2;
  /* one pass where the text fits the room left, which is nearly always */
  sb_reserve(b, 512);
  if (b->oom) {
    return;
  }
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
  va_end(ap);
  if (k > 0 && (size_t)k >= b->cap - b->n) {
    sb_reserve(b, (size_t)k);
    if (!b->oom) {
      vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap2);
    }
  }
  if (k > 0 && !b->oom) {
    b->n += (size_t)k;
  }
  va_end(ap2);
}

static void sb_put(strbuf *b, const char *s, size_t n) {
  sb_reserve(b, n);
  if (!b->oom) {
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
  }
}

static void sb_fill(strbuf *b, char c, size_t n) {
  sb_reserve(b, n);
  if (!b->oom) {
    memset(b->p + b->n, c, n);
    b->n += n;
    b->p[b->n] = '\0';
  }
}

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
static void slab_vec(strbuf *b, const char *h5, const char *dset, long k, int rows, int width,
                     int off) {
  sb_printf(b,
            "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%d 3\" Type=\"HyperSlab\">\n"
            "            <DataItem Dimensions=\"3 3\" Format=\"XML\">%ld 0 %d 1 1 1 1 %d 3"
            "</DataItem>\n"
            "            <DataItem Dimensions=\"&N; %d %d\" NumberType=\"Float\" Precision=\"8\" "
            "Format=\"HDF\">%s:%s</DataItem>\n"
            "          </DataItem>\n",
            rows, k, off, rows, rows, width, h5, dset);
}

/* column col of the row-major 3 x 3 matrices [N,rows,3,3] at dset, record k (a director) */
static void slab_director(strbuf *b, const char *h5, const char *dset, long k, int rows,
                          int col) {
  sb_printf(b,
            "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%d 3\" Type=\"HyperSlab\">\n"
            "            <DataItem Dimensions=\"3 4\" Format=\"XML\">%ld 0 0 %d 1 1 1 1 1 %d 3 1"
            "</DataItem>\n"
            "            <DataItem Dimensions=\"&N; %d 3 3\" NumberType=\"Float\" Precision=\"8\" "
            "Format=\"HDF\">%s:%s</DataItem>\n"
            "          </DataItem>\n",
            rows, k, col, rows, rows, h5, dset);
}

/* rows first .. first+rows-1 of a ragged table [R,width] at dset (R: the entity &Ri;),
 * components off .. off+2 */
static void slab_rows(strbuf *b, const char *h5, const char *dset, int entity, long long first,
                      long long rows, int width, int off) {
  sb_printf(b,
            "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%lld 3\" Type=\"HyperSlab\">\n"
            "            <DataItem Dimensions=\"3 2\" Format=\"XML\">%lld %d 1 1 %lld 3"
            "</DataItem>\n"
            "            <DataItem Dimensions=\"&R%d; %d\" NumberType=\"Float\" Precision=\"8\" "
            "Format=\"HDF\">%s:%s</DataItem>\n"
            "          </DataItem>\n",
            rows, first, off, rows, entity, width, h5, dset);
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

/* a record without points (a ragged grid's record without rows, a grid of no points): an
 * empty spatial collection that carries the time only. ParaView 5.11's XDMF Reader crashes
 * (SIGSEGV looking for the Geometry) on a Uniform grid without Geometry, and refuses one
 * whose Geometry holds no values; an empty collection it reads as an empty block. */
static void grid_empty(strbuf *b, const char *label, long k, double t) {
  char time[32];
  format_time(time, sizeof(time), t);
  sb_printf(b,
            "      <Grid Name=\"%s %ld\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
            "        <Time Value=\"%s\"/>\n"
            "      </Grid>\n",
            label, k, time);
}

/* the opening of a Uniform grid "<label> k" at time t: npoint points (Polyvertex) or one
 * polyline of npoint nodes */
static void grid_open(strbuf *b, const char *label, long k, double t, long long npoint,
                      int polyline) {
  char time[32];
  format_time(time, sizeof(time), t);
  if (polyline) {
    sb_printf(b,
              "      <Grid Name=\"%s %ld\" GridType=\"Uniform\">\n"
              "        <Time Value=\"%s\"/>\n"
              "        <Topology TopologyType=\"Polyline\" NumberOfElements=\"1\" "
              "NodesPerElement=\"%lld\"/>\n",
              label, k, time, npoint);
    return;
  }
  sb_printf(b,
            "      <Grid Name=\"%s %ld\" GridType=\"Uniform\">\n"
            "        <Time Value=\"%s\"/>\n"
            "        <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%lld\" "
            "NodesPerElement=\"1\"/>\n",
            label, k, time, npoint);
}

/* rows of the ragged table of grid g in records 0 .. nrecord-1 */
static long long ragged_rows(const xgrid *g, long nrecord) {
  if (nrecord <= 0) {
    return 0;
  }
  return (long long)(g->table->offset[nrecord - 1] + g->table->count[nrecord - 1]);
}

/* three components of record k of grid g: a slab of its series, or of its ragged table */
static void grid_vector(strbuf *b, const char *h5, const xgrid *g, const xvec *v, long k,
                        long long first, long long rows) {
  if (g->kind == MBS_GRID_RAGGED_POINTS) {
    slab_rows(b, h5, g->table_path, g->entity, first, rows, g->table_width, v->component);
  } else if (v->director) {
    slab_director(b, h5, v->path, k, g->npoint, v->component);
  } else {
    slab_vec(b, h5, v->path, k, g->npoint, v->width, v->component);
  }
}

/* one Uniform grid of collection g at record k: the geometry, then the node vectors */
static void grid_text(strbuf *b, const char *h5, const xgrid *g, long k, double t) {
  long long first = 0, rows = g->npoint;
  if (g->kind == MBS_GRID_RAGGED_POINTS) {
    first = g->table->offset[k];
    rows = g->table->count[k];
  }
  if (rows == 0) {
    grid_empty(b, g->label, k, t);
    return;
  }
  grid_open(b, g->label, k, t, rows, g->kind == MBS_GRID_POLYLINE);
  sb_printf(b, "        <Geometry GeometryType=\"XYZ\">\n");
  grid_vector(b, h5, g, &g->position, k, first, rows);
  sb_printf(b, "        </Geometry>\n");
  for (int i = 0; i < g->nvec; i++) {
    sb_printf(b, "        <Attribute Name=\"%s\" AttributeType=\"Vector\" Center=\"Node\">\n",
              g->vec[i].name);
    grid_vector(b, h5, g, &g->vec[i], k, first, rows);
    sb_printf(b, "        </Attribute>\n");
  }
  sb_printf(b, "      </Grid>\n");
}

/* the closing of collection i - 1 and the opening of collection i (i = 0: the opening) */
static void collection_open(strbuf *b, const xgrid *g, int i) {
  if (i > 0) {
    sb_printf(b, "    </Grid>\n");
  }
  sb_printf(b, "    <Grid Name=\"%s\" GridType=\"Collection\" CollectionType=\"Temporal\">\n",
            g->name);
}

/* the head up to the opening of the first collection; count_off[0]: where the record count
 * is, count_off[1 + r]: the row count of the r-th ragged grid's table */
static void head_text(strbuf *b, const mbsXdmf *x, long nrecord, size_t *count_off) {
  sb_printf(b, "<?xml version=\"1.0\" ?>\n"
               "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" [\n"
               "<!ENTITY N \"");
  count_off[0] = b->n;
  sb_printf(b, "%-*ld", COUNT_WIDTH, nrecord);
  sb_printf(b, "\">\n");
  for (int i = 0; i < x->ngrid; i++) {
    const xgrid *g = &x->grid[i];
    if (g->kind == MBS_GRID_RAGGED_POINTS) {
      sb_printf(b, "<!ENTITY R%d \"", g->entity);
      count_off[g->entity] = b->n;
      sb_printf(b, "%-*lld", COUNT_WIDTH, ragged_rows(g, nrecord));
      sb_printf(b, "\">\n");
    }
  }
  sb_printf(b, "]>\n"
               "%s: N is the number of records in the HDF5 file, and the file grows in "
               "place -->\n"
               "<Xdmf Version=\"2.0\">\n"
               "  <Domain>\n",
            marker);
}

/* reserve units after a collection: n bytes, a multiple of RESERVE_UNIT */
static void reserve_text(strbuf *b, size_t n) {
  for (size_t done = 0; done < n; done += RESERVE_UNIT) {
    sb_put(b, "<!--", 4);
    sb_fill(b, ' ', RESERVE_UNIT - 8);
    sb_put(b, "-->\n", 4);
  }
}

double mbs_xdmf_record_bytes(const mbsXdmf *x, long nrecord) {
  strbuf b = {0};
  double bytes = 0.0;
  long k = nrecord > 0 ? nrecord - 1 : 0;
  for (int i = 0; x && i < x->ngrid; i++) {
    /* a ragged grid's rows are not known before the run: counted as empty */
    if (x->grid[i].kind == MBS_GRID_RAGGED_POINTS) {
      grid_empty(&b, x->grid[i].label, k, 1.0 / 3.0 + (double)k);
    } else {
      grid_text(&b, x->h5, &x->grid[i], k, 1.0 / 3.0 + (double)k);
    }
  }
  bytes = b.oom ? 0.0 : (double)b.n;
  free(b.p);
  return bytes;
}

/* ---------- files ---------- */

/* write all n bytes at offset off (pwrite until done); 0 or -1 with errno set */
static int pwrite_all(int fd, const char *p, size_t n, off_t off) {
  while (n > 0) {
    ssize_t k = pwrite(fd, p, n, off);
    if (k < 0) {
      if (errno == EINTR) {
        continue;
      }
      return -1;
    }
    if (k == 0) {
      errno = EIO;
      return -1;
    }
    p += k;
    n -= (size_t)k;
    off += k;
  }
  return 0;
}

static void temp_name(char *buf, size_t n, const char *target, unsigned long *seed);

/* try fresh temporary names beside target ("<dir>/.<name>.tmp-<pid>-<k>") with claim until it
 * succeeds (a result >= 0) or fails otherwise than with EEXIST; returns that result with *tmp
 * malloc'd, or -1 with errno set and *tmp NULL */
static int claim_temp(const char *target, char **tmp, int (*claim)(const char *name, void *arg),
                      void *arg) {
  size_t n = strlen(target) + 64;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned long seed = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 16);
  *tmp = malloc(n);
  if (!*tmp) {
    errno = ENOMEM;
    return -1;
  }
  for (int attempt = 0; attempt < 100; attempt++) {
    temp_name(*tmp, n, target, &seed);
    int rc = claim(*tmp, arg);
    if (rc >= 0) {
      return rc;
    }
    if (errno != EEXIST) {
      break;
    }
  }
  int saved = errno;
  free(*tmp);
  *tmp = NULL;
  errno = saved;
  return -1;
}

/* a new file at name, with O_EXCL and O_NOFOLLOW, so that nothing that was there (a file, a
 * link planted at a name that could be guessed) is ever opened */
static int create_excl(const char *name, void *arg) {
  (void)arg;
  return open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}

/* a new file beside target (see create_excl); returns the descriptor and *tmp (malloc'd), or
 * -1 */
static int open_temp(const char *target, char **tmp) {
  return claim_temp(target, tmp, create_excl, NULL);
}

/* the name part of open_temp without creating anything: "<dir>/.<name>.tmp-<pid>-<k>" */
static void temp_name(char *buf, size_t n, const char *target, unsigned long *seed) {
  const char *slash = strrchr(target, '/');
  int dlen = slash ? (int)(slash - target) + 1 : 0;
  const char *base = slash ? slash + 1 : target;
  *seed = *seed * 6364136223846793005UL + 1442695040888963407UL;
  snprintf(buf, n, "%.*s.%s.tmp-%ld-%06lx", dlen, target, base, (long)getpid(),
           (*seed >> 40) & 0xffffffUL);
}

/* an unnamed file in target's directory (O_TMPFILE): a run killed while writing it leaves
 * nothing behind; -1 where the file system cannot (then open_temp) */
static int open_unnamed(const char *target) {
#ifdef O_TMPFILE
  const char *slash = strrchr(target, '/');
  char *dir = slash ? strndup(target, slash == target ? 1 : (size_t)(slash - target)) : strdup(".");
  if (!dir) {
    return -1;
  }
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  free(dir);
  return fd;
#else
  (void)target;
  return -1;
#endif
}

/* the unnamed file *(int *)arg linked at name (linkat never replaces anything) */
static int link_unnamed(const char *name, void *arg) {
  int fd = *(const int *)arg;
  int rc = linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH);
  if (rc != 0 && errno != EEXIST) {
    /* without CAP_DAC_READ_SEARCH: through /proc */
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    rc = linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
  }
  return rc;
}

/* give the unnamed file fd a new temporary name beside target; 0 with *tmp malloc'd, or -1
 * with errno set */
static int name_unnamed(int fd, const char *target, char **tmp) {
  return claim_temp(target, tmp, link_unnamed, &fd);
}

/* ---------- the sidecar's place ---------- */

mbsStatus mbs_output_bad_link(const char *what, const char *path, int errnum, mbsError *err) {
  char to[1024];
  ssize_t n = readlink(path, to, sizeof(to) - 1);
  to[n > 0 ? n : 0] = '\0';
  if (errnum == ELOOP) {
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "%s '%s' is a symbolic link in a loop of links (it points to '%s'); "
                         "nothing was written",
                         what, path, to);
  }
  return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                       "%s '%s' is a symbolic link to '%s', which %s; mbsim-run writes where a "
                       "link points: remove the link or let it point to a file; nothing was "
                       "written",
                       what, path, to,
                       errnum == ENOENT ? "does not exist (a dangling link)" : strerror(errnum));
}

/* 1 if the regular file at path is a sidecar mbsim-run wrote */
static int is_sidecar(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    return 0;
  }
  /* the head and the first grid's first DataItem fit in the first 2 kB */
  char head[2048];
  size_t n = fread(head, 1, sizeof(head) - 1, f);
  fclose(f);
  head[n] = '\0';
  return strncmp(head, "<?xml", 5) == 0 && strstr(head, "<Xdmf Version=\"2.0\">") &&
         (strstr(head, marker) || strstr(head, ":/bodies/position<"));
}

mbsStatus mbs_xdmf_check_path(const char *xmf_path, int overwrite, char **target, mbsError *err) {
  struct stat st;
  char *resolved = NULL;
  const char *real = xmf_path;
  mbsStatus rc = MBS_OK;

  *target = NULL;
  if (lstat(xmf_path, &st) != 0) {
    /* nothing there (or not reachable: creating the output file says why) */
  } else {
    /* a link is followed, to something that exists */
    if (S_ISLNK(st.st_mode)) {
      resolved = realpath(xmf_path, NULL);
      if (!resolved || stat(resolved, &st) != 0) {
        rc = mbs_output_bad_link("XDMF sidecar", xmf_path, errno, err);
        goto done;
      }
      real = resolved;
    }
    if (S_ISDIR(st.st_mode)) {
      rc = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "cannot write the XDMF sidecar '%s' of the output: it is a directory; "
                         "nothing was written",
                         xmf_path);
      goto done;
    }
    if (!S_ISREG(st.st_mode)) {
      rc = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "cannot write the XDMF sidecar '%s' of the output: it exists and is not "
                         "a regular file; nothing was written",
                         xmf_path);
      goto done;
    }
    if (access(real, W_OK) != 0) {
      rc = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "cannot write the XDMF sidecar '%s': no permission to overwrite it",
                         xmf_path);
      goto done;
    }
    if (!overwrite && !is_sidecar(real)) {
      rc = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "XDMF sidecar '%s' exists and is not one that mbsim-run wrote; refusing "
                         "to replace it: remove it, choose another output file, write no sidecar "
                         "(--set output.xdmf=false) or allow overwriting it (mbsim-run "
                         "--overwrite)",
                         xmf_path);
      goto done;
    }
  }
  *target = resolved ? resolved : strdup(xmf_path);
  resolved = NULL;
  if (!*target) {
    rc = mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory");
  }

done:
  free(resolved);
  return rc;
}

/* ---------- writing ---------- */

mbsXdmf *mbs_xdmf_create(const char *xmf_path, const char *target, const char *h5_name,
                         mbsError *err) {
  mbsXdmf *x = calloc(1, sizeof(*x));
  if (x) {
    x->fd = -1;
    x->nentity = 1;
    x->path = strdup(xmf_path);
    x->target = strdup(target);
    x->h5 = xml_escape(h5_name);
  }
  if (!x || !x->path || !x->target || !x->h5) {
    mbs_xdmf_close(x, 0, NULL, NULL);
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory for XDMF file '%s'", xmf_path);
    return NULL;
  }
  return x;
}

static void xvec_free(xvec *v) {
  free(v->name);
  free(v->path);
}

static void xgrid_free(xgrid *g) {
  free(g->name);
  free(g->label);
  xvec_free(&g->position);
  for (int i = 0; i < g->nvec; i++) {
    xvec_free(&g->vec[i]);
  }
  free(g->vec);
  free(g->table_path);
}

/* a copy of v (strings duplicated); 0, or -1 when out of memory */
static int xvec_copy(xvec *to, const mbsGridVector *v) {
  to->name = strdup(v->name ? v->name : "");
  to->path = strdup(v->path ? v->path : "");
  to->width = v->width;
  to->component = v->component;
  to->director = v->director;
  return to->name && to->path ? 0 : -1;
}

mbsStatus mbs_xdmf_add_grid(mbsXdmf *x, const mbsGridSpec *spec, const char *table_path,
                            int table_width, const mbsXdmfTable *table, mbsError *err) {
  if (x->fd >= 0) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0,
                         "XDMF file '%s': grid '%s' added after the file was written", x->path,
                         spec->name);
  }
  xgrid *grids = realloc(x->grid, (size_t)(x->ngrid + 1) * sizeof(*grids));
  if (!grids) {
    goto nomem;
  }
  x->grid = grids;
  xgrid *g = &x->grid[x->ngrid];
  memset(g, 0, sizeof(*g));
  g->kind = spec->kind;
  g->npoint = spec->npoint;
  g->name = strdup(spec->name);
  g->label = strdup(spec->label);
  int bad = !g->name || !g->label || xvec_copy(&g->position, &spec->position) < 0;
  if (!bad && spec->nvector > 0) {
    g->vec = calloc((size_t)spec->nvector, sizeof(*g->vec));
    bad = !g->vec;
    for (int i = 0; !bad && i < spec->nvector; i++) {
      g->nvec = i + 1;
      bad = xvec_copy(&g->vec[i], &spec->vector[i]) < 0;
    }
  }
  if (!bad && spec->kind == MBS_GRID_RAGGED_POINTS) {
    g->table = table;
    g->table_width = table_width;
    g->table_path = strdup(table_path);
    g->entity = x->nentity;
    bad = !g->table_path;
  }
  if (bad) {
    xgrid_free(g);
    goto nomem;
  }
  x->ngrid++;
  if (spec->kind == MBS_GRID_RAGGED_POINTS) {
    x->nentity++;
  }
  return MBS_OK;

nomem:
  return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory for XDMF file '%s'",
                       x->path);
}

static mbsStatus write_fail(const mbsXdmf *x, int errnum, mbsError *err) {
  return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "cannot write XDMF file '%s': %s",
                       x->path, strerror(errnum));
}

/* the whole file for records 0 .. nrecord-1 (with_reserve: after every collection but the
 * last a reserve as large as its grids, at least RESERVE_MIN), written under a new temporary
 * name and renamed into place */
static mbsStatus write_all(mbsXdmf *x, long nrecord, const double *time, int with_reserve,
                           mbsError *err) {
  mbsStatus st = MBS_OK;
  char *tmp = NULL;
  strbuf b = {0};
  off_t off = 0;
  size_t *count_off = calloc((size_t)x->nentity, sizeof(*count_off));
  off_t *ends = calloc((size_t)x->ngrid * 3 + 1, sizeof(*ends));
  if (!count_off || !ends) {
    free(count_off);
    free(ends);
    return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing XDMF file '%s'",
                         x->path);
  }

  /* unnamed until it is complete where the file system allows, else a new name */
  int fd = x->no_unnamed ? -1 : open_unnamed(x->target);
  int unnamed = fd >= 0;
  if (!unnamed) {
    fd = open_temp(x->target, &tmp);
  }
  if (fd < 0) {
    free(count_off);
    free(ends);
    return mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0,
                         "cannot create a temporary file beside XDMF file '%s': %s", x->path,
                         strerror(errno));
  }

  /* the text goes out in blocks: a sidecar may be far larger than memory should hold */
#define FLUSH_BLOCK(force)                                                                         \
  do {                                                                                             \
    if (b.oom) {                                                                                   \
      errno = ENOMEM;                                                                              \
      goto io_fail;                                                                                \
    }                                                                                              \
    if ((force) || b.n >= WRITE_BLOCK) {                                                           \
      if (pwrite_all(fd, b.p, b.n, off) < 0) {                                                     \
        goto io_fail;                                                                              \
      }                                                                                            \
      off += (off_t)b.n;                                                                           \
      b.n = 0;                                                                                     \
    }                                                                                              \
  } while (0)

  /* ends[3i .. 3i+2]: end of collection i's grids, start and end of the reserve after it */
  head_text(&b, x, nrecord, count_off);
  for (int i = 0; i < x->ngrid; i++) {
    collection_open(&b, &x->grid[i], i);
    /* where its grids start (the first collection: the file's start, as it always was) */
    off_t start = i == 0 ? 0 : off + (off_t)b.n;
    for (long k = 0; k < nrecord; k++) {
      grid_text(&b, x->h5, &x->grid[i], k, time[k]);
      FLUSH_BLOCK(0);
    }
    off_t end = off + (off_t)b.n;
    ends[3 * i] = end;
    ends[3 * i + 1] = end;
    ends[3 * i + 2] = end;
    if (i + 1 < x->ngrid) {
      size_t reserve = 0;
      /* as large as its grids: the reserves of many collections do not compound */
      if (with_reserve) {
        reserve = (size_t)(end - start) > RESERVE_MIN ? (size_t)(end - start) : RESERVE_MIN;
      }
      size_t units = (reserve + RESERVE_UNIT - 1) / RESERVE_UNIT;
      ends[3 * i + 2] = end + (off_t)(units * RESERVE_UNIT);
      for (size_t u = 0; u < units; u += 256) {
        reserve_text(&b, (units - u < 256 ? units - u : 256) * RESERVE_UNIT);
        FLUSH_BLOCK(0);
      }
    }
  }
  sb_put(&b, tail_text, sizeof(tail_text) - 1);
  FLUSH_BLOCK(1);
#undef FLUSH_BLOCK

  /* on disk before it gets a name: renaming over a file makes some file systems (ext4)
   * write the new one out inside rename, and a run killed there would leave the name */
  if (fdatasync(fd) != 0) {
    goto io_fail;
  }

  /* atomic replacement: readers see the old or the new sidecar, never half of one */
  if (unnamed && name_unnamed(fd, x->target, &tmp) != 0) {
    /* an unnamed file that cannot be linked (no /proc, no privilege): named ones from now */
    close(fd);
    free(b.p);
    free(count_off);
    free(ends);
    x->no_unnamed = 1;
    return write_all(x, nrecord, time, with_reserve, err);
  }
  if (rename(tmp, x->target) != 0) {
    st = mbs_error_set(err, MBS_ERR_OUTPUT, NULL, 0, 0, "cannot rename '%s' to '%s': %s", tmp,
                       x->path, strerror(errno));
    goto fail;
  }
  if (x->fd >= 0) {
    close(x->fd);
  }
  x->fd = fd;
  x->nrec = nrecord;
  for (int e = 0; e < x->nentity; e++) {
    x->count_off[e] = (off_t)count_off[e];
  }
  for (int i = 0; i < x->ngrid; i++) {
    x->grid[i].end = ends[3 * i];
    x->grid[i].reserve_start = ends[3 * i + 1];
    x->grid[i].reserve_end = ends[3 * i + 2];
  }
  free(tmp);
  free(b.p);
  free(count_off);
  free(ends);
  return MBS_OK;

io_fail:
  st = write_fail(x, errno, err);
fail:
  close(fd);
  if (tmp) {
    unlink(tmp);
  }
  free(tmp);
  free(b.p);
  free(count_off);
  free(ends);
  return st;
}

/* the grids of records x->nrec .. nrecord-1 in place; 1 when a reserve is too small
 * (nothing written), 0 done, -1 with err filled */
static int append(mbsXdmf *x, long nrecord, const double *time, mbsError *err) {
  int rc = -1;
  int last = x->ngrid - 1;
  strbuf *s = calloc((size_t)x->ngrid, sizeof(*s));
  if (!s) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing XDMF file '%s'",
                  x->path);
    return -1;
  }
  int oom = 0;
  for (int i = 0; i < x->ngrid; i++) {
    for (long k = x->nrec; k < nrecord; k++) {
      grid_text(&s[i], x->h5, &x->grid[i], k, time[k]);
    }
    oom |= s[i].oom;
  }
  if (oom) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing XDMF file '%s'",
                  x->path);
    goto done;
  }
  for (int i = 0; i < last; i++) {
    if ((off_t)s[i].n > x->grid[i].reserve_end - x->grid[i].end) {
      rc = 1;
      goto done;
    }
  }

  /* the counts first: the HDF5 file already holds the new records */
  for (int e = 0; e < x->nentity; e++) {
    char count[COUNT_WIDTH + 1];
    if (e == 0) {
      snprintf(count, sizeof(count), "%-*ld", COUNT_WIDTH, nrecord);
    }
    for (int i = 0; e > 0 && i < x->ngrid; i++) {
      if (x->grid[i].entity == e && x->grid[i].kind == MBS_GRID_RAGGED_POINTS) {
        snprintf(count, sizeof(count), "%-*lld", COUNT_WIDTH, ragged_rows(&x->grid[i], nrecord));
      }
    }
    if (pwrite_all(x->fd, count, COUNT_WIDTH, x->count_off[e]) < 0) {
      write_fail(x, errno, err);
      goto done;
    }
  }

  /* every collection but the last: into its reserve, the rest of the last unit used blanked
   * (those blanks stay part of the reserve) */
  for (int i = 0; i < last; i++) {
    xgrid *g = &x->grid[i];
    size_t grids = s[i].n;
    off_t used = g->end + (off_t)grids - g->reserve_start;
    off_t unit_end = g->reserve_start + (used + RESERVE_UNIT - 1) / RESERVE_UNIT * RESERVE_UNIT;
    sb_fill(&s[i], ' ', (size_t)(unit_end - g->end) - grids);
    if (s[i].oom) {
      mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing XDMF file '%s'",
                    x->path);
      goto done;
    }
    if (pwrite_all(x->fd, s[i].p, s[i].n, g->end) < 0) {
      write_fail(x, errno, err);
      goto done;
    }
    g->end += (off_t)grids;
  }

  /* the last collection at the end of the file, with the tail after it */
  xgrid *g = &x->grid[last];
  off_t end_off = g->end;
  size_t grids = s[last].n;
  sb_put(&s[last], tail_text, sizeof(tail_text) - 1);
  if (s[last].oom) {
    mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0, "out of memory writing XDMF file '%s'",
                  x->path);
    goto done;
  }
  if (pwrite_all(x->fd, s[last].p, s[last].n, end_off) < 0) {
    /* a full disk: the old tail back in its place (those bytes are the file's already) */
    int saved = errno;
    if (pwrite_all(x->fd, tail_text, sizeof(tail_text) - 1, end_off) == 0) {
      if (ftruncate(x->fd, end_off + (off_t)(sizeof(tail_text) - 1)) != 0) {
        /* the tail is whole again; trailing bytes after it are only wasted */
      }
    }
    write_fail(x, saved, err);
    goto done;
  }
  g->end += (off_t)grids;
  x->nrec = nrecord;
  rc = 0;

done:
  for (int i = 0; i < x->ngrid; i++) {
    free(s[i].p);
  }
  free(s);
  return rc;
}

mbsStatus mbs_xdmf_update(mbsXdmf *x, long nrecord, const double *time, mbsError *err) {
  if (!x) {
    return mbs_error_set(err, MBS_ERR_ARGS, NULL, 0, 0, "XDMF: no sidecar");
  }
  /* a sidecar without grids has nothing to show: none is written */
  if (x->ngrid == 0 || (x->fd >= 0 && nrecord <= x->nrec)) {
    return MBS_OK;
  }
  if (!x->count_off) {
    x->count_off = calloc((size_t)x->nentity, sizeof(*x->count_off));
    if (!x->count_off) {
      return mbs_error_set(err, MBS_ERR_NOMEM, NULL, 0, 0,
                           "out of memory writing XDMF file '%s'", x->path);
    }
  }
  if (x->fd >= 0) {
    int rc = append(x, nrecord, time, err);
    if (rc <= 0) {
      return rc == 0 ? MBS_OK : MBS_ERR_OUTPUT;
    }
  }
  /* the first write, or a reserve is used up: the whole file with reserves as large as the
   * grids before them (doubling, so rewrites stay rare) */
  return write_all(x, nrecord, time, 1, err);
}

mbsStatus mbs_xdmf_close(mbsXdmf *x, long nrecord, const double *time, mbsError *err) {
  if (!x) {
    return MBS_OK;
  }
  mbsStatus st = MBS_OK;
  if (x->fd >= 0 && time) {
    st = mbs_xdmf_update(x, nrecord, time, err);
    /* the reserves go: the finished file is written once more, compact, so that it is
     * the same whatever the flushes were */
    int reserved = 0;
    for (int i = 0; i + 1 < x->ngrid; i++) {
      reserved |= x->grid[i].reserve_end > x->grid[i].end;
    }
    if (st == MBS_OK && reserved) {
      st = write_all(x, x->nrec, time, 0, err);
    }
  }
  if (x->fd >= 0) {
    close(x->fd);
  }
  for (int i = 0; i < x->ngrid; i++) {
    xgrid_free(&x->grid[i]);
  }
  free(x->grid);
  free(x->count_off);
  free(x->path);
  free(x->target);
  free(x->h5);
  free(x);
  return st;
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
  char *ref = malloc(len + sizeof(":/"));
  if (ref) {
    memcpy(ref, h5, len);
    memcpy(ref + len, ":/", sizeof(":/"));
    if (strncmp(head, "<?xml", 5) == 0 && strstr(head, "<Xdmf Version=\"2.0\">") &&
        strstr(head, ref)) {
      remove(xmf_path);
    }
  }
  free(ref);
  free(h5);
}

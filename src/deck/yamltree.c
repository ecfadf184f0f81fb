/* yamltree.c: the YAML side of the deck reader. Read the file, parse it with libyaml's
 * document loader (after a cheap event pass that bounds the nesting, since the loader
 * recurses), check the tree for depth and recursive aliases, flatten merge keys (<<) into
 * key lists, apply --set overrides to the node tree and emit the tree back as text. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* file and parser */

mbsStatus deck_read_file(const char *path, char **text, size_t *len, mbsError *err) {
  size_t cap = 4096, n = 0;
  char *buf = NULL;
  mbsStatus st = MBS_OK;

  *text = NULL;
  *len = 0;
  errno = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    return mbs_error_set(err, MBS_ERR_IO, path, 0, 0, "cannot open '%s': %s", path,
                         errno ? strerror(errno) : "unknown error");
  }
  buf = malloc(cap);
  if (!buf) {
    st = mbs_error_set(err, MBS_ERR_NOMEM, path, 0, 0, "out of memory");
    goto fail;
  }

  /* read in growing chunks (works for pipes too), keeping room for the NUL */
  for (;;) {
    if (n > (size_t)DECK_MAX_BYTES) {
      st = mbs_error_set(err, MBS_ERR_IO, path, 0, 0, "cannot read '%s': larger than %ld bytes",
                         path, DECK_MAX_BYTES);
      goto fail;
    }
    if (n + 1 == cap) {
      /* at most one byte more than the limit (and the NUL): enough to see it is exceeded */
      size_t grow = 2 * cap > (size_t)DECK_MAX_BYTES + 2 ? (size_t)DECK_MAX_BYTES + 2 : 2 * cap;
      char *grown = realloc(buf, grow);
      if (!grown) {
        st = mbs_error_set(err, MBS_ERR_NOMEM, path, 0, 0, "out of memory");
        goto fail;
      }
      buf = grown;
      cap = grow;
    }
    errno = 0;
    size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        st = mbs_error_set(err, MBS_ERR_IO, path, 0, 0, "cannot read '%s': %s", path,
                           strerror(errno ? errno : EIO));
        goto fail;
      }
      break;
    }
  }
  buf[n] = '\0';
  fclose(f);
  *text = buf;
  *len = n;
  return MBS_OK;

fail:
  free(buf);
  fclose(f);
  return st;
}

/* libyaml's error as ours; its marks are 0-based */
static mbsStatus yaml_failure(DeckReader *r, const yaml_parser_t *p, const char *text, size_t len) {
  int line = (int)p->problem_mark.line + 1;
  int col = (int)p->problem_mark.column + 1;
  const char *problem = p->problem ? p->problem : "unknown problem";

  /* some of libyaml's allocation failures return without setting an error */
  if (p->error == YAML_MEMORY_ERROR || p->error == YAML_NO_ERROR) {
    return deck_nomem(r);
  }

  /* reader errors (bad encoding) only know the byte offset */
  if (p->error == YAML_READER_ERROR) {
    /* a bad trailing octet is reported at itself: point at the character's first byte */
    size_t at = p->problem_offset;
    if (strstr(problem, "trailing") && at > 0 && at <= len) {
      at--;
      while (at > 0 && ((unsigned char)text[at] & 0xC0) == 0x80) {
        at--;
      }
    }
    line = 1;
    col = 1;
    for (size_t k = 0; k < at && k < len; k++) {
      if (text[k] == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    /* the byte at fault: libyaml gives it for some problems, the text has it for all */
    int byte = at < len ? (unsigned char)text[at] : p->problem_value;
    if (p->problem_value > 0xff) {
      byte = p->problem_value;
    }
    if (byte > 0xff) {
      return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col,
                           "YAML syntax error: %s (U+%04X); a deck must be UTF-8 text", problem,
                           (unsigned)byte);
    }
    if (byte >= 0) {
      return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col,
                           "YAML syntax error: %s (byte 0x%02x); a deck must be UTF-8 text",
                           problem, byte);
    }
    return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col,
                         "YAML syntax error: %s; a deck must be UTF-8 text", problem);
  }

  /* composer errors (anchors and aliases) name the first place as context */
  if (p->error == YAML_COMPOSER_ERROR && p->context) {
    return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col,
                         "YAML syntax error: %s at %d:%d, %s here", p->context,
                         (int)p->context_mark.line + 1, (int)p->context_mark.column + 1, problem);
  }
  if (p->context) {
    return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col,
                         "YAML syntax error: %s (%s at %d:%d)", problem, p->context,
                         (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
  }
  return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col, "YAML syntax error: %s",
                       problem);
}

/* the anchor of a node event, or NULL */
static const yaml_char_t *event_anchor(const yaml_event_t *ev) {
  switch (ev->type) {
    case YAML_SCALAR_EVENT:
      return ev->data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT:
      return ev->data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT:
      return ev->data.mapping_start.anchor;
    default:
      return NULL;
  }
}

/* event pass: syntax, exactly one document, nesting depth, number of nodes and anchors.
 * It runs in constant memory; the loader recurses once per level, allocates every node and
 * searches the anchors linearly for each alias, so it must only ever see a bounded
 * document */
static mbsStatus prescan(DeckReader *r, const char *text, size_t len) {
  yaml_parser_t p;
  int depth = 0, ndoc = 0, done = 0;
  long nnode = 0, nanchor = 0;
  mbsStatus st = MBS_OK;

  /* libyaml also reads UTF-16 with a byte order mark, but the deck text is kept and written
   * out as UTF-8 */
  const unsigned char *u = (const unsigned char *)text;
  if (len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff))) {
    return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, 1, 1,
                         "the deck is UTF-16 text (it starts with a UTF-16 byte order mark); a "
                         "deck must be UTF-8 text");
  }

  if (!yaml_parser_initialize(&p)) {
    return deck_nomem(r);
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  while (!done && st == MBS_OK) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&p, &ev)) {
      st = yaml_failure(r, &p, text, len);
      break;
    }
    int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
    switch (ev.type) {
      case YAML_DOCUMENT_START_EVENT:
        if (++ndoc > 1) {
          st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, line, col,
                             "a deck is one YAML document; a second one starts here");
        }
        break;
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT:
        if (++depth > DECK_MAX_DEPTH) {
          st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, line, col,
                             "the deck is nested deeper than %d levels", DECK_MAX_DEPTH);
        }
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        depth--;
        break;
      case YAML_STREAM_END_EVENT:
        done = 1;
        break;
      default:
        break;
    }

    /* an alias counts as a node here; what it repeats is counted by deck_check_depth */
    if (st == MBS_OK &&
        (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT ||
         ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)) {
      if (++nnode > DECK_MAX_NODES) {
        st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, line, col,
                           "the deck has more than %ld YAML nodes (values, lists and "
                           "mappings); this is the limit of a deck",
                           DECK_MAX_NODES);
      } else if (event_anchor(&ev) && ++nanchor > DECK_MAX_ANCHORS) {
        st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, line, col,
                           "the deck defines more than %ld anchors (&name); this is the limit "
                           "of a deck",
                           DECK_MAX_ANCHORS);
      }
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&p);
  if (st == MBS_OK && ndoc == 0) {
    st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, 0, 0, "empty deck");
  }
  return st;
}

mbsStatus deck_parse(DeckReader *r, const char *text, size_t len) {
  yaml_parser_t p;
  mbsStatus st = prescan(r, text, len);
  if (st != MBS_OK) {
    return st;
  }

  /* the document loader resolves anchors and aliases to shared nodes */
  if (!yaml_parser_initialize(&p)) {
    return deck_nomem(r);
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  if (!yaml_parser_load(&p, r->doc)) {
    st = yaml_failure(r, &p, text, len);
  } else {
    /* "---" alone is a document whose root is an empty scalar */
    yaml_node_t *root = yaml_document_get_root_node(r->doc);
    if (!root || (root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0 &&
                  root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)) {
      st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, 0, 0, "empty deck");
    }
  }
  yaml_parser_delete(&p);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* depth and recursive aliases */

static int node_count(const yaml_document_t *doc) {
  return (int)(doc->nodes.top - doc->nodes.start);
}

/* what the walk below found wrong */
typedef enum { WALK_DEPTH, WALK_CYCLE, WALK_EXPANSION } WalkProblem;

typedef struct {
  yaml_document_t *doc;
  unsigned char *state; /* (nn + 1) 0 unseen, 1 on the current path, 2 done */
  int *depth;           /* (nn + 1) collection depth of a done node */
  long *size;           /* (nn + 1) nodes of a done node's subtree, aliases expanded */
  int where;            /* the node at fault */
  WalkProblem problem;
} Walk;

/* collection depth of the subtree at node id (0 for a scalar) and, in *size, its number of
 * nodes with every alias expanded (saturating just above DECK_MAX_NODES). Shared nodes are
 * walked once (memoised), so this is linear in the document even for an alias bomb.
 * Returns -1 when the depth exceeds DECK_MAX_DEPTH, an alias refers back to an enclosing
 * node or the expansion exceeds DECK_MAX_NODES (w->where, w->problem say which). */
static int subtree_walk(Walk *w, int id, int level, long *size) {
  yaml_node_t *n = yaml_document_get_node(w->doc, id);
  int d = 0;
  long total = 1;

  *size = 1;
  if (n->type == YAML_SCALAR_NODE) {
    return 0;
  }
  if (w->state[id] == 2) {
    if (level - 1 + w->depth[id] > DECK_MAX_DEPTH) {
      w->where = id;
      w->problem = WALK_DEPTH;
      return -1;
    }
    *size = w->size[id];
    return w->depth[id];
  }
  if (w->state[id] == 1) {
    w->where = id;
    w->problem = WALK_CYCLE;
    return -1;
  }
  if (level > DECK_MAX_DEPTH) {
    w->where = id;
    w->problem = WALK_DEPTH;
    return -1;
  }

  /* children: list items, then mapping keys and values */
  w->state[id] = 1;
  int nitem = 0, npair = 0;
  if (n->type == YAML_SEQUENCE_NODE) {
    nitem = (int)(n->data.sequence.items.top - n->data.sequence.items.start);
  } else if (n->type == YAML_MAPPING_NODE) {
    npair = (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  }
  for (int k = 0; k < nitem + 2 * npair; k++) {
    int cid;
    if (k < nitem) {
      cid = n->data.sequence.items.start[k];
    } else {
      const yaml_node_pair_t *pr = &n->data.mapping.pairs.start[(k - nitem) / 2];
      cid = (k - nitem) % 2 ? pr->value : pr->key;
    }
    long cs;
    int c = subtree_walk(w, cid, level + 1, &cs);
    if (c < 0) {
      return -1;
    }
    d = c > d ? c : d;
    total += cs;
    if (total > DECK_MAX_NODES) {
      w->where = id;
      w->problem = WALK_EXPANSION;
      return -1;
    }
  }
  w->state[id] = 2;
  w->depth[id] = d + 1;
  w->size[id] = total;
  *size = total;
  return d + 1;
}

mbsStatus deck_check_depth(DeckReader *r) {
  int nn = node_count(r->doc);
  long size;
  mbsStatus st = MBS_OK;
  Walk w;

  memset(&w, 0, sizeof(w));
  w.doc = r->doc;
  w.state = calloc((size_t)nn + 1, 1);
  w.depth = calloc((size_t)nn + 1, sizeof(int));
  w.size = calloc((size_t)nn + 1, sizeof(long));
  if (!w.state || !w.depth || !w.size) {
    st = deck_nomem(r);
    goto fail;
  }
  if (nn > 0 && subtree_walk(&w, 1, 1, &size) < 0) {
    const yaml_node_t *n = yaml_document_get_node(r->doc, w.where);
    if (w.problem == WALK_CYCLE) {
      st = deck_fail_bare(r, n, "recursive alias: this node contains itself");
    } else if (w.problem == WALK_EXPANSION) {
      st = deck_fail_bare(r, n,
                          "aliases expand the deck to more than %ld YAML nodes here (an alias "
                          "bomb?); this is the limit of a deck",
                          DECK_MAX_NODES);
    } else {
      st = deck_fail_bare(r, n, "the deck is nested deeper than %d levels", DECK_MAX_DEPTH);
    }
  }

fail:
  free(w.size);
  free(w.depth);
  free(w.state);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* merge keys */

static int is_merge_key(const yaml_node_t *k) {
  return k->type == YAML_SCALAR_NODE && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
         k->data.scalar.length == 2 && memcmp(k->data.scalar.value, "<<", 2) == 0;
}

/* FNV-1a over the key's bytes */
static unsigned key_hash(const void *key, size_t len) {
  const unsigned char *s = key;
  unsigned h = 2166136261u;
  for (size_t i = 0; i < len; i++) {
    h = (h ^ s[i]) * 16777619u;
  }
  return h;
}

static int key_is(const yaml_node_t *k, const char *key, size_t len) {
  return k->data.scalar.length == len && memcmp(k->data.scalar.value, key, len) == 0;
}

static const DeckKeyValue *find_n(const DeckMap *m, const char *key, size_t len) {
  if (m->index) {
    unsigned mask = (unsigned)m->icap - 1;
    for (unsigned k = key_hash(key, len) & mask; m->index[k]; k = (k + 1) & mask) {
      const DeckKeyValue *kv = &m->kv[m->index[k] - 1];
      if (key_is(kv->key, key, len)) {
        return kv;
      }
    }
    return NULL;
  }
  for (int i = 0; i < m->n; i++) {
    if (key_is(m->kv[i].key, key, len)) {
      return &m->kv[i];
    }
  }
  return NULL;
}

const DeckKeyValue *deck_map_find(const DeckMap *m, const char *key) {
  return find_n(m, key, strlen(key));
}

yaml_node_t *deck_map_get(const DeckMap *m, const char *key) {
  const DeckKeyValue *kv = deck_map_find(m, key);
  return kv ? kv->value : NULL;
}

void deck_map_free(DeckMap *m) {
  free(m->kv);
  free(m->index);
  memset(m, 0, sizeof(*m));
}

static void index_put(DeckMap *m, int pos) {
  const yaml_node_t *key = m->kv[pos].key;
  unsigned mask = (unsigned)m->icap - 1;
  unsigned k = key_hash(key->data.scalar.value, key->data.scalar.length) & mask;
  while (m->index[k]) {
    k = (k + 1) & mask;
  }
  m->index[k] = pos + 1;
}

/* (re)build the hash index for at least 4 slots per key (a power of two) */
static mbsStatus index_build(DeckReader *r, DeckMap *m) {
  int cap = 64;
  while (cap < 4 * m->n) {
    cap *= 2;
  }
  int *index = calloc((size_t)cap, sizeof(int));
  if (!index) {
    return deck_nomem(r);
  }
  free(m->index);
  m->index = index;
  m->icap = cap;
  for (int i = 0; i < m->n; i++) {
    index_put(m, i);
  }
  return MBS_OK;
}

static mbsStatus kv_push(DeckReader *r, DeckMap *m, yaml_node_t *key, yaml_node_t *value,
                         int pair) {
  if (m->n == m->cap) {
    int cap = m->cap ? 2 * m->cap : 16;
    DeckKeyValue *kv = realloc(m->kv, (size_t)cap * sizeof(*kv));
    if (!kv) {
      return deck_nomem(r);
    }
    m->kv = kv;
    m->cap = cap;
  }
  m->kv[m->n].key = key;
  m->kv[m->n].value = value;
  m->kv[m->n].pair = pair;
  m->n++;

  /* big maps get an index at most half full */
  if (m->n > DECK_MAP_INDEX_MIN && (!m->index || 2 * m->n > m->icap)) {
    return index_build(r, m);
  }
  if (m->index) {
    index_put(m, m->n - 1);
  }
  return MBS_OK;
}

/* a key's text for sorting */
typedef struct {
  const unsigned char *text;
  size_t len;
  int pair;
} KeyRef;

static int keyref_cmp(const void *a, const void *b) {
  const KeyRef *x = a, *y = b;
  if (x->len != y->len) {
    return x->len < y->len ? -1 : 1;
  }
  int c = x->len ? memcmp(x->text, y->text, x->len) : 0;
  if (c) {
    return c;
  }
  return (x->pair > y->pair) - (x->pair < y->pair);
}

/* the first of the first n pairs (all scalar keys) whose key repeats an earlier one:
 * *dup is its index, *first the index of the earlier one; *dup = -1 if none. Small
 * mappings compare every pair, big ones sort the keys (n log n). */
static mbsStatus first_duplicate(DeckReader *r, const yaml_node_pair_t *pairs, int n, int *first,
                                 int *dup) {
  *dup = -1;
  if (n <= DECK_MAP_INDEX_MIN) {
    for (int p = 1; p < n && *dup < 0; p++) {
      const yaml_node_t *key = yaml_document_get_node(r->doc, pairs[p].key);
      for (int q = 0; q < p; q++) {
        const yaml_node_t *prev = yaml_document_get_node(r->doc, pairs[q].key);
        if (key_is(prev, (const char *)key->data.scalar.value, key->data.scalar.length)) {
          *first = q;
          *dup = p;
          break;
        }
      }
    }
    return MBS_OK;
  }

  /* equal keys sort next to each other, in document order: the duplicate met first is the
   * second entry of the group whose second entry comes earliest */
  KeyRef *ref = malloc((size_t)n * sizeof(*ref));
  if (!ref) {
    return deck_nomem(r);
  }
  for (int p = 0; p < n; p++) {
    const yaml_node_t *key = yaml_document_get_node(r->doc, pairs[p].key);
    ref[p].text = key->data.scalar.value;
    ref[p].len = key->data.scalar.length;
    ref[p].pair = p;
  }
  qsort(ref, (size_t)n, sizeof(*ref), keyref_cmp);
  for (int g = 0; g < n;) {
    int h = g + 1;
    while (h < n && ref[h].len == ref[g].len &&
           (ref[g].len == 0 || memcmp(ref[h].text, ref[g].text, ref[g].len) == 0)) {
      h++;
    }
    if (h - g >= 2 && (*dup < 0 || ref[g + 1].pair < *dup)) {
      *first = ref[g].pair;
      *dup = ref[g + 1].pair;
    }
    g = h;
  }
  free(ref);
  return MBS_OK;
}

/* add the keys of mapping `node` that m does not have yet: its own keys, then those of its
 * merge sources in order. A source reached twice adds nothing new the second time, so each
 * mapping is visited once per flatten (marked with the pass number in r->visit); this
 * bounds the work of merge chains, and the recursion is bounded by the depth check. */
static mbsStatus collect(DeckReader *r, yaml_node_t *node, DeckMap *m, int own) {
  yaml_node_pair_t *pairs = node->data.mapping.pairs.start;
  int np = (int)(node->data.mapping.pairs.top - pairs);
  int id = (int)(node - r->doc->nodes.start) + 1;
  mbsStatus st;

  if (r->visit[id] == r->pass) {
    return MBS_OK;
  }
  r->visit[id] = r->pass;

  /* own keys: scalars, each at most once; a key that is not a scalar is reported where
   * the pairwise check would have met it */
  int nscalar = 0;
  while (nscalar < np &&
         yaml_document_get_node(r->doc, pairs[nscalar].key)->type == YAML_SCALAR_NODE) {
    nscalar++;
  }
  int first, dup;
  if ((st = first_duplicate(r, pairs, nscalar, &first, &dup)) != MBS_OK) {
    return st;
  }
  if (dup >= 0) {
    yaml_node_t *key = yaml_document_get_node(r->doc, pairs[dup].key);
    int line, col;
    deck_node_pos(yaml_document_get_node(r->doc, pairs[first].key), &line, &col);
    return deck_fail(r, key, "duplicate key '%.64s' (first at %d:%d)",
                     (const char *)key->data.scalar.value, line, col);
  }
  if (nscalar < np) {
    yaml_node_t *key = yaml_document_get_node(r->doc, pairs[nscalar].key);
    return deck_fail(r, key, "mapping keys must be scalars, got %s", deck_kind(key));
  }
  for (int p = 0; p < np; p++) {
    yaml_node_t *key = yaml_document_get_node(r->doc, pairs[p].key);
    if (is_merge_key(key)) {
      continue;
    }
    if (own || !find_n(m, (const char *)key->data.scalar.value, key->data.scalar.length)) {
      st = kv_push(r, m, key, yaml_document_get_node(r->doc, pairs[p].value), own ? p : -1);
      if (st != MBS_OK) {
        return st;
      }
    }
  }

  /* then the merge sources: <<: *a or <<: [*a, *b] (earlier ones win) */
  for (int p = 0; p < np; p++) {
    yaml_node_t *key = yaml_document_get_node(r->doc, pairs[p].key);
    if (!is_merge_key(key)) {
      continue;
    }
    yaml_node_t *src = yaml_document_get_node(r->doc, pairs[p].value);
    if (src->type == YAML_MAPPING_NODE) {
      st = collect(r, src, m, 0);
      if (st != MBS_OK) {
        return st;
      }
      continue;
    }
    if (src->type != YAML_SEQUENCE_NODE) {
      return deck_fail(r, src, "'<<' (merge key) takes a mapping or a list of mappings, got %s",
                       deck_kind(src));
    }
    for (yaml_node_item_t *it = src->data.sequence.items.start; it < src->data.sequence.items.top;
         it++) {
      yaml_node_t *s = yaml_document_get_node(r->doc, *it);
      if (s->type != YAML_MAPPING_NODE) {
        return deck_fail(r, s, "'<<' (merge key) takes a mapping or a list of mappings, got %s",
                         deck_kind(s));
      }
      st = collect(r, s, m, 0);
      if (st != MBS_OK) {
        return st;
      }
    }
  }
  return MBS_OK;
}

/* a new pass number for collect(), with r->visit covering every node of the document */
static mbsStatus next_pass(DeckReader *r) {
  int nn = node_count(r->doc);
  if (r->nvisit < nn + 1) {
    int cap = nn + 1 > 2 * r->nvisit ? nn + 1 : 2 * r->nvisit;
    unsigned *v = realloc(r->visit, (size_t)cap * sizeof(*v));
    if (!v) {
      return deck_nomem(r);
    }
    memset(v + r->nvisit, 0, (size_t)(cap - r->nvisit) * sizeof(*v));
    r->visit = v;
    r->nvisit = cap;
  }
  if (++r->pass == 0) {
    /* the counter wrapped: forget every old mark */
    memset(r->visit, 0, (size_t)r->nvisit * sizeof(*r->visit));
    r->pass = 1;
  }
  return MBS_OK;
}

mbsStatus deck_map_flatten(DeckReader *r, yaml_node_t *node, DeckMap *m) {
  memset(m, 0, sizeof(*m));
  m->node = node;
  mbsStatus st = next_pass(r);
  if (st == MBS_OK) {
    st = collect(r, node, m, 1);
  }
  if (st != MBS_OK) {
    deck_map_free(m);
  }
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* --set overrides */

/* an override path that names nothing in the deck */
static mbsStatus set_fail(DeckReader *r, int i, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static mbsStatus set_fail(DeckReader *r, int i, const char *fmt, ...) {
  char msg[MBS_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return mbs_error_set(r->err, MBS_ERR_ARGS, r->file, 0, 0, "--set %s: %s",
                       r->overrides[i].path ? r->overrides[i].path : "", msg);
}

static int utf8_valid(const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  while (*u) {
    int extra;
    if (*u < 0x80) {
      extra = 0;
    } else if ((*u & 0xE0) == 0xC0 && *u >= 0xC2) {
      extra = 1;
    } else if ((*u & 0xF0) == 0xE0) {
      extra = 2;
    } else if ((*u & 0xF8) == 0xF0 && *u <= 0xF4) {
      extra = 3;
    } else {
      return 0;
    }
    u++;
    for (int k = 0; k < extra; k++, u++) {
      if ((*u & 0xC0) != 0x80) {
        return 0;
      }
    }
  }
  return 1;
}

static yaml_node_t *node_at(DeckReader *r, int id) {
  return yaml_document_get_node(r->doc, id);
}

static int node_id(DeckReader *r, const yaml_node_t *n) {
  return (int)(n - r->doc->nodes.start) + 1;
}

/* the reference count of node id (0 for a new node not attached yet) */
static int ref_get(const DeckReader *r, int id) {
  return id < r->nref ? r->refs[id] : 0;
}

/* counts references to every node once, before the first override; each edit then keeps the
 * counts (recounting the whole deck for every override made 1000 overrides of a large deck
 * take 18 s) */
static int ref_init(DeckReader *r) {
  int nn = node_count(r->doc);
  r->refs = calloc((size_t)nn + 2, sizeof(int));
  if (!r->refs) {
    return 0;
  }
  r->nref = nn + 2;
  r->set_base = nn;
  r->refs[1] = 1;
  for (int id = 1; id <= nn; id++) {
    yaml_node_t *n = yaml_document_get_node(r->doc, id);
    if (n->type == YAML_SEQUENCE_NODE) {
      for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
           it++) {
        r->refs[*it]++;
      }
    } else if (n->type == YAML_MAPPING_NODE) {
      for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        r->refs[p->key]++;
        r->refs[p->value]++;
      }
    }
  }
  return 1;
}

/* a reference to node id added (delta 1) or dropped (-1); 0 when out of memory */
static int ref_add(DeckReader *r, int id, int delta) {
  if (id >= r->nref) {
    int cap = r->nref;
    while (cap <= id) {
      cap *= 2;
    }
    int *grown = realloc(r->refs, (size_t)cap * sizeof(int));
    if (!grown) {
      return 0;
    }
    memset(grown + r->nref, 0, (size_t)(cap - r->nref) * sizeof(int));
    r->refs = grown;
    r->nref = cap;
  }
  r->refs[id] += delta;
  return 1;
}

/* item id appended to list seq, counted */
static int attach_item(DeckReader *r, int seq, int id) {
  return yaml_document_append_sequence_item(r->doc, seq, id) && ref_add(r, id, 1);
}

/* key: value appended to mapping map, counted */
static int attach_pair(DeckReader *r, int map, int key, int value) {
  return yaml_document_append_mapping_pair(r->doc, map, key, value) && ref_add(r, key, 1) &&
         ref_add(r, value, 1);
}

/* *slot (a pair's value or a list item) becomes id, counted */
static int replace_ref(DeckReader *r, yaml_node_item_t *slot, int id) {
  int old = *slot;
  *slot = id;
  return ref_add(r, old, -1) && ref_add(r, id, 1);
}

/* nodes made by --set number i have no position in the file */
static void mark_set(DeckReader *r, int id, int i) {
  yaml_node_t *n = node_at(r, id);
  n->start_mark.index = DECK_SET_MARK;
  n->start_mark.line = 0;
  n->start_mark.column = (size_t)i;
  n->end_mark = n->start_mark;
}

static int new_scalar(DeckReader *r, const char *text, size_t len, int i) {
  int id = yaml_document_add_scalar(r->doc, NULL, (const yaml_char_t *)text, (int)len,
                                    YAML_PLAIN_SCALAR_STYLE);
  if (id) {
    mark_set(r, id, i);
  }
  return id;
}

static int new_mapping(DeckReader *r, yaml_mapping_style_t style, int i) {
  int id = yaml_document_add_mapping(r->doc, NULL, style);
  if (id) {
    mark_set(r, id, i);
  }
  return id;
}

/* a --set value written as a flow list: "[1, 2, 3]", "[[0, 0, 0], [1, 0, 0]]" */
static int value_is_list(const char *v) {
  v += strspn(v, " \t");
  return *v == '[';
}

/* copy node `id` of src (a parsed --set value) into the deck as new nodes of override i;
 * 0 when out of memory, -1 when too deep, -2 when the nodes of all overrides together would
 * pass DECK_SET_MAX_NODES (*budget: the nodes left) */
static int copy_value(DeckReader *r, yaml_document_t *src, int id, int i, int depth, int *budget) {
  yaml_node_t *n = yaml_document_get_node(src, id);
  if (!n || depth > DECK_MAX_DEPTH) {
    return -1;
  }
  if (--*budget < 0) {
    return -2;
  }
  int out = 0;
  if (n->type == YAML_SCALAR_NODE) {
    return new_scalar(r, (const char *)n->data.scalar.value, n->data.scalar.length, i);
  }
  if (n->type == YAML_SEQUENCE_NODE) {
    out = yaml_document_add_sequence(r->doc, NULL, YAML_FLOW_SEQUENCE_STYLE);
    if (!out) {
      return 0;
    }
    mark_set(r, out, i);
    /* nodes are added to the deck, never to src: n and its items stay where they are */
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
      int c = copy_value(r, src, *it, i, depth + 1, budget);
      if (c <= 0) {
        return c;
      }
      if (!attach_item(r, out, c)) {
        return 0;
      }
    }
    return out;
  }
  if (n->type == YAML_MAPPING_NODE) {
    out = new_mapping(r, YAML_FLOW_MAPPING_STYLE, i);
    if (!out) {
      return 0;
    }
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
      int k = copy_value(r, src, pr->key, i, depth + 1, budget);
      if (k <= 0) {
        return k;
      }
      int v = copy_value(r, src, pr->value, i, depth + 1, budget);
      if (v <= 0) {
        return v;
      }
      if (!attach_pair(r, out, k, v)) {
        return 0;
      }
    }
    return out;
  }
  return -1;
}

static mbsStatus set_fail(DeckReader *r, int i, const char *fmt, ...);

/* the value of override i as new deck nodes in *id: a list parsed by libyaml when it is
 * written as one, else a plain scalar */
static mbsStatus new_value(DeckReader *r, int i, int *id) {
  const char *v = r->overrides[i].value;
  if (!value_is_list(v)) {
    *id = new_scalar(r, v, strlen(v), i);
    return *id ? MBS_OK : deck_nomem(r);
  }
  yaml_parser_t p;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&p)) {
    return deck_nomem(r);
  }
  yaml_parser_set_input_string(&p, (const unsigned char *)v, strlen(v));
  mbsStatus st = MBS_OK;
  if (!yaml_parser_load(&p, &doc)) {
    st = set_fail(r, i, "'%.60s%s' is not a valid YAML list (%s)", v, strlen(v) > 60 ? "..." : "",
                  p.problem ? p.problem : "parse error");
    yaml_parser_delete(&p);
    return st;
  }
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  int budget = DECK_SET_MAX_NODES - (node_count(r->doc) - r->set_base);
  if (!root || root->type != YAML_SEQUENCE_NODE) {
    st = set_fail(r, i, "'%.60s%s' is not a list", v, strlen(v) > 60 ? "..." : "");
  } else {
    *id = copy_value(r, &doc, 1, i, 0, &budget);
    if (*id == 0) {
      st = deck_nomem(r);
    } else if (*id == -1) {
      st = set_fail(r, i, "the list is nested deeper than %d levels", DECK_MAX_DEPTH);
    } else if (*id < 0) {
      st = set_fail(r, i,
                    "the --set values together make more than %d YAML nodes (every copy of "
                    "an alias counts)",
                    DECK_SET_MAX_NODES);
    }
  }
  yaml_document_delete(&doc);
  yaml_parser_delete(&p);
  return st;
}

/* append key: value to mapping `map` */
static int append_pair(DeckReader *r, int map, const char *key, size_t len, int value, int i) {
  int k = new_scalar(r, key, len, i);
  return k && attach_pair(r, map, k, value);
}

/* a collection shared through an alias or a merge key is not edited in place: the path
 * goes through a new node that stands in for it (and keeps its position), so the override
 * reaches this one place only. A mapping becomes {<<: shared}; a list becomes a shallow
 * copy (its items stay shared, so everything below is treated as shared too). */
static int stand_in(DeckReader *r, int shared, int i) {
  yaml_node_t *s = node_at(r, shared);
  yaml_mark_t mark = s->start_mark;
  int id;

  if (s->type == YAML_MAPPING_NODE) {
    id = new_mapping(r, s->data.mapping.style, i);
    if (!id || !append_pair(r, id, "<<", 2, shared, i)) {
      return 0;
    }
  } else {
    id = yaml_document_add_sequence(r->doc, NULL, s->data.sequence.style);
    if (!id) {
      return 0;
    }
    int nitem = (int)(node_at(r, shared)->data.sequence.items.top -
                      node_at(r, shared)->data.sequence.items.start);
    for (int k = 0; k < nitem; k++) {
      int it = node_at(r, shared)->data.sequence.items.start[k];
      yaml_node_t *src = node_at(r, it);

      /* scalar items are copied too (with their position) so the text needs no anchors */
      if (src->type == YAML_SCALAR_NODE) {
        yaml_mark_t smark = src->start_mark;
        const yaml_char_t *tag = src->tag, *value = src->data.scalar.value;
        int copy = yaml_document_add_scalar(r->doc, tag, value, (int)src->data.scalar.length,
                                            src->data.scalar.style);
        if (!copy) {
          return 0;
        }
        node_at(r, copy)->start_mark = smark;
        node_at(r, copy)->end_mark = smark;
        it = copy;
      }
      if (!attach_item(r, id, it)) {
        return 0;
      }
    }
  }
  node_at(r, id)->start_mark = mark;
  node_at(r, id)->end_mark = mark;
  return id;
}

/* scalar n is the len bytes of s (no strlen: this runs for every entry of a list) */
static int scalar_is(const yaml_node_t *n, const char *s, size_t len) {
  return n->data.scalar.length == len && memcmp(n->data.scalar.value, s, len) == 0;
}

/* the `name` of list entry e (NULL if it has none): its own key; only an entry with merge
 * keys and no name of its own is flattened */
static mbsStatus entry_name(DeckReader *r, yaml_node_t *e, const char **name) {
  int merged = 0;
  *name = NULL;
  if (e->type != YAML_MAPPING_NODE) {
    return MBS_OK;
  }
  for (yaml_node_pair_t *pr = e->data.mapping.pairs.start; pr < e->data.mapping.pairs.top; pr++) {
    yaml_node_t *key = node_at(r, pr->key);
    if (key->type != YAML_SCALAR_NODE) {
      continue;
    }
    if (scalar_is(key, "name", 4)) {
      *name = deck_text(node_at(r, pr->value));
      return MBS_OK;
    }
    merged = merged || scalar_is(key, "<<", 2);
  }
  if (merged) {
    DeckMap m;
    mbsStatus st = deck_map_flatten(r, e, &m);
    if (st != MBS_OK) {
      return st;
    }
    *name = deck_text(deck_map_get(&m, "name"));
    deck_map_free(&m);
  }
  return MBS_OK;
}

/* lists with at least this many entries are looked up through r->entry_index */
#define ENTRY_INDEX_MIN 64

/* the list entry whose `name` is the longest prefix of path followed by '.' or the end
 * (names may contain dots); else, for an all-digit component, the entry at that index */
static mbsStatus pick_entry(DeckReader *r, int seq, const char *path, size_t klen, int *pick,
                            size_t *plen) {
  yaml_node_t *s = node_at(r, seq);
  int nitem = (int)(s->data.sequence.items.top - s->data.sequence.items.start);
  mbsStatus st;

  *pick = -1;
  *plen = 0;
  if (nitem < ENTRY_INDEX_MIN) {
    for (int k = 0; k < nitem; k++) {
      const char *name;
      if ((st = entry_name(r, node_at(r, node_at(r, seq)->data.sequence.items.start[k]),
                           &name)) != MBS_OK) {
        return st;
      }
      size_t nl = name ? strlen(name) : 0;
      if (nl > *plen && strncmp(path, name, nl) == 0 && (path[nl] == '\0' || path[nl] == '.')) {
        *pick = k;
        *plen = nl;
      }
    }
  } else {
    if (r->entry_seq != seq || r->entry_n != nitem) {
      /* (re)build the index of this list; the first of equal names wins, as above */
      deck_names_free(&r->entry_index);
      r->entry_seq = 0;
      if (!deck_names_init(&r->entry_index, nitem)) {
        return deck_nomem(r);
      }
      for (int k = 0; k < nitem; k++) {
        const char *name;
        if ((st = entry_name(r, node_at(r, node_at(r, seq)->data.sequence.items.start[k]),
                             &name)) != MBS_OK) {
          return st;
        }
        if (name && name[0]) {
          deck_names_put(&r->entry_index, name, k);
        }
      }
      r->entry_seq = seq;
      r->entry_n = nitem;
    }
    /* the longest prefix first: every '.' of the path (and its end) ends a candidate */
    char buf[1025];
    size_t len = strlen(path);
    if (len < sizeof(buf)) {
      memcpy(buf, path, len + 1);
      for (size_t l = len; l > 0 && *pick < 0; l--) {
        if (path[l] != '\0' && path[l] != '.') {
          continue;
        }
        buf[l] = '\0';
        int k = deck_names_get(&r->entry_index, buf);
        if (k >= 0) {
          *pick = k;
          *plen = l;
        }
      }
    }
  }
  if (*pick < 0 && klen > 0 && klen < 10 && strspn(path, "0123456789") >= klen) {
    int idx = atoi(path);
    if (idx < nitem) {
      *pick = idx;
      *plen = klen;
    }
  }
  return MBS_OK;
}

mbsStatus deck_check_overrides(DeckReader *r) {
  size_t bytes = 0;
  if (r->noverride > DECK_SET_MAX) {
    return mbs_error_set(r->err, MBS_ERR_ARGS, r->file, 0, 0,
                         "--set: %d overrides; at most %d are allowed", r->noverride, DECK_SET_MAX);
  }
  for (int i = 0; i < r->noverride; i++) {
    const mbsOverride *ov = &r->overrides[i];
    bytes += (ov->path ? strlen(ov->path) : 0) + (ov->value ? strlen(ov->value) : 0);
  }
  if (bytes > (size_t)DECK_SET_MAX_BYTES) {
    return mbs_error_set(r->err, MBS_ERR_ARGS, r->file, 0, 0,
                         "--set: the paths and values together are %zu bytes; at most %ld are "
                         "allowed",
                         bytes, DECK_SET_MAX_BYTES);
  }
  return MBS_OK;
}

mbsStatus deck_apply_override(DeckReader *r, int i) {
  const mbsOverride *ov = &r->overrides[i];
  const char *p = ov->path, *parent = NULL;
  size_t parent_len = 0;
  int cur = 1, done = 0, cow = 0;
  mbsStatus st = MBS_OK;

  if (!ov->path || !ov->value) {
    return set_fail(r, i, "missing path or value");
  }
  if (!ov->path[0]) {
    return set_fail(r, i, "empty path");
  }
  if (strlen(ov->path) > 1024 || strlen(ov->value) > 65536) {
    return set_fail(r, i, "path or value too long");
  }
  if (!utf8_valid(ov->path) || !utf8_valid(ov->value)) {
    return set_fail(r, i, "not valid UTF-8");
  }
  if (!r->refs && !ref_init(r)) {
    return deck_nomem(r);
  }

  /* walk the path one component at a time; cur is the node it has reached */
  while (!done && st == MBS_OK) {
    yaml_node_t *node = node_at(r, cur);
    const char *dot = strchr(p, '.');
    size_t klen = dot ? (size_t)(dot - p) : strlen(p);
    int next = 0;

    if (klen == 0) {
      st = set_fail(r, i, "empty key in the path");
      break;
    }

    if (node->type == YAML_MAPPING_NODE) {
      /* a mapping: the key may be its own, merged (<<) or missing */
      DeckMap m;
      st = deck_map_flatten(r, node, &m);
      if (st != MBS_OK) {
        break;
      }
      const DeckKeyValue *kv = find_n(&m, p, klen);
      int pair = kv ? kv->pair : -1;
      int val = kv ? node_id(r, kv->value) : 0;
      deck_map_free(&m);
      yaml_node_type_t vt = val ? node_at(r, val)->type : YAML_NO_NODE;

      if (!dot) {
        /* the last key: replace its value (new nodes: the old ones may be shared) or add it;
         * a scalar by a scalar or a list, a list by a list */
        int list = value_is_list(ov->value);
        if (val && vt != YAML_SCALAR_NODE && !(list && vt == YAML_SEQUENCE_NODE)) {
          st = set_fail(r, i, "'%.*s' is %s; only scalars and lists can be set%s", (int)klen, p,
                        deck_kind(node_at(r, val)),
                        vt == YAML_SEQUENCE_NODE ? " (a list as [a, b, ...])" : "");
          break;
        }
        int s = 0;
        st = new_value(r, i, &s);
        if (st != MBS_OK) {
          break;
        }
        if (pair >= 0) {
          if (!replace_ref(r, &node_at(r, cur)->data.mapping.pairs.start[pair].value, s)) {
            st = deck_nomem(r);
          }
        } else if (!append_pair(r, cur, p, klen, s, i)) {
          st = deck_nomem(r);
        }
        done = 1;
        break;
      }
      if (!val) {
        /* a missing mapping on the way (solver, output, newton, parameters): create it */
        next = new_mapping(r, YAML_BLOCK_MAPPING_STYLE, i);
        if (!next || !append_pair(r, cur, p, klen, next, i)) {
          st = deck_nomem(r);
        }
      } else if (vt == YAML_SCALAR_NODE) {
        st = set_fail(r, i, "'%.*s' is a scalar; it has no '%s'", (int)klen, p, dot + 1);
      } else {
        /* go on into the value, through a stand-in if it is shared */
        int sh = cow || pair < 0 || ref_get(r, val) > 1;
        next = sh ? stand_in(r, val, i) : val;
        if (!next) {
          st = deck_nomem(r);
        } else if (next != val && pair >= 0) {
          if (!replace_ref(r, &node_at(r, cur)->data.mapping.pairs.start[pair].value, next)) {
            st = deck_nomem(r);
          }
        } else if (next != val && !append_pair(r, cur, p, klen, next, i)) {
          st = deck_nomem(r);
        }
        cow = cow || sh;
      }
      parent = p;
      parent_len = klen;
      p = dot + 1;
    } else if (node->type == YAML_SEQUENCE_NODE) {
      /* a list: select the entry by its name (or index) */
      int pick;
      size_t plen;
      st = pick_entry(r, cur, p, klen, &pick, &plen);
      if (st != MBS_OK) {
        break;
      }
      if (!parent) {
        st = set_fail(r, i, "the deck is not a mapping");
        break;
      }
      if (pick < 0) {
        st = set_fail(r, i, "no entry named '%.*s' in '%.*s'", (int)klen, p, (int)parent_len,
                      parent);
        break;
      }
      int e = node_at(r, cur)->data.sequence.items.start[pick];
      yaml_node_type_t et = node_at(r, e)->type;
      if (p[plen] == '\0') {
        /* the path ends at the entry: a scalar item (gravity.2) or a list item
         * (points.1 = [0, 0, 1]) can be set */
        if (et != YAML_SCALAR_NODE && !(et == YAML_SEQUENCE_NODE && value_is_list(ov->value))) {
          st = set_fail(r, i, "'%.*s' is a list entry; only scalars and lists can be set",
                        (int)plen, p);
          break;
        }
        int s = 0;
        st = new_value(r, i, &s);
        if (st == MBS_OK &&
            !replace_ref(r, &node_at(r, cur)->data.sequence.items.start[pick], s)) {
          st = deck_nomem(r);
        }
        done = 1;
        break;
      }
      if (et == YAML_SCALAR_NODE) {
        st = set_fail(r, i, "'%.*s' is a scalar; it has no '%s'", (int)plen, p, p + plen + 1);
        break;
      }
      int sh = cow || ref_get(r, e) > 1;
      next = sh ? stand_in(r, e, i) : e;
      if (!next) {
        st = deck_nomem(r);
      } else if (next != e &&
                 !replace_ref(r, &node_at(r, cur)->data.sequence.items.start[pick], next)) {
        st = deck_nomem(r);
      }
      cow = cow || sh;
      parent = p;
      parent_len = plen;
      p = p + plen + 1;
    } else {
      /* only the root can get here: a deck that is a single scalar */
      st = set_fail(r, i, "the deck is not a mapping");
    }
    cur = next;
  }

  /* an override of a name, a merge key or by a list may rename entries: index them again */
  const char *last = strrchr(ov->path, '.');
  last = last ? last + 1 : ov->path;
  if (value_is_list(ov->value) || strcmp(last, "name") == 0 || strcmp(last, "<<") == 0) {
    r->entry_seq = 0;
  }
  /* stand-ins copy the lists they stand for: all overrides together stay bounded */
  if (st == MBS_OK && node_count(r->doc) - r->set_base > DECK_SET_MAX_NODES) {
    st = set_fail(r, i,
                  "the --set values together make more than %d YAML nodes (every copy of an "
                  "alias counts, and every entry of a shared list an override goes through)",
                  DECK_SET_MAX_NODES);
  }
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* emitting */

typedef struct {
  char *buf;
  size_t n, cap;
  int nomem;
} Sink;

static int sink_write(void *data, unsigned char *bytes, size_t size) {
  Sink *s = data;
  if (s->n + size + 1 > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 4096;
    while (cap < s->n + size + 1) {
      cap *= 2;
    }
    char *grown = realloc(s->buf, cap);
    if (!grown) {
      s->nomem = 1;
      return 0;
    }
    s->buf = grown;
    s->cap = cap;
  }
  memcpy(s->buf + s->n, bytes, size);
  s->n += size;
  s->buf[s->n] = '\0';
  return 1;
}

mbsStatus deck_emit(DeckReader *r, char **text) {
  yaml_emitter_t em;
  Sink sink = {0};
  mbsStatus st = MBS_OK;

  *text = NULL;
  if (!yaml_emitter_initialize(&em)) {
    return deck_nomem(r);
  }
  yaml_emitter_set_output(&em, sink_write, &sink);
  yaml_emitter_set_unicode(&em, 1);
  yaml_emitter_set_indent(&em, 2);
  yaml_emitter_set_width(&em, 100);

  /* yaml_emitter_dump consumes the document whatever happens: its nodes are freed and its
   * %YAML/%TAG directives go to the emitter's events (which free them), so the pointers the
   * document still holds must be dropped before it is deleted */
  int ok = yaml_emitter_open(&em);
  if (ok) {
    ok = yaml_emitter_dump(&em, r->doc);
    r->doc->version_directive = NULL;
    r->doc->tag_directives.start = NULL;
    r->doc->tag_directives.end = NULL;
  }
  ok = ok && yaml_emitter_close(&em) && yaml_emitter_flush(&em);

  if (!ok) {
    if (sink.nomem || em.error == YAML_MEMORY_ERROR || em.error == YAML_NO_ERROR || !em.problem) {
      st = deck_nomem(r);
    } else {
      st = mbs_error_set(r->err, MBS_ERR_DECK, r->file, 0, 0,
                         "cannot write the deck back after --set: %s", em.problem);
    }
    free(sink.buf);
    sink.buf = NULL;
  } else if (!sink.buf) {
    sink.buf = calloc(1, 1);
    if (!sink.buf) {
      st = deck_nomem(r);
    }
  }
  yaml_emitter_delete(&em);
  *text = sink.buf;
  return st;
}

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
    if (n + 1 == cap) {
      if (cap > (size_t)DECK_MAX_BYTES) {
        st = mbs_error_set(err, MBS_ERR_IO, path, 0, 0, "cannot read '%s': larger than %ld bytes",
                           path, DECK_MAX_BYTES);
        goto fail;
      }
      char *grown = realloc(buf, 2 * cap);
      if (!grown) {
        st = mbs_error_set(err, MBS_ERR_NOMEM, path, 0, 0, "out of memory");
        goto fail;
      }
      buf = grown;
      cap *= 2;
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
    line = 1;
    col = 1;
    for (size_t k = 0; k < p->problem_offset && k < len; k++) {
      if (text[k] == '\n') {
        line++;
        col = 1;
      } else {
        col++;
      }
    }
    if (p->problem_value >= 0) {
      return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col,
                           "YAML syntax error: %s (byte 0x%02x)", problem, p->problem_value);
    }
    return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col, "YAML syntax error: %s",
                         problem);
  }
  if (p->context) {
    return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col,
                         "YAML syntax error: %s (%s at %d:%d)", problem, p->context,
                         (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
  }
  return mbs_error_set(r->err, MBS_ERR_SYNTAX, r->file, line, col, "YAML syntax error: %s",
                       problem);
}

/* event pass: syntax, exactly one document, nesting depth; the loader itself recurses once
 * per level, so it must only ever see a bounded document */
static mbsStatus prescan(DeckReader *r, const char *text, size_t len) {
  yaml_parser_t p;
  int depth = 0, ndoc = 0, done = 0;
  mbsStatus st = MBS_OK;

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

/* collection depth of the subtree at node id (0 for a scalar), memoised so that shared
 * nodes are walked once; -1 when it exceeds DECK_MAX_DEPTH or an alias refers back to an
 * enclosing node (*where: the node, *cycle: which of the two) */
static int subtree_depth(yaml_document_t *doc, int id, unsigned char *state, int *memo, int level,
                         int *where, int *cycle) {
  yaml_node_t *n = yaml_document_get_node(doc, id);
  int d = 0;

  if (n->type == YAML_SCALAR_NODE) {
    return 0;
  }
  if (state[id] == 2) {
    if (level - 1 + memo[id] > DECK_MAX_DEPTH) {
      *where = id;
      return -1;
    }
    return memo[id];
  }
  if (state[id] == 1) {
    *where = id;
    *cycle = 1;
    return -1;
  }
  if (level > DECK_MAX_DEPTH) {
    *where = id;
    return -1;
  }

  /* children: list items, mapping keys and values */
  state[id] = 1;
  if (n->type == YAML_SEQUENCE_NODE) {
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
         it++) {
      int c = subtree_depth(doc, *it, state, memo, level + 1, where, cycle);
      if (c < 0) {
        return -1;
      }
      d = c > d ? c : d;
    }
  } else if (n->type == YAML_MAPPING_NODE) {
    for (yaml_node_pair_t *pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top; pr++) {
      int ck = subtree_depth(doc, pr->key, state, memo, level + 1, where, cycle);
      if (ck < 0) {
        return -1;
      }
      int cv = subtree_depth(doc, pr->value, state, memo, level + 1, where, cycle);
      if (cv < 0) {
        return -1;
      }
      d = ck > d ? ck : d;
      d = cv > d ? cv : d;
    }
  }
  state[id] = 2;
  memo[id] = d + 1;
  return d + 1;
}

mbsStatus deck_check_depth(DeckReader *r) {
  int nn = node_count(r->doc), where = 0, cycle = 0;
  mbsStatus st = MBS_OK;
  unsigned char *state = calloc((size_t)nn + 1, 1);
  int *memo = calloc((size_t)nn + 1, sizeof(int));

  if (!state || !memo) {
    st = deck_nomem(r);
    goto fail;
  }
  if (nn > 0 && subtree_depth(r->doc, 1, state, memo, 1, &where, &cycle) < 0) {
    const yaml_node_t *n = yaml_document_get_node(r->doc, where);
    if (cycle) {
      st = deck_fail_bare(r, n, "recursive alias: this node contains itself");
    } else {
      st = deck_fail_bare(r, n, "the deck is nested deeper than %d levels", DECK_MAX_DEPTH);
    }
  }

fail:
  free(memo);
  free(state);
  return st;
}

/* ---------------------------------------------------------------------------------------- */
/* merge keys */

typedef struct {
  const yaml_node_t **v;
  int n, cap;
} Visited;

static int is_merge_key(const yaml_node_t *k) {
  return k->type == YAML_SCALAR_NODE && k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
         k->data.scalar.length == 2 && memcmp(k->data.scalar.value, "<<", 2) == 0;
}

static int same_text(const yaml_node_t *a, const yaml_node_t *b) {
  return a->data.scalar.length == b->data.scalar.length &&
         memcmp(a->data.scalar.value, b->data.scalar.value, a->data.scalar.length) == 0;
}

static const DeckKeyValue *find_n(const DeckMap *m, const char *key, size_t len) {
  for (int i = 0; i < m->n; i++) {
    const yaml_node_t *k = m->kv[i].key;
    if (k->data.scalar.length == len && memcmp(k->data.scalar.value, key, len) == 0) {
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
  memset(m, 0, sizeof(*m));
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
  return MBS_OK;
}

/* add the keys of mapping `node` that m does not have yet: its own keys, then those of its
 * merge sources in order. A source reached twice adds nothing new the second time, so each
 * mapping is visited once (this bounds the work of merge chains); the recursion is bounded
 * by the depth check. */
static mbsStatus collect(DeckReader *r, yaml_node_t *node, DeckMap *m, int own, Visited *vis) {
  yaml_node_pair_t *pairs = node->data.mapping.pairs.start;
  int np = (int)(node->data.mapping.pairs.top - pairs);
  mbsStatus st;

  for (int i = 0; i < vis->n; i++) {
    if (vis->v[i] == node) {
      return MBS_OK;
    }
  }
  if (vis->n == vis->cap) {
    int cap = vis->cap ? 2 * vis->cap : 8;
    const yaml_node_t **v = realloc(vis->v, (size_t)cap * sizeof(*v));
    if (!v) {
      return deck_nomem(r);
    }
    vis->v = v;
    vis->cap = cap;
  }
  vis->v[vis->n++] = node;

  /* own keys: scalars, each at most once */
  for (int p = 0; p < np; p++) {
    yaml_node_t *key = yaml_document_get_node(r->doc, pairs[p].key);
    if (key->type != YAML_SCALAR_NODE) {
      return deck_fail(r, key, "mapping keys must be scalars, got %s", deck_kind(key));
    }
    for (int q = 0; q < p; q++) {
      const yaml_node_t *prev = yaml_document_get_node(r->doc, pairs[q].key);
      if (same_text(prev, key)) {
        int line, col;
        deck_node_pos(prev, &line, &col);
        return deck_fail(r, key, "duplicate key '%.64s' (first at %d:%d)",
                         (const char *)key->data.scalar.value, line, col);
      }
    }
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
      st = collect(r, src, m, 0, vis);
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
      st = collect(r, s, m, 0, vis);
      if (st != MBS_OK) {
        return st;
      }
    }
  }
  return MBS_OK;
}

mbsStatus deck_map_flatten(DeckReader *r, yaml_node_t *node, DeckMap *m) {
  Visited vis = {0};
  memset(m, 0, sizeof(*m));
  m->node = node;
  mbsStatus st = collect(r, node, m, 1, &vis);
  free(vis.v);
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

/* append key: value to mapping `map` */
static int append_pair(DeckReader *r, int map, const char *key, size_t len, int value, int i) {
  int k = new_scalar(r, key, len, i);
  return k && yaml_document_append_mapping_pair(r->doc, map, k, value);
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
      if (!yaml_document_append_sequence_item(r->doc, id, it)) {
        return 0;
      }
    }
  }
  node_at(r, id)->start_mark = mark;
  node_at(r, id)->end_mark = mark;
  return id;
}

/* how many times each node is referenced (root once) */
static int *refcounts(DeckReader *r, int *nref) {
  int nn = node_count(r->doc);
  int *rc = calloc((size_t)nn + 1, sizeof(int));
  if (!rc) {
    return NULL;
  }
  rc[1] = 1;
  for (int id = 1; id <= nn; id++) {
    yaml_node_t *n = node_at(r, id);
    if (n->type == YAML_SEQUENCE_NODE) {
      for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
           it++) {
        rc[*it]++;
      }
    } else if (n->type == YAML_MAPPING_NODE) {
      for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        rc[p->key]++;
        rc[p->value]++;
      }
    }
  }
  *nref = nn;
  return rc;
}

/* the list entry whose `name` is the longest prefix of path followed by '.' or the end
 * (names may contain dots); else, for an all-digit component, the entry at that index */
static mbsStatus pick_entry(DeckReader *r, int seq, const char *path, size_t klen, int *pick,
                            size_t *plen) {
  yaml_node_t *s = node_at(r, seq);
  int nitem = (int)(s->data.sequence.items.top - s->data.sequence.items.start);

  *pick = -1;
  *plen = 0;
  for (int k = 0; k < nitem; k++) {
    yaml_node_t *e = node_at(r, node_at(r, seq)->data.sequence.items.start[k]);
    DeckMap m;
    if (e->type != YAML_MAPPING_NODE) {
      continue;
    }
    mbsStatus st = deck_map_flatten(r, e, &m);
    if (st != MBS_OK) {
      return st;
    }
    const char *name = deck_text(deck_map_get(&m, "name"));
    size_t nl = name ? strlen(name) : 0;
    if (nl > *plen && strncmp(path, name, nl) == 0 && (path[nl] == '\0' || path[nl] == '.')) {
      *pick = k;
      *plen = nl;
    }
    deck_map_free(&m);
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

mbsStatus deck_apply_override(DeckReader *r, int i) {
  const mbsOverride *ov = &r->overrides[i];
  const char *p = ov->path, *parent = NULL;
  size_t parent_len = 0;
  int *refs = NULL, nref = 0, cur = 1, done = 0, cow = 0;
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
  refs = refcounts(r, &nref);
  if (!refs) {
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
        /* the last key: replace its scalar (a new node: the old one may be shared) or add it */
        if (val && vt != YAML_SCALAR_NODE) {
          st = set_fail(r, i, "'%.*s' is %s; only scalars can be set", (int)klen, p,
                        deck_kind(node_at(r, val)));
          break;
        }
        int s = new_scalar(r, ov->value, strlen(ov->value), i);
        if (!s) {
          st = deck_nomem(r);
        } else if (pair >= 0) {
          node_at(r, cur)->data.mapping.pairs.start[pair].value = s;
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
        int sh = cow || pair < 0 || (val <= nref && refs[val] > 1);
        next = sh ? stand_in(r, val, i) : val;
        if (!next) {
          st = deck_nomem(r);
        } else if (next != val && pair >= 0) {
          node_at(r, cur)->data.mapping.pairs.start[pair].value = next;
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
        /* the path ends at the entry: only a scalar item (gravity.2) can be set */
        if (et != YAML_SCALAR_NODE) {
          st = set_fail(r, i, "'%.*s' is a list entry; only scalars can be set", (int)plen, p);
          break;
        }
        int s = new_scalar(r, ov->value, strlen(ov->value), i);
        if (!s) {
          st = deck_nomem(r);
        } else {
          node_at(r, cur)->data.sequence.items.start[pick] = s;
        }
        done = 1;
        break;
      }
      if (et == YAML_SCALAR_NODE) {
        st = set_fail(r, i, "'%.*s' is a scalar; it has no '%s'", (int)plen, p, p + plen + 1);
        break;
      }
      int sh = cow || (e <= nref && refs[e] > 1);
      next = sh ? stand_in(r, e, i) : e;
      if (!next) {
        st = deck_nomem(r);
      } else if (next != e) {
        node_at(r, cur)->data.sequence.items.start[pick] = next;
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

  free(refs);
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

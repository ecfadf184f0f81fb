/* surfaces.c: the `surfaces:` section (docs/decks.md "Surfaces"). A deformable contact
 * surface is a grid of rows x cols point masses or beam nodes interpolated by bilinear patches
 * (seed 002 sec. 3.3, eq. 3.48; the elastic bowl of its sec. 6.4): the reader checks the
 * entry's keys, its name (unique among surfaces, and no body's or beam's: contact patterns
 * match all three), the nodes (point masses that move or beam nodes NAME[i], each once) and
 * the grid's size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deck/deck_internal.h"

static const char *const surface_keys[] = {"name", "nodes", "grid", "patches", NULL};
static const char *const patch_words[] = {"bilinear"};

/* grid: [rows, cols], each >= 2 */
static mbsStatus read_grid(DeckReader *r, yaml_node_t *v, mbsDeckSurface *sf) {
  mbsStatus st = deck_pair_list(r, v, "grid", "[rows, columns]");
  if (st != MBS_OK) {
    return st;
  }
  int g[2];
  for (int k = 0; k < 2; k++) {
    yaml_node_t *it = deck_item(r, v, k);
    if ((st = deck_integer(r, it, k == 0 ? "grid[0]" : "grid[1]", &g[k])) != MBS_OK) {
      return st;
    }
    if (g[k] < 2) {
      return deck_fail(r, it, "grid[%d] must be >= 2 (a patch spans two %s), got %d", k,
                       k == 0 ? "rows" : "columns", g[k]);
    }
  }
  if (g[0] > 100000 / g[1]) {
    return deck_fail(r, v, "grid: %d x %d nodes are too many (at most 100000)", g[0], g[1]);
  }
  sf->rows = g[0];
  sf->cols = g[1];
  return MBS_OK;
}

/* nodes: rows x cols names of point masses that move or beam nodes NAME[i], each once */
static mbsStatus read_nodes(DeckReader *r, const mbsDeck *deck, yaml_node_t *v,
                            const yaml_node_t *gnode, mbsDeckSurface *sf) {
  if (v->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, v, "nodes: expected a list of point masses or beam nodes, got %s",
                     deck_kind(v));
  }
  int n = deck_count(v);
  if (n != sf->rows * sf->cols) {
    return deck_fail(r, gnode ? gnode : v,
                     "grid [%d, %d] needs %d nodes (rows x columns), but nodes lists %d",
                     sf->rows, sf->cols, sf->rows * sf->cols, n);
  }
  if (!(sf->nodes = malloc((size_t)n * sizeof(int)))) {
    return deck_nomem(r);
  }
  for (int k = 0; k < n; k++) {
    yaml_node_t *it = deck_item(r, v, k);
    char field[32];
    snprintf(field, sizeof(field), "nodes[%d]", k);
    int b = -1;
    mbsStatus st = deck_body_ref(r, it, field, &b);
    if (st != MBS_OK) {
      return st;
    }
    if (b < 0) {
      return deck_fail(r, it,
                       "%s: the ground is not a node; a surface's nodes are point masses "
                       "(`type: point`) or beam nodes NAME[i], which move",
                       field);
    }
    if (b < deck->nbody) {
      const mbsDeckBody *db = &deck->bodies[b];
      if (db->type != MBS_BODY_POINT) {
        return deck_fail(r, it,
                         "%s: body '%s' is a %s body; a surface's nodes are point masses "
                         "(`type: point`) or beam nodes NAME[i]",
                         field, db->name, mbs_body_type_word(db->type));
      }
      if (db->fixed) {
        return deck_fail(r, it,
                         "%s: body '%s' is fixed; a surface's nodes move (hold one with a "
                         "spring to the ground instead)",
                         field, db->name);
      }
    }
    for (int j = 0; j < k; j++) {
      if (sf->nodes[j] == b) {
        return deck_fail(r, it, "%s: node '%s' is listed twice (first as nodes[%d])", field,
                         deck_text(it), j);
      }
    }
    sf->nodes[k] = b;
  }
  return MBS_OK;
}

static mbsStatus read_surface(DeckReader *r, mbsDeck *deck, int i, yaml_node_t *node) {
  mbsDeckSurface *sf = &deck->surfaces[i];
  DeckMap m = {0};
  const yaml_node_t *nn = NULL;
  yaml_node_t *v;
  deck_node_pos(node, &sf->mark.line, &sf->mark.col);
  mbsStatus st = deck_entry_open(r, node, "surfaces", i, "surface", surface_keys, NULL,
                                 sf->name, &nn, &m);
  if (st != MBS_OK) {
    return st;
  }
  /* contact patterns match bodies, beams and surfaces by name: one name, one thing */
  for (int j = 0; j < i; j++) {
    if (strcmp(deck->surfaces[j].name, sf->name) == 0) {
      st = deck_fail(r, nn, "duplicate surface name '%s' (first at %d:%d)", sf->name,
                     deck->surfaces[j].mark.line, deck->surfaces[j].mark.col);
      goto fail;
    }
  }
  if (deck_names_get(&r->body_names, sf->name) >= 0 ||
      deck_names_get(&r->beam_names, sf->name) >= 0) {
    st = deck_fail(r, nn, "surface name '%s' is already a %s's; contact patterns name both",
                   sf->name, deck_names_get(&r->body_names, sf->name) >= 0 ? "body" : "beam");
    goto fail;
  }
  /* patches: bilinear (the only interpolation) */
  if ((v = deck_map_get(&m, "patches"))) {
    int kind = 0;
    if ((st = deck_word(r, v, "patches", "patch interpolation", patch_words, 1, &kind)) !=
        MBS_OK) {
      goto fail;
    }
  }
  yaml_node_t *g = deck_map_get(&m, "grid");
  if (!g) {
    st = deck_fail(r, m.node, "missing required key 'grid' ([rows, columns] of the nodes)");
    goto fail;
  }
  if ((st = read_grid(r, g, sf)) != MBS_OK) {
    goto fail;
  }
  if (!(v = deck_map_get(&m, "nodes"))) {
    st = deck_fail(r, m.node,
                   "missing required key 'nodes' (point masses or beam nodes, row by row)");
    goto fail;
  }
  st = read_nodes(r, deck, v, g, sf);
fail:
  deck_map_free(&m);
  return st;
}

mbsStatus deck_read_surfaces(DeckReader *r, mbsDeck *deck, yaml_node_t *node) {
  r->ctx[0] = '\0';
  if (!node || deck_is_null(node)) {
    return MBS_OK;
  }
  if (node->type != YAML_SEQUENCE_NODE) {
    return deck_fail(r, node, "surfaces: expected a list, got %s", deck_kind(node));
  }
  int n = deck_count(node);
  if (n == 0) {
    return MBS_OK;
  }
  if (!(deck->surfaces = calloc((size_t)n, sizeof(*deck->surfaces)))) {
    return deck_nomem(r);
  }
  for (int i = 0; i < n; i++) {
    /* counted first, so that mbs_deck_free releases a partly read entry's nodes */
    deck->nsurface = i + 1;
    mbsStatus st = read_surface(r, deck, i, deck_item(r, node, i));
    if (st != MBS_OK) {
      return st;
    }
  }
  r->ctx[0] = '\0';
  return MBS_OK;
}

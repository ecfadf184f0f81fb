/* text.c: text from files (a restart file's names and attributes, paths) made safe to print
 * on a terminal: control characters, escape sequences, invalid UTF-8 and the Unicode
 * direction overrides are written as escapes, never raw. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* the code point of the valid UTF-8 sequence at s (its length into *len), or -1 for an
 * invalid byte (*len = 1) */
static long utf8_decode(const unsigned char *s, int *len) {
  unsigned char c = s[0];
  long cp;
  int n;
  *len = 1;
  if (c < 0x80) {
    return c;
  } else if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
    cp = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    cp = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return -1;
  }
  for (int i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) {
      return -1;
    }
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  /* overlong forms, surrogates, beyond U+10FFFF */
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
      (cp >= 0xd800 && cp <= 0xdfff)) {
    return -1;
  }
  *len = n;
  return cp;
}

/* code points a terminal acts on instead of showing: C0 and C1 controls, DEL, the
 * bidirectional embeddings, overrides and isolates */
static int is_control(long cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

char *cli_escape(char *dst, size_t n, const char *src) {
  size_t o = 0;
  const unsigned char *s = (const unsigned char *)(src ? src : "");
  if (n == 0) {
    return dst;
  }
  while (*s) {
    char esc[16];
    int len;
    long cp = utf8_decode(s, &len);
    if (cp < 0) {
      snprintf(esc, sizeof(esc), "\\x%02x", s[0]);
    } else if (cp == '\n') {
      snprintf(esc, sizeof(esc), "\\n");
    } else if (cp == '\t') {
      snprintf(esc, sizeof(esc), "\\t");
    } else if (cp == '\r') {
      snprintf(esc, sizeof(esc), "\\r");
    } else if (cp == '\\' && s[1] == 'x') {
      /* a literal "\x" stays distinguishable from an escape */
      snprintf(esc, sizeof(esc), "\\\\");
    } else if (is_control(cp)) {
      snprintf(esc, sizeof(esc), cp < 0x80 ? "\\x%02lx" : "\\u%04lx", cp);
    } else {
      memcpy(esc, s, (size_t)len);
      esc[len] = '\0';
    }
    size_t e = strlen(esc);
    if (o + e >= n) {
      break;
    }
    memcpy(dst + o, esc, e);
    o += e;
    s += len;
  }
  dst[o] = '\0';
  return dst;
}

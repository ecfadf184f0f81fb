"""The documents a newcomer navigates: every relative link of README.md, docs/**/*.md and every
other Markdown file of the project resolves to an existing file, and a link's #anchor to a
heading of its target (GitHub's rule: lower case, punctuation dropped, blanks as hyphens, a
repeated heading suffixed -1, -2, ...); README.md has at most 500 lines; each reference page
under docs/ opens with a table of contents that lists its sections; and no document points at
notes outside the project."""
import os
import re

from common import ROOT, check, done

SKIP_DIRS = {".git", "__pycache__", "corpus", "restart-corpus"}


def markdown_files():
    out = []
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build"))
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".md")]
    return out


def strip_code(text):
    """the text without fenced blocks and inline code spans (links there are not links)"""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", text, flags=re.S)


def slug(heading):
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())   # a link's text
    h = h.replace("`", "").lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", f.read(), flags=re.S | re.M)
        seen, out = {}, set()
        for m in re.finditer(r"^#{1,6} +(.+?) *#*$", text, flags=re.M):
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
        cache[path] = out
    return cache[path]


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")

files = markdown_files()
check(len(files) >= 15, "%d Markdown files found (README.md, docs/, decks/, tests/)" % len(files))
nlinks, bad = 0, []
for path in files:
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as f:
        text = strip_code(f.read())
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):      # http:, https:, mailto:
            continue
        nlinks += 1
        file_part, _, anchor = target.partition("#")
        dest = path if file_part == "" else os.path.normpath(
            os.path.join(os.path.dirname(path), file_part))
        if not dest.startswith(ROOT + os.sep) and dest != ROOT:
            bad.append("%s: %s leaves the project" % (rel, target))
        elif not os.path.exists(dest):
            bad.append("%s: %s does not exist" % (rel, target))
        elif anchor:
            if os.path.isdir(dest) or not dest.endswith(".md"):
                bad.append("%s: %s: an anchor into a file that is not Markdown" % (rel, target))
            elif anchor not in anchors(dest):
                bad.append("%s: %s: no heading '#%s' in %s" % (rel, target, anchor,
                                                                os.path.relpath(dest, ROOT)))
check(nlinks > 100, "%d relative links checked" % nlinks)
check(not bad, "every relative link resolves, anchors included%s"
      % ("" if not bad else ":\n      " + "\n      ".join(bad[:40])))

# the newcomer's page stays short
with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    n = f.read().count("\n")
check(n <= 500, "README.md has %d lines (at most 500)" % n)

# each page under docs/ with sections opens with a table of contents that lists them all
for path in files:
    rel = os.path.relpath(path, ROOT)
    if not rel.startswith("docs" + os.sep):
        continue
    with open(path, encoding="utf-8") as f:
        text = f.read()
    body = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)
    heads = [slug(h) for h in re.findall(r"^## +(.+)$", body, flags=re.M)]
    if len(heads) < 2:
        continue
    toc_at = text.find("**Contents**")
    first = re.search(r"^## ", body, flags=re.M)
    listed = set(re.findall(r"\]\(#([^)]+)\)", text[toc_at:first.start()] if toc_at >= 0
                            and first and toc_at < first.start() else ""))
    missing = [h for h in heads if h not in listed]
    check(toc_at >= 0 and not missing,
          "%s opens with a table of contents of its %d sections%s"
          % (rel, len(heads), "" if not missing else " (missing: %s)" % ", ".join(missing)))

# the project stands alone: no document points at notes outside it
outside = []
for path in files:
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if re.search(r"\.\./shared|/work/|DESIGN\.md|STYLE\.md|FORMAT\.md|\bDECK\.md", line):
                outside.append("%s:%d" % (os.path.relpath(path, ROOT), i))
check(not outside, "no document names notes outside the project%s"
      % ("" if not outside else ": " + ", ".join(outside[:20])))

done()

#!/usr/bin/env python3
"""SQL written twice in the store: part of scripts/check-style.

    python3 scripts/sql_dup.py [ROOT]      (ROOT defaults to the repository)

The store's queries are written once, above its SQL drivers (docs/design/store.md): the same
statement must not appear twice in src/store or include/krc/store. This reads every C string
literal there, joins adjacent literals (and the macro names between them, kept as {NAME}) into
one text, splits it into statements at `;`, and normalises each (case, white space, the
placeholders $1 and ?1). A statement is SQL when it starts with one of KEYWORDS; one whose
normalised text is found twice (in one file or two) is reported with both places. Statements
shorter than MIN_WORDS words (COMMIT, ROLLBACK) must be spelled through a shared macro too, so
they are not exempt.

Prints one `path:line: message` per duplicate and exits 1 if there is any, else 0.
"""

import os
import re
import sys

DIRS = (os.path.join("src", "store"), os.path.join("include", "krc", "store"))
KEYWORDS = ("select", "insert", "update", "delete", "create", "alter", "drop", "with", "begin",
            "commit", "rollback", "pragma", "set")
TOKEN_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|/\*.*?\*/|//[^\n]*|\\\n|\s+|.',
                      re.S)


def literal_groups(text):
    """(line, joined text) of each run of adjacent string literals (macro names between them
    kept as {NAME})."""
    groups = []
    parts, start, pending_ident = [], None, None
    line = 1
    for m in TOKEN_RE.finditer(text):
        tok = m.group(0)
        if tok.startswith('"'):
            if pending_ident is not None and parts:
                parts.append("{%s}" % pending_ident)
            pending_ident = None
            if start is None:
                start = line
            parts.append(bytes(tok[1:-1], "utf-8").decode("unicode_escape", "replace"))
        elif tok.startswith("/*") or tok.startswith("//") or tok.isspace() or tok == "\\\n":
            pass
        elif re.match(r"[A-Za-z_]", tok) and parts and pending_ident is None:
            pending_ident = tok  # a macro between two literals ("SELECT " COLS " FROM")
        else:
            if parts:
                if pending_ident is not None:
                    parts.append("{%s}" % pending_ident)
                groups.append((start, "".join(parts)))
            parts, start, pending_ident = [], None, None
        line += tok.count("\n")
    if parts:
        groups.append((start, "".join(parts)))
    return groups


def normalise(stmt):
    s = re.sub(r"[$?][0-9]+", "$", stmt.lower())
    return re.sub(r"\s+", " ", s).strip()


def statements(root):
    """(normalised statement, path, line) of every SQL statement of the store's files."""
    out = []
    for d in DIRS:
        base = os.path.join(root, d)
        if not os.path.isdir(base):
            continue
        for f in sorted(os.listdir(base)):
            if not f.endswith((".c", ".h")):
                continue
            rel = os.path.join(d, f).replace(os.sep, "/")
            with open(os.path.join(base, f), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for line, joined in literal_groups(text):
                for stmt in joined.split(";"):
                    n = normalise(stmt)
                    if n.split(" ", 1)[0] in KEYWORDS:
                        out.append((n, rel, line))
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    seen = {}
    errors = []
    for n, rel, line in statements(root):
        if n in seen:
            first = seen[n]
            errors.append("%s:%d: SQL written twice (also %s:%d): %s"
                          % (rel, line, first[0], first[1], n[:100]))
        else:
            seen[n] = (rel, line)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

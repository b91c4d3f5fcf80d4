#!/usr/bin/env python3
"""The structural half of scripts/check-style: function length and the layer table.

    python3 scripts/style_rules.py [ROOT]      (ROOT defaults to the repository)

1. Function length. A function in src/ may be at most LIMIT (120) lines long, counted from the
   line of its opening brace to the line of its closing brace, both included (a function whose
   body is `{`, one statement, `}` is 3 lines). Functions listed in scripts/long-functions.txt
   (`path function reason`, one a line; a line starting with `#` is a comment) may be longer;
   an entry without a reason, an entry for a function that no longer exists, or one that is now
   within the limit is itself an error, so the list stays short and true. Braces in comments,
   strings and character literals do not count, and of a preprocessor conditional only one
   branch is read (the first, or the one after an `#if 0`).

2. Layers. docs/architecture.md holds a table (rank, layer) between `<!-- layers: begin -->` and
   `<!-- layers: end -->`. Every file under src/<L>/ and include/krc/<L>/ must be in a folder L
   of the table, and every `#include "krc/<M>/..."` in it must name a layer M with
   rank(M) <= rank(L): a layer uses its own headers and those of the layers above it in the table,
   never those of a layer below it.

3. No dead code. An external (not static) function defined in src/ must be used somewhere in
   src/ outside its own body: called, or named (a function pointer in an ops table), in a .c
   file, or in a macro or inline function of a header in include/krc/ (a use in tests/,
   bench/ or fuzz targets does not count). `main` is exempt. Functions listed in
   scripts/unused-functions.txt (`path function reason`, like the long functions) are allowed:
   only for what has a reason to exist without a caller in src/ (a symbol the dynamic linker
   binds, API kept for tests only); an entry without a reason, for a function that no longer
   exists or that src/ now uses is an error.

Prints one `path:line: message` per violation and exits 1 if there is any, else 0.
"""

import os
import re
import sys

LIMIT = 120
EXCEPTIONS = os.path.join("scripts", "long-functions.txt")
UNUSED_EXCEPTIONS = os.path.join("scripts", "unused-functions.txt")
ARCHITECTURE = os.path.join("docs", "architecture.md")
LAYERS_BEGIN = "<!-- layers: begin -->"
LAYERS_END = "<!-- layers: end -->"

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*["<](krc/[^">]*)[">]', re.M)
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def blank(text, strings):
    """text with comments replaced by spaces and, if strings, also string and character
    literals, preprocessor lines and the branches the preprocessor may drop (see
    preprocessor()); newlines stay, so offsets and line numbers are unchanged."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif strings and c in "\"'":
            end = i + 1
            while end < n and text[end] != c and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
        else:
            i += 1
            continue
        for k in range(i, end):
            if out[k] != "\n":
                out[k] = " "
        i = end
    code = "".join(out)
    return preprocessor(code) if strings else code


def preprocessor(code):
    """code without its preprocessor lines and without the lines the preprocessor may drop: of a
    conditional only one branch is read (the first one, or the one after an `#if 0`), so a brace
    that each branch opens (or closes) counts once."""
    lines = code.split("\n")
    stack = []  # per open conditional: [branch dropped, a branch was read]
    continued = False
    for i, line in enumerate(lines):
        directive = continued or line.lstrip().startswith("#")
        if directive and not continued:
            words = line.lstrip()[1:].split()
            word = words[0] if words else ""
            if word in ("if", "ifdef", "ifndef"):
                zero = word == "if" and words[1:2] == ["0"]
                stack.append([zero, not zero])
            elif word in ("elif", "else") and stack:
                stack[-1] = [stack[-1][1], True]
            elif word == "endif" and stack:
                stack.pop()
        continued = directive and line.rstrip().endswith("\\")
        if directive or any(dropped for dropped, _ in stack):
            lines[i] = " " * len(line)
    return "\n".join(lines)


def functions(text):
    """(name, name_line, open_line, close_line) of every function defined in C source text."""
    return [f[:4] for f in functions_with_heads(text)]


def functions_with_heads(text):
    """(name, name_line, open_line, close_line, head) of every function defined in C source
    text; head is the declaration before its `{` (comments, strings and preprocessor lines
    blanked)."""
    code = blank(text, strings=True)
    found = []
    depth = 0
    decl_start = 0  # where the current top-level declaration begins
    open_at = None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                open_at = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                depth = 0
            if depth == 0 and open_at is not None:
                head = code[decl_start:open_at]
                name_at = function_name(head)
                if name_at is not None:
                    name, off = name_at
                    found.append((name, code.count("\n", 0, decl_start + off) + 1,
                                  code.count("\n", 0, open_at) + 1,
                                  code.count("\n", 0, i) + 1, head))
                open_at = None
                decl_start = i + 1
        elif c == ";" and depth == 0:
            decl_start = i + 1
    return found


def function_name(head):
    """(name, offset) if the declaration text before a top-level `{` is a function's, that is
    it has a parameter list and no `=` outside parentheses (an initializer), else None."""
    paren = 0
    first_paren = None
    for k, c in enumerate(head):
        if c == "(":
            if paren == 0 and first_paren is None:
                first_paren = k
            paren += 1
        elif c == ")":
            paren -= 1
        elif c == "=" and paren == 0:
            return None
    if first_paren is None:
        return None
    m = IDENT_RE.search(head[:first_paren].rstrip())
    if m is None:
        return None
    return m.group(0), m.start()


def source_files(root, top, exts):
    """Paths (relative to root, '/'-separated, sorted) of files under root/top ending in exts."""
    out = []
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for f in filenames:
            if f.endswith(exts):
                out.append(os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/"))
    return sorted(out)


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def load_exceptions(root, errors, name=EXCEPTIONS):
    """{(path, function): line} from scripts/long-functions.txt or another list of the same form
    (missing file: none)."""
    path = os.path.join(root, name)
    allowed = {}
    if not os.path.exists(path):
        return allowed
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            where = "%s:%d" % (name, lineno)
            if len(parts) < 3:
                errors.append("%s: an exception is `path function reason`; the reason is "
                              "missing" % where)
                continue
            key = (parts[0], parts[1])
            if key in allowed:
                errors.append("%s: %s %s is listed twice" % (where, parts[0], parts[1]))
                continue
            allowed[key] = lineno
    return allowed


def check_lengths(root, errors):
    allowed = load_exceptions(root, errors)
    seen = {}
    for rel in source_files(root, "src", (".c", ".h")):
        for name, name_line, first, last in functions(read(root, rel)):
            length = last - first + 1
            seen[(rel, name)] = length
            if length > LIMIT and (rel, name) not in allowed:
                errors.append("%s:%d: function %s is %d lines, limit %d (split it, or list it "
                              "with a reason in %s)" % (rel, name_line, name, length, LIMIT,
                                                       EXCEPTIONS))
    for (rel, name), lineno in sorted(allowed.items(), key=lambda kv: kv[1]):
        where = "%s:%d" % (EXCEPTIONS, lineno)
        if (rel, name) not in seen:
            errors.append("%s: stale exception: %s has no function %s (remove the line)"
                          % (where, rel, name))
        elif seen[(rel, name)] <= LIMIT:
            errors.append("%s: stale exception: %s %s is %d lines, within the limit %d (remove "
                          "the line)" % (where, rel, name, seen[(rel, name)], LIMIT))


IDENT_ANY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define\b.*(?:\\\n.*)*", re.M)


def without_prototypes(code):
    """code with its top-level declarations that end in `;` without an initializer (function
    prototypes among them) blanked: a prototype names a function without using it."""
    out = list(code)
    depth, start = 0, 0
    for i, c in enumerate(code):
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            stmt = code[start:i]
            if "(" in stmt and "=" not in stmt:
                for k in range(start, i):
                    if out[k] != "\n":
                        out[k] = " "
            start = i + 1
    return "".join(out)


def check_unused(root, errors):
    """External functions of src/ that nothing in src/ uses (rule 3)."""
    allowed = load_exceptions(root, errors, UNUSED_EXCEPTIONS)
    uses = {}  # identifier -> number of uses
    defined = []  # (rel, name, line)

    def count(code):
        for m in IDENT_ANY_RE.finditer(code):
            uses[m.group(0)] = uses.get(m.group(0), 0) + 1

    for rel in source_files(root, "src", (".c", ".h")):
        text = read(root, rel)
        code = without_prototypes(blank(text, strings=True))
        count(code)
        lines = code.split("\n")
        for name, name_line, _, close, head in functions_with_heads(text):
            # the function's own lines (its name and any recursion) are not a use
            own = "\n".join(lines[name_line - 1:close])
            uses[name] = uses.get(name, 0) - len(re.findall(r"\b%s\b" % re.escape(name), own))
            if name != "main" and "static" not in IDENT_ANY_RE.findall(head):
                defined.append((rel, name, name_line))
        # macros of a source file can use a function too
        count("\n".join(m.group(0) for m in DEFINE_RE.finditer(blank(text, strings=False))))
    for rel in source_files(root, os.path.join("include", "krc"), (".h",)):
        text = read(root, rel)
        count("\n".join(m.group(0) for m in DEFINE_RE.finditer(blank(text, strings=False))))
        code = blank(text, strings=True).split("\n")
        for _, _, first, close, _ in functions_with_heads(text):
            count("\n".join(code[first - 1:close]))
    seen = set()
    for rel, name, line in defined:
        seen.add((rel, name))
        used = uses.get(name, 0) > 0
        if not used and (rel, name) not in allowed:
            errors.append("%s:%d: function %s is external but nothing in src/ uses it (remove "
                          "it, make it static, or list it with a reason in %s)"
                          % (rel, line, name, UNUSED_EXCEPTIONS))
        elif used and (rel, name) in allowed:
            errors.append("%s:%d: stale exception: %s %s is used in src/ (remove the line)"
                          % (UNUSED_EXCEPTIONS, allowed[(rel, name)], rel, name))
    for (rel, name), lineno in sorted(allowed.items(), key=lambda kv: kv[1]):
        if (rel, name) not in seen:
            errors.append("%s:%d: stale exception: %s has no external function %s (remove the "
                          "line)" % (UNUSED_EXCEPTIONS, lineno, rel, name))


def load_layers(root, errors):
    """{layer: rank} from the table in docs/architecture.md, or None if it is unusable."""
    try:
        text = read(root, ARCHITECTURE)
    except OSError as e:
        errors.append("%s: cannot read the layer table: %s" % (ARCHITECTURE, e.strerror))
        return None
    lines = text.split("\n")
    try:
        begin = next(i for i, l in enumerate(lines) if l.strip() == LAYERS_BEGIN)
        end = next(i for i, l in enumerate(lines) if i > begin and l.strip() == LAYERS_END)
    except StopIteration:
        errors.append("%s: no layer table between `%s` and `%s`"
                      % (ARCHITECTURE, LAYERS_BEGIN, LAYERS_END))
        return None
    layers = {}
    for i in range(begin + 1, end):
        row = lines[i].strip()
        if not row.startswith("|"):
            if row:
                errors.append("%s:%d: not a table row" % (ARCHITECTURE, i + 1))
            continue
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) < 2 or cells[0] == "rank" or set(cells[0]) <= set("-: "):
            continue  # the header and the separator row
        layer = cells[1].strip("`")
        if not re.fullmatch(r"[0-9]+", cells[0]) or not re.fullmatch(r"[a-z0-9_]+", layer):
            errors.append("%s:%d: a layer row is `| rank | layer | holds |`, with a number and a "
                          "folder name" % (ARCHITECTURE, i + 1))
            continue
        if layer in layers:
            errors.append("%s:%d: layer %s is listed twice" % (ARCHITECTURE, i + 1, layer))
            continue
        layers[layer] = int(cells[0])
    if not layers:
        errors.append("%s: the layer table has no rows" % ARCHITECTURE)
        return None
    return layers


def check_layers(root, errors):
    layers = load_layers(root, errors)
    if layers is None:
        return
    files = [(rel, 1) for rel in source_files(root, "src", (".c", ".h"))]
    files += [(rel, 2) for rel in source_files(root, os.path.join("include", "krc"), (".c", ".h"))]
    for rel, depth in files:
        parts = rel.split("/")
        if len(parts) < depth + 2:
            errors.append("%s: not in a layer folder (the folders are the layers of the table in "
                          "%s)" % (rel, ARCHITECTURE))
            continue
        layer = parts[depth]
        if layer not in layers:
            errors.append("%s: folder %s is not a layer in the table in %s"
                          % (rel, layer, ARCHITECTURE))
            continue
        text = blank(read(root, rel), strings=False)
        for m in INCLUDE_RE.finditer(text):
            target = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            tparts = target.split("/")
            if len(tparts) < 3:
                errors.append("%s:%d: includes %s, which is not in a layer folder"
                              % (rel, line, target))
                continue
            if tparts[1] not in layers:
                errors.append("%s:%d: includes %s: %s is not a layer in the table in %s"
                              % (rel, line, target, tparts[1], ARCHITECTURE))
                continue
            if layers[tparts[1]] > layers[layer]:
                errors.append("%s:%d: includes %s: layer %s (%d) is below %s (%d)"
                              % (rel, line, target, tparts[1], layers[tparts[1]], layer,
                                 layers[layer]))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    errors = []
    check_lengths(root, errors)
    check_layers(root, errors)
    check_unused(root, errors)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

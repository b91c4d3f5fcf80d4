#!/usr/bin/env python3
"""The layer table of cmake/layers.cmake, checked against the build that enforces it.

    python3 tests/tools/layer_check.py --build BUILD [--root ROOT] [--print-graph]

For every layer L that has a source file in BUILD/compile_commands.json, a small C file that
includes one header of a layer M is compiled with exactly the command the build uses for
L's own source file (-fsyntax-only): it must compile when the table lets L use M (M is L, one
of L's USES or known violations, or what those may use), and fail with the header not found
otherwise, so a deliberately wrong include (a lower layer including a higher one's header)
fails to build. It also fails on a known violation (krc_layer_violation) that the code no
longer needs: no file of the layer includes a header of the layer it names (remove the line).

--print-graph prints the real dependency graph, from the includes of src/ and include/krc/:
each layer, the layers its files include directly, and the includes the table does not allow
outside the known violations (none, or the build fails).

ctest runs it as `layers` (label unit). Exit 0 if all is as the table says, 1 otherwise.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"krc/([^"]+)"', re.M)


def cmake_calls(text):
    """(command, [arguments]) of each top-level command call in CMake text: comments skipped,
    quoted arguments unquoted (no escapes or variables: the table needs none)."""
    calls, i, n = [], 0, len(text)
    while i < n:
        if text[i] == "#":
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(text, i)
        if not m:
            i += 1
            continue
        name, i = m.group(0), m.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] != "(":
            continue
        i += 1
        args, depth = [], 0
        while i < n:
            c = text[i]
            if c == "#":
                i = text.find("\n", i)
                i = n if i < 0 else i
            elif c == '"':
                end = text.index('"', i + 1)
                args.append(text[i + 1:end])
                i = end + 1
            elif c == "(":
                depth += 1
                i += 1
            elif c == ")":
                i += 1
                if depth == 0:
                    break
                depth -= 1
            elif c.isspace():
                i += 1
            else:
                m = re.compile(r'[^\s()"#]+').match(text, i)
                args.append(m.group(0))
                i = m.end()
        calls.append((name, args))
    return calls


def parse_table(path):
    """(layers in order, {layer: uses}, {layer: violation uses}) from cmake/layers.cmake."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    layers, uses, violations = [], {}, {}
    for command, words in cmake_calls(text):
        if command not in ("krc_layer", "krc_layer_violation"):
            continue
        name, section, items = words[0], None, {"USES": [], "LIBS": [], "REASON": []}
        for w in words[1:]:
            if w in items:
                section = w
            elif section:
                items[section].append(w)
        if command == "krc_layer":
            layers.append(name)
            uses[name] = items["USES"]
            violations[name] = []
        else:
            violations[name] += items["USES"]
    return layers, uses, violations


def closure(layer, uses, violations):
    out = set()
    for u in uses[layer] + violations[layer]:
        out |= {u} | closure(u, uses, violations)
    return out


def layer_of(rel, layers):
    """The longest layer path that is the folder of rel (relative to src/ or include/krc/) or
    a folder above it; None if none."""
    folder = os.path.dirname(rel)
    best = None
    for l in layers:
        if (folder == l or folder.startswith(l + "/")) and (best is None or len(l) > len(best)):
            best = l
    return best


def files_under(top, exts):
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(exts):
                out.append(os.path.relpath(os.path.join(dirpath, f), top).replace(os.sep, "/"))
    return out


def real_graph(root, layers):
    """{layer: {included layer: [where, ...]}} from the includes of src/ and include/krc/."""
    graph = {l: {} for l in layers}
    for top in ("src", os.path.join("include", "krc")):
        for rel in files_under(os.path.join(root, top), (".c", ".h")):
            owner = layer_of(rel, layers)
            if owner is None:
                continue
            with open(os.path.join(root, top, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
            for m in INCLUDE_RE.finditer(text):
                target = layer_of(m.group(1), layers)
                if target is not None and target != owner:
                    line = text.count("\n", 0, m.start()) + 1
                    where = "%s/%s:%d" % (top, rel, line)
                    graph[owner].setdefault(target, []).append(where)
    return graph


def compile_command(entry, source):
    """The entry's compiler command for `source` instead of its file, syntax only."""
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a == entry["file"]:
            continue
        out.append(a)
    return out + ["-fsyntax-only", source]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="the CMake build directory")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--print-graph", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    layers, uses, violations = parse_table(os.path.join(root, "cmake", "layers.cmake"))
    allowed = {l: closure(l, uses, violations) | {l} for l in layers}
    graph = real_graph(root, layers)
    errors = []

    if args.print_graph:
        for l in layers:
            direct = [m for m in layers if m in graph[l]]
            print("%-10s -> %s" % (l, " ".join(direct) or "-"))
        for l in layers:
            table_only = closure(l, {k: uses[k] for k in layers}, {k: [] for k in layers})
            for m in layers:
                if m in graph[l] and m not in table_only:
                    print("violation: %s includes %s: %s" % (l, m, ", ".join(graph[l][m])))

    for l in layers:
        for m in violations[l]:
            if m not in graph[l]:
                errors.append("cmake/layers.cmake: stale violation: no file of %s includes a "
                              "header of %s any more (remove it from krc_layer_violation(%s))"
                              % (l, m, l))

    with open(os.path.join(args.build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    src_top = os.path.join(root, "src")
    by_layer = {}
    for e in entries:
        path = os.path.normpath(os.path.join(e["directory"], e["file"]))
        if not path.startswith(src_top + os.sep):
            continue
        rel = os.path.relpath(path, src_top).replace(os.sep, "/")
        owner = layer_of(rel, layers)
        # the layer library's own object (main.c and the like belong to programs)
        if owner is not None and "krc_%s.dir" % owner.replace("/", "_") in e.get("output", e.get(
                "command", "")):
            by_layer.setdefault(owner, e)
    headers = {}
    for rel in files_under(os.path.join(root, "include", "krc"), (".h",)):
        owner = layer_of(rel, layers)
        if owner is not None:
            headers.setdefault(owner, rel)

    compiled = 0
    with tempfile.TemporaryDirectory(prefix="krc-layer-check-") as tmp:
        for l in layers:
            if l not in by_layer:
                continue
            entry = by_layer[l]
            for m in layers:
                if m not in headers:
                    continue
                include = "krc/" + headers[m]
                source = os.path.join(tmp, "%s_includes_%s.c" % (l.replace("/", "_"),
                                                                 m.replace("/", "_")))
                with open(source, "w") as f:
                    f.write('#include "%s"\n\nint krc_layer_check(void);\n' % include)
                p = subprocess.run(compile_command(entry, source), cwd=entry["directory"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   universal_newlines=True)
                compiled += 1
                if m in allowed[l]:
                    if p.returncode != 0:
                        errors.append("%s may use %s, but a file of %s that includes %s does not "
                                      "compile:\n%s" % (l, m, l, include, p.stdout))
                elif p.returncode == 0:
                    errors.append("%s may not use %s, but a file of %s that includes %s "
                                  "compiles" % (l, m, l, include))
                elif include not in p.stdout or not (
                        "No such file" in p.stdout or "file not found" in p.stdout):
                    errors.append("%s including %s fails, but not for the header:\n%s"
                                  % (l, include, p.stdout))
    missing = [l for l in layers if l not in by_layer and l in headers]
    if compiled == 0:
        errors.append("%s/compile_commands.json has no source of a layer library"
                      % args.build)
    for e in errors:
        print("layer_check: " + e)
    if errors:
        return 1
    print("layer_check: %d layers, %d compiles, each include allowed or refused as "
          "cmake/layers.cmake says%s" % (len(by_layer), compiled,
                                         "; no source yet: " + " ".join(missing) if missing
                                         else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

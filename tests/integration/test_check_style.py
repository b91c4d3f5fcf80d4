"""scripts/check-style on small trees of its own (issue 13, acceptance): it fails on a function
over 120 lines in src/ unless scripts/long-functions.txt lists it with a reason (and fails on an
entry without a reason or a stale one), and on an include that goes down the layer table of
docs/architecture.md (the repository's own table is used), or from a folder that is not a layer;
on a thread-unsafe libc call in src/ (gmtime, strerror, strtok, rand, ...); on an external
function that nothing in src/ uses unless scripts/unused-functions.txt lists it with a reason
(issue 23; a use in tests/ does not count); it passes on a clean tree.

    python3 tests/integration/test_check_style.py [--krc IGNORED] [-k Layer]
"""

import os
import shutil
import subprocess
import tempfile
import unittest

import krc_harness as h

ROOT = h.ROOT
CHECK_STYLE = os.path.join(ROOT, "scripts", "check-style")


def function(name, lines, extra=""):
    """A C function whose body spans `lines` lines from `{` to `}` inclusive."""
    assert lines >= 3
    body = ["    n += %d;" % i for i in range(lines - 3)]
    return ("int %s(int n)\n{\n%s%s    return n;\n}\n"
            % (name, extra, "".join(b + "\n" for b in body)))


class CheckStyle(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="krc-check-style-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        os.makedirs(os.path.join(self.dir, "docs"))
        shutil.copy(os.path.join(ROOT, "docs", "architecture.md"),
                    os.path.join(self.dir, "docs", "architecture.md"))
        shutil.copy(os.path.join(ROOT, ".clang-format"), os.path.join(self.dir, ".clang-format"))
        # A clean tree: util (rank 0), config (2), kube (3); each includes its own layer and
        # layers above it, and has functions of 120 lines (the limit) and less.
        self.write("include/krc/util/buf.h", '#include "krc/util/error.h"\nint buf_len(int n);\n')
        self.write("include/krc/util/error.h", "int error_code(int n);\n")
        self.write("include/krc/config/config.h",
                   '#include "krc/util/buf.h"\nint config_load(int n);\n')
        self.write("src/util/buf.c", '#include "krc/util/buf.h"\n\n' + function("buf_len", 120))
        self.write("src/config/config.c",
                   '#include "krc/config/config.h"\n#include "krc/util/buf.h"\n\n'
                   + function("config_load", 30))
        self.write("src/kube/kube_pod.c",
                   '#include "krc/config/config.h"\n#include <stdio.h>\n\n'
                   + function("kube_pod_parse", 10))
        # Every external function of these trees has a use in src/ (the unused-function rule).
        self.write("src/cli/main.c", "int main(void)\n{\n    return buf_len(0) + config_load(0) + "
                   "kube_pod_parse(0) + watch_run(0);\n}\n")

    def write(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        if rel.endswith((".c", ".h")) and shutil.which("clang-format"):
            subprocess.run(["clang-format", "-i", path], check=True)

    def remove(self, rel):
        os.remove(os.path.join(self.dir, rel))

    def check(self):
        p = subprocess.run([CHECK_STYLE, self.dir], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
        return p.returncode, p.stdout

    def assert_passes(self):
        rc, out = self.check()
        self.assertEqual(rc, 0, out)
        self.assertIn("check-style: ok", out)

    def assert_fails(self, *messages):
        rc, out = self.check()
        self.assertEqual(rc, 1, out)
        for m in messages:
            self.assertIn(m, out)
        self.assertNotIn("check-style: ok", out)
        return out

    def test_clean_tree_passes(self):
        self.assert_passes()

    def test_function_over_120_lines_fails(self):
        self.write("src/util/buf.c",
                   '#include "krc/util/buf.h"\n\n' + function("buf_len", 120) + "\n"
                   + function("buf_grow", 121))
        out = self.assert_fails("src/util/buf.c:125: function buf_grow is 121 lines, limit 120")
        self.assertNotIn("buf_len", out)

    def test_braces_in_strings_comments_and_dropped_branches_do_not_count(self):
        extra = ('    const char *s = "}}{";\n    char c = \'}\';\n    /* } */\n    // }\n'
                 "#if 0\n    }\n#endif\n"
                 "#ifdef X\n    if (n) {\n#else\n    if (!n) {\n#endif\n        n++;\n    }\n")
        self.write("src/util/buf.c",
                   '#include "krc/util/buf.h"\n\n' + function("buf_len", 121, extra))
        self.assert_fails("src/util/buf.c:3: function buf_len is 135 lines, limit 120")

    def test_initializers_and_structs_are_not_functions(self):
        table = "static const int table[] = {\n" + "".join(
            "    %d,\n" % i for i in range(130)) + "};\n"
        struct = "struct big {\n" + "".join("    int f%d;\n" % i for i in range(130)) + "};\n"
        self.write("src/util/buf.c", '#include "krc/util/buf.h"\n\n' + table + struct)
        self.assert_passes()

    def test_exception_with_reason_passes(self):
        self.write("src/kube/watch.c", '#include "krc/kube/watch.h"\n\n'
                   + function("watch_run", 150))
        self.write("include/krc/kube/watch.h", "int watch_run(int n);\n")
        self.assert_fails("src/kube/watch.c:3: function watch_run is 150 lines, limit 120")
        self.write("scripts/long-functions.txt",
                   "# path function reason\n"
                   "src/kube/watch.c watch_run a state machine that reads best in one piece (#13)\n")
        self.assert_passes()

    def test_exception_without_reason_fails(self):
        self.write("src/kube/watch.c", function("watch_run", 150))
        self.write("scripts/long-functions.txt", "src/kube/watch.c watch_run\n")
        self.assert_fails("scripts/long-functions.txt:1: an exception is `path function reason`; "
                          "the reason is missing",
                          "src/kube/watch.c:1: function watch_run is 150 lines, limit 120")

    def test_stale_exception_fails(self):
        self.write("scripts/long-functions.txt",
                   "src/util/buf.c buf_len it was long once\n"
                   "src/kube/watch.c watch_run gone\n")
        self.assert_fails("scripts/long-functions.txt:1: stale exception: src/util/buf.c buf_len "
                          "is 120 lines, within the limit 120",
                          "scripts/long-functions.txt:2: stale exception: src/kube/watch.c has "
                          "no function watch_run")

    def test_thread_unsafe_libc_call_fails(self):
        for call in ("gmtime(&t)", "localtime(&t)", "strerror(errno)", "strtok(s, \" \")",
                     "rand()", "gethostbyname(h)", "setenv(\"A\", \"b\", 1)"):
            with self.subTest(call=call):
                self.write("src/kube/kube_pod.c",
                           '#include "krc/config/config.h"\n\n'
                           + function("kube_pod_parse", 10, "    (void)%s;\n" % call))
                name = call.split("(")[0]
                out = self.assert_fails("src/kube/kube_pod.c:5:", "thread-unsafe libc call")
                self.assertIn(name + "(", out)

    def test_files_at_any_depth_are_checked(self):
        # a sub-folder of a layer (src/alert/dest/) and a private header in src/: formatting and
        # the thread-unsafe call rule reach them as they reach src/<layer>/*.c
        self.write("src/kube/dest/kube_x.c", function("kube_x", 3))
        with open(os.path.join(self.dir, "src/kube/dest/kube_x.c"), "a") as f:
            f.write("int   kube_y ( void ) { return 0; }\n")
        self.assert_fails("src/kube/dest/kube_x.c is not clang-formatted")
        self.remove("src/kube/dest/kube_x.c")
        self.write("src/kube/kube_private.h", "static inline int kube_z(void)\n{\n"
                   "    return rand();\n}\n")
        self.assert_fails("src/kube/kube_private.h:3:", "thread-unsafe libc call")

    def test_thread_unsafe_call_with_reason_and_safe_forms_pass(self):
        self.write("src/kube/kube_pod.c",
                   '#include "krc/config/config.h"\n\n'
                   + function("kube_pod_parse", 10,
                              "    (void)gmtime_r(&t, &tm);\n    (void)strtok_r(s, d, &p);\n"
                              "    (void)my_rand(1);\n    (void)getenv(\"HOME\");\n"
                              "    (void)rand(); /* mt-ok: a test of the exception */\n"))
        self.assert_passes()

    def test_include_down_the_table_fails(self):
        self.write("include/krc/kube/kube_pod.h", "int kube_pod_parse(int n);\n")
        self.write("src/config/config.c",
                   '#include "krc/config/config.h"\n#include "krc/kube/kube_pod.h"\n\n'
                   + function("config_load", 30))
        self.assert_fails("src/config/config.c:2: includes krc/kube/kube_pod.h: "
                          "layer kube (3) is below config (2)")

    def test_header_include_down_the_table_fails(self):
        self.write("include/krc/util/buf.h",
                   '#include "krc/util/error.h"\n/* "krc/kube/x.h" */\n'
                   '#include "krc/config/config.h"\nint buf_len(int n);\n')
        out = self.assert_fails("include/krc/util/buf.h:3: includes krc/config/config.h: "
                                "layer config (2) is below util (0)")
        self.assertNotIn("krc/kube/x.h", out)

    def test_folder_not_in_the_table_fails(self):
        self.write("src/plugins/p.c", '#include "krc/util/buf.h"\n\n' + function("p", 5))
        self.write("src/loose.c", function("loose", 5))
        self.write("include/krc/plugins/p.h", "int p(int n);\n")
        self.assert_fails("src/plugins/p.c: folder plugins is not a layer in the table",
                          "src/loose.c: not in a layer folder",
                          "include/krc/plugins/p.h: folder plugins is not a layer in the table")

    def test_include_of_unknown_layer_fails(self):
        self.write("src/kube/kube_pod.c",
                   '#include "krc/plugins/p.h"\n#include "krc/flat.h"\n\n'
                   + function("kube_pod_parse", 10))
        self.assert_fails("src/kube/kube_pod.c:1: includes krc/plugins/p.h: plugins is not a "
                          "layer in the table",
                          "src/kube/kube_pod.c:2: includes krc/flat.h, which is not in a layer "
                          "folder")

    def test_missing_layer_table_fails(self):
        with open(os.path.join(self.dir, "docs", "architecture.md"), "w") as f:
            f.write("# Architecture\n\nNo table.\n")
        self.assert_fails("docs/architecture.md: no layer table between")

    def test_repository_table_covers_every_folder(self):
        # The folders of src/ and include/krc/ are the rows of the real table, in the same
        # order as the ranks the architecture text describes (util first, cli last).
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "style_rules", os.path.join(ROOT, "scripts", "style_rules.py"))
        rules = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(rules)
        errors = []
        layers = rules.load_layers(ROOT, errors)
        self.assertEqual(errors, [])
        self.assertEqual(layers["util"], 0)
        self.assertEqual(max(layers, key=layers.get), "cli")
        folders = set(os.listdir(os.path.join(ROOT, "src")))
        folders |= set(os.listdir(os.path.join(ROOT, "include", "krc")))
        self.assertEqual(folders - set(layers), set())

    def test_unused_external_function_fails(self):
        self.write("src/util/buf.c", '#include "krc/util/buf.h"\n\n' + function("buf_len", 5)
                   + "\n" + function("buf_spare", 5))
        self.write("tests/unit/util/test_buf.c", "int t(void)\n{\n    return buf_spare(1);\n}\n")
        out = self.assert_fails("src/util/buf.c:10: function buf_spare is external but nothing in "
                                "src/ uses it")
        self.assertNotIn("buf_len is external", out)

    def test_what_counts_as_a_use(self):
        # used: through an ops table, through a header's macro, from another file; a static
        # function needs no use (the compiler warns about it); recursion and a prototype in a
        # .c file are not uses
        self.write("include/krc/util/buf.h", '#include "krc/util/error.h"\nint buf_len(int n);\n'
                   "#define BUF_GROW(n) buf_grow(n)\n")
        self.write("src/util/buf.c",
                   '#include "krc/util/buf.h"\n\n' + function("buf_len", 5) + "\n"
                   + function("buf_grow", 5) + "\n" + function("buf_op", 5) + "\n"
                   + "static " + function("buf_private", 5) + "\n"
                   + "struct ops {\n    int (*f)(int);\n};\n"
                   "const struct ops buf_ops = {.f = buf_op};\n")
        self.write("src/config/config.c",
                   '#include "krc/config/config.h"\n#include "krc/util/buf.h"\n\n'
                   + function("config_load", 10, "    n += BUF_GROW(n);\n"))
        self.assert_passes()
        self.write("src/kube/watch.c",
                   "int watch_loop(int n);\n\n"
                   + function("watch_loop", 5, "    n += watch_loop(n - 1);\n"))
        self.assert_fails("src/kube/watch.c:3: function watch_loop is external but nothing in "
                          "src/ uses it")

    def test_unused_exception_with_reason_passes(self):
        self.write("src/util/buf.c", '#include "krc/util/buf.h"\n\n' + function("buf_len", 5)
                   + "\n" + function("buf_fake_clock", 5))
        self.assert_fails("function buf_fake_clock is external but nothing in src/ uses it")
        self.write("scripts/unused-functions.txt",
                   "# path function reason\n"
                   "src/util/buf.c buf_fake_clock the tests' fake clock\n")
        self.assert_passes()

    def test_unused_exception_without_reason_or_stale_fails(self):
        self.write("scripts/unused-functions.txt",
                   "src/util/buf.c buf_spare\n"
                   "src/util/buf.c buf_len used by main\n"
                   "src/kube/watch.c watch_gone removed\n")
        self.assert_fails("scripts/unused-functions.txt:1: an exception is `path function "
                          "reason`; the reason is missing",
                          "scripts/unused-functions.txt:2: stale exception: src/util/buf.c buf_len "
                          "is used in src/",
                          "scripts/unused-functions.txt:3: stale exception: src/kube/watch.c has "
                          "no external function watch_gone")

    def test_repository_has_no_unused_function(self):
        import importlib.util
        spec = importlib.util.spec_from_file_location(
            "style_rules", os.path.join(ROOT, "scripts", "style_rules.py"))
        rules = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(rules)
        errors = []
        rules.check_unused(ROOT, errors)
        self.assertEqual(errors, [])


if __name__ == "__main__":
    h.main()

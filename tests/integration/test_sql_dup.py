"""scripts/sql_dup.py, the check-style rule that the store writes no SQL statement twice: it fails
on the same statement in two files of src/store or in one (whatever the placeholders, $1 or ?1,
the case or the white space, and when the statement is assembled from literals and macro names),
names both places, and passes on statements that differ; the repository itself passes, and the
two backends of 16884f4 (one statement per file, both written out) would not.

    python3 tests/integration/test_sql_dup.py [--krc IGNORED] [-k Dup]
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import krc_harness as h

ROOT = h.ROOT
SQL_DUP = os.path.join(ROOT, "scripts", "sql_dup.py")


class SqlDup(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="krc-sql-dup-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)

    def write(self, rel, text):
        path = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    def check(self, root=None):
        return subprocess.run([sys.executable, SQL_DUP, root or self.dir], capture_output=True,
                              text=True, timeout=60)

    def test_repository_passes(self):
        p = self.check(ROOT)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_distinct_statements_pass(self):
        self.write("src/store/a.c", 'static const char *q = "SELECT id FROM outbox WHERE id = $1";\n'
                                    'static const char *w = "the text of a message, not SQL";\n')
        self.write("src/store/b.c", 'static const char *q = "SELECT id FROM restarts WHERE id = ?1";\n'
                                    'static const char *w = "the text of a message, not SQL";\n')
        p = self.check()
        self.assertEqual(p.returncode, 0, p.stdout)

    def test_same_statement_in_two_backends_fails(self):
        # the shape of 16884f4: one statement per backend, placeholders and case apart
        self.write("src/store/store_sqlite.c",
                   'static const char *q =\n    "UPDATE outbox SET state = \'withdrawn\', "\n'
                   '    "updated_at = ?2 WHERE id = ?1";\n')
        self.write("src/store/store_pg.c",
                   'static int f(void)\n{\n    return run("update outbox set state = '
                   '\'withdrawn\',  updated_at = $2 "\n               "WHERE id = $1");\n}\n')
        p = self.check()
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("src/store/store_sqlite.c:2: SQL written twice (also "
                      "src/store/store_pg.c:3)", p.stdout)

    def test_assembled_with_a_macro_and_in_a_script(self):
        # "SELECT " COLS " FROM ..." twice, and a statement inside a ';' script of a header
        self.write("src/store/a.c", '#define COLS "id, kind"\n'
                                    'const char *a = "SELECT " COLS " FROM outbox";\n')
        self.write("include/krc/store/a.h",
                   '#define B "CREATE TABLE t (x INT); SELECT " COLS " FROM outbox;"\n')
        p = self.check()
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("include/krc/store/a.h:1: SQL written twice (also src/store/a.c:2): "
                      "select {cols} from outbox", p.stdout)

    def test_check_style_runs_it(self):
        with open(os.path.join(ROOT, "scripts", "check-style")) as f:
            self.assertIn("sql_dup.py", f.read())


if __name__ == "__main__":
    h.main()

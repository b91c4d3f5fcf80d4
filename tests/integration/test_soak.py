"""scripts/soak (issue 18): its verdict rules (--self-test: a flat series passes, an RSS or fd
leak fails, a run too short is not judged, lost / duplicate alerts are counted), and a short
smoke soak of the real krc against the churning fake cluster: every restart made is delivered
exactly once, through 410 Gone relists and dropped watches, and the CSV, summary and plot are
written.

    python3 tests/integration/test_soak.py --krc build/krc
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import krc_harness as h

SOAK = os.path.join(h.ROOT, "scripts", "soak")


class Soak(unittest.TestCase):
    def test_self_test(self):
        r = subprocess.run([sys.executable, SOAK, "--self-test"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("self-test passed", r.stdout)

    def test_bad_usage(self):
        r = subprocess.run([sys.executable, SOAK, "--minutes", "1", "--krc", "/nonexistent/krc",
                            "--no-plot"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("/nonexistent/krc", r.stderr)

    def test_smoke(self):
        out = tempfile.mkdtemp(prefix="krc-soak-test-")
        self.addCleanup(shutil.rmtree, out, ignore_errors=True)
        r = subprocess.run([sys.executable, SOAK, "--minutes", "0.5", "--pods", "12",
                            "--sample-seconds", "2", "--fault-seconds", "8", "--out", out,
                            "--krc", h.krc_binary()],
                           capture_output=True, text=True, timeout=240)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        self.assertGreater(s["alerts_expected"], 5)
        self.assertEqual(s["alerts_delivered"], s["alerts_expected"])
        self.assertEqual(s["duplicates"], 0)
        self.assertIsNone(s["krc_exit"])
        self.assertEqual(s["krc_stop_exit"], 0)
        self.assertEqual({f["kind"] for f in s["faults"]}, {"410", "drop"})
        with open(os.path.join(out, "samples.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertGreaterEqual(len(rows), 10)
        for row in rows:
            self.assertGreater(int(row["rss_kib"]), 1000)
            self.assertGreater(int(row["fds"]), 2)
            self.assertGreaterEqual(int(row["threads"]), 1)
        with open(os.path.join(out, "soak.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(os.path.join(out, "krc.log")) as f:
            log = f.read()
        self.assertIn("relisting", log, "no 410 Gone relist happened")


if __name__ == "__main__":
    h.main()

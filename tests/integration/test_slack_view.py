#!/usr/bin/env python3
"""The HTML page and terminal text of krc demo's Slack message views, checked with real parsers.

    python3 test_slack_view.py --krc BUILD/krc [unittest options]

tests/tools/slack_view_page (built next to the unit tests, in BUILD/tests/; or the environment
variable KRC_SLACK_VIEW_PAGE) renders every case of tests/fixtures/corpus through the Slack
webhook sink's formatter, a storm summary, an incident's "resolved" reply and hostile raw
bodies (script tags, quotes, invalid UTF-8, terminal escape sequences, a bad link and colour,
an unknown block, a body that is not JSON) to a page, and dumps the bodies. The test then checks:

- Python's html.parser: only the elements and attributes the renderer writes, no script, links
  only http(s)/mailto, style attributes only a validated colour bar; every message's header text
  and every code block of the bodies are there as text, the hostile strings among them;
- headless Chromium (Debian's `chromium`, a test dependency: its absence FAILS the test) loads
  the page and dumps the DOM: the same headers and code blocks, no script element; then
  scripts/readme-picture turns message 1 into a PNG that is not blank;
- the plain terminal text: no escape or other control character.
"""
import argparse
import glob
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "corpus")
TOOL = None

TAGS = {"html", "head", "meta", "title", "style", "body", "div", "span", "pre", "code", "b", "i",
        "s", "a", "time", "hr"}
ATTRS = {"lang", "charset", "http-equiv", "content", "name", "class", "id", "style", "href",
         "rel", "title", "datetime", "data-block-id"}

HOSTILE = [
    # a header, a code block and a field with markup, quotes and invalid UTF-8, in a bad colour
    b'{"username":"<b>x</b>","attachments":[{"color":"red;background:url(http://x.example/)",'
    b'"blocks":[{"type":"header","text":{"type":"plain_text","text":"<script>alert(1)</script>"}},'
    b'{"type":"section","text":{"type":"mrkdwn","text":"```<img src=x onerror=alert(1)> '
    b'\\" \' \xff\xfe end```"},"fields":[{"type":"mrkdwn","text":"*a*\\n</div><script>x</script>"}]},'
    b'{"type":"context","elements":[{"type":"mrkdwn","text":"<javascript:alert(1)|click>"}]},'
    b'{"type":"rich_text","elements":[]}]}]}',
    # terminal escape sequences
    b'{"blocks":[{"type":"header","text":{"type":"plain_text","text":"esc \\u001b[2J\\u001b]0;t'
    b'\\u0007 \xc2\x9b31m"}},{"type":"section","text":{"type":"mrkdwn","text":"```\\u001b[31mred```"}}]}',
    b'{not json <script>alert(1)</script>',
]


def decode(s):
    return s.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def expected(body):
    """(headers, code blocks) of one body as Slack shows them."""
    try:
        msg = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        return [], []
    blocks = list(msg.get("blocks") or [])
    for a in msg.get("attachments") or []:
        blocks += a.get("blocks") or []
    headers, codes = [], []
    for b in blocks:
        t = (b.get("text") or {}).get("text")
        if b.get("type") == "header" and t is not None:
            headers.append(decode(t))
        elif b.get("type") == "section" and t is not None:
            for c in re.findall(r"```(.*?)```", t, re.S):
                c = c[1:] if c.startswith("\n") else c
                c = c[:-1] if c.endswith("\n") else c
                codes.append(decode(c))
    return headers, codes


class Page(html.parser.HTMLParser):
    """Every element and attribute, the text of div.header and pre.code elements."""

    def __init__(self, pre_rule):
        super().__init__(convert_charrefs=True)
        self.pre_rule = pre_rule
        self.problems, self.headers, self.codes, self.messages = [], [], [], []
        self.stack, self.capture = [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in TAGS:
            self.problems.append(f"element <{tag}>")
        for k, v in attrs:
            if k not in ATTRS:
                self.problems.append(f"attribute {k}={v!r} on <{tag}>")
        if "href" in a and not re.match(r"^(https?://|mailto:)", a["href"]):
            self.problems.append(f"link {a['href']!r}")
        if "style" in a and not re.fullmatch(r"border-left-color:#[0-9A-Fa-f]{6}", a["style"]):
            self.problems.append(f"style {a['style']!r}")
        cls = (a.get("class") or "").split()
        if tag == "div" and "msg" in cls:
            self.messages.append(a.get("id"))
        if tag in ("meta", "hr"):
            return
        self.stack.append(tag)
        if self.capture is None and ((tag == "div" and "header" in cls) or
                                     (tag == "pre" and "code" in cls)):
            self.capture = (len(self.stack), "header" if tag == "div" else "code", [])

    def handle_endtag(self, tag):
        if self.capture is not None and len(self.stack) == self.capture[0]:
            text = "".join(self.capture[2])
            if self.pre_rule and self.capture[1] == "code" and text.startswith("\n"):
                text = text[1:]  # the HTML rule for a newline right after <pre>
            (self.headers if self.capture[1] == "header" else self.codes).append(text)
            self.capture = None
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.problems.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")

    def handle_data(self, data):
        if self.capture is not None:
            self.capture[2].append(data)


def parse(text, pre_rule=True):
    """pre_rule: drop a newline right after <pre> as a browser does (Chromium's DOM dump is
    the text nodes as they are, without the newline that the parser dropped)."""
    p = Page(pre_rule)
    p.feed(text)
    p.close()
    return p


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class SlackViewTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="krc-slack-view-")
        inputs = []
        for i, body in enumerate(HOSTILE):
            path = os.path.join(cls.tmp, f"hostile{i}.json")
            with open(path, "wb") as f:
                f.write(body)
            inputs.append(path)
        cls.dump = os.path.join(cls.tmp, "bodies")
        os.mkdir(cls.dump)
        cls.page = os.path.join(cls.tmp, "alerts.html")
        r = subprocess.run([TOOL, "--out", cls.page, "--corpus", CORPUS, "--dump", cls.dump,
                            "--term"] + inputs, capture_output=True, timeout=120, check=False)
        if r.returncode != 0:
            raise AssertionError(f"slack_view_page failed: {r.stderr.decode()}")
        cls.term = r.stdout
        cls.bodies = []
        for path in sorted(glob.glob(os.path.join(cls.dump, "*.json"))):
            with open(path, "rb") as f:
                cls.bodies.append(f.read())
        with open(cls.page, encoding="utf-8") as f:
            cls.html = f.read()
        cls.want_headers, cls.want_codes = [], []
        for b in cls.bodies:
            h, c = expected(b)
            cls.want_headers += h
            cls.want_codes += c

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check_dom(self, p, what):
        self.assertEqual(p.problems, [], what)
        self.assertEqual(p.messages, [f"m{i + 1}" for i in range(len(self.bodies))], what)
        self.assertEqual(p.headers, [self.clean(h) for h in self.want_headers], what)
        # a body that is not JSON is shown as a code block too, after its note
        self.assertEqual([c for c in p.codes if not c.startswith("{not json")],
                         [self.clean(c) for c in self.want_codes], what)
        self.assertIn("<script>alert(1)</script>", p.headers, what)

    @staticmethod
    def clean(s):
        """What the page shows for untrusted text: U+FFFD for invalid UTF-8 (json.loads already
        did that) and C1 controls, C0 controls and DEL as Control Pictures."""
        def one(c):
            o = ord(c)
            if (o < 0x20 and c not in "\n\t") or o == 0x7F:
                return chr(0x2421 if o == 0x7F else 0x2400 + o)
            return "\ufffd" if 0x80 <= o <= 0x9F else c
        return "".join(one(c) for c in s)

    def test_counts(self):
        self.assertGreaterEqual(len(self.bodies), 20 + 2 + len(HOSTILE))
        self.assertGreaterEqual(len(self.want_headers), 21)
        self.assertGreaterEqual(len(self.want_codes), 40)

    def test_html_parser(self):
        self.check_dom(parse(self.html), "html.parser")
        self.assertIn("unsupported block", self.html)
        self.assertIn("could not parse this message", self.html)
        self.assertNotIn("<script", self.html)

    def test_chromium_dom_and_picture(self):
        exe = chromium()
        if exe is None:
            self.fail("chromium is not installed: scripts/setup-test installs Debian's chromium "
                      "with the test dependencies")
        profile = os.path.join(self.tmp, "profile")
        cmd = [exe, "--headless", "--disable-gpu", "--no-first-run", "--disable-extensions",
               "--disable-background-networking", "--disable-component-update",
               f"--user-data-dir={profile}", "--dump-dom", "file://" + self.page]
        if os.geteuid() == 0:
            cmd.insert(1, "--no-sandbox")
        r = subprocess.run(cmd, capture_output=True, timeout=180, check=False)
        self.assertEqual(r.returncode, 0, r.stderr.decode("utf-8", "replace")[-2000:])
        dom = r.stdout.decode("utf-8")
        self.assertIn("default-src 'none'", dom)
        self.check_dom(parse(dom, pre_rule=False), "chromium --dump-dom")

        png = os.path.join(self.tmp, "alert.png")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "readme-picture"),
                            self.page, "--message", str(len(HOSTILE) + 1), "--out", png],
                           capture_output=True, text=True, timeout=240, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"\((\d+)x(\d+), (\d+) pixels drawn\)", r.stdout)
        self.assertIsNotNone(m, r.stdout)
        with open(png, "rb") as f:
            head = f.read(24)
        self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
        width, height = struct.unpack(">II", head[16:24])
        self.assertEqual((width, height), (int(m.group(1)), int(m.group(2))))
        self.assertEqual(width, 1000)
        self.assertGreater(height, 300)
        self.assertGreater(int(m.group(3)), 20000)

    def test_terminal_plain(self):
        bad = [c for c in self.term if c < 0x20 and c != 0x0A or c == 0x7F]
        self.assertEqual(bad, [])
        text = self.term.decode("utf-8")
        self.assertEqual(text.count("\n----\n"), len(self.bodies))
        self.assertIn("esc \u241b[2J\u241b]0;t\u2407 \ufffd31m", text)
        self.assertIn("| <script>alert(1)</script>\n", text)
        self.assertIn("[unsupported block \"rich_text\"]", text)
        self.assertIn("could not parse this message", text)


def main():
    global TOOL
    ap = argparse.ArgumentParser()
    ap.add_argument("--krc", required=True, help="path to the krc binary")
    args, rest = ap.parse_known_args()
    TOOL = os.environ.get("KRC_SLACK_VIEW_PAGE") or os.path.join(
        os.path.dirname(os.path.abspath(args.krc)), "tests", "slack_view_page")
    if not os.access(TOOL, os.X_OK):
        print(f"not an executable: {TOOL} (build the slack_view_page target)", file=sys.stderr)
        return 2
    prog = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())

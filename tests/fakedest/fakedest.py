"""fakedest: a strict local endpoint for krc's destinations other than Slack.

It runs in the test's own process (a thread; Python standard library plus python3-jsonschema)
on 127.0.0.1 and CHECKS every body against the rules of its format, the way the real service
would refuse it, and records what it got:

- ``POST /pagerduty/v2/enqueue``: PagerDuty Events API v2 (developer.pagerduty.com, "Send an
  Alert Event" / "Events API v2 Overview"): ``routing_key`` (32 characters), ``event_action``
  trigger | acknowledge | resolve, ``dedup_key`` at most 255 characters (required for
  resolve), for trigger a ``payload`` with ``summary`` (at most 1024), ``source``,
  ``severity`` in critical | error | warning | info, optional ``timestamp`` (ISO 8601),
  ``component``, ``group``, ``class``, ``custom_details`` (an object here); no other
  top-level keys but ``client``, ``client_url``, ``links``, ``images``; 512 KB at most.
  Answers 202 ``{"status": "success", "message": "Event processed", "dedup_key": ...}`` as
  PagerDuty does, and 400 ``{"status": "invalid event", "message": "Event object is
  invalid", "errors": [...]}`` for a body that breaks a rule.
- ``POST /webhook/NAME``: krc's signed webhook. The body must validate against
  ``docs/report-schema.json`` (``Draft202012Validator``), and the ``X-Krc-Signature:
  t=T,v1=HEX`` header is verified here independently with Python's ``hmac``
  (HMAC-SHA256 over ``T + "." + body``) with the secret the test registered; a bad or missing
  signature is answered 401.

- ``POST /teams/NAME``: a Microsoft Teams Workflows webhook ("When a Teams webhook request
  is received"): ``{"type": "message", "attachments": [{"contentType":
  "application/vnd.microsoft.card.adaptive", "content": CARD}]}`` with CARD an Adaptive Card
  (``type`` AdaptiveCard, ``version`` "1.5", ``body`` of known element types: TextBlock with
  ``text``, RichTextBlock of TextRuns, FactSet of title/value strings, ...), the whole body at
  most 28 KB (Teams' message limit). Answers 202 like the Workflows trigger.
- ``POST /chat/v1/spaces/SPACE/messages?key=..&token=..``: a Google Chat incoming webhook:
  ``messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD`` in the query, ``thread.threadKey``
  a string, ``cardsV2`` a list of ``{cardId, card: {header: {title}, sections: [{widgets:
  [...]}]}}`` whose widgets have exactly one known kind (textParagraph with text, decoratedText
  with text, divider, ...), ``text`` a string, at most 32,000 bytes. Answers 200 with the
  message and its thread (``spaces/SPACE/threads/...``): one thread per threadKey, so a reply
  is a message whose threadKey was seen before (``thread_reply`` in the record).

Faults: ``fault(path_regex, status, count, retry_after, body)`` answers the next ``count``
matching requests (-1: all) with ``status`` instead, before any check.

Every request is kept: ``requests(path_prefix)`` gives dicts with ``path``, ``headers``,
``raw`` (bytes), ``json`` (or None), ``status`` (what was answered) and ``errors`` (the rules
it broke; empty when valid).
"""

import hashlib
import hmac
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_PATH = os.path.join(HERE, "..", "..", "docs", "report-schema.json")

PD_SEVERITIES = {"critical", "error", "warning", "info"}
PD_ACTIONS = {"trigger", "acknowledge", "resolve"}
PD_TOP_KEYS = {"routing_key", "event_action", "dedup_key", "payload", "client", "client_url",
               "links", "images"}
PD_PAYLOAD_KEYS = {"summary", "source", "severity", "timestamp", "component", "group", "class",
                   "custom_details"}
PD_MAX_BYTES = 512 * 1024
TEAMS_MAX_BYTES = 28 * 1024
GCHAT_MAX_BYTES = 32000
ADAPTIVE_ELEMENTS = {"TextBlock", "RichTextBlock", "FactSet", "ColumnSet", "Container", "Image",
                     "ImageSet", "ActionSet", "Table", "Media"}
GCHAT_WIDGETS = {"textParagraph", "decoratedText", "divider", "buttonList", "image", "columns",
                 "grid", "chipList", "textInput", "selectionInput", "dateTimePicker"}
ISO8601 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$")


def pagerduty_errors(raw, routing_keys):
    """The rules of the Events API v2 that this event breaks (empty: valid)."""
    errs = []
    if len(raw) > PD_MAX_BYTES:
        errs.append("event larger than 512 KB (%d bytes)" % len(raw))
    try:
        ev = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return ["not UTF-8 JSON: %s" % e]
    if not isinstance(ev, dict):
        return ["not a JSON object"]
    for k in ev:
        if k not in PD_TOP_KEYS:
            errs.append("unknown top-level key %r" % k)
    rk = ev.get("routing_key")
    if not isinstance(rk, str) or len(rk) != 32:
        errs.append("routing_key must be a 32-character string")
    elif routing_keys is not None and rk not in routing_keys:
        errs.append("routing_key is not an integration key of this service")
    action = ev.get("event_action")
    if action not in PD_ACTIONS:
        errs.append("event_action must be trigger, acknowledge or resolve, not %r" % (action,))
    dk = ev.get("dedup_key")
    if dk is not None and (not isinstance(dk, str) or not 1 <= len(dk) <= 255):
        errs.append("dedup_key must be a string of 1..255 characters")
    if action in ("acknowledge", "resolve") and dk is None:
        errs.append("%s needs a dedup_key" % action)
    if action == "trigger":
        p = ev.get("payload")
        if not isinstance(p, dict):
            errs.append("trigger needs a payload object")
        else:
            for k in p:
                if k not in PD_PAYLOAD_KEYS:
                    errs.append("unknown payload key %r" % k)
            s = p.get("summary")
            if not isinstance(s, str) or not 1 <= len(s) <= 1024:
                errs.append("payload.summary must be a string of 1..1024 characters (got %s)"
                            % (len(s) if isinstance(s, str) else type(s).__name__))
            if not isinstance(p.get("source"), str) or not p.get("source"):
                errs.append("payload.source is required")
            if p.get("severity") not in PD_SEVERITIES:
                errs.append("payload.severity must be critical, error, warning or info")
            ts = p.get("timestamp")
            if ts is not None and (not isinstance(ts, str) or not ISO8601.match(ts)):
                errs.append("payload.timestamp must be ISO 8601")
            for k in ("component", "group", "class"):
                if k in p and not isinstance(p[k], str):
                    errs.append("payload.%s must be a string" % k)
            if "custom_details" in p and not isinstance(p["custom_details"], dict):
                errs.append("payload.custom_details must be an object here")
    return errs


def adaptive_element_errors(el, where):
    errs = []
    if not isinstance(el, dict) or el.get("type") not in ADAPTIVE_ELEMENTS:
        return ["%s: not a known Adaptive Card element: %r" % (where, el.get("type")
                                                               if isinstance(el, dict) else el)]
    t = el["type"]
    if t == "TextBlock" and not isinstance(el.get("text"), str):
        errs.append("%s: TextBlock needs a text string" % where)
    if t == "RichTextBlock":
        inl = el.get("inlines")
        if not isinstance(inl, list) or not inl:
            errs.append("%s: RichTextBlock needs inlines" % where)
        else:
            for i, r in enumerate(inl):
                if not (isinstance(r, str) or (isinstance(r, dict) and r.get("type") == "TextRun"
                                               and isinstance(r.get("text"), str))):
                    errs.append("%s.inlines[%d]: not a TextRun" % (where, i))
    if t == "FactSet":
        facts = el.get("facts")
        if not isinstance(facts, list) or not facts:
            errs.append("%s: FactSet needs facts" % where)
        else:
            for i, f in enumerate(facts):
                if not (isinstance(f, dict) and isinstance(f.get("title"), str)
                        and isinstance(f.get("value"), str)):
                    errs.append("%s.facts[%d]: needs title and value strings" % (where, i))
    return errs


def teams_errors(raw):
    if len(raw) > TEAMS_MAX_BYTES:
        return ["message larger than 28 KB (%d bytes)" % len(raw)]
    try:
        m = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return ["not UTF-8 JSON: %s" % e]
    if not isinstance(m, dict) or m.get("type") != "message":
        return ['type must be "message"']
    atts = m.get("attachments")
    if not isinstance(atts, list) or not atts:
        return ["attachments must be a non-empty list"]
    errs = []
    for i, a in enumerate(atts):
        if not isinstance(a, dict) or a.get("contentType") != \
                "application/vnd.microsoft.card.adaptive":
            errs.append("attachments[%d].contentType is not an Adaptive Card" % i)
            continue
        c = a.get("content")
        if not isinstance(c, dict) or c.get("type") != "AdaptiveCard":
            errs.append("attachments[%d].content.type must be AdaptiveCard" % i)
            continue
        if c.get("version") != "1.5":
            errs.append("attachments[%d].content.version must be 1.5, not %r"
                        % (i, c.get("version")))
        body = c.get("body")
        if not isinstance(body, list) or not body:
            errs.append("attachments[%d].content.body must be a non-empty list" % i)
            continue
        for j, el in enumerate(body):
            errs += adaptive_element_errors(el, "body[%d]" % j)
    return errs


def gchat_errors(query, raw):
    errs = []
    if "messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD" not in query:
        errs.append("no messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD in the URL")
    if len(raw) > GCHAT_MAX_BYTES:
        errs.append("message larger than 32,000 bytes (%d)" % len(raw))
    try:
        m = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return errs + ["not UTF-8 JSON: %s" % e]
    if not isinstance(m, dict):
        return errs + ["not a JSON object"]
    if "text" in m and not isinstance(m["text"], str):
        errs.append("text must be a string")
    th = m.get("thread")
    if not isinstance(th, dict) or not isinstance(th.get("threadKey"), str) or \
            not th["threadKey"]:
        errs.append("thread.threadKey must be a non-empty string")
    cards = m.get("cardsV2")
    if not isinstance(cards, list) or not cards:
        return errs + ["cardsV2 must be a non-empty list"]
    for i, cw in enumerate(cards):
        if not isinstance(cw, dict) or not isinstance(cw.get("cardId"), str) or \
                not cw["cardId"]:
            errs.append("cardsV2[%d].cardId must be a non-empty string" % i)
            continue
        card = cw.get("card")
        if not isinstance(card, dict):
            errs.append("cardsV2[%d].card must be an object" % i)
            continue
        hdr = card.get("header")
        if not isinstance(hdr, dict) or not isinstance(hdr.get("title"), str):
            errs.append("cardsV2[%d].card.header.title must be a string" % i)
        secs = card.get("sections")
        if not isinstance(secs, list) or not secs:
            errs.append("cardsV2[%d].card.sections must be a non-empty list" % i)
            continue
        for j, sec in enumerate(secs):
            ws = sec.get("widgets") if isinstance(sec, dict) else None
            if not isinstance(ws, list) or not ws:
                errs.append("sections[%d].widgets must be a non-empty list" % j)
                continue
            for k, w in enumerate(ws):
                kinds = [x for x in (w if isinstance(w, dict) else {}) if x in GCHAT_WIDGETS]
                if not isinstance(w, dict) or len(w) != 1 or len(kinds) != 1:
                    errs.append("sections[%d].widgets[%d] must be one known widget: %r"
                                % (j, k, list(w) if isinstance(w, dict) else w))
                    continue
                kind = kinds[0]
                if kind in ("textParagraph", "decoratedText") and \
                        not isinstance(w[kind].get("text"), str):
                    errs.append("sections[%d].widgets[%d].%s.text must be a string"
                                % (j, k, kind))
    return errs


def signature_errors(headers, raw, secret, max_age=300):
    """Verify X-Krc-Signature: t=T,v1=HEX with Python's hmac (independent of krc's OpenSSL)."""
    h = headers.get("X-Krc-Signature")
    if not h:
        return ["no X-Krc-Signature header"]
    parts = dict(p.split("=", 1) for p in h.split(",") if "=" in p)
    t, v1 = parts.get("t"), parts.get("v1")
    if not t or not t.isdigit() or not v1:
        return ["malformed X-Krc-Signature: %r" % h]
    if abs(time.time() - int(t)) > max_age:
        return ["signature timestamp too old"]
    want = hmac.new(secret.encode(), t.encode() + b"." + raw, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, v1):
        return ["signature does not verify"]
    return []


class FakeDest:
    def __init__(self):
        with open(SCHEMA_PATH) as f:
            self.schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(self.schema)
        self.validator = jsonschema.Draft202012Validator(self.schema)
        self.lock = threading.Lock()
        self.reqs = []
        self.faults = []
        self.secrets = {}  # webhook name -> signing secret
        self.routing_keys = None  # None: any 32-character key
        self.threads = {}  # Google Chat: threadKey -> thread name
        self.server = None
        self.thread = None

    # ---- lifecycle ----
    def start(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                status, headers, body = fake.handle(self.path, dict(self.headers.items()), raw)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    @property
    def base_url(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    # ---- configuration ----
    def webhook_url(self, name, secret):
        self.secrets[name] = secret
        return "%s/webhook/%s" % (self.base_url, name)

    def teams_url(self, name):
        return "%s/teams/%s" % (self.base_url, name)

    def gchat_url(self, space):
        return "%s/chat/v1/spaces/%s/messages?key=AIzaFakeKey&token=fake-%s-token" % (
            self.base_url, space, space)

    @property
    def pagerduty_url(self):
        return self.base_url + "/pagerduty/v2/enqueue"

    def fault(self, path_regex, status, count=1, retry_after=None, body=b"{}"):
        with self.lock:
            self.faults.append({"re": re.compile(path_regex), "status": status, "count": count,
                                "retry_after": retry_after, "body": body})

    def clear_faults(self):
        with self.lock:
            self.faults = []

    # ---- the endpoint ----
    def _fault_for(self, path):
        with self.lock:
            for f in self.faults:
                if f["count"] != 0 and f["re"].search(path):
                    if f["count"] > 0:
                        f["count"] -= 1
                    return f
        return None

    def handle(self, path, headers, raw):
        rec = {"path": path, "headers": headers, "raw": raw, "json": None, "errors": [],
               "time": time.monotonic()}
        try:
            rec["json"] = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            pass
        f = self._fault_for(path)
        if f is not None:
            rec["status"] = f["status"]
            rec["fault"] = True
            self._keep(rec)
            extra = {"Retry-After": str(f["retry_after"])} if f["retry_after"] else {}
            return f["status"], extra, f["body"]
        if path == "/pagerduty/v2/enqueue":
            rec["errors"] = pagerduty_errors(raw, self.routing_keys)
            if rec["errors"]:
                rec["status"] = 400
                self._keep(rec)
                return 400, {}, {"status": "invalid event", "message": "Event object is invalid",
                                 "errors": rec["errors"]}
            rec["status"] = 202
            self._keep(rec)
            return 202, {}, {"status": "success", "message": "Event processed",
                             "dedup_key": rec["json"].get("dedup_key") or "generated"}
        if re.match(r"^/teams/[A-Za-z0-9_-]+$", path):
            rec["errors"] = teams_errors(raw)
            rec["status"] = 400 if rec["errors"] else 202
            self._keep(rec)
            return rec["status"], {}, ({"error": rec["errors"][0][:200]} if rec["errors"] else b"")
        g = re.match(r"^/chat/v1/spaces/([A-Za-z0-9_-]+)/messages\?(.*)$", path)
        if g:
            rec["errors"] = gchat_errors(g.group(2), raw)
            if rec["errors"]:
                rec["status"] = 400
                self._keep(rec)
                return 400, {}, {"error": {"code": 400, "message": rec["errors"][0][:200],
                                           "status": "INVALID_ARGUMENT"}}
            key = rec["json"]["thread"]["threadKey"]
            with self.lock:
                rec["thread_reply"] = key in self.threads
                thread = self.threads.setdefault(
                    key, "spaces/%s/threads/t%d" % (g.group(1), len(self.threads) + 1))
            rec["thread"] = thread
            rec["status"] = 200
            self._keep(rec)
            return 200, {}, {"name": "%s/messages/m%d" % (thread, len(self.reqs)),
                             "thread": {"name": thread, "threadKey": key}}
        m = re.match(r"^/webhook/([A-Za-z0-9_-]+)$", path)
        if m and m.group(1) in self.secrets:
            rec["errors"] = signature_errors(headers, raw, self.secrets[m.group(1)])
            if rec["errors"]:
                rec["status"] = 401
                self._keep(rec)
                return 401, {}, {"error": rec["errors"][0]}
            if rec["json"] is None:
                rec["errors"] = ["body is not UTF-8 JSON"]
            else:
                rec["errors"] = ["%s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message)
                                 for e in self.validator.iter_errors(rec["json"])]
            rec["status"] = 400 if rec["errors"] else 200
            self._keep(rec)
            return rec["status"], {}, ({"error": rec["errors"][0][:200]} if rec["errors"]
                                       else {"ok": True})
        rec["status"] = 404
        self._keep(rec)
        return 404, {}, {"error": "no such endpoint"}

    def _keep(self, rec):
        with self.lock:
            self.reqs.append(rec)

    # ---- reading ----
    def requests(self, path_prefix="", accepted=None):
        with self.lock:
            out = [r for r in self.reqs if r["path"].startswith(path_prefix)]
        if accepted is not None:
            out = [r for r in out if (200 <= r["status"] < 300) == accepted]
        return out

    def wait(self, n, path_prefix="", timeout=20.0, accepted=True, pred=None):
        deadline = time.monotonic() + timeout
        while True:
            got = [r for r in self.requests(path_prefix, accepted) if pred is None or pred(r)]
            if len(got) >= n:
                return got
            if time.monotonic() > deadline:
                raise AssertionError("fakedest: %d request(s) to %s wanted, %d got: %s"
                                     % (n, path_prefix, len(got),
                                        [(r["path"], r["status"], r["errors"][:2])
                                         for r in self.requests(path_prefix)]))
            time.sleep(0.05)

#!/usr/bin/env python3
"""fakeslack: a strict fake of Slack's incoming webhooks and the few Web API methods krc uses.

Standard library only (Python >= 3.11) plus the `openssl` command line tool for --tls.  It
*enforces* Slack's documented message limits (and, where Slack's behaviour is not verified,
the stricter choice), so a payload that real Slack would refuse never passes here.  See
tests/fakeslack/README.md for the limits, their sources, the admin API and the faults.  Wire
facts follow /work/shared/protocols.md Part 2.

Run:  python3 fakeslack.py --state-dir DIR [--port 0] [--admin-port 0] [--tls] [--token T]
"""

from __future__ import annotations

import argparse
import base64
import copy
import email.parser
import email.policy
import hashlib
import hmac
import http.server
import json
import logging
import math
import os
import re
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
from testtls import make_certs, run_openssl, write_atomic  # noqa: E402

LOG = logging.getLogger("fakeslack")

# Limits enforced on every message (webhook, chat.postMessage, file share blocks).  Each can be
# overridden through POST /admin/config {"limits": {...}}.  Sources: protocols.md §2.3 unless
# noted; README.md has the table with confidence tags.
DEFAULT_LIMITS = {
    "max_blocks": 50,  # per blocks array (messages)
    "max_header_chars": 150,  # header.text, plain_text only
    "max_section_text_chars": 3000,  # section.text.text
    "max_section_fields": 10,  # section.fields items
    "max_field_chars": 2000,  # each section.fields[i].text
    "max_context_elements": 10,  # context.elements
    "max_actions_elements": 25,  # actions.elements (Block Kit reference)
    "max_block_id_chars": 255,  # block_id, unique per message
    "max_image_url_chars": 3000,  # image.image_url (Block Kit reference)
    "max_alt_text_chars": 2000,  # image.alt_text (Block Kit reference)
    "max_attachments": 100,  # attachments per message -> too_many_attachments
    "max_markdown_chars": 12000,  # markdown blocks, cumulative per payload
    "max_text_chars": 40000,  # top-level text -> msg_too_long (Slack truncates; we refuse)
    "max_total_chars": 40000,  # every text string in the payload, summed -> msg_too_long
    "max_body_bytes": 1000000,  # raw request body of a message -> invalid_payload
    "max_file_bytes": 50 * 1024 * 1024,  # files.getUploadURLExternal length
    "max_alt_txt_chars": 1000,  # files.getUploadURLExternal alt_txt -> alt_txt_too_large
}

TEXT_TYPES = ("plain_text", "mrkdwn")
RICH_TEXT_ELEMENTS = ("rich_text_section", "rich_text_list", "rich_text_preformatted",
                      "rich_text_quote")
# allowed keys per block type (unknown keys are refused, like Slack's schema validation)
BLOCK_KEYS = {
    "section": {"type", "block_id", "text", "fields", "accessory", "expand"},
    "header": {"type", "block_id", "text"},
    "context": {"type", "block_id", "elements"},
    "divider": {"type", "block_id"},
    "rich_text": {"type", "block_id", "elements"},
    "image": {"type", "block_id", "image_url", "slack_file", "alt_text", "title"},
    "actions": {"type", "block_id", "elements"},
    "markdown": {"type", "block_id", "text"},
}
ATTACHMENT_STRING_FIELDS = ("fallback", "color", "pretext", "author_name", "author_link",
                            "author_icon", "title", "title_link", "text", "image_url",
                            "thumb_url", "footer", "footer_icon")
# attachment strings that are message text (counted against max_total_chars)
ATTACHMENT_TEXT_FIELDS = ("fallback", "pretext", "title", "text", "footer", "author_name")
CHANNEL_ID_RE = re.compile(r"^[CGD][A-Z0-9]{6,}$")
TS_RE = re.compile(r"^\d{10}\.\d{6}$")
WEBHOOK_PREFIX = "/services/"
UPLOAD_PREFIX = "/upload/v1/"
API_PREFIX = "/api/"
SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie"}
HARD_BODY_CAP = 256 * 1024 * 1024
CONTINUE = object()  # a hang fault without a status: answer normally afterwards


class Invalid(Exception):
    """A payload check failed.  error: Slack's error string; pointer: JSON pointer."""

    def __init__(self, error, message, pointer=""):
        super().__init__(message)
        self.error = error
        self.message = message
        self.pointer = pointer

    def detail(self):
        if self.pointer:
            return "[ERROR] %s [json-pointer:%s]" % (self.message, self.pointer)
        return "[ERROR] %s" % self.message


# --------------------------------------------------------------------------------------------
# message validation (shared by webhooks, chat.postMessage and file-share blocks)


class Counter:
    def __init__(self):
        self.total_chars = 0
        self.markdown_chars = 0
        self.block_ids = {}
        self.blocks = 0


def _check_strings(obj, ptr=""):
    """Lone surrogates (JSON \\ud800 escapes) are not Unicode text; Slack cannot store them."""
    if isinstance(obj, str):
        for i, ch in enumerate(obj):
            if 0xD800 <= ord(ch) <= 0xDFFF:
                raise Invalid("invalid_payload", "lone surrogate U+%04X at character %d"
                              % (ord(ch), i), ptr)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _check_strings(k, ptr)
            _check_strings(v, "%s/%s" % (ptr, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _check_strings(v, "%s/%d" % (ptr, i))


def _bad(ptr, message):
    return Invalid("invalid_blocks", message, ptr)


def _check_keys(obj, allowed, ptr):
    extra = sorted(set(obj) - set(allowed))
    if extra:
        raise _bad("%s/%s" % (ptr, extra[0]), "unknown field '%s' (allowed: %s)"
                   % (extra[0], ", ".join(sorted(allowed))))


def _text_object(o, ptr, maxlen, ctr, plain_only=False, required=True):
    if o is None and not required:
        return
    if not isinstance(o, dict):
        raise _bad(ptr, "must be a text object {type, text}")
    t = o.get("type")
    if t not in TEXT_TYPES:
        raise _bad(ptr + "/type", "must be one of plain_text, mrkdwn (got %s)"
                   % json.dumps(t))
    if plain_only and t != "plain_text":
        raise _bad(ptr + "/type", "must be plain_text")
    allowed = {"type", "text", "emoji"} if t == "plain_text" else {"type", "text", "verbatim"}
    _check_keys(o, allowed, ptr)
    for flag in ("emoji", "verbatim"):
        if flag in o and not isinstance(o[flag], bool):
            raise _bad("%s/%s" % (ptr, flag), "must be a boolean")
    s = o.get("text")
    if not isinstance(s, str):
        raise _bad(ptr + "/text", "text must be a string")
    if len(s) < 1:
        raise _bad(ptr + "/text", "must be more than 0 characters")
    if maxlen is not None and len(s) > maxlen:
        raise _bad(ptr + "/text", "must be less than %d characters (has %d)"
                   % (maxlen + 1, len(s)))
    ctr.total_chars += len(s)


def _elements(block, key, ptr, lo, hi):
    el = block.get(key)
    if not isinstance(el, list):
        raise _bad("%s/%s" % (ptr, key), "%s must be an array" % key)
    if len(el) < lo:
        raise _bad("%s/%s" % (ptr, key), "must provide at least %d items" % lo)
    if hi is not None and len(el) > hi:
        raise _bad("%s/%s" % (ptr, key), "must provide no more than %d items (has %d)"
                   % (hi, len(el)))
    for i, e in enumerate(el):
        if not isinstance(e, dict) or not isinstance(e.get("type"), str):
            raise _bad("%s/%s/%d" % (ptr, key, i), "must be an object with a string type")
    return el


def _image_fields(o, ptr, lim, ctr):
    url, sf = o.get("image_url"), o.get("slack_file")
    if url is None and sf is None:
        raise _bad(ptr, "must provide image_url or slack_file")
    if url is not None:
        if not isinstance(url, str) or not url:
            raise _bad(ptr + "/image_url", "must be a non-empty string")
        if len(url) > lim["max_image_url_chars"]:
            raise _bad(ptr + "/image_url", "must be less than %d characters"
                       % (lim["max_image_url_chars"] + 1))
    if sf is not None and not isinstance(sf, dict):
        raise _bad(ptr + "/slack_file", "must be an object")
    alt = o.get("alt_text")
    if not isinstance(alt, str) or not alt:
        raise _bad(ptr + "/alt_text", "alt_text is required and must be a non-empty string")
    if len(alt) > lim["max_alt_text_chars"]:
        raise _bad(ptr + "/alt_text", "must be less than %d characters"
                   % (lim["max_alt_text_chars"] + 1))


def _rich_text_chars(obj):
    n = 0
    if isinstance(obj, dict):
        if obj.get("type") == "text" and isinstance(obj.get("text"), str):
            n += len(obj["text"])
        for v in obj.values():
            if isinstance(v, (dict, list)):
                n += _rich_text_chars(v)
    elif isinstance(obj, list):
        for v in obj:
            n += _rich_text_chars(v)
    return n


def validate_block(b, ptr, lim, ctr):
    if not isinstance(b, dict):
        raise Invalid("invalid_blocks_format", "each block must be a JSON object", ptr)
    t = b.get("type")
    if t not in BLOCK_KEYS:
        raise _bad(ptr + "/type", "unsupported block type %s (known: %s)"
                   % (json.dumps(t), ", ".join(sorted(BLOCK_KEYS))))
    _check_keys(b, BLOCK_KEYS[t], ptr)
    if "block_id" in b:
        bid = b["block_id"]
        if not isinstance(bid, str) or not bid:
            raise _bad(ptr + "/block_id", "block_id must be a non-empty string")
        if len(bid) > lim["max_block_id_chars"]:
            raise _bad(ptr + "/block_id", "must be less than %d characters (has %d)"
                       % (lim["max_block_id_chars"] + 1, len(bid)))
        if bid in ctr.block_ids:
            raise _bad(ptr + "/block_id", "duplicate block_id %s (first at %s)"
                       % (json.dumps(bid), ctr.block_ids[bid]))
        ctr.block_ids[bid] = ptr
    if t == "section":
        if "text" not in b and "fields" not in b:
            raise _bad(ptr, "section must provide text or fields")
        _text_object(b.get("text"), ptr + "/text", lim["max_section_text_chars"], ctr,
                     required=False)
        if "fields" in b:
            f = b["fields"]
            if not isinstance(f, list) or not f:
                raise _bad(ptr + "/fields", "fields must be a non-empty array")
            if len(f) > lim["max_section_fields"]:
                raise _bad(ptr + "/fields", "must provide no more than %d items (has %d)"
                           % (lim["max_section_fields"], len(f)))
            for i, fo in enumerate(f):
                _text_object(fo, "%s/fields/%d" % (ptr, i), lim["max_field_chars"], ctr)
        if "accessory" in b and (not isinstance(b["accessory"], dict)
                                 or not isinstance(b["accessory"].get("type"), str)):
            raise _bad(ptr + "/accessory", "accessory must be an element object")
        if "expand" in b and not isinstance(b["expand"], bool):
            raise _bad(ptr + "/expand", "must be a boolean")
    elif t == "header":
        if "text" not in b:
            raise _bad(ptr + "/text", "header must provide text")
        _text_object(b["text"], ptr + "/text", lim["max_header_chars"], ctr, plain_only=True)
    elif t == "context":
        for i, e in enumerate(_elements(b, "elements", ptr, 1, lim["max_context_elements"])):
            ep = "%s/elements/%d" % (ptr, i)
            if e["type"] == "image":
                _check_keys(e, {"type", "image_url", "slack_file", "alt_text"}, ep)
                _image_fields(e, ep, lim, ctr)
            else:
                _text_object(e, ep, None, ctr)
    elif t == "rich_text":
        for i, e in enumerate(_elements(b, "elements", ptr, 1, None)):
            ep = "%s/elements/%d" % (ptr, i)
            if e["type"] not in RICH_TEXT_ELEMENTS:
                raise _bad(ep + "/type", "must be one of %s" % ", ".join(RICH_TEXT_ELEMENTS))
            if not isinstance(e.get("elements"), list):
                raise _bad(ep + "/elements", "elements must be an array")
        ctr.total_chars += _rich_text_chars(b["elements"])
    elif t == "image":
        _image_fields(b, ptr, lim, ctr)
        _text_object(b.get("title"), ptr + "/title", lim["max_alt_text_chars"], ctr,
                     plain_only=True, required=False)
    elif t == "actions":
        _elements(b, "elements", ptr, 1, lim["max_actions_elements"])
    elif t == "markdown":
        s = b.get("text")
        if not isinstance(s, str) or not s:
            raise _bad(ptr + "/text", "markdown block needs a non-empty string text")
        ctr.markdown_chars += len(s)
        ctr.total_chars += len(s)
        if ctr.markdown_chars > lim["max_markdown_chars"]:
            raise _bad(ptr + "/text", "markdown blocks exceed %d characters in total (%d)"
                       % (lim["max_markdown_chars"], ctr.markdown_chars))


def validate_blocks(blocks, ptr, lim, ctr):
    if not isinstance(blocks, list):
        raise Invalid("invalid_blocks_format", "blocks must be a JSON array", ptr)
    if len(blocks) > lim["max_blocks"]:
        raise Invalid("invalid_blocks", "must provide no more than %d items (has %d)"
                      % (lim["max_blocks"], len(blocks)), ptr)
    for i, b in enumerate(blocks):
        validate_block(b, "%s/%d" % (ptr, i), lim, ctr)
    ctr.blocks += len(blocks)


def _nonempty(v):
    if isinstance(v, str):
        return v.strip() != ""
    if isinstance(v, list):
        return len(v) > 0
    return False


def validate_message(body, lim):
    """Slack's checks on a message payload.  Returns (checks passed, counts); raises Invalid
    with error "bad_type" for wrongly typed top-level fields (mapped per surface)."""
    checks = []
    if not isinstance(body, dict):
        raise Invalid("invalid_payload", "payload must be a JSON object, got %s"
                      % type(body).__name__)
    checks.append("json_object")
    _check_strings(body)
    checks.append("unicode")
    text = body.get("text")
    if text is not None and not isinstance(text, str):
        raise Invalid("bad_type", "text must be a string", "/text")
    atts = body.get("attachments")
    if atts is not None and not isinstance(atts, list):
        raise Invalid("bad_type", "attachments must be an array", "/attachments")
    blocks = body.get("blocks")
    if not (_nonempty(text) or _nonempty(blocks) or _nonempty(atts)):
        raise Invalid("no_text", "message needs non-empty text, blocks or attachments")
    checks.append("has_content")
    ctr = Counter()
    if atts:
        if len(atts) > lim["max_attachments"]:
            raise Invalid("too_many_attachments", "no more than %d attachments (has %d)"
                          % (lim["max_attachments"], len(atts)), "/attachments")
        checks.append("attachments_count")
    if blocks is not None:
        validate_blocks(blocks, "/blocks", lim, ctr)
    for i, a in enumerate(atts or []):
        ap = "/attachments/%d" % i
        if not isinstance(a, dict):
            raise Invalid("invalid_attachments", "attachment must be a JSON object", ap)
        for k in ATTACHMENT_STRING_FIELDS:
            if k in a and not isinstance(a[k], str):
                raise Invalid("invalid_attachments", "%s must be a string" % k, ap + "/" + k)
        for k in ATTACHMENT_TEXT_FIELDS:
            ctr.total_chars += len(a.get(k) or "")
        flds = a.get("fields")
        if flds is not None:
            if not isinstance(flds, list):
                raise Invalid("invalid_attachments", "fields must be an array", ap + "/fields")
            for j, f in enumerate(flds):
                fp = "%s/fields/%d" % (ap, j)
                if not isinstance(f, dict):
                    raise Invalid("invalid_attachments", "field must be an object", fp)
                for k in ("title", "value"):
                    if k in f and not isinstance(f[k], str):
                        raise Invalid("invalid_attachments", "%s must be a string" % k,
                                      fp + "/" + k)
                    ctr.total_chars += len(f.get(k) or "")
        if "blocks" in a:
            validate_blocks(a["blocks"], ap + "/blocks", lim, ctr)
    if blocks is not None or any(isinstance(a, dict) and "blocks" in a for a in atts or []):
        checks += ["blocks_count", "block_types", "block_fields", "block_text_lengths",
                   "block_ids_unique", "markdown_total"]
    if text is not None and len(text) > lim["max_text_chars"]:
        raise Invalid("msg_too_long", "text has %d characters, limit %d"
                      % (len(text), lim["max_text_chars"]), "/text")
    checks.append("text_length")
    ctr.total_chars += len(text or "")
    if ctr.total_chars > lim["max_total_chars"]:
        raise Invalid("msg_too_long", "message text totals %d characters, limit %d"
                      % (ctr.total_chars, lim["max_total_chars"]))
    checks.append("total_length")
    counts = {"text_chars": len(text or ""), "total_chars": ctr.total_chars,
              "blocks": ctr.blocks, "attachments": len(atts or []),
              "markdown_chars": ctr.markdown_chars}
    return checks, counts


# --------------------------------------------------------------------------------------------
# state


class Fault:
    def __init__(self, spec, seq):
        t = spec.get("type")
        if t not in ("respond", "hang", "close"):
            raise ValueError("fault type must be respond, hang, close, down, up or clear")
        self.seq = seq
        self.type = t
        self.count = spec.get("count", 1)
        if not isinstance(self.count, int) or self.count == 0 or self.count < -1:
            raise ValueError("count must be a positive integer or -1 (unlimited)")
        rx = spec.get("path_regex")
        try:
            self.path_re = re.compile(rx) if rx else None
        except re.error as e:
            raise ValueError("path_regex: %s" % e) from None
        self.method = spec.get("method")
        self.status = spec.get("status")
        if t == "respond" and not isinstance(self.status, int):
            raise ValueError("respond needs an integer status")
        self.error = spec.get("error")
        self.body = spec.get("body")
        self.retry_after = spec.get("retry_after")
        self.seconds = float(spec.get("seconds", 0))
        if t == "hang" and self.seconds <= 0:
            raise ValueError("hang needs seconds > 0")
        self.rst = bool(spec.get("rst", False))
        self.spec = spec

    def matches(self, method, path):
        if self.method and self.method.upper() != method:
            return False
        return self.path_re is None or self.path_re.search(path) is not None


class Bucket:
    __slots__ = ("tokens", "last")

    def __init__(self, tokens, last):
        self.tokens = tokens
        self.last = last


class State:
    def __init__(self, token):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.wake = threading.Event()  # set on reset: cuts hangs short
        self.tokens = [token]
        self.channels = None  # None: any channel accepted
        self.webhooks = {}  # path -> {"mode", "channel", "revoked"}
        self.unknown_webhooks = "accept"
        self.rate = {"enabled": True, "per_second": 1.0, "burst": 2}
        self.limits = dict(DEFAULT_LIMITS)
        self.down = None
        self.base_url = ""
        self.epoch = 0
        self.reset()

    def reset(self):
        with self.lock:
            self.epoch += 1  # requests in flight now are not recorded afterwards
            self.messages = []
            self.requests = []
            self.files = {}  # file_id -> record
            self.uploads = {}  # upload id -> file_id
            self.by_ts = {}  # (channel id, ts) -> message
            self.buckets = {}
            self.faults = []
            self.fault_seq = 0
            self.down = None
            self.last_ts = 0
            self.seq = 0
            self.stats = {"requests": 0, "accepted": {"webhook": 0, "chat.postMessage": 0,
                                                       "files": 0},
                          "rejected": {}, "rate_limited": 0, "status": {},
                          "faults_applied": 0, "warnings": {}, "reply_to_reply": 0}
            self.cond.notify_all()
        self.wake.set()
        self.wake = threading.Event()

    # -- config --

    def config_dict(self):
        with self.lock:
            return {"rate_limit": dict(self.rate), "tokens_count": len(self.tokens),
                    "channels": copy.deepcopy(self.channels),
                    "webhooks": copy.deepcopy(self.webhooks),
                    "unknown_webhooks": self.unknown_webhooks, "limits": dict(self.limits)}

    def apply_config(self, cfg):
        if not isinstance(cfg, dict):
            raise ValueError("config must be a JSON object")
        known = {"rate_limit", "tokens", "channels", "webhooks", "unknown_webhooks", "limits"}
        extra = set(cfg) - known
        if extra:
            raise ValueError("unknown config keys: %s (known: %s)"
                             % (", ".join(sorted(extra)), ", ".join(sorted(known))))
        with self.lock:
            rl = cfg.get("rate_limit")
            if rl is not None:
                new = dict(self.rate)
                for k, v in rl.items():
                    if k == "enabled" and isinstance(v, bool):
                        new[k] = v
                    elif k == "per_second" and isinstance(v, (int, float)) and v > 0:
                        new[k] = float(v)
                    elif k == "burst" and isinstance(v, int) and v >= 1:
                        new[k] = v
                    else:
                        raise ValueError("rate_limit.%s: bad value %r (enabled bool, "
                                         "per_second > 0, burst int >= 1)" % (k, v))
                self.rate = new
                self.buckets = {}
            if "tokens" in cfg:
                toks = cfg["tokens"]
                if (not isinstance(toks, list) or not toks
                        or not all(isinstance(t, str) and t for t in toks)):
                    raise ValueError("tokens must be a non-empty list of strings")
                self.tokens = list(toks)
            if "channels" in cfg:
                self.channels = self._parse_channels(cfg["channels"])
            if "webhooks" in cfg:
                wh = cfg["webhooks"]
                if not isinstance(wh, dict):
                    raise ValueError("webhooks must be an object {path: {mode, channel, "
                                     "revoked}}")
                for path, spec in wh.items():
                    if not path.startswith(WEBHOOK_PREFIX):
                        raise ValueError("webhook path %r must start with %s"
                                         % (path, WEBHOOK_PREFIX))
                    if spec is None:
                        self.webhooks.pop(path, None)
                        continue
                    if not isinstance(spec, dict) or set(spec) - {"mode", "channel",
                                                                  "revoked"}:
                        raise ValueError("webhook %s: keys are mode, channel, revoked" % path)
                    cur = dict(self.webhooks.get(path) or {"mode": "app", "channel": None,
                                                           "revoked": False})
                    cur.update(spec)
                    if cur["mode"] not in ("app", "legacy"):
                        raise ValueError("webhook %s: mode must be app or legacy" % path)
                    self.webhooks[path] = cur
            if "unknown_webhooks" in cfg:
                if cfg["unknown_webhooks"] not in ("accept", "reject"):
                    raise ValueError("unknown_webhooks must be accept or reject")
                self.unknown_webhooks = cfg["unknown_webhooks"]
            if "limits" in cfg:
                lim = cfg["limits"]
                if not isinstance(lim, dict):
                    raise ValueError("limits must be an object")
                for k, v in lim.items():
                    if k not in DEFAULT_LIMITS:
                        raise ValueError("unknown limit %s (known: %s)"
                                         % (k, ", ".join(sorted(DEFAULT_LIMITS))))
                    if v is None:
                        v = DEFAULT_LIMITS[k]
                    if not isinstance(v, int) or v < 0:
                        raise ValueError("limit %s must be a non-negative integer" % k)
                    self.limits[k] = v
            return self.config_dict()

    @staticmethod
    def _parse_channels(spec):
        if spec is None:
            return None
        if not isinstance(spec, list):
            raise ValueError("channels must be a list (or null for 'any channel')")
        out = {}
        for c in spec:
            if isinstance(c, str):
                c = {"id": c}
            if not isinstance(c, dict) or not isinstance(c.get("id"), str):
                raise ValueError("channel entries are IDs or {id, name, member, archived}")
            if not CHANNEL_ID_RE.match(c["id"]):
                raise ValueError("channel id %r does not look like a Slack ID (C/G/D + "
                                 "upper-case letters and digits)" % c["id"])
            out[c["id"]] = {"id": c["id"], "name": c.get("name") or c["id"].lower(),
                            "member": bool(c.get("member", True)),
                            "archived": bool(c.get("archived", False))}
        return out

    # -- helpers used by handlers --

    def take_fault(self, method, path):
        with self.lock:
            for f in self.faults:
                if f.matches(method, path):
                    if f.count > 0:
                        f.count -= 1
                        if f.count == 0:
                            self.faults.remove(f)
                    self.stats["faults_applied"] += 1
                    return f
        return None

    def rate_take(self, key):
        """Token bucket: burst tokens, refilled at per_second.  Returns 0 or Retry-After."""
        with self.lock:
            if not self.rate["enabled"]:
                return 0
            rate, burst = self.rate["per_second"], self.rate["burst"]
            now = time.monotonic()
            b = self.buckets.get(key)
            if b is None:
                b = self.buckets[key] = Bucket(float(burst), now)
            b.tokens = min(float(burst), b.tokens + (now - b.last) * rate)
            b.last = now
            if b.tokens >= 1.0:
                b.tokens -= 1.0
                return 0
            return max(1, math.ceil((1.0 - b.tokens) / rate))

    def next_ts(self):
        with self.lock:
            us = max(int(time.time() * 1e6), self.last_ts + 1)
            self.last_ts = us
            return "%d.%06d" % divmod(us, 1000000)

    def add_message(self, msg, epoch):
        with self.lock:
            if epoch != self.epoch:
                return
            self.seq += 1
            msg["seq"] = self.seq
            self.messages.append(msg)
            if msg.get("ts") and msg.get("channel_id"):
                self.by_ts[(msg["channel_id"], msg["ts"])] = msg
            if msg["kind"] in self.stats["accepted"]:
                self.stats["accepted"][msg["kind"]] += 1
            self.cond.notify_all()

    def record(self, entry):
        with self.lock:
            if entry.pop("epoch", self.epoch) != self.epoch:
                return
            self.requests.append(entry)
            st = self.stats
            st["requests"] += 1
            code = entry.get("status")
            key = str(code) if code is not None else "closed"
            st["status"][key] = st["status"].get(key, 0) + 1
            err = entry.get("error")
            if err and not entry.get("fault"):
                st["rejected"][err] = st["rejected"].get(err, 0) + 1
            if entry.get("rate_limited"):
                st["rate_limited"] += 1
            for w in entry.get("warnings") or []:
                st["warnings"][w] = st["warnings"].get(w, 0) + 1
            self.cond.notify_all()

    def channel_lookup(self, ref):
        """channel ID or name (with or without '#') -> channel dict or None."""
        if not isinstance(ref, str) or not ref:
            return None
        with self.lock:
            chans = self.channels
        if chans is None:
            name = ref.lstrip("#")
            if CHANNEL_ID_RE.match(ref):
                return {"id": ref, "name": ref.lower(), "member": True, "archived": False}
            cid = "C" + hashlib.sha1(name.encode()).hexdigest()[:10].upper()
            return {"id": cid, "name": name, "member": True, "archived": False}
        if ref in chans:
            return chans[ref]
        name = ref.lstrip("#")
        for c in chans.values():
            if c["name"] == name:
                return c
        return None


# --------------------------------------------------------------------------------------------
# HTTP


def redact_path(path):
    """Webhook paths end in a secret; never write it to the log."""
    if path.startswith(WEBHOOK_PREFIX):
        parts = path.split("/")
        if len(parts) >= 5:
            parts[-1] = "***"
        return "/".join(parts)
    if path.startswith(UPLOAD_PREFIX):
        return UPLOAD_PREFIX + "***"
    return path


class Reply(Exception):
    """Raised by a route to send a prepared response (and record it)."""

    def __init__(self, status, body, ctype, error=None, detail=None, headers=None,
                 rate_limited=False):
        super().__init__(error or "")
        self.status = status
        self.body = body
        self.ctype = ctype
        self.error = error
        self.detail = detail
        self.headers = headers or {}
        self.rate_limited = rate_limited


def text_reply(status, text, error=None, detail=None, headers=None, rate_limited=False):
    return Reply(status, text.encode(), "text/html", error, detail, headers, rate_limited)


def api_reply(obj, status=200, detail=None, headers=None, rate_limited=False):
    err = None if obj.get("ok") else obj.get("error")
    return Reply(status, json.dumps(obj, ensure_ascii=False).encode(),
                 "application/json; charset=utf-8", err, detail, headers, rate_limited)


def api_error(error, detail=None, status=200):
    """{"ok": false, "error": ...}.  The detail goes to /admin/requests; like Slack, only
    block validation errors also carry it in response_metadata.messages."""
    obj = {"ok": False, "error": error}
    if detail and error in ("invalid_blocks", "invalid_blocks_format", "invalid_attachments"):
        obj["response_metadata"] = {"messages": [detail]}
    return api_reply(obj, status, detail)


class BaseHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fakeslack/1.0"
    sys_version = ""
    timeout = 120
    disable_nagle_algorithm = True

    @property
    def state(self) -> State:
        return self.server.state

    def log_message(self, format, *args):  # noqa: A002 - base class signature
        pass

    def log_error(self, format, *args):  # noqa: A002
        LOG.info("%s %s", self.client_address[0], redact_path(format % args))

    def handle(self):
        if isinstance(self.connection, ssl.SSLSocket):
            try:
                self.connection.do_handshake()
            except (OSError, ssl.SSLError) as e:
                LOG.info("TLS handshake with %s failed: %s", self.client_address, e)
                self.close_connection = True
                return
        try:
            super().handle()
        except (ConnectionError, ssl.SSLError, socket.timeout, OSError) as e:
            LOG.debug("connection %s ended: %s", self.client_address, e)

    def finish(self):
        try:
            super().finish()
        except (OSError, ssl.SSLError):
            pass

    def read_body(self, cap):
        """Whole request body (Content-Length or chunked).  None if larger than cap (the
        connection is then closed, since the rest cannot be skipped cheaply)."""
        te = self.headers.get("Transfer-Encoding", "")
        if te.lower() == "chunked":
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(65537)
                try:
                    size = int(line.split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    self.close_connection = True
                    return None
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                total += size
                if total > cap:
                    self.close_connection = True
                    return None
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
            return b"".join(chunks)
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            return None
        if n > cap:
            self.close_connection = True
            return None
        return self.rfile.read(n) if n > 0 else b""

    def send_body(self, status, body: bytes, ctype, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()


class SlackHandler(BaseHandler):
    """Webhooks, Web API and the file upload URLs (one port, like a test double of both
    hooks.slack.com and slack.com)."""

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def surface(self, path):
        if path.startswith(WEBHOOK_PREFIX):
            return "webhook"
        if path.startswith(API_PREFIX):
            return "api"
        if path.startswith(UPLOAD_PREFIX):
            return "upload"
        return "other"

    def dispatch(self):
        t0 = time.time()
        st = self.state
        split = urllib.parse.urlsplit(self.path)
        path, query = split.path, split.query
        surf = self.surface(path)
        entry = {"time": t0, "method": self.command, "path": path, "query": query,
                 "surface": surf,
                 "headers": {k: v for k, v in self.headers.items()
                             if k.lower() not in SECRET_HEADERS},
                 "auth": self.auth_kind(), "content_type": self.headers.get("Content-Type"),
                 "status": None, "error": None, "detail": None, "fault": None,
                 "epoch": st.epoch}
        cap = max(st.limits["max_body_bytes"], st.limits["max_file_bytes"]) + 65536
        body = self.read_body(min(cap, HARD_BODY_CAP))
        entry["body_bytes"] = len(body) if body is not None else None
        try:
            if body is None:
                raise self.err(surf, 400, "invalid_payload", "request body too large or "
                               "malformed framing")
            fault = self.fault_for(path)
            if fault is not None:
                entry["fault"] = fault.type if fault is not True else "down"
                r = self.apply_fault(fault, surf, entry)
                if r is None:
                    return  # connection closed without an answer
                if r is not CONTINUE:
                    raise r
            if surf == "webhook":
                self.webhook(path, body, entry)
            elif surf == "api":
                self.api(path[len(API_PREFIX):], query, body, entry)
            elif surf == "upload":
                self.upload(path[len(UPLOAD_PREFIX):], body, entry)
            else:
                raise text_reply(404, "not_found", "not_found", "no such path: %s" % path)
        except Reply as r:
            entry.update(status=r.status, error=r.error, detail=r.detail,
                         rate_limited=r.rate_limited, duration=round(time.time() - t0, 4))
            if r.status >= 400 or r.error:
                LOG.info("%s %s -> %d %s%s", self.command, redact_path(path), r.status,
                         r.error or "", (" (%s)" % r.detail) if r.detail else "")
            # recorded before the answer leaves, so a client that got its answer always
            # finds its request in /admin/requests
            st.record(entry)
            try:
                self.send_body(r.status, r.body, r.ctype, r.headers)
            except OSError as e:
                with st.lock:
                    entry["detail"] = (entry["detail"] or "") + " [client gone: %s]" % e
        finally:
            if "duration" not in entry:  # closed without an answer, or an internal error
                entry["duration"] = round(time.time() - t0, 4)
                st.record(entry)

    def auth_kind(self):
        h = self.headers.get("Authorization")
        if not h:
            return "none"
        scheme, _, tok = h.partition(" ")
        if scheme.lower() != "bearer" or not tok.strip():
            return "malformed"
        with self.state.lock:
            toks = list(self.state.tokens)
        ok = any(hmac.compare_digest(tok.strip().encode(), t.encode()) for t in toks)
        return "valid" if ok else "invalid"

    @staticmethod
    def err(surface, status, error, detail=None, headers=None, rate_limited=False):
        if surface == "api":
            obj = {"ok": False, "error": error}
            return api_reply(obj, status, detail, headers, rate_limited)
        return text_reply(status, error, error, detail, headers, rate_limited)

    # -- faults --

    def fault_for(self, path):
        st = self.state
        with st.lock:
            if st.down is not None:
                st.stats["faults_applied"] += 1
                return True
        return st.take_fault(self.command, path)

    def apply_fault(self, f, surf, entry):
        st = self.state
        if f is True:
            d = st.down
            return self.fault_reply(surf, d.get("status", 500), d.get("error", "rollup_error"),
                                    d.get("body"), d.get("retry_after"))
        if f.type == "hang":
            LOG.info("fault: hanging %s for %.1f s", redact_path(entry["path"]), f.seconds)
            st.wake.wait(f.seconds)
            if f.status is None:
                return CONTINUE
            return self.fault_reply(surf, f.status, f.error, f.body, f.retry_after)
        if f.type == "close":
            LOG.info("fault: closing connection on %s%s", redact_path(entry["path"]),
                     " (RST)" if f.rst else "")
            entry["error"] = "connection_closed"
            entry["duration"] = round(time.time() - entry["time"], 4)
            st.record(entry)  # before the client can notice the close
            self.close_connection = True
            try:
                if f.rst:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               b"\x01\x00\x00\x00\x00\x00\x00\x00")
                socket.socket.shutdown(self.connection, socket.SHUT_RDWR)
            except OSError:
                pass
            return None
        return self.fault_reply(surf, f.status, f.error, f.body, f.retry_after)

    def fault_reply(self, surf, status, error, body, retry_after):
        headers = {}
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        elif status == 429:
            headers["Retry-After"] = "1"
        if error is None:
            error = {429: "rate_limited" if surf != "api" else "ratelimited",
                     500: "rollup_error" if surf != "api" else "internal_error",
                     503: "service_unavailable"}.get(status, "fault_injected")
        if body is not None:
            raw = body if isinstance(body, str) else json.dumps(body)
            ctype = "application/json; charset=utf-8" if surf == "api" else "text/html"
            return Reply(status, raw.encode(), ctype, error, "injected fault", headers,
                         status == 429)
        r = self.err(surf, status, error, "injected fault", headers)
        r.rate_limited = status == 429
        return r

    # -- webhooks --

    def webhook(self, path, body, entry):
        st = self.state
        if self.command != "POST":
            raise text_reply(405, "invalid_method", "invalid_method",
                             "webhooks accept POST only", {"Allow": "POST"})
        with st.lock:
            hook = st.webhooks.get(path)
            unknown = st.unknown_webhooks
        if hook is None:
            if unknown == "reject":
                raise text_reply(404, "no_service", "no_service", "unknown webhook")
            hook = {"mode": "app", "channel": None, "revoked": False}
        if hook.get("revoked"):
            raise text_reply(404, "no_service", "no_service", "webhook revoked")
        ra = st.rate_take(("webhook", path))
        if ra:
            raise text_reply(429, "rate_limited", "rate_limited",
                             "more than %s msg/s (burst %d)" % (st.rate["per_second"],
                                                                st.rate["burst"]),
                             {"Retry-After": ra}, rate_limited=True)
        payload = self.parse_webhook_body(body)
        try:
            checks, counts = validate_message(payload, st.limits)
        except Invalid as e:
            err = "invalid_payload" if e.error == "bad_type" else e.error
            raise text_reply(400, err, err, e.detail()) from None
        ignored, channel = [], hook.get("channel") or "#" + self.hook_name(path)
        overrides = {k: payload[k] for k in ("channel", "username", "icon_emoji", "icon_url")
                     if k in payload}
        if hook["mode"] == "legacy":
            if isinstance(overrides.get("channel"), str) and overrides["channel"]:
                channel = overrides["channel"]
        else:
            ignored = sorted(overrides)
        msg = {"kind": "webhook", "time": time.time(), "webhook": path,
               "webhook_mode": hook["mode"], "channel": channel, "channel_id": None,
               "ts": None, "thread_ts": None, "body": payload, "text": payload.get("text"),
               "checks": checks, "counts": counts, "ignored_overrides": ignored,
               "identity": {k: overrides[k] for k in ("username", "icon_emoji", "icon_url")
                            if k in overrides and hook["mode"] == "legacy"}}
        st.add_message(msg, entry.get("epoch", st.epoch))
        entry["message_seq"] = msg.get("seq")
        raise text_reply(200, "ok")

    @staticmethod
    def hook_name(path):
        parts = [p for p in path[len(WEBHOOK_PREFIX):].split("/") if p]
        return (parts[1] if len(parts) >= 2 else "webhook").lower()

    def parse_webhook_body(self, body):
        st = self.state
        if len(body) > st.limits["max_body_bytes"]:
            raise text_reply(400, "invalid_payload", "invalid_payload",
                             "body has %d bytes, limit %d" % (len(body),
                                                              st.limits["max_body_bytes"]))
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype == "application/x-www-form-urlencoded":
            try:
                form = urllib.parse.parse_qs(body.decode("ascii"), keep_blank_values=True,
                                             strict_parsing=True, errors="strict")
            except (UnicodeDecodeError, ValueError) as e:
                raise text_reply(400, "invalid_payload", "invalid_payload",
                                 "bad form encoding: %s" % e) from None
            if list(form) != ["payload"] or len(form["payload"]) != 1:
                raise text_reply(400, "invalid_payload", "invalid_payload",
                                 "form body must have exactly one field 'payload'")
            raw = form["payload"][0]
        elif ctype == "application/json":
            try:
                raw = body.decode("utf-8")
            except UnicodeDecodeError as e:
                raise text_reply(400, "invalid_payload", "invalid_payload",
                                 "invalid UTF-8 at byte %d" % e.start) from None
        else:
            raise text_reply(400, "invalid_payload", "invalid_payload",
                             "Content-Type must be application/json (or legacy "
                             "application/x-www-form-urlencoded payload=), got %r"
                             % (self.headers.get("Content-Type") or ""))
        try:
            return json.loads(raw)
        except ValueError as e:
            raise text_reply(400, "invalid_payload", "invalid_payload",
                             "invalid JSON: %s" % e) from None

    # -- Web API --

    def api(self, method, query, body, entry):
        st = self.state
        routes = {"chat.postMessage": (("POST",), self.chat_post_message),
                  "files.getUploadURLExternal": (("GET", "POST"), self.get_upload_url),
                  "files.completeUploadExternal": (("POST",), self.complete_upload)}
        if method not in routes:
            raise api_error("unknown_method", "no such method %s in fakeslack" % method,
                            status=404)
        allowed, fn = routes[method]
        auth = entry["auth"]
        if auth in ("none", "malformed"):
            raise api_error("not_authed", "no Bearer token in the Authorization header")
        if auth != "valid":
            raise api_error("invalid_auth")
        if self.command not in allowed:
            raise api_error("invalid_request", "%s needs %s" % (method, " or ".join(allowed)),
                            status=405)
        args, warnings = self.api_args(query, body)
        entry["warnings"] = warnings
        out = fn(args, entry)
        if warnings:
            out["warning"] = ",".join(warnings)
            out.setdefault("response_metadata", {})["warnings"] = warnings
        raise api_reply(out)

    def api_args(self, query, body):
        """Merged arguments from the query string and the body (JSON or form)."""
        args, warnings = {}, []
        try:
            for k, v in urllib.parse.parse_qsl(query, keep_blank_values=True, errors="strict"):
                args[k] = v
        except (UnicodeDecodeError, ValueError):
            raise api_error("invalid_arguments", "query string is not valid UTF-8") from None
        if not body:
            return args, warnings
        ctype_full = self.headers.get("Content-Type")
        if not ctype_full:
            raise api_error("missing_post_type", "POST body without a Content-Type")
        ctype, _, params = ctype_full.partition(";")
        ctype = ctype.strip().lower()
        charset = None
        for p in params.split(";"):
            k, _, v = p.strip().partition("=")
            if k.lower() == "charset":
                charset = v.strip().strip('"').lower()
        if charset is not None and charset not in ("utf-8", "utf8"):
            raise api_error("invalid_charset", "charset %s is not utf-8" % charset)
        if ctype == "application/json":
            if charset is None:
                warnings.append("missing_charset")
            try:
                obj = json.loads(body.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise api_error("invalid_json", "invalid UTF-8 at byte %d" % e.start) from None
            except ValueError as e:
                raise api_error("invalid_json", "invalid JSON: %s" % e) from None
            if not isinstance(obj, dict):
                raise api_error("json_not_object")
            args.update(obj)
        elif ctype == "application/x-www-form-urlencoded":
            try:
                for k, v in urllib.parse.parse_qsl(body.decode("ascii"),
                                                   keep_blank_values=True, errors="strict"):
                    args[k] = v
            except (UnicodeDecodeError, ValueError) as e:
                raise api_error("invalid_form_data", "bad form body: %s" % e) from None
            for k in ("blocks", "attachments", "files"):
                if isinstance(args.get(k), str):
                    try:
                        args[k] = json.loads(args[k])
                    except ValueError as e:
                        err = "invalid_blocks_format" if k == "blocks" else "invalid_arguments"
                        raise api_error(err, "%s is not valid JSON: %s" % (k, e)) from None
        else:
            raise api_error("invalid_post_type", "Content-Type %s not accepted (use "
                            "application/json; charset=utf-8 or form encoding)" % ctype)
        if "token" in args:
            raise api_error("invalid_arguments", "pass the token in the Authorization "
                            "header, not in the body (fakeslack is strict here)")
        return args, warnings

    def resolve_channel(self, ref, field="channel"):
        if ref is None or ref == "":
            raise api_error("channel_not_found", "%s is required" % field)
        if not isinstance(ref, str):
            raise api_error("invalid_arguments", "%s must be a string" % field)
        ch = self.state.channel_lookup(ref)
        if ch is None:
            raise api_error("channel_not_found", "no channel %r" % ref)
        if ch["archived"]:
            raise api_error("is_archived", "channel %s is archived" % ch["id"])
        if not ch["member"]:
            raise api_error("not_in_channel", "the bot is not in %s" % ch["id"])
        return ch

    def resolve_thread(self, ch, thread_ts):
        """-> (parent ts, reply_to_reply).  A reply's ts is re-attached to its parent like
        Slack does, and flagged (protocols.md §2.2: always reply to the parent)."""
        if thread_ts is None:
            return None, False
        if not isinstance(thread_ts, str) or not TS_RE.match(thread_ts):
            raise api_error("thread_not_found", "thread_ts %r is not a 'seconds.micro' string"
                            % (thread_ts,))
        st = self.state
        with st.lock:
            parent = st.by_ts.get((ch["id"], thread_ts))
        if parent is None:
            raise api_error("thread_not_found", "no message with ts %s in %s"
                            % (thread_ts, ch["id"]))
        if parent.get("thread_ts") and parent["thread_ts"] != parent["ts"]:
            with st.lock:
                st.stats["reply_to_reply"] += 1
            return parent["thread_ts"], True
        return thread_ts, False

    def chat_post_message(self, args, entry):
        st = self.state
        ch = self.resolve_channel(args.get("channel"))
        ra = st.rate_take(("channel", ch["id"]))
        if ra:
            raise api_reply({"ok": False, "error": "ratelimited"}, 429,
                            "more than %s msg/s in %s" % (st.rate["per_second"], ch["id"]),
                            {"Retry-After": ra}, rate_limited=True)
        payload = {k: args[k] for k in ("text", "blocks", "attachments") if k in args}
        if "blocks" in payload and not isinstance(payload["blocks"], list):
            raise api_error("invalid_blocks_format", "blocks must be a JSON array")
        try:
            checks, counts = validate_message(payload, st.limits)
        except Invalid as e:
            err = "invalid_arguments" if e.error in ("bad_type", "invalid_payload") else e.error
            raise api_error(err, e.detail()) from None
        thread_ts, r2r = self.resolve_thread(ch, args.get("thread_ts"))
        ts = st.next_ts()
        message = {"type": "message", "subtype": "bot_message", "text": payload.get("text", ""),
                   "ts": ts, "bot_id": "B0FAKEBOT01", "app_id": "A0FAKEAPP01"}
        for k in ("blocks", "attachments"):
            if k in payload:
                message[k] = payload[k]
        if thread_ts:
            message["thread_ts"] = thread_ts
        if isinstance(args.get("username"), str):
            message["username"] = args["username"]
        msg = {"kind": "chat.postMessage", "time": time.time(), "webhook": None,
               "channel": ch["name"], "channel_id": ch["id"], "ts": ts,
               "thread_ts": thread_ts, "thread_ts_requested": args.get("thread_ts"),
               "reply_to_reply": r2r, "reply_broadcast": bool(args.get("reply_broadcast")),
               "body": args, "text": payload.get("text"), "checks": checks,
               "counts": counts, "ignored_overrides": []}
        st.add_message(msg, entry.get("epoch", st.epoch))
        entry["message_seq"] = msg.get("seq")
        return {"ok": True, "channel": ch["id"], "ts": ts, "message": message}

    def get_upload_url(self, args, entry):
        st = self.state
        fname = args.get("filename")
        if fname is None or fname == "":
            raise api_error("missing_argument", "filename is required")
        if not isinstance(fname, str):
            raise api_error("invalid_arguments", "filename must be a string")
        length = args.get("length")
        if length is None or length == "" or length == 0 or length == "0":
            raise api_error("missing_argument", "length is required and must be > 0")
        try:
            if isinstance(length, bool) or isinstance(length, float):
                raise ValueError
            n = int(length)
            if str(n) != str(length).strip() or n < 1:
                raise ValueError
        except ValueError:
            raise api_error("invalid_arguments", "length must be a positive integer, got %r"
                            % (length,)) from None
        if n > st.limits["max_file_bytes"]:
            raise api_error("file_upload_size_restricted", "length %d > %d"
                            % (n, st.limits["max_file_bytes"]))
        alt = args.get("alt_txt")
        if alt is not None and (not isinstance(alt, str)
                                or len(alt) > st.limits["max_alt_txt_chars"]):
            raise api_error("alt_txt_too_large")
        fid = "F" + secrets.token_hex(5).upper()
        uid = secrets.token_urlsafe(18)
        rec = {"id": fid, "filename": fname, "length": n, "alt_txt": alt,
               "snippet_type": args.get("snippet_type"), "created": time.time(),
               "uploaded": False, "upload_content_type": None, "data": b"",
               "completed": False, "title": None, "channel_id": None, "thread_ts": None,
               "initial_comment": None, "share_ts": None}
        with st.lock:
            st.files[fid] = rec
            st.uploads[uid] = fid
        return {"ok": True, "upload_url": "%s%s%s" % (st.base_url, UPLOAD_PREFIX, uid),
                "file_id": fid}

    def complete_upload(self, args, entry):
        st = self.state
        files = args.get("files")
        if files is None or files == "" or files == []:
            raise api_error("missing_argument", "files is required")
        if isinstance(files, str):
            try:
                files = json.loads(files)
            except ValueError:
                raise api_error("invalid_arguments", "files is not a JSON array") from None
        if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
            raise api_error("invalid_arguments", "files must be an array of {id, title}")
        recs = []
        with st.lock:
            for i, f in enumerate(files):
                fid = f.get("id")
                rec = st.files.get(fid) if isinstance(fid, str) else None
                if rec is None or rec["completed"]:
                    raise api_error("file_not_found", "files[%d].id %r is unknown or already "
                                    "completed" % (i, fid))
                if not rec["uploaded"]:
                    raise api_error("file_not_uploaded", "files[%d] (%s): nothing was "
                                    "uploaded to its upload_url" % (i, fid))
                if "title" in f and not isinstance(f["title"], str):
                    raise api_error("invalid_arguments", "files[%d].title must be a string"
                                    % i)
                recs.append((rec, f.get("title")))
        ch_ref, chans = args.get("channel_id"), args.get("channels")
        targets = []
        if ch_ref:
            targets.append(ch_ref)
        if chans:
            if not isinstance(chans, str):
                raise api_error("invalid_arguments", "channels is a comma-separated string")
            targets += [c.strip() for c in chans.split(",") if c.strip()]
        thread_ts = args.get("thread_ts")
        if thread_ts is not None and len(targets) != 1:
            raise api_error("invalid_arguments", "thread_ts needs exactly one channel")
        resolved = [self.resolve_channel(t, "channel_id") for t in targets]
        parent_ts, r2r = (self.resolve_thread(resolved[0], thread_ts) if resolved
                          else (None, False))
        comment = args.get("initial_comment")
        if comment is not None and not isinstance(comment, str):
            raise api_error("invalid_arguments", "initial_comment must be a string")
        blocks = args.get("blocks")
        checks, counts = [], {}
        if comment or blocks is not None:
            payload = {"text": comment} if comment else {"blocks": blocks}
            try:
                checks, counts = validate_message(payload, st.limits)
            except Invalid as e:
                err = "invalid_arguments" if e.error in ("bad_type", "invalid_payload") \
                    else e.error
                raise api_error(err, e.detail()) from None
        out = []
        share = []
        with st.lock:
            for rec, title in recs:
                if rec["completed"]:
                    raise api_error("file_not_found", "%s completed concurrently" % rec["id"])
            for rec, title in recs:
                rec["completed"] = True
                rec["title"] = title if title is not None else rec["filename"]
                rec["initial_comment"] = comment
                rec["channel_id"] = resolved[0]["id"] if resolved else None
                rec["channels"] = [c["id"] for c in resolved]
                rec["thread_ts"] = parent_ts
                rec["thread_ts_requested"] = thread_ts
                out.append({"id": rec["id"], "title": rec["title"], "name": rec["filename"],
                            "size": rec["length"]})
        for ch in resolved:
            ts = st.next_ts()
            msg = {"kind": "file_share", "time": time.time(), "webhook": None,
                   "channel": ch["name"], "channel_id": ch["id"], "ts": ts,
                   "thread_ts": parent_ts, "thread_ts_requested": thread_ts,
                   "reply_to_reply": r2r, "body": args, "text": comment,
                   "files": [r["id"] for r, _ in recs], "checks": checks, "counts": counts,
                   "ignored_overrides": []}
            st.add_message(msg, entry.get("epoch", st.epoch))
            share.append(ts)
        with st.lock:
            for rec, _ in recs:
                rec["share_ts"] = share[0] if share else None
            st.stats["accepted"]["files"] += len(recs)
        entry["file_ids"] = [r["id"] for r, _ in recs]
        return {"ok": True, "files": out}

    # -- upload URL --

    def upload(self, uid, body, entry):
        st = self.state
        if self.command != "POST":
            raise text_reply(405, "method not allowed", "invalid_method")
        with st.lock:
            fid = st.uploads.get(uid)
            rec = st.files.get(fid) if fid else None
        if rec is None or rec["completed"]:
            raise text_reply(404, "upload URL unknown or expired", "upload_not_found")
        ctype = self.headers.get("Content-Type") or ""
        data = body
        if ctype.lower().startswith("multipart/form-data"):
            data = self.multipart_file(ctype, body)
        if len(data) != rec["length"]:
            raise text_reply(400, "length mismatch: files.getUploadURLExternal said %d bytes, "
                             "received %d" % (rec["length"], len(data)), "length_mismatch",
                             "declared %d, got %d" % (rec["length"], len(data)))
        with st.lock:
            rec["data"] = data
            rec["uploaded"] = True
            rec["upload_content_type"] = ctype
        entry["file_ids"] = [rec["id"]]
        raise Reply(200, ("OK - %d" % len(data)).encode(), "text/plain; charset=utf-8")

    @staticmethod
    def multipart_file(ctype, body):
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode("latin-1") + b"\r\n\r\n" + body)
        if not msg.is_multipart():
            raise text_reply(400, "malformed multipart body", "invalid_form_data")
        parts = list(msg.iter_parts())
        pick = None
        for p in parts:
            if p.get_filename() is not None or p.get_param("name", header="content-disposition") \
                    in ("file", "filename"):
                pick = p
                break
        if pick is None:
            raise text_reply(400, "multipart body has no file part (a part with a filename, "
                             "or named file/filename)", "invalid_form_data")
        return pick.get_payload(decode=True) or b""


# --------------------------------------------------------------------------------------------
# admin API


class AdminError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def file_view(rec):
    out = {k: v for k, v in rec.items() if k != "data"}
    data = rec["data"]
    out["received_bytes"] = len(data)
    out["sha256"] = hashlib.sha256(data).hexdigest()
    out["content_base64"] = base64.b64encode(data).decode()
    try:
        out["text"] = data.decode("utf-8")
    except UnicodeDecodeError:
        out["text"] = None
    return out


class AdminHandler(BaseHandler):
    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def dispatch(self):
        body = self.read_body(16 * 1024 * 1024)
        split = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(split.query))
        try:
            if body is None:
                raise AdminError(400, "body too large")
            data = None
            if body:
                try:
                    data = json.loads(body)
                except ValueError as e:
                    raise AdminError(400, "invalid JSON: %s" % e) from None
            out = self.route(self.command, split.path, q, data)
            code = 200
        except AdminError as e:
            code, out = e.code, {"error": str(e)}
        except ValueError as e:
            code, out = 400, {"error": str(e)}
        self.send_body(code, json.dumps(out, ensure_ascii=False).encode(),
                       "application/json; charset=utf-8")

    def route(self, method, path, q, data):
        st = self.state
        if path == "/admin/messages":
            if method == "GET":
                with st.lock:
                    msgs = copy.deepcopy(st.messages)
                for k in ("kind", "webhook", "channel", "channel_id", "thread_ts"):
                    if k in q:
                        msgs = [m for m in msgs if str(m.get(k)) == q[k]]
                return msgs
            if method == "DELETE":
                with st.lock:
                    n = len(st.messages)
                    st.messages = []
                    st.by_ts = {}
                return {"deleted": n}
        elif path == "/admin/requests":
            if method == "GET":
                with st.lock:
                    return copy.deepcopy(st.requests)
            if method == "DELETE":
                with st.lock:
                    n = len(st.requests)
                    st.requests = []
                return {"deleted": n}
        elif path == "/admin/files" and method == "GET":
            with st.lock:
                return [file_view(r) for r in st.files.values()]
        elif path == "/admin/stats" and method == "GET":
            with st.lock:
                out = copy.deepcopy(st.stats)
                out["messages"] = len(st.messages)
                out["status_429"] = out["status"].get("429", 0)
                out["open_faults"] = len(st.faults)
                out["down"] = st.down is not None
                return out
        elif path == "/admin/faults":
            if method == "GET":
                with st.lock:
                    return {"down": st.down, "faults": [dict(f.spec, remaining=f.count)
                                                        for f in st.faults]}
            if method == "POST":
                return self.add_fault(data)
        elif path == "/admin/config":
            if method == "GET":
                return st.config_dict()
            if method == "POST":
                return st.apply_config(data if data is not None else {})
        elif path == "/admin/reset" and method == "POST":
            st.reset()
            return {"reset": True}
        else:
            raise AdminError(404, "unknown admin path %s" % path)
        raise AdminError(405, "method %s not allowed on %s" % (method, path))

    def add_fault(self, spec):
        st = self.state
        if not isinstance(spec, dict):
            raise AdminError(400, "fault must be a JSON object with a type")
        t = spec.get("type")
        with st.lock:
            if t == "clear":
                st.faults = []
                st.down = None
                return {"faults": 0}
            if t == "down":
                st.down = {"status": spec.get("status", 500), "error": spec.get("error"),
                           "body": spec.get("body"), "retry_after": spec.get("retry_after")}
                if st.down["error"] is None:
                    st.down.pop("error")
                return {"down": True}
            if t == "up":
                st.down = None
                return {"down": False}
            st.fault_seq += 1
            st.faults.append(Fault(spec, st.fault_seq))
            return {"faults": len(st.faults)}


# --------------------------------------------------------------------------------------------
# startup


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, state, ssl_ctx=None):
        super().__init__(addr, handler)
        self.state = state
        self.ssl_ctx = ssl_ctx

    def get_request(self):
        sock, addr = super().get_request()
        if self.ssl_ctx is not None:
            # the handshake runs in the connection's thread, never in the accept loop
            sock = self.ssl_ctx.wrap_socket(sock, server_side=True,
                                            do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        LOG.info("error on connection %s: %s", client_address, sys.exc_info()[1])


def main(argv=None):
    ap = argparse.ArgumentParser(description="strict fake Slack (webhooks + Web API) for tests")
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--admin-port", type=int, default=0)
    ap.add_argument("--tls", action="store_true", help="serve HTTPS; writes DIR/ca.crt")
    ap.add_argument("--token", default=None, help="accepted bot token (default: random xoxb-)")
    ap.add_argument("--log-level", default=os.environ.get("FAKESLACK_LOG_LEVEL", "INFO"))
    args = ap.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level.upper(),
                                                         logging.INFO),
                        format="%(asctime)s fakeslack %(levelname)s %(message)s")
    state_dir = os.path.abspath(args.state_dir)
    os.makedirs(state_dir, exist_ok=True)
    ready_path = os.path.join(state_dir, "ready.json")
    if os.path.exists(ready_path):
        os.unlink(ready_path)
    token = args.token or "xoxb-%d-%d-%s" % (secrets.randbelow(10**12), secrets.randbelow(
        10**12), secrets.token_hex(12))
    state = State(token)
    ssl_ctx = None
    if args.tls:
        make_certs(state_dir, 'fakeslack-ca')
        ssl_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ssl_ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ssl_ctx.load_cert_chain(os.path.join(state_dir, "server.crt"),
                                os.path.join(state_dir, "server.key"))
        ssl_ctx.set_alpn_protocols(["http/1.1"])
    api = Server(("127.0.0.1", args.port), SlackHandler, state, ssl_ctx)
    admin = Server(("127.0.0.1", args.admin_port), AdminHandler, state)
    port, admin_port = api.server_address[1], admin.server_address[1]
    scheme = "https" if args.tls else "http"
    state.base_url = "%s://127.0.0.1:%d" % (scheme, port)
    write_atomic(os.path.join(state_dir, "token"), token.encode())
    for srv in (api, admin):
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2},
                         daemon=True).start()
    write_atomic(ready_path, json.dumps({"port": port, "admin_port": admin_port,
                                         "pid": os.getpid(), "scheme": scheme,
                                         "base_url": state.base_url}).encode(), 0o644)
    LOG.info("ready: %s admin http://127.0.0.1:%d state %s", state.base_url, admin_port,
             state_dir)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    LOG.info("shutting down")
    state.wake.set()
    for srv in (api, admin):
        srv.shutdown()
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# pyroscope-receiver.py - a loopback stand-in for Pyroscope's ingest API, for
# test-cmd-push: Pyroscope itself is not in Debian and cannot run here. Every request is
# checked against the documented API (grafana.com/docs/pyroscope, "Server HTTP API":
# POST /ingest, the query parameters name, from, until, format, sampleRate, units,
# aggregationType; a pprof as the "profile" part of a multipart/form-data body, folded
# stacks as "a;b;c N" lines), and the body decoded: gzip and the protobuf fields of
# pprof's profile.proto, or each folded line. One JSON line per request goes to the
# report file; the answer is 200, or 400 with what failed on the body's first line.
# A path under /fail/ is answered 503, for the test of a refused push.
#
#   pyroscope-receiver.py PORTFILE REPORTFILE
import gzip
import json
import re
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

portfile, reportfile = sys.argv[1], sys.argv[2]


class Bad(Exception):
    pass


def varint(b, i):
    v = s = 0
    while True:
        if i >= len(b):
            raise Bad("protobuf: a varint cut short")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i
        if s > 63:
            raise Bad("protobuf: a varint longer than 10 bytes")


def fields(b):
    """(field number, wire type, value) of a protobuf message, strictly."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise Bad("protobuf: field number 0")
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise Bad("protobuf: a length past the end")
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise Bad("protobuf: wire type %d" % wt)
        if i > len(b):
            raise Bad("protobuf: a field past the end")
        yield num, wt, v


def ints(wt, v):
    """A repeated int64/uint64 field, packed or not."""
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def decode_pprof(data):
    """profile.proto: sample_type = 1 (ValueType: type = 1, unit = 2), sample = 2
    (Sample: location_id = 1, value = 2), location = 4, function = 5, string_table = 6."""
    if data[:2] != b"\x1f\x8b":
        raise Bad("the profile is not gzipped (pprof's files are)")
    raw = gzip.decompress(data)
    strings, types, samples, nloc = [], [], [], 0
    for num, wt, v in fields(raw):
        if num == 6:
            strings.append(v.decode("utf-8"))
        elif num == 1:
            t = {k: x for k, _, x in fields(v)}
            types.append((t.get(1, 0), t.get(2, 0)))
        elif num == 2:
            vals, locs = [], []
            for k, w, x in fields(v):
                if k == 2:
                    vals += ints(w, x)
                elif k == 1:
                    locs += ints(w, x)
            samples.append((vals, locs))
        elif num == 4:
            nloc += 1
    if not strings or strings[0] != "":
        raise Bad("pprof: string_table[0] must be the empty string")
    for t, u in types:
        if t >= len(strings) or u >= len(strings):
            raise Bad("pprof: a sample type's string index out of range")
    for vals, locs in samples:
        if len(vals) != len(types):
            raise Bad("pprof: a sample with %d values for %d sample types" %
                      (len(vals), len(types)))
        if not locs:
            raise Bad("pprof: a sample without locations")
    totals = [sum(v[k] for v, _ in samples) for k in range(len(types))]
    return {"sample_types": [[strings[t], strings[u]] for t, u in types],
            "totals": totals, "samples": len(samples), "locations": nloc}


def decode_folded(body):
    total, lines = 0, 0
    for line in body.decode("utf-8").splitlines():
        if not line:
            continue
        m = re.fullmatch(r"(\S.*) (\d+)", line)
        if not m or ";" not in m.group(1) and not m.group(1):
            raise Bad("folded: not 'frame;frame;... N': %r" % line[:80])
        total += int(m.group(2))
        lines += 1
    if not lines:
        raise Bad("folded: no stack")
    return {"totals": [total], "stacks": lines}


def multipart_part(ctype, body, want):
    m = re.fullmatch(r'multipart/form-data;\s*boundary="?([^";]+)"?', ctype)
    if not m:
        raise Bad("format=pprof needs a multipart/form-data body with a boundary, "
                  "not Content-Type %r" % ctype)
    delim = b"--" + m.group(1).encode()
    parts = body.split(delim)
    if len(parts) < 3 or not parts[-1].startswith(b"--"):
        raise Bad("multipart: no closing delimiter")
    for p in parts[1:-1]:
        if not p.startswith(b"\r\n") or not p.endswith(b"\r\n"):
            raise Bad("multipart: a part not framed by CRLF")
        head, sep, data = p[2:-2].partition(b"\r\n\r\n")
        if not sep:
            raise Bad("multipart: a part without its header's end")
        disp = [h for h in head.decode().split("\r\n")
                if h.lower().startswith("content-disposition:")]
        if disp and re.search(r'\bname="%s"' % want, disp[0]) and "form-data" in disp[0]:
            return data
    raise Bad("multipart: no part named %r" % want)


def check(method, path, headers, body):
    u = urllib.parse.urlsplit(path)
    if method != "POST":
        raise Bad("the ingest API takes POST, not %s" % method)
    if u.path != "/ingest":
        raise Bad("the ingest API is at /ingest, not %s" % u.path)
    q = urllib.parse.parse_qs(u.query, keep_blank_values=True, strict_parsing=True)
    for k, v in q.items():
        if len(v) != 1:
            raise Bad("query parameter %s given %d times" % (k, len(v)))
    q = {k: v[0] for k, v in q.items()}
    known = {"name", "from", "until", "format", "sampleRate", "spyName", "units",
             "aggregationType"}
    if set(q) - known:
        raise Bad("unknown query parameters %s" % sorted(set(q) - known))
    for k in ("name", "from", "until"):
        if k not in q:
            raise Bad("the required query parameter %s is missing" % k)
    m = re.fullmatch(r"([^{}]+)(?:\{((?:[A-Za-z_][A-Za-z0-9_]*=[^{},=]*)"
                     r"(?:,[A-Za-z_][A-Za-z0-9_]*=[^{},=]*)*)?\})?", q["name"])
    if not m:
        raise Bad("name is not APP or APP{label=value,...}: %r" % q["name"])
    labels = dict(kv.split("=", 1) for kv in m.group(2).split(",")) if m.group(2) else {}
    try:
        t0, t1 = int(q["from"]), int(q["until"])
    except ValueError:
        raise Bad("from and until must be UNIX times in seconds")
    now = time.time()
    if not (now - 3600 < t0 <= t1 < now + 60):
        raise Bad("from %d and until %d are not a span ending now" % (t0, t1))
    fmt = q.get("format", "folded")
    if fmt not in ("pprof", "folded"):
        raise Bad("format %r is not one this test expects" % fmt)
    if "sampleRate" in q and not q["sampleRate"].isdigit():
        raise Bad("sampleRate must be an integer in Hz")
    if q.get("units", "samples") not in ("samples", "objects", "goroutines", "bytes",
                                         "lock_samples", "lock_nanoseconds"):
        raise Bad("units %r is not one Pyroscope knows" % q["units"])
    if q.get("aggregationType", "sum") not in ("sum", "average"):
        raise Bad("aggregationType must be sum or average")
    if int(headers.get("Content-Length", "-1")) != len(body):
        raise Bad("Content-Length does not match the body")
    ctype = headers.get("Content-Type", "")
    if fmt == "pprof":
        got = decode_pprof(multipart_part(ctype, body, "profile"))
    else:
        if not ctype.startswith("text/plain"):
            raise Bad("folded stacks are text/plain, not %r" % ctype)
        got = decode_folded(body)
    got.update({"ok": True, "app": m.group(1), "labels": labels, "from": t0,
                "until": t1, "format": fmt, "query": q})
    return got


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, code, text):
        b = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(b)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b)

    def handle_any(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n) if n > 0 else b""
        if self.path.startswith("/fail/"):
            self.answer(503, "ingester is down\nsecond line\n")
            return
        try:
            rep = check(self.command, self.path, self.headers, body)
            code, text = 200, ""
        except Bad as e:
            rep = {"ok": False, "why": str(e)}
            code, text = 400, "check failed: %s\n" % e
        except Exception as e:  # a body that does not decode at all
            rep = {"ok": False, "why": "%s: %s" % (type(e).__name__, e)}
            code, text = 400, "check failed: %s\n" % rep["why"]
        with open(reportfile, "a") as f:
            f.write(json.dumps(rep) + "\n")
        self.answer(code, text)

    do_POST = do_PUT = do_GET = handle_any

    def log_message(self, *args):
        pass


srv = HTTPServer(("127.0.0.1", 0), Handler)
with open(portfile + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
import os
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()

#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The client half of tests/ns/test_metrics.sh: scrapes tlsd's metrics
endpoint over real TCP, parses what it gets with prometheus_client's parsers
(Debian's python3-prometheus-client: the Prometheus text parser and the
OpenMetrics one), and sends it bad requests. Run inside the PS host's
network namespace. Each command exits 1 with a line saying what was wrong.

  metrics_check.py scrape ADDR:PORT      both formats, checked; prints a summary (JSON)
  metrics_check.py parse prometheus|openmetrics FILE   the same for a file (tlsctl metrics)
  metrics_check.py bad ADDR:PORT         bad requests: each gets its status code
  metrics_check.py busy ADDR:PORT N      N idle connections held, one more gets 503
  metrics_check.py keepalive ADDR:PORT N   kept connections: scrapes in a row,
                                         pipelined, Connection: close, HTTP/1.0,
                                         and N idle ones making room
  metrics_check.py contrib ADDR:PORT DIR   the dashboard and alert rules in DIR
                                         are valid JSON and YAML and use only
                                         metric names tlsd serves
  metrics_check.py slowloris ADDR:PORT N SECONDS
                                         N connections sending a byte a second:
                                         each must get 408, and within SECONDS
"""
import json
import os
import re
import socket
import sys
import time

from prometheus_client.openmetrics.parser import \
    text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as prometheus_families

# Every family tlsd serves with jobs, statistics and its tree, and its type.
EXPECTED = {
    "tlsd_info": "gauge", "tlsd_start_time_seconds": "gauge",
    "tlsd_link_rate_bytes_per_second": "gauge", "tlsd_bands": "gauge", "tlsd_jobs": "gauge",
    "tlsd_rotation_interval_seconds": "gauge", "tlsd_rotations": "counter",
    "tlsd_reloads": "counter", "tlsd_reload_failures": "counter",
    "tlsd_feature_in_use": "gauge", "tlsd_feature_missing": "gauge",
    "tlsd_tree_intact": "gauge", "tlsd_tree_state": "gauge", "tlsd_tree_watched": "gauge",
    "tlsd_tree_heals": "counter", "tlsd_tree_failed_heals": "counter",
    "tlsd_tree_yields": "counter", "tlsd_tree_interface_returns": "counter",
    "tlsd_tree_rate_changes": "counter", "tlsd_tree_heals_recent": "gauge",
    "tlsd_tree_heal_limit": "gauge", "tlsd_tree_last_heal_duration_seconds": "gauge",
    "tlsd_job_bytes": "counter", "tlsd_job_packets": "counter", "tlsd_job_segments": "counter",
    "tlsd_job_rotations": "counter", "tlsd_job_demotions": "counter",
    "tlsd_job_promotions": "counter", "tlsd_job_held_packets": "counter",
    "tlsd_job_band": "gauge", "tlsd_job_leader": "gauge", "tlsd_job_workers": "gauge",
    "tlsd_job_bandwidth_bytes_per_second": "gauge", "tlsd_job_demand_bytes_per_second": "gauge",
    "tlsd_job_contention_ratio": "gauge", "tlsd_job_contention_solved_ratio": "gauge",
    "tlsd_other_bytes": "counter", "tlsd_other_packets": "counter",
    "tlsd_link_ps_bandwidth_bytes_per_second": "gauge", "tlsd_link_ps_bandwidth_measured": "gauge",
    "tlsd_link_saturated": "gauge", "tlsd_link_saturated_seconds": "counter",
    "tlsd_fit_observations": "gauge", "tlsd_fit_a": "gauge", "tlsd_fit_b": "gauge",
    "tlsd_worker_bytes": "counter", "tlsd_worker_bandwidth_bytes_per_second": "gauge",
    "tlsd_worker_demand_bytes_per_second": "gauge", "tlsd_worker_contention_ratio": "gauge",
    "tlsd_worker_contention_solved_ratio": "gauge",
    "tlsd_htb_up": "gauge", "tlsd_htb_class_bytes": "counter",
    "tlsd_htb_class_packets": "counter", "tlsd_htb_class_drops": "counter",
    "tlsd_htb_class_overlimits": "counter", "tlsd_htb_class_backlog_bytes": "gauge",
    "tlsd_htb_class_queue_packets": "gauge", "tlsd_http_responses": "counter",
}
CT = {"prometheus": "text/plain; version=0.0.4; charset=utf-8",
      "openmetrics": "application/openmetrics-text; version=1.0.0; charset=utf-8"}
ACCEPT_OM = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
             "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def addr_of(s):
    host, port = s.rsplit(":", 1)
    return host.strip("[]"), int(port)


def read_answer(s, buf=b"", head_only=False):
    """One answer from socket s (buf: what was read of it already), by its
    Content-Length: (status, headers, body, what came after it)."""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/1.1 ") else 0
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = 0 if head_only else int(headers.get("content-length", 0))
    while len(rest) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:n], rest[n:]


def request(addr, data, timeout=10.0):
    """Send data on a new connection, read one answer: (status, headers,
    body). An answer that closes the connection must end there."""
    host, port = addr_of(addr)
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(data)
        status, headers, body, rest = read_answer(s, head_only=data.startswith(b"HEAD "))
        if headers.get("connection") == "close":
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                rest += chunk
            if rest:
                fail("%d bytes after an answer of %d bytes: %r" % (len(rest), len(body), rest[:80]))
    return status, headers, body


def keepalive(addr, n):
    """HTTP/1.1 keeps the connection: two scrapes on one, then two sent
    together (pipelined), then one that asks to close; HTTP/1.0 closes. With
    n kept connections idle (the bound), a new client is served: the one
    idle longest makes room."""
    host, port = addr_of(addr)
    get = b"GET /metrics HTTP/1.1\r\nHost: tlsd\r\n\r\n"
    get_om = ("GET /metrics HTTP/1.1\r\nHost: tlsd\r\nAccept: %s\r\n\r\n" % ACCEPT_OM).encode()
    with socket.create_connection((host, port), timeout=10) as s:
        got = []
        for req in (get, get_om):
            s.sendall(req)
            got.append(read_answer(s))
        s.sendall(get + get_om)  # pipelined
        st, h, b, rest = read_answer(s)
        got.append((st, h, b, rest))
        got.append(read_answer(s, rest))
        for i, (st, h, b, rest) in enumerate(got):
            want = CT["openmetrics" if i % 2 else "prometheus"]
            if st != 200 or h.get("connection") or h.get("content-type") != want or len(b) < 1000:
                fail("kept connection, answer %d: status %d, headers %r, %d bytes"
                     % (i + 1, st, h, len(b)))
        if got[3][3]:
            fail("bytes after the pipelined answers: %r" % got[3][3][:80])
        # a stray empty line after a request is no request: no 408 for it
        # after the 5 s a head has, the connection still serves
        s.sendall(b"\r\n")
        time.sleep(5.5)
        s.sendall(get)
        st, h, b, rest = read_answer(s)
        if st != 200:
            fail("a scrape 5.5 s after a stray CR LF: status %d, %r" % (st, b[:80]))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: tlsd\r\nConnection: close\r\n\r\n")
        st, h, b, rest = read_answer(s)
        if st != 200 or h.get("connection") != "close" or rest or s.recv(100) != b"":
            fail("Connection: close: status %d, headers %r, not closed after it" % (st, h))
    print("  one connection: 2 scrapes, 2 pipelined (in order), one after a stray CR LF,"
          " 1 with Connection: close")
    status, h, body = request(addr, b"GET /metrics HTTP/1.0\r\n\r\n")
    if status != 200 or h.get("connection") != "close":
        fail("HTTP/1.0: status %d, headers %r" % (status, h))
    print("  HTTP/1.0: answered and closed")
    idle = []
    for _ in range(n):
        c = socket.create_connection((host, port), timeout=10)
        c.sendall(get)
        st, h, b, rest = read_answer(c)
        if st != 200 or h.get("connection"):
            fail("kept connection %d of %d: status %d, headers %r" % (len(idle) + 1, n, st, h))
        idle.append(c)
        time.sleep(0.01)  # the first is idle longest
    status, h, body = request(addr, get, timeout=5)
    if status != 200:
        fail("a new client while %d kept connections are idle: status %d" % (n, status))
    idle[0].settimeout(3)
    gone = idle[0].recv(100)
    idle[1].setblocking(False)
    try:
        idle[1].recv(100)
        fail("a second idle connection was closed too")
    except BlockingIOError:
        pass
    for c in idle:
        c.close()
    if gone != b"":
        fail("the connection idle longest was not closed: %r" % gone[:40])
    print("  %d kept connections idle: a new client served, the one idle longest closed" % n)


def parse(text, fmt):
    """The families by name, parsed by the real parser for fmt; checked."""
    parser = openmetrics_families if fmt == "openmetrics" else prometheus_families
    try:
        fams = {f.name: f for f in parser(text)}
    except Exception as e:  # the parser's own words
        fail("%s parser refused the text: %s: %s" % (fmt, type(e).__name__, e))
    if fmt == "openmetrics" and not text.endswith("# EOF\n"):
        fail("OpenMetrics text does not end in '# EOF'")
    if fmt == "prometheus" and "# EOF" in text:
        fail("Prometheus text has '# EOF'")
    # the per-worker families: all of them (metrics_workers) or none
    workers = any(n.startswith("tlsd_worker_") for n in fams)
    missing = [n for n in EXPECTED if n not in fams and (workers or not n.startswith("tlsd_worker_"))]
    if missing:
        fail("%s: families missing: %s" % (fmt, ", ".join(missing)))
    for n, t in EXPECTED.items():
        if n in fams and fams[n].type != t:
            fail("%s: %s is a %s, expected a %s" % (fmt, n, fams[n].type, t))
    untyped = [n for n, f in fams.items() if f.type in ("untyped", "unknown")]
    if untyped:  # a sample outside its family (a counter's name wrong)
        fail("%s: samples outside their family: %s" % (fmt, ", ".join(untyped)))
    for f in fams.values():
        if not f.name.startswith("tlsd_"):
            fail("%s: family %s lacks the tlsd_ prefix" % (fmt, f.name))
        if f.type == "counter" and any(not s.name.endswith("_total") and
                                       not s.name.endswith("_created") for s in f.samples):
            fail("%s: a sample of counter %s does not end in _total" % (fmt, f.name))
    return fams


def summary(fams):
    """What the shell test compares: per job, per class, per worker."""
    def by(name, key, field="value"):
        # the pull's, where a family has both directions
        return {s.labels[key]: s.value for s in fams[name].samples
                if s.labels.get("direction", "pull") == "pull"}

    wk = fams["tlsd_worker_bytes"].samples if "tlsd_worker_bytes" in fams else []
    out = {
        "families": len(fams),
        "job_bytes": by("tlsd_job_bytes", "job"),
        "job_band": by("tlsd_job_band", "job"),
        "job_leader": by("tlsd_job_leader", "job"),
        "job_bwk": by("tlsd_job_bandwidth_bytes_per_second", "job"),
        "class_bytes": by("tlsd_htb_class_bytes", "class"),
        "class_drops": by("tlsd_htb_class_drops", "class"),
        "class_overlimits": by("tlsd_htb_class_overlimits", "class"),
        "worker_families": any(n.startswith("tlsd_worker_") for n in fams),
        "workers": sorted({s.labels["job"] for s in wk}),
        "worker_labels": sorted({tuple(sorted(s.labels)) for s in wk}),
        "tree_intact": fams["tlsd_tree_intact"].samples[0].value,
        "htb_up": fams["tlsd_htb_up"].samples[0].value,
        "features_in_use": sum(s.value for s in fams["tlsd_feature_in_use"].samples),
        "http": {s.labels["code"]: s.value for s in fams["tlsd_http_responses"].samples},
        "reloads": fams["tlsd_reloads"].samples[0].value,
        "reload_failures": fams["tlsd_reload_failures"].samples[0].value,
    }
    return out


def scrape(addr):
    t0 = time.monotonic()
    # Connection: close, so that bytes past Content-Length would show
    status, h, body = request(addr, b"GET /metrics HTTP/1.1\r\nHost: tlsd\r\n"
                                    b"Connection: close\r\n\r\n")
    ms = (time.monotonic() - t0) * 1000
    if status != 200:
        fail("GET /metrics: status %d: %r" % (status, body[:200]))
    if h.get("content-type") != CT["prometheus"]:
        fail("content type %r, expected %r" % (h.get("content-type"), CT["prometheus"]))
    if int(h.get("content-length", -1)) != len(body):
        fail("Content-Length %s, body %d bytes" % (h.get("content-length"), len(body)))
    prom = parse(body.decode("utf-8"), "prometheus")
    status, h, body2 = request(addr, ("GET /metrics HTTP/1.1\r\nHost: tlsd\r\nAccept: %s\r\n"
                                      "Connection: close\r\n\r\n" % ACCEPT_OM).encode())
    if status != 200 or h.get("content-type") != CT["openmetrics"]:
        fail("GET with Accept: OpenMetrics: status %d, content type %r" %
             (status, h.get("content-type")))
    parse(body2.decode("utf-8"), "openmetrics")
    s = summary(prom)
    s["scrape_ms"] = round(ms, 2)
    s["bytes"] = len(body)
    print(json.dumps(s))


def parse_file(fmt, path):
    with open(path, encoding="utf-8") as f:
        print(json.dumps(summary(parse(f.read(), fmt))))


def bad(addr):
    cases = [
        ("wrong method", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi",
         405),
        ("wrong path", b"GET /admin HTTP/1.1\r\nHost: x\r\n\r\n", 404),
        ("root path", b"GET / HTTP/1.0\r\n\r\n", 404),
        ("HTTP/2", b"GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        ("no Host in 1.1", b"GET /metrics HTTP/1.1\r\n\r\n", 400),
        ("garbage", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", 400),
        ("folded header", b"GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400),
        ("long request line", b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        ("long head", b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"b" * 9000 +
         b"\r\n\r\n", 431),
        ("cut short", b"GET /metrics HTTP/1.1\r\nHost:", 400),
    ]
    for name, data, want in cases:
        host, port = addr_of(addr)
        with socket.create_connection((host, port), timeout=10) as s:
            try:
                s.sendall(data)
                if name == "cut short":
                    s.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the answer may come (and the server close) before all is sent
            out = b""
            try:
                while True:
                    c = s.recv(65536)
                    if not c:
                        break
                    out += c
            except ConnectionResetError:
                pass
        status = int(out.split()[1]) if out.startswith(b"HTTP/1.1 ") else 0
        if status != want:
            fail("%s: status %d, expected %d: %r" % (name, status, want, out[:120]))
        print("  %-18s -> %s" % (name, out.split(b"\r\n")[0].decode()))
    status, h, body = request(addr, b"HEAD /metrics HTTP/1.0\r\n\r\n")
    if status != 200 or body or int(h["content-length"]) < 1000:
        fail("HEAD: status %d, %d bytes of body, Content-Length %s" %
             (status, len(body), h.get("content-length")))
    print("  %-18s -> 200, no body, Content-Length %s" % ("HEAD", h["content-length"]))
    status, h, body = request(addr, b"HEAD /nothing HTTP/1.0\r\n\r\n")
    if status != 404 or body:
        fail("HEAD of another path: status %d, %d bytes of body" % (status, len(body)))
    print("  %-18s -> 404, no body" % "HEAD /nothing")


def busy(addr, n):
    """n idle connections (the bound): one more gets 503 at once."""
    host, port = addr_of(addr)
    held = [socket.create_connection((host, port), timeout=10) for _ in range(n)]
    time.sleep(0.3)  # accepted
    status, _, body = request(addr, b"GET /metrics HTTP/1.0\r\n\r\n", timeout=3)
    for s in held:
        s.close()
    if status != 503:
        fail("connection %d of %d: status %d, expected 503" % (n + 1, n, status))
    print("  connection %d while %d are held -> 503" % (n + 1, n))


def slowloris(addr, n, secs):
    """n connections each sending one byte a second of a request that never
    ends: each must be answered 408 (the whole head is due within 5 s)."""
    host, port = addr_of(addr)
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"z" * 1000
    conns = []
    t0 = time.monotonic()
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=secs)
        s.setblocking(False)
        conns.append([s, 0, None, b""])
    print("slowloris: %d connections open" % n, flush=True)
    while time.monotonic() - t0 < secs and any(c[2] is None for c in conns):
        for c in conns:
            if c[2] is not None:
                continue
            try:
                c[0].send(req[c[1]:c[1] + 1])
                c[1] += 1
            except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                pass
            try:
                data = c[0].recv(4096)
                c[3] += data
                if not data or b"\r\n\r\n" in c[3]:
                    c[2] = time.monotonic() - t0
            except BlockingIOError:
                pass
            except ConnectionResetError:
                c[2] = time.monotonic() - t0
        time.sleep(1)
    codes = [c[3].split()[1].decode() if c[3].startswith(b"HTTP/1.1 ") else "none"
             for c in conns]
    for c in conns:
        c[0].close()
    times = [c[2] for c in conns if c[2] is not None]
    print("slowloris: answers %s after %.1f..%.1f s" %
          (",".join(sorted(set(codes))), min(times or [0]), max(times or [0])), flush=True)
    if codes != ["408"] * n:
        fail("slowloris: answers %s, expected 408 for all %d" % (codes, n))
    if len(times) != n or max(times) > 7.5:
        fail("slowloris: closed after %s s, expected about 5 s" % times)


def contrib(addr, d):
    import yaml  # python3-yaml
    status, _, body = request(addr, b"GET /metrics HTTP/1.0\r\n\r\n")
    if status != 200:
        fail("GET /metrics: status %d" % status)
    fams = parse(body.decode("utf-8"), "prometheus")
    served = {s.name for f in fams.values() for s in f.samples} | set(fams)
    used = set()
    for name in sorted(os.listdir(d)):
        path = os.path.join(d, name)
        if not os.path.isfile(path):  # container/, kubernetes/: no metrics
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            if name.endswith(".json"):
                json.loads(text)
            elif name.endswith((".yml", ".yaml")):
                yaml.safe_load(text)
            else:
                continue
        except ValueError as e:
            fail("%s does not parse: %s" % (path, e))
        except yaml.YAMLError as e:
            fail("%s does not parse: %s" % (path, e))
        names = set(re.findall(r"\btlsd_[a-z0-9_]+", text))
        unknown = sorted(n for n in names if n not in served)
        if unknown:
            fail("%s uses metrics tlsd does not serve: %s" % (path, ", ".join(unknown)))
        used |= names
        print("  %s: parses, %d metric names, all served" % (name, len(names)))
    if not used:
        fail("no metric names found in %s" % d)


def main():
    a = sys.argv[1:]
    if a[:1] == ["scrape"] and len(a) == 2:
        scrape(a[1])
    elif a[:1] == ["parse"] and len(a) == 3 and a[1] in CT:
        parse_file(a[1], a[2])
    elif a[:1] == ["bad"] and len(a) == 2:
        bad(a[1])
    elif a[:1] == ["keepalive"] and len(a) == 3:
        keepalive(a[1], int(a[2]))
    elif a[:1] == ["busy"] and len(a) == 3:
        busy(a[1], int(a[2]))
    elif a[:1] == ["contrib"] and len(a) == 3:
        contrib(a[1], a[2])
    elif a[:1] == ["slowloris"] and len(a) == 4:
        slowloris(a[1], int(a[2]), float(a[3]))
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()

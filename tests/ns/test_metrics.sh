#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tlsd's metrics on a running tlsd (two static jobs, one named with a quote,
# a backslash and a newline; 100 Mbit/s; metrics_listen on the PS host's
# loopback): real TCP traffic of both jobs, then
#  - a scrape over HTTP in both formats, parsed by prometheus_client's
#    Prometheus and OpenMetrics parsers (Debian's python3-prometheus-client),
#    with every family, label and type expected (tests/ns/metrics_check.py);
#  - each job's byte counter against HTB's own class counter (tc -s -j
#    class show) within 1%, and the scrape's HTB class counters against tc's;
#  - the Grafana dashboard and alert rules in contrib/ parse (JSON, YAML)
#    and use only metric names the scrape has;
#  - `tlsctl metrics` (and --openmetrics, -o FILE) parsed the same way;
#  - bad requests (method, path, version, malformed, oversized, cut short)
#    each get their status code, one connection over the bound gets 503;
#  - 16 slowloris connections get 408 after 5 s while `tlsctl status`
#    answers in milliseconds and a scrape is refused (busy), not stalled;
#  - a reload moves the endpoint, a bad address is refused and counted in
#    tlsd_reload_failures_total, and a reload without metrics_listen
#    closes it.
. "$(dirname "$0")/lib.sh"

CTL="$BIN/tlsctl"
CHECK="$(dirname "$0")/metrics_check.py"
[ -x "$CTL" ] || fail "$CTL not built"
# Debian's parser is in the system's python3 (another python3 may come
# first in PATH)
PY=""
for p in /usr/bin/python3 python3; do
	if "$p" -c "import prometheus_client" 2>/dev/null; then
		PY=$p
		break
	fi
done
[ -n "$PY" ] || fail "python3-prometheus-client is not installed (tools/install-deps.sh installs it)"
ns_setup

SOCK="$TMPD/tlsd.sock"
ADDR="127.0.0.1:9464"
JOB_B='b "q" \ x
y'
conf() {	# conf [METRICS_LISTEN [WORKERS]]: WORKERS false: no per-worker families
	cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "one";
bands = 2;
control_socket = "$SOCK";
${1:+metrics_listen = \"$1\";}
metrics_workers = ${2:-true};
discovery = { enabled = false; };
jobs = ( { name = "a"; ports = [ 9001 ]; },
	 { name = "b \\"q\\" \\\\ x\\ny"; ports = [ 9002 ]; } );
EOC
}
ctl() { "$CTL" -s "$SOCK" "$@"; }
check() { in_ps "$PY" "$CHECK" "$@"; }
reload() {	# reload: SIGHUP, wait until it is done (or refused)
	reload_tlsd "configuration reloaded\|reload refused\|applied only in part"
	sleep 0.2
}
# js FILE 'PYTHON EXPRESSION on r': a value of a JSON summary
js() { "$PY" -c "import json, sys; r = json.load(open(sys.argv[1])); print($2)" "$1"; }

conf "$ADDR"
start_tlsd "$TMPD/tlsd.conf"
grep -q "metrics on http://$ADDR/metrics" "$TMPD/tlsd.log" || fail "no metrics endpoint: $(cat "$TMPD/tlsd.log")"

# --- real traffic of both jobs, two connections each (b, below a under
# policy one, longer), then drained ---
bg_ps "$TMPD/ps1" "$EMU" ps -l $PS4:9001 -t 4
bg_ps "$TMPD/ps2" "$EMU" ps -l $PS4:9002 -t 6
wait_line "$TMPD/ps1" 5 "ready" && wait_line "$TMPD/ps2" 5 "ready" || fail "PSes did not start"
bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9001 -c $PS4:9001 -c $PS4:9002 -c $PS4:9002 -t 20
PULL=$LAST
sleep 2
check scrape "$ADDR" >"$TMPD/busy.json" || fail "scrape under traffic: $(cat "$TMPD/busy.json")"
info "a scrape under traffic: $(js "$TMPD/busy.json" 'r["bytes"]') bytes in $(js "$TMPD/busy.json" 'r["scrape_ms"]') ms, $(js "$TMPD/busy.json" 'r["families"]') families"
wait_pid "$PULL" 30 || fail "the worker did not finish"
sleep 1	# the queues drain: HTB counts at dequeue, the classifier at enqueue

# --- the scrape: both formats through the real parsers ---
check scrape "$ADDR" >"$TMPD/scrape.json" || fail "scrape: $(cat "$TMPD/scrape.json")"
info "scrape: $(js "$TMPD/scrape.json" 'r["bytes"]') bytes in $(js "$TMPD/scrape.json" 'r["scrape_ms"]') ms, both formats parsed"
[ "$(js "$TMPD/scrape.json" 'sorted(r["job_bytes"])')" = "['a', 'b \"q\" \\\\ x\\ny']" ] ||
	fail "job labels: $(js "$TMPD/scrape.json" 'sorted(r["job_bytes"])')"
[ "$(js "$TMPD/scrape.json" 'r["job_band"]["a"], r["job_leader"]["a"], r["job_band"]["b \"q\" \\ x\ny"], r["job_leader"]["b \"q\" \\ x\ny"]')" = \
	"0.0 1.0 1.0 0.0" ] || fail "bands and leaders: $(cat "$TMPD/scrape.json")"
[ "$(js "$TMPD/scrape.json" 'r["workers"], r["worker_labels"]')" = \
	"['a', 'b \"q\" \\\\ x\\ny'] [['direction', 'job', 'ps', 'worker']]" ] ||
	fail "worker flows: $(js "$TMPD/scrape.json" 'r["workers"], r["worker_labels"]')"
[ "$(js "$TMPD/scrape.json" 'r["tree_intact"], r["htb_up"], r["features_in_use"] >= 5')" = "1.0 1.0 True" ] ||
	fail "tree, htb_up, features: $(cat "$TMPD/scrape.json")"
[ "$(js "$TMPD/scrape.json" 'r["job_bwk"]["a"] > 1e6')" = "True" ] ||
	fail "job a's B_wk: $(js "$TMPD/scrape.json" 'r["job_bwk"]')"

# --- the byte counters against HTB's, from the kernel (tc), within 1% ---
# tc -j prints classes as JSON from iproute2 6.3 on; 6.1 (Debian 12) prints
# its text whatever -j says: both are read.
in_ps tc -s -j class show dev "$IF_PS" >"$TMPD/tc.out"
"$PY" - "$TMPD/scrape.json" "$TMPD/tc.out" <<'EOF' || fail "the counters do not match HTB's"
import json, re, sys
s = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
try:
    tc = {c["handle"]: c["stats"] for c in json.loads(text)}
except ValueError:
    tc = {}
    for m in re.finditer(r"^class htb (\S+) .*?\n Sent (\d+) bytes (\d+) pkt "
                         r"\(dropped (\d+), overlimits (\d+)", text, re.M | re.S):
        tc[m[1]] = {"bytes": int(m[2]), "packets": int(m[3]), "drops": int(m[4]),
                    "overlimits": int(m[5])}
ok = True
for job, cls in (("a", "715d:10"), ('b "q" \\ x\ny', "715d:11")):
    j, c, m = s["job_bytes"][job], tc[cls]["bytes"], s["class_bytes"][cls]
    d = (j - c) * 100 / c if c else 100
    print("  job %r: tlsd_job_bytes_total %d, HTB class %s %d (tc), %d (scrape): %+.4f%%"
          % (job, j, cls, c, m, d))
    if c < 10e6:
        print("FAIL: class %s carried only %d B" % (cls, c))
        ok = False
    if abs(d) > 1:
        print("FAIL: job %r and HTB class %s differ by %.4f%% (> 1%%)" % (job, cls, d))
        ok = False
    for f in ("bytes", "drops", "overlimits"):
        if s["class_" + f][cls] != tc[cls][f]:
            print("FAIL: class %s: the scrape's %s %d, tc's %d"
                  % (cls, f, s["class_" + f][cls], tc[cls][f]))
            ok = False
sys.exit(0 if ok else 1)
EOF

# --- contrib/: the dashboard and the alert rules use what tlsd serves ---
check contrib "$ADDR" "$TOP/contrib" || fail "contrib/"

# --- tlsctl metrics: the same text through the control socket ---
ctl metrics >"$TMPD/ctl.prom" || fail "tlsctl metrics failed"
check parse prometheus "$TMPD/ctl.prom" >"$TMPD/ctl.json" || fail "tlsctl metrics: $(cat "$TMPD/ctl.json")"
ctl metrics --openmetrics >"$TMPD/ctl.om" || fail "tlsctl metrics --openmetrics failed"
check parse openmetrics "$TMPD/ctl.om" >"$TMPD/ctl.json" || fail "tlsctl metrics --openmetrics: $(cat "$TMPD/ctl.json")"
ctl metrics -o "$TMPD/textfile.prom" || fail "tlsctl metrics -o failed"
check parse prometheus "$TMPD/textfile.prom" >/dev/null || fail "tlsctl metrics -o: not parsed"
ls "$TMPD" | grep -q "textfile.prom.tmp" && fail "tlsctl metrics -o left its temporary file"
# the openmetrics parser reads integers, the Prometheus one floats
[ "$(js "$TMPD/ctl.json" 'float(r["job_bytes"]["a"])')" = "$(js "$TMPD/scrape.json" 'r["job_bytes"]["a"]')" ] ||
	fail "tlsctl metrics and the scrape differ on job a's bytes"
info "tlsctl metrics: $(wc -l <"$TMPD/ctl.prom") lines, parsed as Prometheus and OpenMetrics"

# --- bad requests: each its status code, tlsd unmoved ---
check bad "$ADDR" >"$TMPD/bad" || fail "bad requests: $(cat "$TMPD/bad")"
cat "$TMPD/bad"
check keepalive "$ADDR" 16 || fail "kept connections"
sleep 0.5	# tlsd sees those close
check busy "$ADDR" 16 || fail "the bound of 16 connections"
sleep 0.5	# tlsd sees those 16 close

# --- slowloris: 16 connections dripping a byte a second hold every slot ---
bg_ps "$TMPD/slow" "$PY" "$CHECK" slowloris "$ADDR" 16 12
SLOW=$LAST
wait_line "$TMPD/slow" 5 "connections open" || fail "slowloris did not start: $(cat "$TMPD/slow")"
sleep 0.5
worst=0
i=0
while [ $i -lt 20 ]; do
	t0=$(date +%s%N)
	ctl status >/dev/null || fail "tlsctl status failed during the slowloris"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ $ms -gt $worst ] && worst=$ms
	sleep 0.1
	i=$((i + 1))
done
info "tlsctl status during the slowloris: 20 calls, the slowest $worst ms"
[ $worst -lt 300 ] || fail "tlsctl status took $worst ms during the slowloris"
in_ps "$PY" -c "
import socket, sys, time
t0 = time.monotonic()
s = socket.create_connection(('127.0.0.1', 9464), timeout=3)
s.sendall(b'GET /metrics HTTP/1.0\r\n\r\n')
d = s.recv(100)
print('  a scrape while all slots are held: %s in %.0f ms' % (d.split(b'\r\n')[0].decode(), (time.monotonic() - t0) * 1000))
sys.exit(0 if d.startswith(b'HTTP/1.1 503') else 1)" || fail "a scrape during the slowloris was not answered 503"
wait_pid "$SLOW" 20 || fail "slowloris did not end"
wait "$SLOW" || fail "slowloris: $(cat "$TMPD/slow")"
cat "$TMPD/slow" | sed 's/^/  /'
check scrape "$ADDR" >"$TMPD/after.json" || fail "scrape after the slowloris: $(cat "$TMPD/after.json")"
[ "$(js "$TMPD/after.json" 'r["http"]["408"], r["http"]["503"] >= 2, r["http"]["405"], r["http"]["404"] >= 2')" = \
	"16.0 True 1.0 True" ] || fail "tlsd_http_responses_total: $(js "$TMPD/after.json" 'r["http"]')"

# --- metrics_workers off (the default): the per-job families, no
# per-worker ones ---
conf "$ADDR" false
reload
check scrape "$ADDR" >"$TMPD/nowk.json" || fail "scrape without metrics_workers: $(cat "$TMPD/nowk.json")"
[ "$(js "$TMPD/nowk.json" 'r["worker_families"], r["job_bwk"]["a"] > 1e6, r["reloads"]')" = "False True 1.0" ] ||
	fail "metrics_workers = false: $(js "$TMPD/nowk.json" 'r["worker_families"], r["job_bwk"], r["reloads"]')"
info "metrics_workers = false: no per-worker series, the per-job ones as before"

# --- reloads: move the endpoint, refuse a bad address, close it ---
conf "[::1]:9465"
reload
in_ps ip -6 addr show dev lo | grep -q "::1" || fail "no ::1 on the namespace's loopback"
check scrape "[::1]:9465" >"$TMPD/v6.json" || fail "scrape on [::1]:9465: $(cat "$TMPD/v6.json")"
in_ps "$PY" -c "import socket; socket.create_connection(('127.0.0.1', 9464), timeout=2)" 2>/dev/null &&
	fail "the old endpoint is still open after the reload"
conf "localhost:9464"
reload
grep -q "metrics_listen: 'localhost:9464': 'localhost' is not an IPv4 address" "$TMPD/tlsd.log" ||
	fail "a host name was not refused: $(tail -3 "$TMPD/tlsd.log")"
check scrape "[::1]:9465" >"$TMPD/v6.json" || fail "the endpoint did not survive a refused reload"
[ "$(js "$TMPD/v6.json" 'r["reloads"], r["reload_failures"]')" = "3.0 1.0" ] ||
	fail "reloads, failures: $(js "$TMPD/v6.json" 'r["reloads"], r["reload_failures"]')"
info "reloads: moved to [::1]:9465, a host name refused (tlsd_reload_failures_total 1)"
conf ""
reload
in_ps "$PY" -c "import socket; socket.create_connection(('::1', 9465), timeout=2)" 2>/dev/null &&
	fail "the endpoint is still open after metrics_listen was removed"
ctl metrics | grep -q '^tlsd_reloads_total 4$' || fail "tlsctl metrics without the endpoint"
ours "$TLSD_PID" || fail "tlsd died: $(tail -5 "$TMPD/tlsd.log")"
stop_tlsd
# a sanitized tlsd (TLSD=build/san/tlsd) reports in its log, leaks at exit too
if grep -B2 -A30 "runtime error\|AddressSanitizer\|LeakSanitizer" "$TMPD/tlsd.log"; then
	fail "a sanitizer report in tlsd's log"
fi
echo "PASS: metrics scraped and parsed (Prometheus, OpenMetrics), job bytes = HTB's within 1%, bad requests and slowloris answered, reloads"

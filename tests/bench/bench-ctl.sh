#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make bench-ctl`: the control socket, against a real tlsd in a namespace
# (2 PS jobs backlogged through 100 Mbit/s, so that tlsd's maps are live):
#  - ctl_status_rtt_ms_median: connect, `status`, reply, close;
#  - ctl_policy_switch_ms_median: from sending a `policy` request to the
#    band change in the classifier's job map;
#  - tlsctl_status_ms_median: the same through the tlsctl binary (process
#    start included);
#  - tlsd_cpu_pct_10ms_64jobs_1024flows: tlsd's CPU time (user + system, from
#    /proc) over SECS seconds (default 30) as a share of one core, sampling
#    its statistics every 10 ms, with 64 jobs (one PS port each) and 1024
#    backlogged worker flows (16 per job) through 1 Gbit/s, roundrobin every
#    second; then the same with one `tlsctl stats --csv --follow` client
#    (..._follow: every sample as JSON, 1024 flows 100 times a second);
#  - tlsd_cpu_pct_metrics_100rps: the same tlsd rotating every 10 ms
#    (`tlsctl policy roundrobin interval 10ms`), its statistics at their
#    default period (100 ms) and metrics_workers at its default (off), while
#    bench-scrape GETs http://127.0.0.1:PORT/metrics 100 times a second on
#    one kept connection, as Prometheus does (its client keeps connections
#    alive); beside it tlsd_cpu_pct_rotate_10ms_no_scrapes, the same tlsd
#    just before without scrapes, and the scraper's rate and latency. Then,
#    side by side in the same run:
#      ..._new_conn: a new connection for each scrape;
#      ..._workers: metrics_workers = true (a series per worker flow);
#      ..._stats_10ms_workers_new_conn: all three as this bench measured
#        before tlsd kept connections and answers (statistics every 10 ms,
#        per-worker families, a connection per scrape), beside
#        ..._rotate_10ms_no_scrapes_stats_10ms (answers are still kept,
#        for 10 ms then: a scrape within 10 ms of the last answer gets
#        it).
#    The figures are run in this order: stats_10ms ones, _workers, then the
#    default ones. Last, floor_cpu_pct_metrics_100rps: bench-serve, a server
#    that only answers the default case's saved answer (one recv and one
#    sendmsg a scrape), scraped the same way: what the kernel charges any
#    endpoint for these scrapes on this machine, beside tlsd's added CPU
#    (..._added_over_floor), what tlsd adds above the floor
#    (..._added_minus_floor), and tlsd without scrapes plus the floor
#    (..._least: the least any endpoint could measure here). The 64
#    jobs' traffic runs through every figure (checked after each).
#    PERF_OUT=FILE: a perf profile of tlsd under the default
#    case's scrapes (PERF_SECS, 2 s; perf record's PERF_ARGS, -g) written
#    there, and one without them in FILE.rot.
# ROUNDS (default 1000) requests of each. Ends with `name: value unit` lines.
# JOBS (default 64) and FLOWS (per job, default 16) change the 64-job case's
# size (the figures keep their names; the header says the size);
# METRICS_ONLY=1 runs the metrics case alone (the control socket's figures
# and the first two CPU figures are left out).
. "$(dirname "$0")/../ns/lib.sh"

ROUNDS=${ROUNDS:-1000}
SECS=${SECS:-30}
JOBS=${JOBS:-64}
FLOWS=${FLOWS:-16}
METRICS_ONLY=${METRICS_ONLY:-0}
PERF_SECS=${PERF_SECS:-2}
[ -x "$BIN/bench-ctl" ] || fail "$BIN/bench-ctl not built"
[ -x "$BIN/bench-scrape" ] || fail "$BIN/bench-scrape not built"
[ -x "$BIN/bench-serve" ] || fail "$BIN/bench-serve not built"
MPORT=9464 # tlsd's namespace's own loopback: no clash with the host's
ns_setup
SOCK="$TMPD/tlsd.sock"
if [ "$METRICS_ONLY" != 1 ]; then
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "one";
interval = "20s";
bands = 2;
control_socket = "$SOCK";
discovery = { enabled = false; };
jobs = ( { name = "a"; ports = [ 9001 ]; }, { name = "b"; ports = [ 9002 ]; } );
EOC
# quiet (no -v): its cost is what is measured
start_tlsd -q -s "$SOCK" "$TMPD/tlsd.conf"
bg_ps "$TMPD/ps1" "$EMU" ps -l $PS4:9001 -t 600
bg_ps "$TMPD/ps2" "$EMU" ps -l $PS4:9002 -t 600
wait_line "$TMPD/ps1" 5 "ready" && wait_line "$TMPD/ps2" 5 "ready" || fail "PSes did not start"
bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9001 -c $PS4:9002 -t 600
sleep 1

"$BIN/bench-ctl" "$SOCK" "$PIN" "$ROUNDS" >"$TMPD/bench" || fail "bench-ctl failed"

# Through the tool, as an operator runs it: process start included.
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
n=$((ROUNDS / 10))
i=0
while [ $i -lt "$n" ]; do
	t0=$(date +%s%N)
	"$BIN/tlsctl" -s "$SOCK" status >/dev/null || fail "tlsctl status failed"
	echo $((($(date +%s%N) - t0) / 1000))
	i=$((i + 1))
done >"$TMPD/tool"
kill -0 "$TLSD_PID" || fail "tlsd died"
stop_tlsd
for p in $PIDS; do ours "$p" && kill "$p"; done
sleep 0.5
fi

# 64 jobs, 1024 flows, statistics every 10 ms.
ulimit -n 8192
{
	cat <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
policy = "roundrobin";
interval = "1s";
bands = 4;
stats_period = "10ms";
control_socket = "$SOCK";
metrics_listen = "127.0.0.1:$MPORT";
metrics_workers = true;
discovery = { enabled = false; };
EOC
	printf 'jobs = ( '
	j=0
	while [ $j -lt "$JOBS" ]; do
		[ $j -gt 0 ] && printf ', '
		printf '{ name = "j%d"; ports = [ %d ]; }' $j $((10000 + j))
		j=$((j + 1))
	done
	printf ' );\n'
} >"$TMPD/tlsd64.conf"
start_tlsd -q -s "$SOCK" -l "$TMPD/tlsd64.log" "$TMPD/tlsd64.conf"
ls=""
cs=""
j=0
while [ $j -lt "$JOBS" ]; do
	ls="$ls -l $PS4:$((10000 + j))"
	k=0
	while [ $k -lt "$FLOWS" ]; do cs="$cs -c $PS4:$((10000 + j))"; k=$((k + 1)); done
	j=$((j + 1))
done
# The traffic outlasts every figure: nine windows of SECS at most (two
# before the metrics case, six in it, the floor) and the setting-up
# between them; ended by the cleanup. Each window checks it still runs.
TRAFFIC_S=$((10 * SECS + 180))
# shellcheck disable=SC2086 # the lists are meant to split
bg_ps "$TMPD/ps64" "$EMU" ps $ls -t $TRAFFIC_S
PS64_PID=$LAST
wait_line "$TMPD/ps64" 5 "ready" || fail "PS did not start: $(cat "$TMPD/ps64")"
# shellcheck disable=SC2086
bg_wk "$TMPD/pull64" "$EMU" pull $cs -t $TRAFFIC_S
PULL64_PID=$LAST
# after each figure: the traffic it is taken under still runs
traffic_on() {
	{ ours "$PS64_PID" && ours "$PULL64_PID"; } ||
		fail "the 64 jobs' traffic ended before the figure $1 was taken"
}
sleep 5
flows=$("$BIN/tlsctl" -s "$SOCK" -j stats | python3 -c "import json, sys; print(len(json.load(sys.stdin)['flows']))")
hz=$(getconf CLK_TCK)
cpu_pct() {	# [PID]: tlsd's (or PID's) CPU over SECS seconds, % of one core
	_p=${1:-$TLSD_PID}
	c0=$(awk '{ print $14 + $15 }' "/proc/$_p/stat")
	sleep "$SECS"
	c1=$(awk '{ print $14 + $15 }' "/proc/$_p/stat")
	awk -v c=$((c1 - c0)) -v hz="$hz" -v s="$SECS" 'BEGIN { printf "%.2f", 100 * c / hz / s }'
}
if [ "$METRICS_ONLY" != 1 ]; then
	pct=$(cpu_pct)
	traffic_on pct
	bg_ps "$TMPD/follow" "$BIN/tlsctl" -s "$SOCK" stats --csv --follow
	sleep 1
	s0=$(grep -c ",job,1," "$TMPD/follow")
	pct_follow=$(cpu_pct)
	traffic_on pct_follow
	samples=$(($(grep -c ",job,1," "$TMPD/follow") - s0))
	kill -0 "$TLSD_PID" || fail "tlsd died under load"
	kill "$LAST"
fi

# The metrics endpoint scraped 100 times a second while tlsd rotates every
# 10 ms: without scrapes, then with, in the same run.
"$BIN/tlsctl" -s "$SOCK" policy roundrobin interval 10ms >/dev/null ||
	fail "cannot set the interval to 10ms"
sleep 1
step() { "$BIN/tlsctl" -s "$SOCK" -j status | python3 -c "import json, sys; print(json.load(sys.stdin)['step'])"; }
# base SUFFIX: tlsd's CPU without scrapes (pct_rot$SUFFIX); PERF_OUT.rot: a
# profile of it, for the default case
base() {
	if [ -n "${PERF_OUT:-}" ] && [ -z "$1" ]; then
		# shellcheck disable=SC2086 # PERF_ARGS: words
		perf record -q -F 1999 ${PERF_ARGS:--g} -o "$PERF_OUT.rot" -p "$TLSD_PID" -- sleep "$PERF_SECS" >/dev/null 2>&1 ||
			info "perf record failed"
	fi
	eval "pct_rot$1=\$(cpu_pct)"
	traffic_on "pct_rot$1"
}
# scraped SUFFIX [-k]: tlsd's CPU under 100 scrapes/s (pct_metrics$SUFFIX,
# the scraper's figures in scrape$SUFFIX, rotations/s in rot_rate$SUFFIX);
# -k: one kept connection
scraped() {
	SDUR=$((SECS + 2)) # covers the CPU window
	[ -n "${PERF_OUT:-}" ] && [ -z "$1" ] && SDUR=$((SDUR + PERF_SECS))
	# shellcheck disable=SC2086 # $2: -k or nothing
	bg_ps "$TMPD/scrape$1" "$BIN/bench-scrape" $2 "127.0.0.1:$MPORT" 100 "$SDUR"
	SCRAPER=$LAST
	sleep 1
	if [ -n "${PERF_OUT:-}" ] && [ -z "$1" ]; then
		# shellcheck disable=SC2086 # PERF_ARGS: words
		perf record -q -F 1999 ${PERF_ARGS:--g} -o "$PERF_OUT" -p "$TLSD_PID" -- sleep "$PERF_SECS" >/dev/null 2>&1 ||
			info "perf record failed"
	fi
	steps0=$(step)
	r0=$(date +%s%N)
	eval "pct_metrics$1=\$(cpu_pct)"
	traffic_on "pct_metrics$1"
	steps=$(($(step) - steps0))
	r1=$(date +%s%N)
	eval "rot_rate$1=\$(awk -v n=$steps -v ns=$((r1 - r0)) 'BEGIN { printf \"%.1f\", n * 1e9 / ns }')"
	wait "$SCRAPER" || fail "bench-scrape failed: $(cat "$TMPD/scrape$1")"
	kill -0 "$TLSD_PID" || fail "tlsd died under scrapes"
}
# reconf PERIOD WORKERS PERIOD_NS: the same tlsd reloaded with stats_period
# and metrics_workers so (the live rotation every 10 ms stays)
reloads() { in_ps curl -s "http://127.0.0.1:$MPORT/metrics" | awk '$1 == "tlsd_reloads_total" { print $2 }'; }
reconf() {
	n0=$(reloads)
	sed -e "s/^stats_period = .*/stats_period = \"$1\";/" \
		-e "s/^metrics_workers = .*/metrics_workers = $2;/" "$TMPD/tlsd64.conf" >"$TMPD/tlsd64.conf.new" &&
		mv "$TMPD/tlsd64.conf.new" "$TMPD/tlsd64.conf"
	kill -HUP "$TLSD_PID"
	i=0
	until [ "$(reloads)" -gt "$n0" ]; do
		[ $i -lt 50 ] || fail "the reload to stats_period $1, metrics_workers $2 did not take"
		sleep 0.1
		i=$((i + 1))
	done
	i=0
	until [ "$("$BIN/tlsctl" -s "$SOCK" -j status | python3 -c "import json, sys; print(json.load(sys.stdin)['stats_period_ns'])")" = "$3" ]; do
		[ $i -lt 50 ] || fail "the reload to stats_period $1 did not take"
		sleep 0.1
		i=$((i + 1))
	done
	sleep 1
}
# as before: statistics every 10 ms, per-worker families, a connection a scrape
base _stats_10ms
scraped _stats_10ms_workers_new_conn
in_ps curl -s "http://127.0.0.1:$MPORT/metrics" >"$TMPD/metrics_workers.txt"
reconf 100ms true 100000000
scraped _workers -k
reconf 100ms false 100000000
base ""
scraped "" -k
scraped _new_conn
in_ps curl -s "http://127.0.0.1:$MPORT/metrics" >"$TMPD/metrics.txt"
# The floor: the answer just saved, served by bench-serve (one recv and one
# sendmsg a scrape, nothing else) and scraped as tlsd was; its CPU is what
# the kernel charges any endpoint for these scrapes on this machine.
FPORT=$((MPORT + 1))
bg_ps "$TMPD/serve" "$BIN/bench-serve" "127.0.0.1:$FPORT" "$TMPD/metrics.txt"
SERVE_PID=$LAST
i=0
until in_ps curl -sf -o /dev/null "http://127.0.0.1:$FPORT/"; do
	[ $i -lt 50 ] || fail "bench-serve did not listen: $(cat "$TMPD/serve")"
	sleep 0.1
	i=$((i + 1))
done
SDUR=$((SECS + 2))
bg_ps "$TMPD/scrape_floor" "$BIN/bench-scrape" -k "127.0.0.1:$FPORT" 100 "$SDUR"
SCRAPER=$LAST
sleep 1
pct_floor=$(cpu_pct "$SERVE_PID")
traffic_on pct_floor
wait "$SCRAPER" || fail "bench-scrape of bench-serve failed: $(cat "$TMPD/scrape_floor")"
ours "$SERVE_PID" && kill "$SERVE_PID"
wait "$SERVE_PID" || fail "bench-serve: $(cat "$TMPD/serve")"

if [ "$METRICS_ONLY" != 1 ]; then
	echo "== results ($ROUNDS requests each; $JOBS jobs: $flows flows seen by the statistics;"
	echo "   the follower received $samples samples in $SECS s)"
	echo "tlsctl_status_ms_median: $(median <"$TMPD/tool" | awk '{ printf "%.2f", $1 / 1000 }') ms"
	cat "$TMPD/bench"
	echo "tlsd_cpu_pct_10ms_64jobs_1024flows_follow: $pct_follow %"
	echo "tlsd_cpu_pct_10ms_64jobs_1024flows: $pct %"
fi
echo "== metrics endpoint: roundrobin every 10 ms, $JOBS jobs, $flows flows, statistics every"
echo "   100 ms, metrics_workers off: $(wc -l <"$TMPD/metrics.txt") lines per scrape ($(wc -l <"$TMPD/metrics_workers.txt")"
echo "   with metrics_workers); bench-scrape over $SDUR s, CPU over $SECS s each"
cat "$TMPD/scrape"
echo "rotations_per_s_under_scrapes: $rot_rate"
echo "tlsd_cpu_pct_rotate_10ms_no_scrapes: $pct_rot %"
echo "tlsd_cpu_pct_metrics_100rps: $pct_metrics %"
awk -v a="$pct_metrics" -v b="$pct_rot" 'BEGIN { printf "tlsd_cpu_pct_metrics_100rps_added: %.2f %% (%.1fx the run without scrapes)\n", a - b, (b > 0 ? a / b : 0) }'
echo "== the floor: the same answer, scraped the same way, from bench-serve (a server"
echo "   that only answers it: the kernel's cost of these scrapes on this machine)"
grep -E "bytes_mean|p50|achieved" "$TMPD/scrape_floor" | sed 's/^/  /'
echo "floor_cpu_pct_metrics_100rps: $pct_floor %"
awk -v a="$pct_metrics" -v b="$pct_rot" -v f="$pct_floor" 'BEGIN { printf "tlsd_cpu_pct_metrics_100rps_added_over_floor: %.2f (tlsd'"'"'s added CPU / the floor'"'"'s)\n", (f > 0 ? (a - b) / f : 0) }'
awk -v a="$pct_metrics" -v b="$pct_rot" -v f="$pct_floor" 'BEGIN { printf "tlsd_cpu_pct_metrics_100rps_added_minus_floor: %.2f %% (tlsd'"'"'s own part of the scrapes'"'"' cost)\n", a - b - f }'
awk -v b="$pct_rot" -v f="$pct_floor" 'BEGIN { printf "tlsd_cpu_pct_metrics_100rps_least: %.2f %% (tlsd without scrapes plus the floor: the least an endpoint could measure here)\n", b + f }'
echo "== the same with a new connection for each scrape"
grep -E "bytes_mean|p50|connections" "$TMPD/scrape_new_conn" | sed 's/^/  /'
echo "tlsd_cpu_pct_metrics_100rps_new_conn: $pct_metrics_new_conn %"
echo "== the same with metrics_workers = true (kept connection)"
grep -E "bytes_mean|p50|connections" "$TMPD/scrape_workers" | sed 's/^/  /'
echo "tlsd_cpu_pct_metrics_100rps_workers: $pct_metrics_workers %"
echo "== as measured before kept connections and answers: statistics every 10 ms,"
echo "   metrics_workers, a new connection for each scrape"
grep -E "bytes_mean|p50|connections" "$TMPD/scrape_stats_10ms_workers_new_conn" | sed 's/^/  /'
echo "rotations_per_s_under_scrapes_stats_10ms: $rot_rate_stats_10ms_workers_new_conn"
echo "tlsd_cpu_pct_rotate_10ms_no_scrapes_stats_10ms: $pct_rot_stats_10ms %"
echo "tlsd_cpu_pct_metrics_100rps_stats_10ms_workers_new_conn: $pct_metrics_stats_10ms_workers_new_conn %"

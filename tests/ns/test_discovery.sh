#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# PS discovery end to end: tlsd starts with no jobs; stand-in PS processes
# (tls-emu with each launcher's command line or environment) are found by
# the built-in rules and by a user regex rule; non-matching and excluded
# processes are ignored; a PS with two ports has both; two processes with one
# job key make one job; a PS's own connections count for its job from the
# start; a PS that exits is removed and its band freed; a PS in its own
# network namespace (a container behind the PS host) is found and its
# traffic classified on the host interface.
. "$(dirname "$0")/lib.sh"

NS_CT="${PFX}ct"
IF_CT="${PFX}c"
CT4=198.19.0.2
ns_setup
ns_add "$NS_CT"
in_ct() { nsenter --net="/run/netns/$NS_CT" -- "$@"; }
ip link add "$IF_CT" netns "$NS_CT" type veth peer name "${IF_CT}h" netns "$NS_PS" &&
	in_ct ip addr add $CT4/24 dev "$IF_CT" && in_ct ip link set "$IF_CT" up &&
	in_ct ip link set lo up && in_ct ip route add default via 198.19.0.1 &&
	in_ps ip addr add 198.19.0.1/24 dev "${IF_CT}h" && in_ps ip link set "${IF_CT}h" up &&
	in_ps sysctl -qw net.ipv4.ip_forward=1 &&
	in_wk ip route add 198.19.0.0/24 via $PS4 || fail "cannot build the container namespace"

cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
policy = "fifo";
bands = 7;
control_socket = "$TMPD/tlsd.sock";
discovery = {
	rescan = "1s";
	exclude = ( { cmdline = "(^| )--dry-run( |$)"; } );
	rules = ( { name = "trainer"; cmdline = " --myrole=ps-([a-z0-9]+)( |$)"; job_key = "group:1"; } );
};
EOC
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf" -v

bg_wk "$TMPD/sink" "$EMU" sink -l $WK4:7001
TFC='{"cluster":{"ps":["198.18.0.1:9102"],"worker":["198.18.0.2:1"]},"task":{"type":"ps","index":0}}'
# built-ins: TensorFlow flags, TF_CONFIG, DMLC (two processes, one job key)
bg_ps "$TMPD/tf" "$EMU" ps -l $PS4:9101 -- --job_name=ps
TF_PID=$LAST
bg_ps "$TMPD/tfc" env TF_CONFIG="$TFC" "$EMU" ps -l $PS4:9102
bg_ps "$TMPD/d1" env DMLC_ROLE=server DMLC_PS_ROOT_URI=198.18.0.1 DMLC_PS_ROOT_PORT=9200 \
	"$EMU" ps -l $PS4:9103
D1_PID=$LAST
bg_ps "$TMPD/d2" env DMLC_ROLE=server DMLC_PS_ROOT_URI=198.18.0.1 DMLC_PS_ROOT_PORT=9200 \
	"$EMU" ps -l $PS4:9104
D2_PID=$LAST
# the user's rule, a PS with two ports (IPv4 and IPv6)
bg_ps "$TMPD/u" "$EMU" ps -l $PS4:9107 -l "[$PS6]:9108" -- --myrole=ps-bert
# not PSes: a TF worker, a DMLC worker, an excluded PS
bg_ps "$TMPD/n1" "$EMU" ps -l $PS4:9109 -- --job_name=worker
N1=$LAST
bg_ps "$TMPD/n2" env DMLC_ROLE=worker "$EMU" ps -l $PS4:9110
N2=$LAST
bg_ps "$TMPD/n3" "$EMU" ps -l $PS4:9111 -- --job_name=ps --dry-run
N3=$LAST
# a PS that dials its workers at once, without waiting
bg_ps "$TMPD/dial" env DMLC_ROLE=server DMLC_PS_ROOT_PORT=9300 "$EMU" ps -c $WK4:7001 -n 2 \
	-r 40 -t 3
DIAL_PID=$LAST
# a PS in its own network namespace
nsenter --net="/run/netns/$NS_CT" -- env DMLC_ROLE=server DMLC_PS_ROOT_URI=$CT4 \
	DMLC_PS_ROOT_PORT=9400 "$EMU" ps -l $CT4:9401 >"$TMPD/ct" 2>&1 &
CT_PID=$!
PIDS="$PIDS $CT_PID"

id_of() {	# the id tlsd gave job $1
	sed -n "s/.*job $1 (id \([0-9]*\)) added.*/\1/p" "$TMPD/tlsd.log" | tail -1
}
for j in tensorflow:$TF_PID tf_config:198.18.0.1:9102 dmlc:198.18.0.1:9200 trainer:bert \
	dmlc:9300 dmlc:$CT4:9400; do
	wait_line "$TMPD/tlsd.log" 5 "job $j (id [0-9]*) added" ||
		fail "job $j not discovered: $(grep -E 'found|added' "$TMPD/tlsd.log")"
	info "found $j: id $(id_of "$j")"
done
wait_line "$TMPD/tlsd.log" 5 "of job trainer:bert: listening on 9107,9108" ||
	fail "the two ports of trainer:bert not seen: $(grep listening "$TMPD/tlsd.log")"
# tlsctl shows a discovered job's rule, pids and ports
"$BIN/tlsctl" -s "$TMPD/tlsd.sock" -j jobs >"$TMPD/jobs.json" || fail "tlsctl jobs failed"
python3 - "$TMPD/jobs.json" "$D1_PID" "$D2_PID" <<'EOP' || fail "tlsctl jobs: $(cat "$TMPD/jobs.json")"
import json, sys
jobs = {j["name"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
d = jobs["dmlc:198.18.0.1:9200"]
assert d["origin"] == "discovered" and d["rule"] == "dmlc", d
assert sorted(d["pids"]) == sorted(int(p) for p in sys.argv[2:]), d
assert sorted(d["ports"]) == [9103, 9104], d
assert sorted(jobs["trainer:bert"]["ports"]) == [9107, 9108], jobs["trainer:bert"]
EOP
info "tlsctl jobs: $("$BIN/tlsctl" -s "$TMPD/tlsd.sock" jobs | grep -E 'dmlc:198.18.0.1:9200|trainer')"
[ "$(grep -c 'job dmlc:198.18.0.1:9200 (id [0-9]*) added' "$TMPD/tlsd.log")" -eq 1 ] ||
	fail "the two DMLC servers with one key made more than one job"
grep "found by rule dmlc: job dmlc:198.18.0.1:9200" "$TMPD/tlsd.log" | grep -q "pid $D2_PID" ||
	fail "second DMLC server not joined to its job"
sleep 0.5
# (tlsd sees the whole host: PSes of other runs may show up too; only ours
# are judged here)
grep -E "PS pid ($N1|$N2|$N3) " "$TMPD/tlsd.log" && fail "a non-PS was taken for a PS"

# Traffic from every PS: a worker pulls from each port; each lands in its job.
bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9101 -c $PS4:9102 -c $PS4:9103 -c $PS4:9104 \
	-c $PS4:9107 -c "[$PS6]:9108" -c $CT4:9401 -t 2
PULL_PID=$LAST
wait_pid "$PULL_PID" 15 || fail "pull did not finish"
for j in tensorflow:$TF_PID tf_config:198.18.0.1:9102 dmlc:198.18.0.1:9200 trainer:bert \
	dmlc:$CT4:9400; do
	b=$(job_stat "$(id_of "$j")" bytes)
	info "job $j: $b B"
	[ "${b:-0}" -gt 1000000 ] || fail "job $j classified only ${b:-0} B"
done
# the non-PS on 9109 is in no job
b0=$(job_stat 0 bytes)
bg_wk "$TMPD/pull2" "$EMU" pull -c $PS4:9109 -t 1
wait_pid "$LAST" 10 || fail "pull from the non-PS did not finish"
got=$(awk -F'bytes=' '/^pull/ { print $2 }' "$TMPD/pull2")
b1=$(job_stat 0 bytes)
info "not a PS: $got B received, $((b1 - b0)) B counted in no job"
[ "${got:-0}" -gt 1000000 ] && [ $((b1 - b0)) -ge "$got" ] ||
	fail "the non-PS traffic (port 9109) was not left unclassified"

# The PS that dialled at once: its bytes in its job from the start.
wait_pid "$DIAL_PID" 15 || fail "dialling PS did not finish"
sent=$(awk -F'bytes=' '/ps total/ { print $2 }' "$TMPD/dial")
got=$(job_stat "$(id_of "dmlc:9300")" bytes)
info "PS that dialled at exec: sent $sent B, its job counted $got B"
# 100 ms at 2 x 40 Mbit/s is 1 MB: what may go uncounted at most
[ "${got:-0}" -ge $((sent - 1000000)) ] ||
	fail "the dialling PS's job counted $got of $sent B: more than 100 ms missed"
wait_line "$TMPD/tlsd.log" 3 "job dmlc:9300 (id [0-9]*) removed" ||
	fail "the dialling PS's job not removed when it exited"

# Exit: the job goes, its band is freed; a job with two PSes stays until both go.
id=$(id_of "tensorflow:$TF_PID")
[ "$(job_stat "$id" band)" != null ] || fail "job tensorflow:$TF_PID has no band"
kill "$TF_PID"
wait_line "$TMPD/tlsd.log" 3 "job tensorflow:$TF_PID (id $id) removed" ||
	fail "exited PS's job not removed"
[ "$(job_stat "$id" band)" = null ] || fail "exited PS's job $id still has band $(job_stat "$id" band)"
kill "$D1_PID"
wait_line "$TMPD/tlsd.log" 3 "PS pid $D1_PID of job dmlc:198.18.0.1:9200 exited" ||
	fail "exit of one DMLC server not seen"
grep -q "job dmlc:198.18.0.1:9200 (id [0-9]*) removed" "$TMPD/tlsd.log" &&
	fail "job removed while its second PS still runs"
kill "$D2_PID"
wait_line "$TMPD/tlsd.log" 3 "job dmlc:198.18.0.1:9200 (id [0-9]*) removed" ||
	fail "job not removed after its last PS exited"
# No membership left behind by the PSes that exited.
left=$(bpftool -j map dump pinned "$PIN/tls_pids" 2>/dev/null | tr '{,}' '\n\n\n' |
	grep -E "\"key\": ?($TF_PID|$D1_PID|$D2_PID|$DIAL_PID)\$" || true)
[ -z "$left" ] || fail "exited PSes still in the pid map: $left"

# A PS in a container with a wildcard listener that dials its worker only
# later: its connection is found by a later poll and classified by endpoint.
nsenter --net="/run/netns/$NS_CT" -- env DMLC_ROLE=server DMLC_PS_ROOT_PORT=9500 \
	"$EMU" ps -l 0.0.0.0:9501 -c $WK4:7001 -r 40 -t 3 -w >"$TMPD/ct2" 2>&1 &
CT2_PID=$!
PIDS="$PIDS $CT2_PID"
wait_line "$TMPD/tlsd.log" 5 "job dmlc:9500 (id [0-9]*) added" || fail "container PS 2 not found"
sleep 1.5
kill -USR1 "$CT2_PID"
wait_pid "$CT2_PID" 15 || fail "container PS 2 did not finish"
sent=$(awk -F'bytes=' '/ps total/ { print $2 }' "$TMPD/ct2")
got=$(job_stat "$(id_of dmlc:9500)" bytes)
info "container PS dialling 1.5 s after start: sent $sent B, its job counted $got B"
# up to one 100 ms poll and a dump uncounted: 0.5 MB at 40 Mbit/s
[ "${got:-0}" -ge $((sent - 1000000)) ] ||
	fail "container PS's late connection: its job counted $got of $sent B"

# SIGHUP with discovery off: the discovered jobs go; on again: found again.
bg_ps "$TMPD/late" env DMLC_ROLE=server DMLC_PS_ROOT_PORT=9600 "$EMU" ps -l $PS4:9601
LATE_PID=$LAST
wait_line "$TMPD/tlsd.log" 5 "job dmlc:9600 (id [0-9]*) added" || fail "PS 9600 not found"
cp "$TMPD/tlsd.conf" "$TMPD/on.conf"
sed 's/rescan = "1s";/rescan = "1s"; enabled = false;/' "$TMPD/on.conf" >"$TMPD/tlsd.conf"
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "job dmlc:9600 (id [0-9]*) removed" ||
	fail "discovery off: job not removed: $(tail -5 "$TMPD/tlsd.log")"
cp "$TMPD/on.conf" "$TMPD/tlsd.conf"
n0=$(grep -c "job dmlc:9600 (id [0-9]*) added" "$TMPD/tlsd.log")
kill -HUP "$TLSD_PID"
i=0
while [ "$(grep -c "job dmlc:9600 (id [0-9]*) added" "$TMPD/tlsd.log")" -le "$n0" ] && [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
[ $i -lt 50 ] || fail "discovery on again: PS 9600 not found again"
info "discovery off and on by SIGHUP: job dmlc:9600 removed and found again"

# kill -9 of tlsd; a PS exits meanwhile; the restart takes over: the running
# PS's job keeps its id, the gone one's membership is purged.
id_late=$(id_of dmlc:9600)
ID_BERT=$(id_of trainer:bert)
stop_tlsd -KILL
kill "$LATE_PID"
wait_pid "$LATE_PID" 5
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf" -v
grep -q "took over" "$TMPD/tlsd.log" || fail "restart did not take over"
[ "$(id_of trainer:bert)" = "$ID_BERT" ] ||
	fail "job trainer:bert changed id across the takeover: $ID_BERT -> $(id_of trainer:bert)"
left=$(bpftool -j map dump pinned "$PIN/tls_pids" 2>/dev/null | tr '{,}' '\n\n\n' |
	grep -E "\"key\": ?$LATE_PID\$" || true)
[ -z "$left" ] || fail "the PS that exited while tlsd was down is still in the pid map"
[ "$(job_stat "$id_late" band)" = null ] || grep -q "job dmlc:9600 " "$TMPD/tlsd.log" ||
	fail "the gone PS's job $id_late kept a band after the takeover"
kill -0 "$TLSD_PID" || fail "tlsd died"
stop_tlsd
echo "PASS: built-in and user rules find the PSes, jobs follow their processes, containers too"

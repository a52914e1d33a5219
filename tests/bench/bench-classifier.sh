#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make bench-classifier`: the classifier's cost per packet (BPF_PROG_TEST_RUN)
# and, on a veth pair at full speed, the TCP throughput through
#   (a) HTB with no filter (everything in the default class),
#   (b) HTB with the classifier on clsact egress,
#   (c) HTB with a u32 chain of two `match ip sport` filters per job, the way
#       TensorLights installs them,
# at 8 and 64 jobs, with the PS interface's TSO/GSO on (as on a real NIC: an
# skb carries up to 64 KB, so per-packet costs hide) and off (_nogso: every
# skb one MTU-sized packet, so per-packet costs show). All measured side by
# side in this one run: configurations take turns, round after round, and
# each figure is the median over rounds. Then the same at 64 jobs below
# full speed (HTB root at CPU_RATE, default 2gbit, TSO/GSO off): the
# machine's CPU time per GB delivered, and the classifier's own cost per
# skb in live traffic (kernel BPF run-time statistics).
# Ends with one `name: value unit` line per figure.
. "$(dirname "$0")/../ns/lib.sh"

ROUNDS=${ROUNDS:-5}
SECS=${SECS:-3}
FLOWS=4		# PS->worker TCP flows, from jobs spread over the job range
RATE=100gbit	# HTB never the bottleneck: this measures CPU cost

echo "== per-packet cost (BPF_PROG_TEST_RUN, repeat mode)"
"$BIN/bench-classifier" >"$TMPD/ns" || fail "bench-classifier failed"
cat "$TMPD/ns"

ns_setup
command -v ethtool >/dev/null 2>&1 || skip "ethtool not installed"
offloads() { in_ps ethtool -K "$IF_PS" tso "$1" gso "$1" >/dev/null 2>&1 || fail "ethtool"; }

# HTB tree: root 1:1 at RATE, 7 band classes 1:10..1:16, default 1:ff.
htb_setup $RATE 7

# Job j (0-based) owns PS ports 20000+2j and 20001+2j; its band is j % 7.
job_port() { echo $((20000 + 2 * $1)); }

# The jobs that send: spread over 0..N-1, always including the last one
# (the u32 chain's worst case).
senders() {
	n=$1 i=0
	while [ $i -lt $FLOWS ]; do
		echo $(((n - 1) - i * (n / FLOWS)))
		i=$((i + 1))
	done
}

clear_filters() {
	in_ps tc filter del dev "$IF_PS" parent 1: 2>/dev/null
	[ -d "$PIN" ] && "$CLS" -i "$IF_PS" -P "$PIN" detach >/dev/null 2>&1
	in_ps tc qdisc del dev "$IF_PS" clsact 2>/dev/null
	true
}

setup_u32() {
	n=$1 j=0
	while [ $j -lt "$n" ]; do
		p=$(job_port $j)
		for port in $p $((p + 1)); do
			echo "filter add dev $IF_PS parent 1: protocol ip prio 1 u32" \
				"match ip sport $port 0xffff flowid 1:1$((j % 7))"
		done
		j=$((j + 1))
	done >"$TMPD/u32.batch"
	in_ps tc -batch "$TMPD/u32.batch" || fail "u32 filters"
}

setup_bpf() {
	n=$1 j=0
	cls_attach
	while [ $j -lt "$n" ]; do
		p=$(job_port $j)
		cls job $((j + 1)) $((j % 7)) || fail "job"
		cls endpoint $PS4:$p $((j + 1)) || fail "endpoint"
		cls endpoint $PS4:$((p + 1)) $((j + 1)) || fail "endpoint"
		j=$((j + 1))
	done
}

# Send for SECS, one PS process per sending job, each serving one worker
# connection from its job's port; print the throughput in Mbit/s. With the
# classifier ($2 = bpf) each PS joins its job by process, as tlsd does it:
# its packets are matched by socket, the endpoints are only the fallback.
measure() {
	n=$1 kind=$2 pulls="" psps=""
	for j in $(senders "$n"); do
		bg_ps "$TMPD/ps$j.out" "$EMU" ps -l $PS4:$(job_port "$j") -t "$SECS"
		psps="$psps $LAST"
		wait_line "$TMPD/ps$j.out" 5 "ready pid=" || fail "PS did not start"
		if [ "$kind" = bpf ]; then
			cls process "$LAST" $((j + 1)) >/dev/null || fail "process"
		fi
		pulls="$pulls -c $PS4:$(job_port "$j")"
	done
	bg_wk "$TMPD/pull.out" "$EMU" pull $pulls
	pullp=$LAST
	wait_pid "$pullp" $((SECS + 30)) || fail "pull did not finish"
	for p in $psps; do
		kill "$p" 2>/dev/null
		wait_pid "$p" 10
	done
	awk -F'bytes=' -v s="$SECS" '/^pull/ { b += $2 } END { printf "%.0f\n", b * 8 / s / 1e6 }' \
		"$TMPD/pull.out"
}

# setup_config KIND_N (e.g. bpf_64): clear the filters, install KIND for N
# jobs; sets kind and n for measure.
setup_config() {
	kind=${1%_*} n=${1#*_}
	clear_filters
	case $kind in
	bpf) setup_bpf "$n" ;;
	u32) setup_u32 "$n" ;;
	esac
}

CONFIGS="nofilter_8 bpf_8 u32_8 nofilter_64 bpf_64 u32_64"
r=0
while [ $r -lt "$ROUNDS" ]; do
	for mode in "" _nogso; do
		[ -z "$mode" ] && offloads on || offloads off
		for c in $CONFIGS; do
			setup_config "$c"
			v=$(measure "$n" "$kind")
			echo "$v" >>"$TMPD/$c$mode"
			echo "  round $((r + 1)) $c$mode: $v Mbit/s"
		done
	done
	r=$((r + 1))
done
offloads on

# CPU per GB at a fixed rate: HTB's root at CPU_RATE, TSO/GSO off. At full
# speed the TCP stack's own costs decide the throughput and a filter's
# per-packet cost hides in the noise; below full speed the CPUs have room
# and that cost shows as busy time. The machine's busy time (all CPUs,
# from /proc/stat, steal excluded) over each run, per GB delivered; the
# configurations take turns as above.
CPU_RATE=${CPU_RATE:-2gbit}
CPU_CONFIGS="nofilter_64 bpf_64 u32_64"
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
hz=$(getconf CLK_TCK)
in_ps tc class change dev "$IF_PS" parent 1: classid 1:1 htb rate $CPU_RATE ceil $CPU_RATE \
	quantum 60000 || fail "cannot set the root rate"
offloads off
r=0
while [ $r -lt "$ROUNDS" ]; do
	for c in $CPU_CONFIGS; do
		setup_config "$c"
		t0=$(busy_ticks)
		v=$(measure "$n" "$kind")
		t1=$(busy_ticks)
		# ms of CPU per GB: ticks/hz s over v Mbit/s * SECS s / 8000 GB
		awk -v t=$((t1 - t0)) -v hz="$hz" -v v="$v" -v s="$SECS" \
			'BEGIN { if (v > 0) printf "%.0f\n", t / hz * 1000 / (v * s / 8000); else print 0 }' \
			>>"$TMPD/cpu_$c"
		echo "  round $((r + 1)) cpu $c at $CPU_RATE: $v Mbit/s, $(tail -1 "$TMPD/cpu_$c") ms CPU per GB"
	done
	r=$((r + 1))
done
offloads on
in_ps tc class change dev "$IF_PS" parent 1: classid 1:1 htb rate $RATE ceil $RATE \
	quantum 60000 || fail "cannot set the root rate back"

# The program's own cost per skb in live traffic (socket path), from the
# kernel's BPF run-time statistics, with GSO on and off. Measured in runs of
# their own: the statistics add two clock reads per run, which must not weigh
# on the throughput figures above. The same for a program that only returns
# gives the cost of the statistics and the hook itself, which the net
# figures subtract.
prog_runs() {	# prog_runs ID: "run_time_ns run_cnt"
	bpftool -j prog show id "$1" |
		tr ',{}' '\n\n\n' | awk -F: '/"run_time_ns"/ { t = $2 } /"run_cnt"/ { c = $2 }
			END { print t + 0, c + 0 }'
}
egress_prog_id() {
	in_ps tc filter show dev "$IF_PS" egress | awk '/ id / { for (i = 1; i < NF; i++) if ($i == "id") { print $(i + 1); exit } }'
}
live_cost() {	# live_cost bpf|mirror|empty: ns per run of the egress program
	clear_filters
	if [ "$1" = bpf ]; then
		setup_bpf 64
	elif [ "$1" = mirror ]; then
		# as loaded on a kernel without the socket-storage iterator: PS
		# socket flows mirrored into the flow slots on every packet
		export LD_PRELOAD="$BIN/libtls-refuse.so" TLS_REFUSE=sk_iter
		setup_bpf 64
		unset LD_PRELOAD TLS_REFUSE
	else
		in_ps tc qdisc add dev "$IF_PS" clsact || fail "clsact"
		in_ps tc filter add dev "$IF_PS" egress bpf direct-action \
			obj "$BIN/empty.bpf.o" sec tc || fail "cannot attach the empty program"
	fi
	id=$(egress_prog_id)
	[ -n "$id" ] || fail "no egress program found"
	before=$(prog_runs "$id")
	lk=$1
	[ "$lk" = mirror ] && lk=bpf
	measure 64 "$lk" >/dev/null
	after=$(prog_runs "$id")
	echo "$before $after" | awk '{ if ($4 > $2) printf "%.1f", ($3 - $1) / ($4 - $2); else print "n/a" }'
}
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
# Side by side, round after round: the classifier as loaded here, the same
# with PS socket flows mirrored into the slots (kernels without the
# socket-storage iterator), and an empty program.
for mode in "" _nogso; do
	[ -z "$mode" ] && offloads on || offloads off
	: >"$TMPD/live_bpf$mode"
	: >"$TMPD/live_mirror$mode"
	: >"$TMPD/live_empty$mode"
	r=0
	while [ $r -lt "${LIVE_ROUNDS:-3}" ]; do
		for k in bpf mirror empty; do
			live_cost $k >>"$TMPD/live_$k$mode"
			echo >>"$TMPD/live_$k$mode"
		done
		r=$((r + 1))
	done
done
sysctl -qw kernel.bpf_stats_enabled="$old_stats"
offloads on
clear_filters

median() { grep . "$1" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "== results (median of $ROUNDS rounds, $FLOWS flows, ${SECS}s each)"
cat "$TMPD/ns"
for mode in "" _nogso; do
	lb=$(median "$TMPD/live_bpf$mode") le=$(median "$TMPD/live_empty$mode")
	lm=$(median "$TMPD/live_mirror$mode")
	echo "classifier_live_ns_per_skb_64jobs$mode: $lb ns"
	echo "classifier_mirror_live_ns_per_skb_64jobs$mode: $lm ns"
	echo "empty_prog_live_ns_per_skb$mode: $le ns"
	awk -v b="$lb" -v e="$le" -v mm="$lm" -v m="$mode" 'BEGIN {
		printf "classifier_live_net_ns_per_skb_64jobs%s: %.1f ns\n", m, b - e
		printf "classifier_mirror_live_net_ns_per_skb_64jobs%s: %.1f ns\n", m, mm - e }'
done
for mode in "" _nogso; do
	for c in $CONFIGS; do
		echo "throughput_mbit_$c$mode: $(median "$TMPD/$c$mode") Mbit/s"
	done
done
for c in $CPU_CONFIGS; do
	echo "cpu_ms_per_gb_${c}jobs_nogso: $(median "$TMPD/cpu_$c") ms"
done
awk -v nf="$(median "$TMPD/cpu_nofilter_64")" -v b="$(median "$TMPD/cpu_bpf_64")" \
	-v u="$(median "$TMPD/cpu_u32_64")" 'BEGIN { if (b > 0) {
	printf "cpu_ratio_nofilter_vs_bpf_64jobs_nogso: %.3f\n", nf / b
	printf "cpu_ratio_u32_vs_bpf_64jobs_nogso: %.3f\n", u / b } }'
for mode in "" _nogso; do
	for n in 8 64; do
		nf=$(median "$TMPD/nofilter_$n$mode") b=$(median "$TMPD/bpf_$n$mode")
		u=$(median "$TMPD/u32_$n$mode")
		awk -v b="$b" -v nf="$nf" -v u="$u" -v n="$n" -v m="$mode" 'BEGIN {
			printf "throughput_ratio_bpf_vs_nofilter_%sjobs%s: %.3f\n", n, m, b / nf
			printf "throughput_ratio_bpf_vs_u32_%sjobs%s: %.3f\n", n, m, b / u
		}'
	done
done
# Paired by round (the two ran seconds apart, so a noisy neighbour hits
# both): the median of the per-round ratios, and in how many rounds the
# classifier was ahead.
for mode in "" _nogso; do
	for other in nofilter u32; do
		paste "$TMPD/bpf_64$mode" "$TMPD/${other}_64$mode" |
			awk '$2 > 0 { print $1 / $2 }' >"$TMPD/pair"
		awk -v o="$other" -v m="$mode" -v med="$(median "$TMPD/pair")" \
			'{ n++; a += $1 > 1 } END {
			printf "throughput_paired_ratio_bpf_vs_%s_64jobs%s: %.3f\n", o, m, med
			printf "throughput_rounds_bpf_ahead_of_%s_64jobs%s: %d of %d rounds\n", o, m, a, n }' \
			"$TMPD/pair"
	done
done

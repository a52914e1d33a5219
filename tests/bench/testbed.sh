#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The namespace testbed: colocated PS training jobs (psemu) under tlsd's
# policies and TensorLights' original tc mechanism. Writes one directory of
# JSON per run into OUTDIR; tests/bench/analyze.py turns them into tables.
#
#   PS hosts h1..hH and worker hosts w1..wW, each a network namespace with a
#   veth to a bridge in a switch namespace (198.18.0.0/24). The PS hosts'
#   egress is the bottleneck: HTB at RATE_MBIT (built by tlsd, or by tc for
#   TensorLights); every other link is an unshaped veth (many Gbit/s).
#   Job j has its PS on host ((j - 1) mod H) + 1 and one worker on each
#   worker host. All jobs start together (psemu --start-at).
#
# Settings (environment):
#   JOBS=4 WORKERS=4       jobs, and workers per job (= worker hosts)
#   SIZE=1500k ITERS=20    model/gradient size (psemu units), iterations
#   COMPUTE_MS=800 JITTER_MS=5    worker compute time and its std deviation
#   JOB_SPECS=             jobs that differ: one SIZE:COMPUTE_MS:WORKERS:ITERS:START_S
#                          per job, space-separated (START_S: seconds after
#                          the common start); sets JOBS, and WORKERS to the
#                          most any job has (job j's workers are on the first
#                          hosts). A job with fewer iterations leaves early.
#   WORKLOAD=homog         the workload's name in the results (hetero, ...)
#   FRAMEWORK=psemu        the jobs: psemu (emulated, C), or gloo: real
#                          PyTorch jobs over the gloo backend
#                          (tests/bench/gloo_job.py; Debian's python3-torch,
#                          installed when missing), found by a rule of their
#                          own (the PS's command line), not a built-in one
#   GLOO_SETTLE=15         gloo: seconds from launch to the first iteration
#                          (python3 imports torch in every process first)
#   RATE_MBIT=200          the PS hosts' egress rate
#   INTERVAL=5s            roundrobin's (and TensorLights') rotation interval
#   TLSD_INTERVAL=         tlsd's alone, if other than INTERVAL (TensorLights'
#                          loop turns every INTERVAL plus its rebuild, 2.04-
#                          2.06 s at 2 s: TLSD_INTERVAL=2050ms has tlsd
#                          rotate at that pace)
#   PLACEMENTS="intense medium mild"   1, 2 and JOBS PS hosts (or NAME=HOSTS)
#   POLICIES="fifo one roundrobin tensorlights"   (and bursts)
#   REPS=3                 repetitions of the whole matrix (interleaved)
#   OUTDIR=$OUT/testbed    results (runs/PLACEMENT-POLICY-rREP/*.json)
#   DISCOVERY=rules        rules: tlsd finds the PSes itself (its built-in
#                          TensorFlow / ps-lite rules), no jobs in the config;
#                          static: tlsd gets the jobs' ports in its config
#   DISCOVERY_SETTLE=0.5   rules: seconds between the PSes' start and their
#                          workers', for tlsd to find them
#   RUN_TIMEOUT=300        seconds before a run is given up
#   TCP_CC=bbr             TCP congestion control of the jobs' connections
#   TCP_SSAI=1             net.ipv4.tcp_slow_start_after_idle in every host
#   TCP_RTO_MIN_US=        net.ipv4.tcp_rto_min_us in every host (kernels
#                          that have it, 6.11 on; empty: the kernel's, 200 ms)
#   ISOLATE=1              DISCOVERY=rules: the PSes run in a cgroup (v2) of
#                          their own, and tlsd trusts only that cgroup
#                          (discovery's trust.cgroups): PSes of other
#                          tests on the machine, which its rules would
#                          find too (each one a place in roundrobin's
#                          rotation), are left out. 0: every PS the rules
#                          find, as before (the runs' trace files count
#                          the scheduler's jobs). Without a writable
#                          cgroup2 hierarchy: said once, not isolated.
#   TLSD_EXTRA=            more lines for tlsd's configuration files, e.g.
#                          'flowlet_hold = "1s";'
#   TRACE=0                1: every TRACE_MS, each PS host's classes (tc -s
#                          class: bytes, drops, backlog, prio), its jobs'
#                          sockets (ss: bytes acked, retransmitted, queued,
#                          received, per PS port) and, under tlsd, its jobs' bands
#                          (tlsctl -j jobs) into trace-hH.txt of each run;
#                          TensorLights' loop also logs each class's queue
#                          as its rebuild dropped it. tests/bench/trace.py
#                          reads them (time and bytes per band, drops,
#                          burst times per band).
#   TRACE_MS=100
#   TL_MODE=rebuild        TensorLights' rotation: rebuild (its scripts: the
#                          root deleted and the tree built again), move:
#                          one class per priority, kept, and each rotation
#                          moves the jobs' u32 filters to their new class
#                          (the rotation without the queue drop and without
#                          the moments with no tree), or purge: as move, and
#                          each rotation also drops every class's queue
#                          (the drop without the moments with no tree)
#
# tlsd runs as a user runs it: started first (-f, -c CONFIG), then the jobs.
# Exit: 0 all runs done, 1 a run failed or timed out (the others are kept),
# 77 not root.
TOP=${TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$TOP/tests/ns/lib.sh"

JOBS=${JOBS:-4}
WORKERS=${WORKERS:-4}
SIZE=${SIZE:-1500k}
ITERS=${ITERS:-20}
COMPUTE_MS=${COMPUTE_MS:-800}
JITTER_MS=${JITTER_MS:-5}
RATE_MBIT=${RATE_MBIT:-200}
INTERVAL=${INTERVAL:-5s}
PLACEMENTS=${PLACEMENTS:-intense medium mild}
POLICIES=${POLICIES:-fifo one roundrobin tensorlights}
REPS=${REPS:-3}
OUTDIR=${OUTDIR:-$BIN/testbed}
DISCOVERY=${DISCOVERY:-rules}
DISCOVERY_SETTLE=${DISCOVERY_SETTLE:-0.5}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
TLSD_EXTRA=${TLSD_EXTRA:-}
TRACE=${TRACE:-0}
ISOLATE=${ISOLATE:-1}
TRACE_MS=${TRACE_MS:-100}
TL_MODE=${TL_MODE:-rebuild}
TCP_CC=${TCP_CC:-bbr}
TCP_SSAI=${TCP_SSAI:-1}
TCP_RTO_MIN_US=${TCP_RTO_MIN_US:-}
TLSD=${TLSD:-$BIN/tlsd}
PSEMU=${PSEMU:-$BIN/psemu}
FRAMEWORK=${FRAMEWORK:-psemu}
GLOO_SETTLE=${GLOO_SETTLE:-15}
GLOO_JOB="$TOP/tests/bench/gloo_job.py"
BASE_PORT=9000
JOB_SPECS=${JOB_SPECS:-}
WORKLOAD=${WORKLOAD:-homog}
case $WORKLOAD in '' | *[!a-z0-9_]*) fail "WORKLOAD=$WORKLOAD: want lower-case letters, digits, _" ;; esac

# Per job: its spec's field, or the common setting.
job_field() {	# job_field JOB FIELD(1 size, 2 compute, 3 workers, 4 iters, 5 start)
	if [ -z "$JOB_SPECS" ]; then
		case $2 in 1) echo "$SIZE" ;; 2) echo "$COMPUTE_MS" ;; 3) echo "$WORKERS" ;;
		4) echo "$ITERS" ;; 5) echo 0 ;; esac
		return
	fi
	echo "$JOB_SPECS" | awk -v j="$1" -v f="$2" '{ split($j, a, ":"); print a[f] }'
}
if [ -n "$JOB_SPECS" ]; then
	JOBS=$(echo "$JOB_SPECS" | awk '{ print NF }')
	WORKERS=0
	for spec in $JOB_SPECS; do
		echo "$spec" | grep -Eq '^[0-9]+[kMG]?i?:[0-9]+:[0-9]+:[0-9]+:[0-9]+(\.[0-9]+)?$' ||
			fail "JOB_SPECS: '$spec': want SIZE:COMPUTE_MS:WORKERS:ITERS:START_S, e.g. 1500k:800:4:20:0"
		w=$(echo "$spec" | cut -d: -f3)
		[ "$w" -ge 1 ] && [ "$w" -le 32 ] || fail "JOB_SPECS: '$spec': want 1 to 32 workers"
		[ "$(echo "$spec" | cut -d: -f4)" -ge 1 ] || fail "JOB_SPECS: '$spec': want at least one iteration"
		[ "$w" -gt "$WORKERS" ] && WORKERS=$w
	done
fi

case $TL_MODE in rebuild | move | purge) ;; *) fail "TL_MODE=$TL_MODE: want rebuild, move or purge" ;; esac
for v in JOBS WORKERS ITERS COMPUTE_MS JITTER_MS RATE_MBIT REPS RUN_TIMEOUT TCP_SSAI TRACE TRACE_MS ISOLATE; do
	eval "x=\$$v"
	case $x in '' | *[!0-9]*) fail "$v='$x': want a whole number" ;; esac
done
case $TCP_RTO_MIN_US in *[!0-9]*) fail "TCP_RTO_MIN_US='$TCP_RTO_MIN_US': want microseconds" ;; esac
[ "$JOBS" -ge 1 ] && [ "$JOBS" -le 32 ] || fail "JOBS=$JOBS: want 1 to 32"
[ "$WORKERS" -ge 1 ] && [ "$WORKERS" -le 32 ] || fail "WORKERS=$WORKERS: want 1 to 32"
case $DISCOVERY in static | rules) ;; *) fail "DISCOVERY=$DISCOVERY: want static or rules" ;; esac
for p in $POLICIES; do
	case $p in fifo | one | roundrobin | bursts | tensorlights) ;;
	*) fail "POLICIES: unknown policy '$p' (want fifo, one, roundrobin, bursts, tensorlights)" ;;
	esac
done
[ -x "$TLSD" ] || fail "no tlsd at $TLSD (make OUT=$OUT)"
case $FRAMEWORK in
psemu) [ -x "$PSEMU" ] || fail "no psemu at $PSEMU (make OUT=$OUT)" ;;
gloo)
	case $GLOO_SETTLE in '' | *[!0-9]*) fail "GLOO_SETTLE='$GLOO_SETTLE': want a whole number of seconds" ;; esac
	if ! /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
		sh "$TOP/tools/install-deps.sh" python3-torch || fail "FRAMEWORK=gloo needs python3-torch"
		/usr/bin/python3 -c 'import torch.distributed' ||
			fail "FRAMEWORK=gloo: python3 cannot import torch.distributed"
	fi
	;;
*) fail "FRAMEWORK=$FRAMEWORK: want psemu or gloo" ;;
esac
INTERVAL_S=$(echo "$INTERVAL" | awk '/^[0-9.]+ms$/ { print $0 / 1000; exit } /^[0-9.]+s?$/ { print $0 + 0; exit } { exit 1 }') ||
	fail "INTERVAL=$INTERVAL: want e.g. 2s or 500ms"

# placement name -> number of PS hosts
hosts_of() {
	case $1 in
	intense) echo 1 ;;
	medium) echo $((JOBS < 2 ? 1 : 2)) ;;
	mild) echo "$JOBS" ;;
	*=*) echo "${1#*=}" ;;
	*) return 1 ;;
	esac
}
NHOSTS=1
for pl in $PLACEMENTS; do
	h=$(hosts_of "$pl") || fail "PLACEMENTS: unknown placement '$pl' (intense, medium, mild or NAME=HOSTS)"
	case $h in '' | *[!0-9]*) fail "PLACEMENTS: '$pl' needs a number of hosts" ;; esac
	[ "$h" -ge 1 ] && [ "$h" -le "$JOBS" ] || fail "PLACEMENTS: '$pl': want 1 to JOBS hosts"
	[ "$h" -gt $NHOSTS ] && NHOSTS=$h
done

NS_SW="${PFX}s"
BR="${PFX}br"
hns() { echo "${PFX}h$1"; }	# PS host namespace, and its egress interface
wns() { echo "${PFX}w$1"; }	# worker host namespace and interface
nns() { echo "${PFX}n$1"; }	# the wire of PS host N: its namespace
hip() { echo "198.18.0.$((10 + $1))"; }
wip() { echo "198.18.0.$((100 + $1))"; }

# One host: its namespace, a veth to the bridge (for a PS host, through its
# wire), an address.
add_host() {	# add_host NS IP [WIRE_NS]
	ns_add "$1"
	if [ -n "${3:-}" ]; then
		ns_add "$3"
		ip link add "$1" netns "$1" type veth peer name "${1}n" netns "$3" &&
			ip link add "${1}u" netns "$3" type veth peer name "${1}b" netns "$NS_SW" &&
			in_ns "$3" ip link add wire type bridge &&
			in_ns "$3" ip link set "${1}n" master wire up &&
			in_ns "$3" ip link set "${1}u" master wire up &&
			in_ns "$3" ip link set wire up || fail "cannot create the wire of $1"
	else
		ip link add "$1" netns "$1" type veth peer name "${1}b" netns "$NS_SW" ||
			fail "cannot create the veth of $1"
	fi
	in_ns "$NS_SW" ip link set "${1}b" master "$BR" up &&
		in_ns "$1" ip addr add "$2/24" dev "$1" &&
		in_ns "$1" ip link set lo up &&
		in_ns "$1" ip link set "$1" up || fail "cannot configure $1"
	# every run starts from the same TCP state: no cached ssthresh or RTT
	in_ns "$1" sysctl -q -w net.ipv4.tcp_no_metrics_save=1 \
		net.ipv4.tcp_slow_start_after_idle="$TCP_SSAI" >/dev/null ||
		fail "cannot set the TCP sysctls in $1"
	if [ -n "$TCP_RTO_MIN_US" ]; then
		in_ns "$1" sysctl -q -w net.ipv4.tcp_rto_min_us="$TCP_RTO_MIN_US" >/dev/null ||
			fail "TCP_RTO_MIN_US=$TCP_RTO_MIN_US: cannot set net.ipv4.tcp_rto_min_us in $1"
	fi
}
# A PS host's wire: between its interface and the switch, a namespace that
# bridges the two and sends on at the link's rate (tbf), as the NIC beneath
# the host's qdisc does. Without it, while TensorLights rebuilds its tree
# (no root qdisc for ~10 ms) the host sent at the veth's speed: 1 MB on
# average, 4.6 MB at most, per rebuild at 100 Mbit/s, where the wire
# carries 0.1 MB (tests/bench/RESULTS.md). Under a tree at the link's rate
# it queues nothing: its bucket holds what HTB may send at once. Its queue:
# 1000 frames, a NIC's default (txqueuelen).
wire_qdisc() {	# wire_qdisc HOST: a fresh one, its counters at 0
	in_ns "$(nns $1)" tc qdisc del dev "$(hns $1)u" root 2>/dev/null
	in_ns "$(nns $1)" tc qdisc add dev "$(hns $1)u" root tbf rate "${RATE_MBIT}mbit" \
		burst 256kb limit 1514000
}
tb_setup() {
	ns_add "$NS_SW"
	in_ns "$NS_SW" ip link add "$BR" type bridge &&
		in_ns "$NS_SW" ip link set "$BR" up || fail "cannot create the bridge"
	h=1
	while [ $h -le "$NHOSTS" ]; do
		add_host "$(hns $h)" "$(hip $h)" "$(nns $h)"
		instance_add "$(hns $h)" "$(hns $h)"	# its tlsd's pins and lock
		wire_qdisc $h || fail "cannot set the wire of $(hns $h)"
		# One frame per skb on the bottleneck, as on a wire: then the bytes the
		# interface counts are the bytes HTB paces (with GSO, HTB charges the
		# headers of every segment but the interface counts them once, and the
		# link's bound would come out ~4% short).
		in_ns "$(hns $h)" ethtool -K "$(hns $h)" tso off gso off >/dev/null 2>&1 ||
			fail "cannot turn off TSO/GSO on $(hns $h) (ethtool missing?)"
		h=$((h + 1))
	done
	w=1
	while [ $w -le "$WORKERS" ]; do
		add_host "$(wns $w)" "$(wip $w)"
		w=$((w + 1))
	done
}

host_of_job() { echo $((($1 - 1) % $2 + 1)); }	# host_of_job JOB NHOSTS
jobs_on() {	# jobs_on HOST NHOSTS: the jobs whose PS runs there
	j=1
	while [ $j -le "$JOBS" ]; do
		[ "$(host_of_job $j "$2")" -eq "$1" ] && printf '%s ' $j
		j=$((j + 1))
	done
}
# The jobs' band changes as tlsd counts them (flowlet promotions, demotions,
# held packets), once a second from its metrics; a job's counters leave with
# it, so the last sample it is in has its total.
jobs_sampler() {	# jobs_sampler SOCKET FILE
	while :; do
		"$BIN/tlsctl" -s "$1" metrics 2>/dev/null |
			grep -E '^tlsd_job_(promotions|demotions|held_packets)_total' >>"$2"
		sleep 1
	done
}
# TRACE=1: what each band and job had, every TRACE_MS. Lines: "t UNIX",
# then tc's class statistics as it prints them, "s PORT ACKED RETRANS
# SENDQ NOTSENT RECEIVED" summed over the PS port's sockets (RECEIVED: the
# workers' gradients), and "J JSON" (tlsd:
# tlsctl -j jobs, the bands the classifier has).
trace_sampler() {	# trace_sampler HOST SOCKET|- FILE
	ival=$(awk -v m="$TRACE_MS" 'BEGIN { printf "%.3f", m / 1000 }')
	while :; do
		{
			echo "t $(date +%s.%N)"
			tc -n "$(hns $1)" -s class show dev "$(hns $1)"
			ss -N "$(hns $1)" -tinHO state established \
				"( sport >= :$((BASE_PORT + 1)) and sport <= :$((BASE_PORT + JOBS)) )" |
				awk '{ for (i = 1; i <= NF; i++) {
					if ($i ~ /^198\.18\.0\.[0-9]+:[0-9]+$/ && !p) { p = $i; sub(/.*:/, "", p) }
					if ($i ~ /^bytes_acked:/) { sub(/.*:/, "", $i); a[p] += $i }
					if ($i ~ /^bytes_retrans:/) { sub(/.*:/, "", $i); r[p] += $i }
					if ($i ~ /^notsent:/) { sub(/.*:/, "", $i); n[p] += $i }
					if ($i ~ /^bytes_received:/) { sub(/.*:/, "", $i); g[p] += $i } }
					q[p] += $2; seen[p] = 1; p = "" }
					END { for (k in seen) print "s", k, a[k] + 0, r[k] + 0, q[k] + 0, n[k] + 0, g[k] + 0 }'
			[ "$2" != - ] && printf 'J %s\n' "$("$BIN/tlsctl" -j -s "$2" jobs 2>/dev/null)"
		} >>"$3" 2>&1
		sleep "$ival"
	done
}
tx_bytes() {	# tx_bytes HOST: bytes the PS host's interface sent so far
	in_ns "$(hns $1)" cat /proc/net/dev | awk -v i="$(hns $1):" '$1 == i { print $10 }'
}
# TCP counters of a PS host's namespace: timeouts, retransmitted segments,
# spurious timeouts, then the three ways TCP detects reordering (what a band
# change that lets a flow's packets overtake its own shows as). -s: nstat's
# history file is per user, not per namespace.
TCP_COUNTERS="TcpExtTCPTimeouts TcpRetransSegs TcpExtTCPSpuriousRTOs TcpExtTCPSACKReorder TcpExtTCPTSReorder TcpExtTCPRenoReorder"
tcp_counters() {	# tcp_counters HOST: the values, in TCP_COUNTERS' order
	in_ns "$(hns $1)" nstat -asz $TCP_COUNTERS 2>/dev/null |
		awk -v names="$TCP_COUNTERS" 'BEGIN { n = split(names, k, " ") }
			{ v[$1] = $2 } END { for (i = 1; i <= n; i++) printf "%d ", v[k[i]] + 0 }'
}
# The tree as a run left it, with its counters; then the packets its root
# qdisc dropped (HTB counts its leaves' drops too; under TensorLights'
# mechanism only since its last rebuild).
tc_dump() {	# tc_dump HOST
	in_ns "$(hns $1)" tc -s qdisc show dev "$(hns $1)"
	in_ns "$(hns $1)" tc -s class show dev "$(hns $1)"
}
qdisc_drops() {	# qdisc_drops DUMPFILE
	awk '/^qdisc .* root / { r = 1; next } r && /dropped/ { for (i = 1; i < NF; i++)
		if ($i == "(dropped") { sub(",", "", $(i + 1)); print $(i + 1) + 0; exit } }' "$1"
}
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }

tlsd_conf() {	# tlsd_conf HOST POLICY JOBS...
	h=$1 pol=$2
	shift 2
	nb=$#
	# Discovery may also find PSes that are not ours (other tests on this
	# machine, with their own interfaces): with a band for each, ours keep
	# distinct priorities in their order.
	[ "$DISCOVERY" = rules ] && nb=7
	[ "$nb" -gt 7 ] && nb=7
	echo "interface = \"$(hns $h)\";"
	echo "link_rate = \"${RATE_MBIT}mbit\";"
	echo "policy = \"$pol\";"
	echo "interval = \"${TLSD_INTERVAL:-$INTERVAL}\";"
	echo "bands = $nb;"
	# several tlsd run side by side here (and maybe other tests' too)
	echo "control_socket = \"$TMPD/tlsd-h$h.sock\";"
	[ -n "$TLSD_EXTRA" ] && echo "$TLSD_EXTRA"
	if [ "$DISCOVERY" = rules ]; then
		# The built-in rules find every PS on the machine, and here every
		# emulated PS host shares one process table: each tlsd leaves the
		# other hosts' PSes alone. (On a real host nothing of this is needed.)
		echo "discovery = { enabled = true; builtin_rules = true;"
		# PyTorch has no launcher convention tlsd knows: the user's rule
		[ "$FRAMEWORK" = gloo ] &&
			echo "rules = ( { name = \"torch_gloo\"; cmdline = \"gloo_job[.]py ps \"; } );"
		[ -n "$CGROUP" ] && echo "trust = { cgroups = [ \"/${CGROUP##*/}\" ]; };"
		echo "exclude = ("
		o=1
		while [ $o -le "$NHOSTS" ]; do
			[ $o -ne "$h" ] && echo "	{ env = \"TLSD_TESTBED_HOST=$(hns $o)\"; },"
			o=$((o + 1))
		done | sed '$ s/,$//'
		echo "); };"
		return
	fi
	echo "discovery = { enabled = false; };"
	echo "jobs = ("
	for j in "$@"; do
		echo "	{ name = \"j$j\"; ports = [ $((BASE_PORT + j)) ]; },"
	done | sed '$ s/,$//'
	echo ");"
}

# TensorLights' own mechanism, as its scripts did it with tc: an HTB class
# per job with prio = the job's place, u32 filters on the PS's port, and
# every rotation deletes the root qdisc and builds the tree again. The same
# rates, bursts and quantum as tlsd's tree, so that only the mechanism differs.
tl_batch() {	# tl_batch HOST SHIFT JOBS...
	h=$1 shift_by=$2
	shift 2
	n=$# i=0
	ifc=$(hns $h)
	rate=$((RATE_MBIT * 1000000))
	floor=$((rate / 1000))
	# tlsd's buckets (tcd/shaper.c): 1 ms at the rate; the ceilings' and
	# the root's at least one skb of the interface's largest GSO size, the
	# leaves' floors 16000 B.
	gso=$(in_ns "$ifc" ip -d link show dev "$ifc" | sed -n 's/.* gso_max_size \([0-9]*\).*/\1/p')
	mb=$((${gso:-65536} + ${gso:-65536} / 16 + 1514))
	cb=$((rate / 8000 < mb ? mb : rate / 8000))
	echo "qdisc add dev $ifc root handle 1: htb default ff"
	echo "class add dev $ifc parent 1: classid 1:1 htb rate ${rate}bit ceil ${rate}bit burst ${cb}b cburst ${cb}b quantum 60000"
	echo "class add dev $ifc parent 1:1 classid 1:ff htb rate ${floor}bit ceil ${rate}bit burst 16000b cburst ${cb}b prio 7 quantum 60000"
	for j in "$@"; do
		prio=$(((i + n - shift_by % n) % n))
		[ $prio -gt 6 ] && prio=6
		echo "class add dev $ifc parent 1:1 classid 1:$((10 + i)) htb rate ${floor}bit ceil ${rate}bit burst 16000b cburst ${cb}b prio $prio quantum 60000"
		echo "filter add dev $ifc parent 1: protocol ip prio 1 u32 match ip sport $((BASE_PORT + j)) 0xffff flowid 1:$((10 + i))"
		i=$((i + 1))
	done
}
# TL_MODE=move: one class per priority (1:(10 + p), prio p), kept; a
# rotation adds the jobs' filters to their new classes under the other
# filter priority (1 or 2), then deletes the old ones: no queue is dropped,
# and a job's queued packets stay in the class they were in, as under tlsd.
tl_move_batch() {	# tl_move_batch HOST SHIFT JOBS...
	h=$1 shift_by=$2
	shift 2
	n=$# i=0
	ifc=$(hns $h)
	fp=$((shift_by % 2 + 1))
	for j in "$@"; do
		prio=$(((i + n - shift_by % n) % n))
		[ $prio -gt 6 ] && prio=6
		echo "filter add dev $ifc parent 1: protocol ip prio $fp u32 match ip sport $((BASE_PORT + j)) 0xffff flowid 1:$((10 + prio))"
		i=$((i + 1))
	done
	[ "$shift_by" -gt 0 ] && echo "filter del dev $ifc parent 1: protocol ip prio $((3 - fp))"
	# purge: a new leaf qdisc in every class throws its queue away
	if [ "$TL_MODE" = purge ] && [ "$shift_by" -gt 0 ]; then
		i=0
		while [ $i -lt $n ] && [ $i -le 6 ]; do
			echo "qdisc replace dev $ifc parent 1:$((10 + i)) handle $((100 + i)): pfifo"
			i=$((i + 1))
		done
	fi
}
tl_tree() {	# tl_tree HOST JOBS...: the first tree, rotation 0
	h=$1
	shift
	if [ "$TL_MODE" != rebuild ]; then
		tl_batch "$h" 0 "$@" | grep -v '^filter'
		tl_move_batch "$h" 0 "$@"
	else
		tl_batch "$h" 0 "$@"
	fi
}
# The rotation loop, in the background; its sleep is killed with it.
tl_rotate() {	# tl_rotate HOST JOBS...
	h=$1
	shift
	sp=
	trap '[ -n "$sp" ] && kill $sp 2>/dev/null; exit 0' TERM
	s=0
	while :; do
		sleep "$INTERVAL_S" &
		sp=$!
		wait $sp
		s=$((s + 1))
		if [ "$TL_MODE" != rebuild ]; then
			tl_move_batch "$h" $s "$@" >"$TMPD/tl$h.batch"
			t0=$(date +%s.%N)
			in_ns "$(hns $h)" tc -batch "$TMPD/tl$h.batch" || echo "move $s failed"
			t1=$(date +%s.%N)
			echo "$t1 rotation $s: filters moved in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", 1e3 * (b - a) }') ms"
			continue
		fi
		tl_batch "$h" $s "$@" >"$TMPD/tl$h.batch"
		# what the rebuild drops: each class's queue (TRACE=1)
		[ "$TRACE" = 1 ] && tc -n "$(hns $h)" -s class show dev "$(hns $h)" |
			awk -v s="$s" '$1 == "class" { c = $3 } $1 == "Sent" { d = $7; sub(",", "", d) }
				$1 == "backlog" && c != "1:1" { printf "rotation %d drops %s %s %s %d\n", s, c, $2, $3, d }'
		# what leaves while there is no tree: the interface's own rate
		b0=$(tx_bytes "$h")
		t0=$(date +%s.%N)
		in_ns "$(hns $h)" tc qdisc del dev "$(hns $h)" root
		in_ns "$(hns $h)" tc -batch "$TMPD/tl$h.batch" || echo "rebuild $s failed"
		t1=$(date +%s.%N)
		b1=$(tx_bytes "$h")
		echo "$t1 rotation $s: rebuilt in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", 1e3 * (b - a) }') ms, $((b1 - b0)) bytes sent meanwhile"
	done
}

# One run: start the schedulers, then the jobs; wait; record.
run_one() {	# run_one PLACEMENT POLICY REP
	pl=$1 pol=$2 rep=$3
	nh=$(hosts_of "$pl")
	dir="$OUTDIR/runs/$pl-$pol-r$rep"
	rm -rf "$dir"
	mkdir -p "$dir"
	run_pids=""
	sched_pids=""
	sampler_pids=""
	h=1
	while [ $h -le "$nh" ]; do
		js=$(jobs_on $h "$nh")
		if [ "$pol" = tensorlights ]; then
			# shellcheck disable=SC2086
			tl_tree $h $js >"$TMPD/tl$h.batch"
			in_ns "$(hns $h)" tc -batch "$TMPD/tl$h.batch" || fail "TensorLights tree on host $h"
			# shellcheck disable=SC2086
			tl_rotate $h $js >"$dir/sched-h$h.log" 2>&1 &
			LAST=$!
			PIDS="$PIDS $LAST"
		else
			# shellcheck disable=SC2086
			tlsd_conf $h "$pol" $js >"$dir/tlsd-h$h.conf"
			# from this namespace with -N, as on a host with containers: the
			# kernel sends process events (discovery) to the initial one only
			start_tlsd -N "$(hns $h)" -l "$dir/sched-h$h.log" "$dir/tlsd-h$h.conf"
			jobs_sampler "$TMPD/tlsd-h$h.sock" "$dir/bandchanges-h$h.txt" &
			PIDS="$PIDS $!"
			sampler_pids="$sampler_pids $!"
		fi
		if [ "$TRACE" = 1 ]; then
			sock=-
			[ "$pol" != tensorlights ] && sock=$TMPD/tlsd-h$h.sock
			trace_sampler $h "$sock" "$dir/trace-h$h.txt" &
			PIDS="$PIDS $!"
			sampler_pids="$sampler_pids $!"
		fi
		sched_pids="$sched_pids $LAST"
		wire_qdisc $h || fail "cannot reset the wire of host $h"
		eval "tx0_$h=\$(tx_bytes $h)"
		eval "tcp0_$h=\"\$(tcp_counters $h)\""
		# every TCP counter, for what the summary's few do not explain
		in_ns "$(hns $h)" nstat -asz >"$dir/nstat0-h$h.txt" 2>&1
		h=$((h + 1))
	done

	set -- $(cpu_ticks)
	cpu_t0=$1 cpu_i0=$2
	t_launch=$(date +%s.%N)
	settle=1
	[ "$FRAMEWORK" = gloo ] && settle=$GLOO_SETTLE
	start_at=$(awk -v t="$t_launch" -v s="$settle" -v n=$((JOBS * WORKERS)) 'BEGIN { printf "%.3f", t + s + n * 0.02 }')
	j=1
	while [ $j -le "$JOBS" ]; do
		h=$(host_of_job $j "$nh")
		port=$((BASE_PORT + j))
		# ps-lite's environment and TensorFlow's flag: what tlsd's rules look for.
		# Through a script, so that they appear only once the process is in its
		# host's namespace: a PS's flags on nsenter's command line would have
		# tlsd find a "PS" that is still in the wrong namespace.
		at=$(awk -v t="$start_at" -v d="$(job_field $j 5)" 'BEGIN { printf "%.3f", t + d }')
		if [ "$FRAMEWORK" = gloo ]; then
			# gloo's own connections, on the host's interface
			cat >"$dir/ps-$j.sh" <<EOS
$CG_JOIN
export TLSD_TESTBED_HOST=$(hns $h) GLOO_SOCKET_IFNAME=$(hns $h) OMP_NUM_THREADS=1
exec /usr/bin/python3 "$GLOO_JOB" ps -N "j$j" -a $(hip $h) -p $port -w "$(job_field $j 3)" \\
	-s "$(job_field $j 1)" -n "$(job_field $j 4)" --start-at "$at" -o "$dir/ps-$j.json"
EOS
		else
			cat >"$dir/ps-$j.sh" <<EOS
$CG_JOIN
export TLSD_TESTBED_HOST=$(hns $h) DMLC_ROLE=server DMLC_PS_ROOT_URI=$(hip $h) \\
	DMLC_PS_ROOT_PORT=$port DMLC_NUM_WORKER=$(job_field $j 3)
exec "$PSEMU" ps --job_name=ps --cc "$TCP_CC" -N "j$j" -p $port -w "$(job_field $j 3)" -s "$(job_field $j 1)" \\
	-n "$(job_field $j 4)" --start-at "$at" -t 60 -o "$dir/ps-$j.json"
EOS
		fi
		bg_ns "$(hns $h)" "$dir/ps-$j.log" sh "$dir/ps-$j.sh"
		run_pids="$run_pids $LAST"
		eval "ps_pid_$j=$LAST"
		j=$((j + 1))
	done
	[ "$DISCOVERY" = rules ] && sleep "$DISCOVERY_SETTLE"
	j=1
	while [ $j -le "$JOBS" ]; do
		h=$(host_of_job $j "$nh")
		w=1
		while [ $w -le "$(job_field $j 3)" ]; do
			# the same compute times for every policy: seeded by repetition, job, worker
			if [ "$FRAMEWORK" = gloo ]; then
				bg_ns "$(wns $w)" "$dir/wk-$j-$w.log" env GLOO_SOCKET_IFNAME="$(wns $w)" \
					OMP_NUM_THREADS=1 /usr/bin/python3 "$GLOO_JOB" worker -N "j$j-w$w" \
					-a "$(hip $h)" -p $((BASE_PORT + j)) -w "$(job_field $j 3)" -r $w \
					-s "$(job_field $j 1)" -n "$(job_field $j 4)" -C "$(job_field $j 2)" \
					-j "$JITTER_MS" --seed $((rep * 10000 + j * 100 + w)) -o "$dir/wk-$j-$w.json"
				run_pids="$run_pids $LAST"
				w=$((w + 1))
				continue
			fi
			bg_ns "$(wns $w)" "$dir/wk-$j-$w.log" env DMLC_ROLE=worker \
				"$PSEMU" worker --job_name=worker --cc "$TCP_CC" -N "j$j-w$w" -c "$(hip $h):$((BASE_PORT + j))" \
				-C "$(job_field $j 2)" -j "$JITTER_MS" --seed $((rep * 10000 + j * 100 + w)) \
				-t 60 -o "$dir/wk-$j-$w.json"
			run_pids="$run_pids $LAST"
			w=$((w + 1))
		done
		j=$((j + 1))
	done

	ok=true
	deadline=$(($(date +%s) + RUN_TIMEOUT))
	for p in $run_pids; do
		while ours "$p" && [ "$(date +%s)" -lt "$deadline" ]; do
			sleep 0.2
		done
		if ours "$p"; then
			ok=false
			echo "  run $pl/$pol/r$rep: timed out after $RUN_TIMEOUT s" >&2
			break
		fi
	done
	set -- $(cpu_ticks)
	cpu=$(awk -v t=$(($1 - cpu_t0)) -v i=$(($2 - cpu_i0)) 'BEGIN { printf "%.1f", t ? 100 * (t - i) / t : 0 }')
	for p in $run_pids; do
		ours "$p" && kill "$p" 2>/dev/null
	done
	for p in $run_pids; do
		wait "$p" 2>/dev/null || ok=false
	done
	# the byte counts once the last packet has left
	hosts_json=""
	h=1
	while [ $h -le "$nh" ]; do
		eval "tx0=\$tx0_$h"
		tx1=$(tx_bytes $h)
		eval "tcp0=\$tcp0_$h"
		tcp=$(echo "$tcp0 $(tcp_counters $h)" | awk '{ n = NF / 2; for (i = 1; i <= 3; i++) printf "%s%d", (i > 1 ? ", " : ""), $(i + n) - $i }')
		tc_dump $h >"$dir/tc-h$h.txt" 2>&1
		in_ns "$(hns $h)" nstat -asz >"$dir/nstat1-h$h.txt" 2>&1
		# tlsd's status at the end (policy bursts: its order's counts)
		[ -S "$TMPD/tlsd-h$h.sock" ] &&
			"$BIN/tlsctl" -j -s "$TMPD/tlsd-h$h.sock" status >"$dir/status-h$h.json" 2>/dev/null
		drops=$(qdisc_drops "$dir/tc-h$h.txt")
		in_ns "$(nns $h)" tc -s qdisc show dev "$(hns $h)u" >"$dir/wire-h$h.txt" 2>&1
		wdrops=$(qdisc_drops "$dir/wire-h$h.txt")
		reord=$(echo "$tcp0 $(tcp_counters $h)" | awk '{ n = NF / 2; for (i = 4; i <= n; i++) s += $(i + n) - $i; print s + 0 }')
		hosts_json="$hosts_json${hosts_json:+, }{ \"host\": $h, \"iface\": \"$(hns $h)\", \"tx_bytes\": $((tx1 - tx0)), \"jobs\": [ $(jobs_on $h "$nh" | sed 's/ $//; s/ /, /g') ], \"tcp_timeouts_retrans_spurious\": [ $tcp ], \"tcp_reorder\": $reord, \"qdisc_drops\": ${drops:-0}, \"wire_drops\": ${wdrops:-0} }"
		h=$((h + 1))
	done
	for p in $sampler_pids; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for p in $sched_pids; do
		kill -TERM "$p" 2>/dev/null
		wait_pid "$p" 10 || ok=false
	done
	# with discovery, a run counts only if tlsd found every PS by itself
	if [ "$DISCOVERY" = rules ] && [ "$pol" != tensorlights ]; then
		j=1
		while [ $j -le "$JOBS" ]; do
			eval "p=\$ps_pid_$j"
			h=$(host_of_job $j "$nh")
			if ! grep -q "PS pid $p ([^)]*) found by rule" "$dir/sched-h$h.log"; then
				echo "  run $pl/$pol/r$rep: tlsd on host $h did not discover job $j's PS (pid $p)" >&2
				ok=false
			fi
			j=$((j + 1))
		done
	fi
	if [ "$pol" = tensorlights ]; then
		h=1
		while [ $h -le "$nh" ]; do
			in_ns "$(hns $h)" tc qdisc del dev "$(hns $h)" root 2>/dev/null
			h=$((h + 1))
		done
	fi
	cat >"$dir/run.json" <<EOJ
{ "placement": "$pl", "policy": "$pol", "rep": $rep, "ps_hosts": $nh,
  "rate_bps": $((RATE_MBIT * 1000000)), "cpu_busy_pct": $cpu, "ok": $ok,
  "hosts": [ $hosts_json ] }
EOJ
	$ok || echo "  run $pl/$pol/r$rep FAILED: see $dir" >&2
	$ok
}

# a fresh matrix: runs of an earlier one must not be analysed with these
rm -rf "$OUTDIR/runs"
mkdir -p "$OUTDIR/runs" || fail "cannot create $OUTDIR"
cat >"$OUTDIR/meta.json" <<EOJ
{ "jobs": $JOBS, "workers": $WORKERS, "size": "$SIZE", "iterations": $ITERS,
  "compute_ms": $COMPUTE_MS, "jitter_ms": $JITTER_MS, "rate_bps": $((RATE_MBIT * 1000000)),
  "interval": "$INTERVAL", "interval_s": $INTERVAL_S, "tlsd_interval": "${TLSD_INTERVAL:-$INTERVAL}", "placements": "$PLACEMENTS",
  "policies": "$POLICIES", "reps": $REPS, "discovery": "$DISCOVERY",
  "kernel": "$(uname -r)", "cpus": $(nproc),
  "tcp_congestion_control": "$TCP_CC", "tcp_slow_start_after_idle": $TCP_SSAI, "tcp_rto_min_us": "${TCP_RTO_MIN_US:-kernel}",
  "workload": "$WORKLOAD", "framework": "$FRAMEWORK", "job_specs": [ $(j=1; while [ $j -le "$JOBS" ]; do
	[ $j -gt 1 ] && printf ', '
	printf '{ "job": %d, "size": "%s", "compute_ms": %s, "workers": %s, "iterations": %s, "start_s": %s }' \
		$j "$(job_field $j 1)" "$(job_field $j 2)" "$(job_field $j 3)" "$(job_field $j 4)" "$(job_field $j 5)"
	j=$((j + 1))
done) ] }
EOJ
# ISOLATE: our PSes' own cgroup (v2), removed at exit once they are gone
CGROUP= CG_JOIN=
if [ "$DISCOVERY" = rules ] && [ "$ISOLATE" = 1 ]; then
	cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	if [ -n "$cg2" ] && [ "$(sed -n 's/^0::\(.*\)/\1/p' /proc/self/cgroup)" = / ] &&
		mkdir "$cg2/${PFX}tb" 2>/dev/null; then
		CGROUP=$cg2/${PFX}tb
		CG_JOIN="echo \$\$ >'$CGROUP/cgroup.procs' || exit 1"	# first line of each PS's script
		trap 'ns_cleanup; rmdir "$CGROUP" 2>/dev/null' EXIT
	else
		info "ISOLATE: no cgroup of our own (no writable cgroup2 hierarchy, or not at its root): tlsd may find other tests' PSes too"
	fi
fi
tb_setup
failed=0
rep=1
while [ $rep -le "$REPS" ]; do
	for pl in $PLACEMENTS; do
		for pol in $POLICIES; do
			t0=$(date +%s.%N)
			run_one "$pl" "$pol" $rep || failed=$((failed + 1))
			info "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%5.1f s", b - a }')  rep $rep  $pl  $pol"
		done
	done
	rep=$((rep + 1))
done
[ $failed -eq 0 ] || { echo "testbed: $failed run(s) failed" >&2; exit 1; }
exit 0

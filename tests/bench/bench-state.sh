#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The daemon's state file (/run/tlsd/IF@NETNS.state) of a tlsd with JOBS
# static jobs (default 64, named job-01...): its size over the kernel's
# default root qdisc and over a tbf (whose request, with its rate table, is
# over 2 kB), and what is pinned: the maps the classifier program uses and
# those in its pin directory (no tls_saved_qdisc, no tls_job_names since pin
# layout 3). Run as root: sh tests/bench/bench-state.sh
# Ends with `name: value unit` lines.
. "$(dirname "$0")/../ns/lib.sh"

JOBS=${JOBS:-64}
command -v bpftool >/dev/null 2>&1 || skip "bpftool is needed to list the maps"
ns_setup
{
	cat <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
control_socket = "$TMPD/tlsd.sock";
discovery = { enabled = false; };
replace_qdisc = true;
jobs = (
EOC
	i=1
	while [ $i -le "$JOBS" ]; do
		printf '  { name = "job-%02d"; ports = [ %d ]; }%s\n' $i $((9000 + i)) \
			"$([ $i -lt "$JOBS" ] && echo ,)"
		i=$((i + 1))
	done
	echo ");"
} >"$TMPD/tlsd.conf"

for root in default tbf; do
	[ $root = tbf ] && { in_ps tc qdisc add dev "$IF_PS" root handle 7: tbf rate 10mbit \
		burst 32kb latency 50ms || fail "tbf"; }
	start_tlsd "$TMPD/tlsd.conf"
	[ -f "$STATE" ] || fail "no state file $STATE"
	q=$(sed 's/.*"saved_qdisc":"\([0-9a-f]*\)".*/\1/' "$STATE")
	echo "state_file_bytes_${JOBS}_jobs_root_$root: $(wc -c <"$STATE") bytes (request $((${#q} / 2)) bytes)"
	ids=$(bpftool -j prog show pinned "$PIN/tls_classify" |
		sed 's/.*"map_ids":\[\([0-9,]*\)\].*/\1/' | tr ',' ' ')
	maps=$(for m in $ids; do bpftool -j map show id "$m" |
		sed 's/.*"name":"\([^"]*\)".*/\1/'; done | sort | tr '\n' ' ')
	stop_tlsd
done
start_tlsd "$TMPD/tlsd.conf"
info "pin directory: $(ls "$PIN" | tr '\n' ' ')"
info "maps of the classifier program: $maps"
n=$(ls "$PIN" | grep -c 'tls_saved_qdisc\|tls_job_names')
echo "pinned_daemon_state_maps: $n maps"
stop_tlsd

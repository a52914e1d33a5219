#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# tlsd on kernels without its optional features: each one refused in turn by
# tests/fault/kernel_refuse.c (LD_PRELOAD: the bpf() calls, syscalls and
# sockets are refused as a kernel without the feature refuses them), with a
# discovered PS that accepts a worker's connection and dials four of its own
# (IPv4 and IPv6). Each run must show: tlsd starts; one log line names the
# feature, what is lost and what takes over; `tlsctl status` lists it as
# missing with the kernel's errno; the PS's bytes are in its job's HTB class
# and counters (exactly: class = counter, payload <= counter <= payload plus
# headers); its five flows are listed and add up to the counter; SIGTERM
# restores the interface. Then the same with nothing refused.
. "$(dirname "$0")/lib.sh"

TLSD="$BIN/tlsd"
CTL="$BIN/tlsctl"
SHIM="$BIN/libtls-refuse.so"
[ -f "$SHIM" ] || fail "$SHIM not built"
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the JSON checks"
BYTES=4000000	# per connection
FEATURES=${FEATURES:-"sk_iter cgroup_sock mmapable map_batch tcp_sock coarse_clock pidfd_getfd proc_cn proc_cn_filter rtnl_watch bursts"}
ns_setup

SOCK="$TMPD/tlsd.sock"
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "400mbit";
policy = "one";
bands = 2;
control_socket = "$SOCK";
discovery = { rescan = "1s"; };
EOC
ctl() { "$CTL" -s "$SOCK" "$@"; }
job_bytes() {	# the discovered job's byte counter
	ctl -j jobs | python3 -c 'import json, sys; print(sum(x["bytes"] for x in json.load(sys.stdin)["jobs"] if x["origin"] == "discovered"))'
}
# json EXPR: evaluate a python expression on the JSON in $TMPD/j (as j)
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" "$TMPD/j"; }

bg_wk "$TMPD/sink" "$EMU" sink -l $WK4:7001 -l "[$WK6]:7001"
wait_line "$TMPD/sink" 5 "listening" || sleep 0.5

# run FEATURE ("" for none): one tlsd, one PS job, every check above
run() {
	f=$1
	# ASan's runtime must come first in a sanitized binary; tlsd is not one
	start_tlsd -N "$NS_PS" -t 15 LD_PRELOAD="$SHIM" TLS_REFUSE="$f" "$TMPD/tlsd.conf"
	if [ -n "$f" ]; then
		grep -q "kernel feature $f missing (.*instead: " "$TMPD/tlsd.log" ||
			fail "[$f] no log line for the missing feature: $(cat "$TMPD/tlsd.log")"
		n=$(grep -c "kernel feature .* missing" "$TMPD/tlsd.log")
		[ "$n" -eq 1 ] || fail "[$f] $n missing-feature lines, expected 1"
	else
		! grep -q "kernel feature .* missing" "$TMPD/tlsd.log" ||
			fail "a feature missing with nothing refused: $(cat "$TMPD/tlsd.log")"
	fi
	ctl -j status >"$TMPD/j" || fail "[$f] tlsctl status failed"
	st=$(json "[x['state'] + '/' + str(x.get('errno', 0)) for x in j['features'] if x['name'] == '$f'] or ['none']")
	req=$(json "','.join(x['name'] for x in j['features'] if x['required'] and x['state'] != 'in use')")
	[ -z "$req" ] || fail "[$f] required features not in use: $req"
	if [ -n "$f" ]; then
		case "$st" in
		"['missing/"[1-9]*) ;;
		*) fail "[$f] tlsctl status says $st for $f, expected missing with an errno" ;;
		esac
	fi

	# The PS: found by discovery (TensorFlow flags), listening before it is
	# found; it dials its own connections only when told.
	bg_ps "$TMPD/ps" "$EMU" ps -l $PS4:9000 -c $WK4:7001 -c "[$WK6]:7001" -n 2 -b $BYTES -w \
		-- --job_name=ps
	PS_PID=$LAST
	wait_line "$TMPD/tlsd.log" 10 "PS pid $PS_PID of job .*: listening on 9000" ||
		fail "[$f] PS not found: $(tail -5 "$TMPD/tlsd.log")"
	bg_wk "$TMPD/pull" "$EMU" pull -c $PS4:9000
	PULL_PID=$LAST
	sleep 0.3
	kill -USR1 "$PS_PID"
	wait_pid "$PULL_PID" 30 || fail "[$f] worker pull did not finish"
	i=0
	# all sent: the job's counter has the payload, or (cgroup_sock) stops growing
	last=-1
	while :; do
		now=$(job_bytes)
		[ "$now" -ge $((5 * BYTES)) ] && break
		[ "$f" = cgroup_sock ] && [ "$now" -eq "$last" ] && break
		[ $i -lt 60 ] || fail "[$f] the job's counter stopped at $now B"
		last=$now
		sleep 0.5
		i=$((i + 1))
	done
	sleep 0.3
	ctl -j jobs >"$TMPD/j"
	# this PS's job: another test's PS on the machine may be found too
	mine="[x for x in j['jobs'] if x['origin'] == 'discovered' and $PS_PID in x['pids']]"
	job=$(json "$mine[0]['id']")
	band=$(json "$mine[0]['band']")
	jb=$(json "$mine[0]['bytes']")
	cb=$(class_bytes "715d:1$band")
	# flows while the sockets live (the iterator, or the slots' mirror)
	cls -j flows >"$TMPD/j"; cp "$TMPD/j" "$TMPD/flows"
	nfl=$(json "len({(x['local'], x['worker']) for x in j if x['job'] == $job})")
	fsum=$(json "sum(x['bytes'] for x in j if x['job'] == $job)")
	kill "$PS_PID"
	wait_pid "$PS_PID" 10 || fail "[$f] PS did not exit"
	payload=$((5 * BYTES))
	info "[${f:-none}] job $job band $band: payload $payload B, counted $jb B, class $cb B, $nfl flows adding up to $fsum B"
	# Without the sock_create hook the four connections the PS dials are
	# tagged by the discovery poll that first sees them (100 ms): the bytes
	# they sent before are the default class's. The accepted one is exact.
	# So as few as that one may be the job's, bytes and flows alike (a CI
	# run under load: the dialed four done before the poll, 1 flow listed).
	least=$payload
	least_flows=5
	[ "$f" = cgroup_sock ] && least=$BYTES && least_flows=1
	[ "$jb" -ge "$least" ] && [ "$jb" -le $((payload * 106 / 100 + 100000)) ] ||
		fail "[$f] job counted $jb B for a payload of $payload B (at least $least expected)"
	within "$cb" "$jb" 1 || fail "[$f] HTB class 715d:1$band got $cb B, the job counted $jb B"
	[ "$nfl" -ge "$least_flows" ] && [ "$nfl" -le 5 ] ||
		fail "[$f] $nfl flows of job $job listed, expected $least_flows to 5"
	[ "$fsum" -eq "$jb" ] || fail "[$f] the flows add up to $fsum B, the job counted $jb B: $(cat "$TMPD/flows")"

	stop_tlsd
	in_ps tc qdisc show dev "$IF_PS" | grep -q "htb" && fail "[$f] HTB left after SIGTERM"
	[ -d "$PIN" ] && fail "[$f] pins left after SIGTERM"
	return 0
}

# tlsd --probe: each refused feature missing, with the kernel's errno name
"$TLSD" --probe --summary >"$TMPD/probe" || fail "tlsd --probe: a required feature missing: $(cat "$TMPD/probe")"
info "probe: $(cat "$TMPD/probe")"
for f in $FEATURES; do
	env LD_PRELOAD="$SHIM" TLS_REFUSE="$f" "$TLSD" --probe --summary >"$TMPD/probe" 2>/dev/null
	grep -q "missing: .*\b$f(E[A-Z0-9]*)" "$TMPD/probe" ||
		fail "tlsd --probe with $f refused: $(cat "$TMPD/probe")"
	sed 's/;.*//' "$TMPD/probe" | grep -qw "$f" && fail "tlsd --probe lists $f as found while refused"
done

for f in $FEATURES; do
	run "$f"
done
run ""
echo "PASS: tlsd with each optional kernel feature refused in turn: started, said so once, listed it in status, classified and counted exactly"

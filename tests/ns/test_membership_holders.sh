#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Membership with two holders of one endpoint (tcd/membership.c): a static
# job of the file and a discovered PS.
#  - a PS of the file's job listens on the job's port (both hold *:9107);
#    a reload drops the job from the file (discovery keeps it, as
#    discovered): the PS's endpoint stays in the map, in the job's id;
#  - a PS of another job listens on a port of the file's job "held" (its
#    claim is shadowed, said); a reload drops "held": the PS's job takes
#    the port at once;
#  - the file names the discovered job again, with port 9108: the job has
#    it at once (not at the next reload);
#  - a PS listening on one address (an exact key, 198.18.0.1:9401) and a
#    reload that gives port 9401 to a job of the file: the exact key is
#    shadowed (out of the map: the classifier prefers exact keys, and it
#    would take the file's job's traffic to that address); a reload that
#    drops the port again gives it back; the same when the file held
#    the port (9402) before the PS listened;
#  - kill -9 and a restart whose file drops every job: the takeover
#    deletes *:9301, which nobody holds now, and keeps what the PSes hold;
#  - kill -9, the endpoint map filled to its size with stale entries (on
#    198.18.0.0/16), and a restart whose file has a new port: the claim the
#    full map refuses makes the takeover delete what nobody holds first,
#    and the new port is in the map.
. "$(dirname "$0")/lib.sh"

command -v bpftool >/dev/null 2>&1 || skip "bpftool is needed to read the endpoint map"
ns_setup

conf() {	# conf JOBS...: the file with these static jobs
	{
		cat <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
policy = "fifo";
bands = 7;
control_socket = "$TMPD/tlsd.sock";
discovery = {
	rescan = "1s";
	rules = ( { name = "trainer"; cmdline = " --myrole=ps-([a-z0-9]+)( |$)"; job_key = "group:1"; } );
};
EOC
		printf 'jobs = ('
		sep=""
		for j in "$@"; do
			printf '%s { name = "%s"; ports = [ %s ]; }' "$sep" "${j%%=*}" "${j#*=}"
			sep=","
		done
		printf ' );\n'
	} >"$TMPD/tlsd.conf"
}

# ep_job FAMILY PORT [IPV4]: the job of the endpoint (any address, or that
# one) in the map, or none
ep_job() {
	bpftool -j map dump pinned "$PIN/tls_endpoints" >"$TMPD/eps.json" 2>/dev/null
	python3 - "$TMPD/eps.json" "$1" "$2" "${3:-}" <<'EOP'
import json, sys
fam, port = {"4": 2, "6": 10}[sys.argv[2]], int(sys.argv[3])
want = [int(x) for x in sys.argv[4].split(".")] if sys.argv[4] else []
def num(v):
    if isinstance(v, list):
        return int.from_bytes(bytes(int(b, 16) for b in v), "little")
    return v
found = "none"
for e in json.load(open(sys.argv[1])):
    k, v = e.get("formatted", e)["key"], e.get("formatted", e)["value"]
    if isinstance(k, dict):
        f, p, a = k["family"], k["port"], k["addr"]
        p = int.from_bytes(int(p).to_bytes(2, "little"), "big")
        a = [int(x, 16) if isinstance(x, str) else x for x in a]
    else:
        b = [int(x, 16) for x in k]
        f, p, a = b[0], b[2] << 8 | b[3], b[4:]
    if f == fam and p == port and (list(a[:4]) == want and not any(a[4:]) if want else not any(a)):
        found = str(num(v))
print(found)
EOP
}
id_of() {	# the id tlsd gave job $1
	sed -n "s/.*job $1 (id \([0-9]*\)) added.*/\1/p" "$TMPD/tlsd.log" | tail -1
}
expect_ep() {	# expect_ep FAMILY PORT JOB WHEN [IPV4]
	i=0
	while [ "$(ep_job "$1" "$2" "${5:-}")" != "$3" ] && [ $i -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	got=$(ep_job "$1" "$2" "${5:-}")
	info "$4: ${5:-*}:$2 (IPv$1) in job $got"
	[ "$got" = "$3" ] || fail "$4: ${5:-*}:$2 (IPv$1) is in job $got, expected $3"
}

reload() {	# reload WHAT: SIGHUP, and wait for the next "reloaded"
	n0=$(grep -c "configuration reloaded" "$TMPD/tlsd.log")
	kill -HUP "$TLSD_PID"
	i=0
	while [ "$(grep -c "configuration reloaded" "$TMPD/tlsd.log")" -le "$n0" ] && [ $i -lt 50 ]; do
		sleep 0.1; i=$((i + 1))
	done
	[ $i -lt 50 ] || fail "$1: reload failed: $(tail -5 "$TMPD/tlsd.log")"
}

# job keys of this run's: tlsd sees the whole host, other runs' PSes too
B=trainer:b$PFX
X=trainer:x$PFX
conf "$B=9107" held=9201 gone=9301
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf" -v
ID_BERT=$(id_of "$B")
ID_HELD=$(id_of held)
ID_GONE=$(id_of gone)
bg_ps "$TMPD/bert" "$EMU" ps -l 0.0.0.0:9107 -- "--myrole=ps-b$PFX"
BERT_PID=$LAST
bg_ps "$TMPD/x" "$EMU" ps -l 0.0.0.0:9201 -- "--myrole=ps-x$PFX"
wait_line "$TMPD/tlsd.log" 5 "PS pid $BERT_PID .*job $B (id $ID_BERT)" ||
	fail "the PS of the file's job trainer:bert not joined to it"
wait_line "$TMPD/tlsd.log" 5 "job $X (id [0-9]*) added" || fail "PS of trainer:x not found"
ID_X=$(id_of "$X")
wait_line "$TMPD/tlsd.log" 5 "of job $B: listening on 9107" ||
	fail "the PS's port 9107 not seen"
wait_line "$TMPD/tlsd.log" 5 "of job $X: endpoint .*:9201 is on a port job id $ID_HELD holds" ||
	fail "the PS's claim on the file's port 9201 not said: $(grep 9201 "$TMPD/tlsd.log")"
expect_ep 4 9107 "$ID_BERT" "the file's job and its PS"
expect_ep 4 9201 "$ID_HELD" "the file's port, a PS of another job claiming it"
expect_ep 4 9301 "$ID_GONE" "the file's job alone"

conf gone=9301
kill -HUP "$TLSD_PID"
wait_line "$TMPD/tlsd.log" 5 "configuration reloaded" || fail "reload failed: $(tail -5 "$TMPD/tlsd.log")"
grep -q "job $B (id $ID_BERT): no longer in the file, kept as discovered" "$TMPD/tlsd.log" ||
	fail "trainer:bert not kept as discovered"
expect_ep 4 9107 "$ID_BERT" "the file dropped trainer:bert, its PS holds the port"
expect_ep 6 9107 none "the file dropped trainer:bert, no PS holds IPv6"
expect_ep 4 9201 "$ID_X" "the file dropped job held, the PS of trainer:x claimed its port"

# The file names the discovered job again, with another port: the file's
# port at once, the PS's kept.
conf "$B=9108" gone=9301
reload "second reload"
expect_ep 4 9108 "$ID_BERT" "the file names the discovered job again, its port"
expect_ep 4 9107 "$ID_BERT" "the file names the discovered job again, the PS's port"

# A PS's exact endpoint, and the file taking its port on every address.
Y=trainer:y$PFX
bg_ps "$TMPD/y" "$EMU" ps -l $PS4:9401 -- "--myrole=ps-y$PFX"
wait_line "$TMPD/tlsd.log" 5 "job $Y (id [0-9]*) added" || fail "PS of trainer:y not found"
ID_Y=$(id_of "$Y")
expect_ep 4 9401 "$ID_Y" "a PS on one address" $PS4
conf "$B=9108" gone=9301 port=9401
reload "the file takes port 9401"
ID_PORT=$(id_of port)
expect_ep 4 9401 "$ID_PORT" "the file takes port 9401 on every address"
expect_ep 4 9401 none "the file takes port 9401: the PS's exact key shadowed" $PS4
conf "$B=9108" gone=9301
reload "the file drops port 9401"
expect_ep 4 9401 none "the file drops port 9401"
expect_ep 4 9401 "$ID_Y" "the file drops port 9401: the PS's exact key back" $PS4
# The other way round: the file holds port 9402 before a PS listens on one
# address with it (as at every start: the file claims first). Its exact key
# is kept shadowed, and comes back when the file drops the port.
conf "$B=9108" gone=9301 port=9402
reload "the file takes port 9402"
Z=trainer:z$PFX
bg_ps "$TMPD/z" "$EMU" ps -l $PS4:9402 -- "--myrole=ps-z$PFX"
wait_line "$TMPD/tlsd.log" 5 "job $Z (id [0-9]*) added" || fail "PS of trainer:z not found"
ID_Z=$(id_of "$Z")
wait_line "$TMPD/tlsd.log" 5 "of job $Z: endpoint .*:9402 is on a port job id $(id_of port) holds" ||
	fail "the PS's shadowed claim on 9402 not said"
expect_ep 4 9402 none "the file holds port 9402 first: the PS's exact key shadowed" $PS4
conf "$B=9108" gone=9301
reload "the file drops port 9402"
expect_ep 4 9402 "$ID_Z" "the file drops port 9402: the PS's exact key, never in the map, now in" $PS4

stop_tlsd -KILL
conf
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf" -v
grep -q "took over" "$TMPD/tlsd.log" || fail "restart did not take over"
grep "takeover: of the previous run's" "$TMPD/tlsd.log" | head -1 | sed 's/^/  /'
[ "$(id_of "$B")" = "$ID_BERT" ] || fail "trainer:bert changed id across the takeover"
expect_ep 4 9107 "$ID_BERT" "after the takeover, trainer:bert's PS"
expect_ep 4 9201 "$(id_of "$X")" "after the takeover, trainer:x's PS"
expect_ep 4 9301 none "after the takeover, the dropped job gone"
expect_ep 4 9108 none "after the takeover, the dropped port gone"
kill -0 "$TLSD_PID" || fail "tlsd died"

# A takeover over an endpoint map full of the crashed run's entries
stop_tlsd -KILL
max=$(bpftool -j map show pinned "$PIN/tls_endpoints" | python3 -c 'import json, sys; print(json.load(sys.stdin)["max_entries"])')
have=$(bpftool -j map dump pinned "$PIN/tls_endpoints" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
python3 - "$PIN/tls_endpoints" $((max - have)) >"$TMPD/fill.batch" <<'EOP'
import sys
for i in range(int(sys.argv[2])):
    print(f"map update pinned {sys.argv[1]} key hex 02 06 {i >> 8 & 255:02x} {i & 255:02x} "
          f"c6 12 {i >> 8 & 255:02x} {i & 255:02x}" + " 00" * 12 + " value hex 01 00 00 00")
EOP
bpftool batch file "$TMPD/fill.batch" >/dev/null || fail "cannot fill the endpoint map"
full=$(bpftool -j map dump pinned "$PIN/tls_endpoints" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
[ "$full" -eq "$max" ] || fail "the endpoint map has $full entries, not its $max"
conf fresh=9501
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf" -v
grep -q "takeover: the endpoint map is full of the previous run's entries" "$TMPD/tlsd.log" ||
	fail "no early reconciliation said: $(grep -i "takeover\|endpoint map" "$TMPD/tlsd.log" | tail -5)"
expect_ep 4 9501 "$(id_of fresh)" "a takeover over a full endpoint map ($full of $max), the file's new port"
expect_ep 4 9107 "$ID_BERT" "a takeover over a full endpoint map, trainer:bert's PS"
left=$(bpftool -j map dump pinned "$PIN/tls_endpoints" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
info "after the takeover over a full map: $left entries left"
[ "$left" -lt 100 ] || fail "the stale entries stayed: $left in the map"
stop_tlsd
echo "PASS: an endpoint a static job and a PS both hold stays while one does; a PS's claim on a static port takes effect when the file lets go; a takeover deletes what nobody holds, also from a full map"

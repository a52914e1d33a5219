#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Issue 14, item 2: what one user can make tlsd do is bounded. User nobody,
# trusted by the configuration (discovery.trust.users), with
# discovery.limits of 8 PSes and 3 jobs:
#  1. a process of nobody's with the environment of root's job does not
#     join it ("its job is another user's");
#     (and a root PS whose rule marker lies past 300 KB of environment is
#     found: the environment is read whole, not its first 256 KiB);
#  2. 300 processes of nobody's, each its own job by a built-in rule:
#     3 jobs scheduled, the rest refused, said once; a PS root starts
#     afterwards is scheduled at once;
#  3. one process of nobody's that holds 5,000 TCP sockets it never
#     connects costs tlsd under 5% of a core (it was 65%: every socket was
#     asked again through pidfd_getfd at each 100 ms poll);
#  4. endpoints_per_user = 6: a PS of nobody's listening on 10 addresses
#     has 6 of them in the classifier's endpoint map, said once; a PS of
#     another user (uid 65001) has all its 4 (discovery's half of the map
#     is every user's: two users at the default limits filled it); a
#     second PS of nobody's gets none until the first exits, then its 4;
#  5. a PS root started that then drops to uid 65001 and execs is judged
#     again as 65001's, under 65001's share of endpoints.
. "$(dirname "$0")/lib.sh"

CTL="$BIN/tlsctl"
NOBODY=$(id -u nobody 2>/dev/null) || skip "no user nobody"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not installed"
command -v python3 >/dev/null || skip "python3 not installed"
ns_setup
cat >"$TMPD/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "1gbit";
policy = "roundrobin";
control_socket = "$TMPD/tlsd.sock";
discovery = { rescan = "1s"; trust = { users = [ "root", "nobody", "65001" ]; };
	limits = { ps_per_user = 8; jobs_per_user = 3; endpoints_per_user = 6; }; };
EOC
start_tlsd -N "$NS_PS" "$TMPD/tlsd.conf"
# a command, not a function: bg_host's $! is then the program's own pid
AS_NOBODY="setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups"
found() { grep -c "found by rule dmlc: .*$1" "$TMPD/tlsd.log"; }

# 1. root's job, and nobody's process with its environment
bg_ps "$TMPD/rootps" env DMLC_ROLE=server DMLC_PS_ROOT_URI=$PS4 DMLC_PS_ROOT_PORT=9600 \
	"$EMU" ps -l $PS4:9600 -t 60
ROOT_PS=$LAST
wait_line "$TMPD/tlsd.log" 5 "PS pid $ROOT_PS .*found by rule dmlc" || fail "root's PS not found"
bg_host "$TMPD/squat" $AS_NOBODY env DMLC_ROLE=server DMLC_PS_ROOT_URI=$PS4 \
	DMLC_PS_ROOT_PORT=9600 sleep 60
SQUAT=$LAST
wait_line "$TMPD/tlsd.log" 5 "PS pid $SQUAT (uid $NOBODY, job dmlc:$PS4:9600) not scheduled: its job is another user's (root's)" ||
	fail "nobody's process joined root's job: $(tail -5 "$TMPD/tlsd.log")"
kill "$SQUAT"

# (item 7) a rule's marker past 256 KiB of environment is still read: three
# 100 KB variables first (one string may be at most 128 KiB)
big=$(head -c 100000 /dev/zero | tr '\0' x)
bg_ps "$TMPD/bigenv" env BIG1="$big" BIG2="$big" BIG3="$big" DMLC_ROLE=server \
	DMLC_PS_ROOT_URI=$PS4 DMLC_PS_ROOT_PORT=9601 sleep 30
BIGENV=$LAST
wait_line "$TMPD/tlsd.log" 5 "PS pid $BIGENV .*found by rule dmlc" ||
	fail "a PS whose marker is past 300 KB of environment was not found"
kill "$BIGENV"

# 2. the flood
bg_nobody_flood 300 198.18.9.9 20
sleep 2.5 # two rescans over all of them
n=$(found "198.18.9.9")
[ "$n" -eq 3 ] || fail "$n of nobody's jobs scheduled, the limit is 3: $(grep -v "listening on" "$TMPD/tlsd.log" | tail -12)"
r=$(grep -c "uid $NOBODY, job dmlc:198.18.9.9.*not scheduled: its user has discovery.limits.jobs_per_user jobs" "$TMPD/tlsd.log")
[ "$r" -eq 1 ] || fail "the refusal was said $r times, not once (a minute)"
info "300 processes of nobody's: $n jobs scheduled, the refusal said $r time"
t0=$(date +%s%N)
bg_ps "$TMPD/rootps2" env DMLC_ROLE=server DMLC_PS_ROOT_URI=$PS4 DMLC_PS_ROOT_PORT=9700 \
	"$EMU" ps -l $PS4:9700 -t 60
ROOT_PS2=$LAST
wait_line "$TMPD/tlsd.log" 5 "PS pid $ROOT_PS2 .*found by rule dmlc" ||
	fail "root's PS was not scheduled under the flood: $(tail -3 "$TMPD/tlsd.log")"
info "root's PS under the flood found within $((($(date +%s%N) - t0) / 1000000)) ms (log polled every 100 ms)"
kill "$FLOOD"
wait_pid "$FLOOD" 5 || fail "the flood did not end"

cpu() { awk '{ print $14 + $15 }' "/proc/$TLSD_PID/stat"; }
sleep 2 # the flood's exits handled
c0=$(cpu)
sleep 5
base=$(((($(cpu) - c0) * 1000) / (5 * $(getconf CLK_TCK))))
info "tlsd before: $((base / 10)).$((base % 10))% of a core over 5 s"

# 3. 5,000 sockets never connected, in one trusted PS (the script as an
# argument: nobody cannot read the test's directory)
cat >"$TMPD/socks.py" <<'EOP'
import os, resource, socket, time
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
socks = [socket.socket() for _ in range(5000)]
print("ready", len(socks), flush=True)
time.sleep(60)
EOP
bg_host "$TMPD/socks" $AS_NOBODY env DMLC_ROLE=server DMLC_PS_ROOT_URI=198.18.9.8 \
	DMLC_PS_ROOT_PORT=1 python3 -c "$(cat "$TMPD/socks.py")"
SOCKS=$LAST
wait_line "$TMPD/socks" 10 "ready 5000" || fail "the socket holder did not start: $(cat "$TMPD/socks")"
wait_line "$TMPD/tlsd.log" 5 "PS pid $SOCKS .*found by rule dmlc" || fail "the socket holder was not found"
sleep 1 # its first polls
c0=$(cpu)
sleep 5
c1=$(cpu)
pm=$(((c1 - c0) * 1000 / (5 * $(getconf CLK_TCK))))
pct=$((pm / 10))
info "tlsd with a PS of 5000 unconnected sockets: $pct.$((pm % 10))% of a core over 5 s"
# against the same 5 s without it (statistics, rescans, this busy machine):
# under 4 points more (the listing is held to 1% of a core; the socket
# kinds are asked once, when first seen; the old polling took 35 points)
[ "$pct" -lt 5 ] && [ $((pm - base)) -lt 40 ] ||
	fail "tlsd took $pct.$((pm % 10))% of a core for one process's unconnected sockets"
"$CTL" -s "$TMPD/tlsd.sock" status >/dev/null || fail "tlsctl status failed"
kill "$SOCKS"

# 4. endpoints per user: listeners on 127.0.0.1 (one endpoint each)
# listen.py BASE N [UID GO CODE]: with UID, a root launcher that holds its
# ports until the file GO exists, then drops to UID and execs CODE (this
# script) on the same ports (part 5)
cat >"$TMPD/listen.py" <<'EOP'
import os, socket, sys, time
base, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.socket()
    s.bind(("127.0.0.1", base + i))
    s.listen()
    socks.append(s)
if len(sys.argv) > 3:
    uid, go, code = int(sys.argv[3]), sys.argv[4], sys.argv[5]
    print("ready-root", n, flush=True)
    while not os.path.exists(go):
        time.sleep(0.05)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    # the sockets close at the exec; the PATH search skips a python3 the
    # user cannot run
    os.execvp("python3", ["python3", "-c", code, str(base), str(n)])
print("ready", n, flush=True)
time.sleep(60)
EOP
# eps_in BASE N: how many of 127.0.0.1:BASE..BASE+N-1 the endpoint map has
eps_in() {
	bpftool -j map dump pinned "$PIN/tls_endpoints" >"$TMPD/eps.json" 2>/dev/null
	python3 - "$TMPD/eps.json" "$1" "$2" <<'EOP'
import json, sys
base, n = int(sys.argv[2]), int(sys.argv[3])
got = 0
for e in json.load(open(sys.argv[1])):
    k = e.get("formatted", e)["key"]
    if isinstance(k, dict):
        f, p = k["family"], int.from_bytes(int(k["port"]).to_bytes(2, "little"), "big")
        a = [int(x, 16) if isinstance(x, str) else x for x in k["addr"]]
    else:
        b = [int(x, 16) for x in k]
        f, p, a = b[0], b[2] << 8 | b[3], b[4:]
    got += f == 2 and a[:4] == [127, 0, 0, 1] and base <= p < base + n
print(got)
EOP
}
listener() {	# listener LOG UID BASE N KEYPORT: a PS of UID's on N ports
	bg_host "$1" setpriv --reuid="$2" --regid="$2" --clear-groups env DMLC_ROLE=server \
		DMLC_PS_ROOT_URI=127.0.0.1 DMLC_PS_ROOT_PORT="$5" python3 -c "$(cat "$TMPD/listen.py")" "$3" "$4"
	wait_line "$1" 10 "ready $4" || fail "the listener of uid $2 did not start: $(cat "$1")"
	wait_line "$TMPD/tlsd.log" 5 "PS pid $LAST .*found by rule dmlc" ||
		fail "the listener of uid $2 was not found: $(tail -3 "$TMPD/tlsd.log")"
}
listener "$TMPD/l1" "$NOBODY" 12000 10 12000
L1=$LAST
listener "$TMPD/l2" 65001 12100 4 12100
L2=$LAST
# both PSes polled (up to 5 s), then a poll more: nothing changes after
i=0
while { [ "$(eps_in 12100 4)" != 4 ] || [ "$(eps_in 12000 10)" -lt 6 ]; } && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.5
n1=$(eps_in 12000 10)
n2=$(eps_in 12100 4)
said=$(grep -c "PS pid $L1 (uid $NOBODY) of job .*discovery.limits.endpoints_per_user (6)" "$TMPD/tlsd.log")
info "endpoints per user (6): nobody's PS on 10 addresses has $n1 in the map (said $said time), uid 65001's on 4 has $n2"
[ "$n1" -eq 6 ] || fail "nobody's PS has $n1 endpoints in the map, the limit is 6"
[ "$n2" -eq 4 ] || fail "uid 65001's PS has $n2 of its 4 endpoints"
[ "$said" -eq 1 ] || fail "the endpoint limit was said $said times, not once"
# A second PS of nobody's gets none while the first holds the share; when
# the first exits, the second asks again and gets its 4 (its sockets do not
# change: before, nothing made it ask again).
listener "$TMPD/l3" "$NOBODY" 12200 4 12200
L3=$LAST
sleep 1
n3=$(eps_in 12200 4)
[ "$n3" -eq 0 ] || fail "nobody's second PS has $n3 endpoints while the first holds the share"
kill "$L1"
i=0
while [ "$(eps_in 12200 4)" != 4 ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
n3=$(eps_in 12200 4)
info "the first PS gone: nobody's second PS has $n3 of its 4 endpoints (after $((i * 100)) ms)"
[ "$n3" -eq 4 ] || fail "nobody's second PS has $n3 of its 4 endpoints after the first exited"

# 5. A PS root starts that then becomes uid 65001's (a launcher that drops
# to the user and execs it, as setpriv, su or runuser do; held here until
# tlsd has judged it as root's): 65001's from its exec on, under 65001's
# share, of which its other PS holds 4 of 6. Kept as root's (as it was),
# all 5 endpoints stayed in the map.
bg_host "$TMPD/l4" env DMLC_ROLE=server DMLC_PS_ROOT_URI=127.0.0.1 DMLC_PS_ROOT_PORT=12300 \
	python3 -c "$(cat "$TMPD/listen.py")" 12300 5 65001 "$TMPD/go" "$(cat "$TMPD/listen.py")"
L4=$LAST
wait_line "$TMPD/l4" 10 "ready-root 5" || fail "the root launcher did not start: $(cat "$TMPD/l4")"
wait_line "$TMPD/tlsd.log" 5 "PS pid $L4 (.*uid 0) found by rule dmlc" ||
	fail "the root launcher's PS was not found as root's: $(tail -3 "$TMPD/tlsd.log")"
i=0
while [ "$(eps_in 12300 5)" != 5 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(eps_in 12300 5)" = 5 ] || fail "the root PS has $(eps_in 12300 5) of its 5 endpoints"
touch "$TMPD/go"
wait_line "$TMPD/l4" 10 "ready 5" || fail "the launcher did not exec as uid 65001: $(cat "$TMPD/l4")"
wait_line "$TMPD/tlsd.log" 5 "PS pid $L4 (.*uid 65001) found by rule dmlc" ||
	fail "the PS was not judged again as uid 65001's: $(grep "pid $L4" "$TMPD/tlsd.log" | tail -3)"
sleep 1.5	# its sockets polled (backing off from 100 ms), then a poll more
n4=$(eps_in 12300 5)
info "a root-started PS become uid 65001's: $n4 of its 5 endpoints in the map (65001's other PS holds 4 of 6): $(grep -o "pid $L4 .*changed its user[^;]*" "$TMPD/tlsd.log" | head -1)"
[ "$n4" -eq 2 ] || fail "the PS become uid 65001's has $n4 endpoints, its user's share leaves it 2"
kill "$L2" "$L3" "$L4"
echo "PASS: one user's processes are bounded: no foreign job joined, 3 jobs of 300, a root PS at once, 5000 sockets under 5% of a core, endpoints per user, a PS that changed its user"

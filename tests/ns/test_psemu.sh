#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# psemu over a real veth between two namespaces: a PS and its workers
# complete an emulated job (IPv4, and IPv6 with one worker), their JSON
# results parse and hold what the job must have produced; the PS carries what
# tlsd's discovery rules look for; a worker killed mid-job fails the PS with
# a clear error; bad usage exits 2. Functional only: no timing is asserted.
. "$(dirname "$0")/lib.sh"

PSEMU="$BIN/psemu"
[ -x "$PSEMU" ] || fail "no psemu at $PSEMU"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed (tools/install-deps.sh)"
ns_setup

ITERS=5
SIZE=200000
WORKERS=3

# 1. Bad usage: exit 2 and a message naming what is wrong.
"$PSEMU" ps --size 0 >/dev/null 2>"$TMPD/err"
[ $? -eq 2 ] && grep -q "bad size '0'" "$TMPD/err" || fail "bad --size: $(cat "$TMPD/err")"
"$PSEMU" worker >/dev/null 2>"$TMPD/err"
[ $? -eq 2 ] && grep -q "needs --connect" "$TMPD/err" || fail "worker without PS: $(cat "$TMPD/err")"
"$PSEMU" ps --job_name=worker >/dev/null 2>"$TMPD/err"
[ $? -eq 2 ] && grep -q "does not match" "$TMPD/err" || fail "--job_name mismatch: $(cat "$TMPD/err")"
"$PSEMU" worker -c $PS4:9100 --workers 3 >/dev/null 2>"$TMPD/err"
[ $? -eq 2 ] && grep -q "for psemu ps only" "$TMPD/err" || fail "ps option to a worker: $(cat "$TMPD/err")"
"$PSEMU" --help | grep -q "psemu worker" || fail "--help"

# 2. A job over IPv4 and one over IPv6, side by side. The first PS takes its
# port from DMLC_PS_ROOT_PORT, as a ps-lite server does.
bg_ps "$TMPD/ps4.log" env DMLC_ROLE=server DMLC_PS_ROOT_PORT=9100 \
	"$PSEMU" ps --job_name=ps -N v4 -w $WORKERS -s $SIZE -n $ITERS -t 20 -o "$TMPD/ps4.json"
PS4_PID=$LAST
bg_ps "$TMPD/ps6.log" "$PSEMU" ps -N v6 -b $PS6 -p 9106 -w 1 -s 100k -n 3 -t 20 \
	-o "$TMPD/ps6.json"
PS6_PID=$LAST
wait_line "$TMPD/ps4.log" 5 "listening on 0.0.0.0:9100" || fail "PS v4 did not listen: $(cat "$TMPD/ps4.log")"
wait_line "$TMPD/ps6.log" 5 "listening on \[$PS6\]:9106" || fail "PS v6 did not listen: $(cat "$TMPD/ps6.log")"

# What tlsd's rules match: ps-lite's environment, TensorFlow's flag.
tr '\0' '\n' <"/proc/$PS4_PID/environ" | grep -qx "DMLC_ROLE=server" ||
	fail "the PS's environment lacks DMLC_ROLE=server"
tr '\0' '\n' <"/proc/$PS4_PID/cmdline" | grep -qx -- "--job_name=ps" ||
	fail "the PS's command line lacks --job_name=ps"

wpids=""
w=1
while [ $w -le $WORKERS ]; do
	bg_wk "$TMPD/wk$w.log" "$PSEMU" worker --job_name=worker -N "w$w" -c $PS4:9100 -C 20 \
		-j 5 --seed $w -t 20 -o "$TMPD/wk$w.json"
	wpids="$wpids $LAST"
	w=$((w + 1))
done
bg_wk "$TMPD/wk6.log" "$PSEMU" worker -c "[$PS6]:9106" -C 10 -t 20 -o "$TMPD/wk6.json"
wpids="$wpids $LAST"
for p in $PS4_PID $PS6_PID $wpids; do
	wait_pid "$p" 30 || fail "psemu (pid $p) did not finish within 30 s"
	wait "$p" || fail "psemu (pid $p) exited $?: $(cat "$TMPD"/*.log)"
done

python3 - "$TMPD" $ITERS $SIZE $WORKERS <<'EOF' || fail "results do not hold up (above)"
import json, os, sys
d, iters, size, nw = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
HDR = 24
errors = []
def check(cond, what):
    if not cond:
        errors.append(what)
def load(name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)
def job(ps_name, wk_names, iters, size, nw):
    ps = load(ps_name)
    check(ps["role"] == "ps" and ps["complete"] and "error" not in ps, f"{ps_name}: not complete")
    check(ps["iterations"] == iters and ps["workers"] == nw and ps["size_bytes"] == size,
          f"{ps_name}: shape {ps['iterations']}/{ps['workers']}/{ps['size_bytes']}")
    # N+1 models to every worker, N gradients from every worker
    check(ps["bytes_sent"] == (iters + 1) * nw * (size + HDR), f"{ps_name}: bytes_sent {ps['bytes_sent']}")
    check(ps["bytes_received"] == iters * nw * (size + HDR), f"{ps_name}: bytes_received {ps['bytes_received']}")
    check(len(ps["iteration_s"]) == iters and all(x > 0 for x in ps["iteration_s"]),
          f"{ps_name}: iteration_s {ps['iteration_s']}")
    check(ps["jct_s"] > 0 and ps["end_unix"] > ps["start_unix"] > 1e9, f"{ps_name}: times")
    check(len(ps["worker_peers"]) == nw, f"{ps_name}: worker_peers")
    rt = ps.get("retrans_segs")
    check(isinstance(rt, list) and len(rt) == nw and
          all(isinstance(x, int) and x >= 0 for x in rt), f"{ps_name}: retrans_segs {rt}")
    for n in wk_names:
        w = load(n)
        check(w["role"] == "worker" and w["complete"] and "error" not in w, f"{n}: not complete")
        check(w["iterations"] == iters and w["size_bytes"] == size, f"{n}: learned the wrong shape")
        check(w["bytes_received"] == (iters + 1) * (size + HDR), f"{n}: bytes_received {w['bytes_received']}")
        check(w["bytes_sent"] == iters * (size + HDR), f"{n}: bytes_sent {w['bytes_sent']}")
        b, c = w["barrier_wait_s"], w["compute_s"]
        check(len(b) == iters and all(x >= 0 for x in b), f"{n}: barrier_wait_s {b}")
        check(len(c) == iters and all(x >= 0 for x in c), f"{n}: compute_s {c}")
        # sleeping is part of the job, so the job cannot be shorter than the sleeps
        check(w["jct_s"] >= sum(c), f"{n}: jct {w['jct_s']} < compute {sum(c)}")
        check(w["ps"].endswith(f":{ps['port']}"), f"{n}: dialled {w['ps']}, not port {ps['port']}")
job("ps4.json", [f"wk{i}.json" for i in range(1, nw + 1)], iters, size, nw)
job("ps6.json", ["wk6.json"], 3, 100000, 1)
# the jitter is there: seeded workers draw different compute times
c = [load(f"wk{i}.json")["compute_s"] for i in range(1, nw + 1)]
check(len({tuple(x) for x in c}) == nw, "workers with different seeds computed alike")
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
EOF
info "v4 job: $WORKERS workers x $ITERS iterations of $SIZE bytes; v6 job: 1 worker; results check out"

# 3. A worker killed mid-job: the PS reports which and exits 1, so does the
# other worker (its PS went away); both still write their results.
bg_ps "$TMPD/psk.log" "$PSEMU" ps -p 9101 -w 2 -s 100k -n 3 -t 20 -o "$TMPD/psk.json"
PSK=$LAST
wait_line "$TMPD/psk.log" 5 "listening" || fail "PS did not listen"
bg_wk "$TMPD/wka.log" "$PSEMU" worker -c $PS4:9101 -C 10 -t 20 -o "$TMPD/wka.json"
WKA=$LAST
bg_wk "$TMPD/wkb.log" "$PSEMU" worker -c $PS4:9101 -C 600000 -t 20 -o "$TMPD/wkb.json"
WKB=$LAST
wait_line "$TMPD/psk.log" 5 "worker 2 of 2" || fail "the workers did not connect"
sleep 0.3
kill -KILL "$WKB"
for p in $PSK $WKA; do
	wait_pid "$p" 20 || fail "psemu (pid $p) kept running after a worker died"
done
wait "$PSK"
[ $? -eq 1 ] || fail "the PS did not exit 1 when a worker died"
wait "$WKA"
[ $? -eq 1 ] || fail "the surviving worker did not exit 1 when its PS failed"
grep -q "closed the connection in iteration" "$TMPD/psk.log" || fail "PS error: $(cat "$TMPD/psk.log")"
python3 -c "
import json, sys
p = json.load(open('$TMPD/psk.json')); w = json.load(open('$TMPD/wka.json'))
sys.exit(0 if not p['complete'] and 'closed the connection' in p['error'] and not w['complete'] and w['error'] else 1)" ||
	fail "the failed job's results do not say so"
info "a worker killed mid-job: PS and the other worker exit 1 with the reason in their results"
echo "PASS"

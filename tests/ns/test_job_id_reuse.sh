#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A PS's socket that outlives its job (handed to a process that stays after
# the PS exited, so nobody untags it) must not count as the job that gets
# the freed job id next. The id is freed as tlsd frees it (`free`: a new
# generation for the id), then given to another job: the old socket's
# traffic leaves the id's class and counters at once. The same socket tagged
# again afterwards (a PS of the new job) counts as the new job.
. "$(dirname "$0")/lib.sh"

ns_setup
htb_setup 100mbit 2
cls_attach
cls job 1 0 || fail "job 1"

member_transfer 1 8

# The job is gone, its socket not: the id is freed and given to a new job.
cls free 1 || fail "free 1"
cls job 1 1 || fail "job 1 again, for the next job"
left_job 1 "after the id went to another job"

# Tagged again (now a PS of the new job): counted as it, at once.
cls process "$PS_PID" 1 >/dev/null || fail "cannot add the PS to the new job"
sleep 0.3
d1=$(job_stat 1 bytes)
sleep 1
e1=$(job_stat 1 bytes)
info "tagged again for the new job: +$((e1 - d1)) B in 1 s"
[ $((e1 - d1)) -gt 1000000 ] || fail "a socket tagged for the reused id's job is not counted as it"
echo "PASS: a socket of a freed job id does not count as the id's next job; tagged again, it does"

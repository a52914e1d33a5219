#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A PS that leaves its job mid-transfer (`unprocess`): its live connections
# leave the job's class at once, even when an endpoint of another job shares
# its port (so the classifier consults its flow cache for that port), and
# they are counted as unclassified from then on.
. "$(dirname "$0")/lib.sh"

ns_setup
htb_setup 100mbit 2
cls_attach
cls job 1 0 || fail "job 1"
cls job 2 1 || fail "job 2"
# Another PS's endpoint on the same port, at an address nobody sends from.
cls endpoint 198.18.0.99:9000 2 || fail "endpoint"

member_transfer 1 6
cls unprocess "$PS_PID" >"$TMPD/leave" || fail "unprocess failed"
info "$(cat "$TMPD/leave")"
grep -q "2 sockets untagged" "$TMPD/leave" || fail "expected the listener and the accepted socket untagged"
left_job 1 "after leaving"
echo "PASS: a PS that leaves its job leaves its class at once"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Inside a guest kernel (tests/kernels/init has chrooted into the host's
# filesystem, read-only): what tlsd finds on this kernel, then the BPF tier
# and the tlsd lifecycle test through the same runner as `make check`.
# Lines for the host start with "TLSK ".
cd "$1" || exit 1
OUT=${OUT:-build}

# One line: the features found, then "; missing: name(ERRNO) ...".
# Exit 1 means a required feature is missing: counted as a failure.
# For reading the log: what the emulated machine gives the tests.
echo "guest: $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)," \
	"$(grep -c 'hres_active.*: 1' /proc/timer_list) CPUs with high-resolution timers"

features=$("$OUT/tlsd" --probe --summary 2>&1)
probe_rc=$?
echo "TLSK features: $features"

# Under emulation a start that the verifier makes work hard (6.1 gives up
# on policy bursts's code after a million instructions, then loads the
# rest) takes a minute, not a second.
TLSD_START_S=180 TLS_TIERS="bpf ns" TLS_NS_TESTS="tests/ns/test_tlsd_lifecycle.sh" \
	sh tests/run-tests.sh >/tmp/guest-tests.log 2>&1
cat /tmp/guest-tests.log
line=$(tail -n 1 /tmp/guest-tests.log)
if [ $probe_rc -ne 0 ]; then
	# "N passed, N failed, ..." with the probe's failure added.
	f=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p')
	line=$(echo "$line" | sed "s/ ${f:-0} failed/ $((${f:-0} + 1)) failed/")
fi
echo "TLSK result: $line"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The Debian packages end to end, on the real system: dpkg-buildpackage
# from a fresh clone of HEAD (timed), lintian without errors, what lands in
# tlsd and tlsd-testtools (no emulator in tlsd), then an install of tlsd,
# the installed tlsd scheduling a test namespace's veth over a root qdisc of
# the user's own (timed SIGTERM restore), a reinstall keeping an edited
# configuration, tlsd-testtools' programs running, a crashed tlsd, and
# `dpkg --remove` (its prerm's tlsd --cleanup) and `--purge`: the
# interface's qdisc exactly as before, no pins, /etc/tlsd gone only on
# purge. The package is purged on any exit; a system that already has tlsd
# installed is skipped, not touched.
#
# dpkg runs in the test's network namespace (nsenter --net: the file system
# is the system's), so that the prerm's `tlsd --cleanup`, which cleans the
# instances of its own namespace, cleans the test's interface.
. "$(dirname "$0")/../ns/lib.sh"

for t in git dpkg-buildpackage dh lintian; do
	command -v $t >/dev/null 2>&1 || skip "$t not installed (make check-pkg installs it)"
done
for p in tlsd tlsd-testtools; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = not-installed ] ||
		skip "package $p is on this system ($st): not replaced or removed by a test"
done
git -C "$TOP" rev-parse HEAD >/dev/null 2>&1 || skip "$TOP is not a git checkout"

# Not in TMPD (/tmp): the build's tree is large and /tmp may be small.
W=$(mktemp -d "/var/tmp/$PFX.XXXXXX")
INSTALLED=""
# pkg_dpkg LOG ARGS...: dpkg in the PS namespace (in this one once it is
# gone), waiting out another dpkg or apt-get (its lock) for up to a minute
pkg_dpkg() {
	log=$1
	shift
	i=0
	while :; do
		if [ -e "/run/netns/$NS_PS" ]; then
			in_ps dpkg "$@" >"$log" 2>&1 && return 0
		else
			dpkg "$@" >"$log" 2>&1 && return 0
		fi
		grep -q "lock" "$log" && [ $i -lt 30 ] || return 1
		sleep 2
		i=$((i + 1))
	done
}
pkg_cleanup() {
	# the processes, pins and namespaces first: a purge must not find a
	# tlsd of ours still running
	ns_cleanup
	[ -n "$INSTALLED" ] && pkg_dpkg /dev/null --purge tlsd tlsd-testtools
	rm -rf "$W"
}
trap pkg_cleanup EXIT

ns_setup
head=$(git -C "$TOP" rev-parse --short HEAD)
git clone -q "$TOP" "$W/src" && git -C "$W/src" checkout -q --detach "$head" ||
	fail "cannot clone $TOP"
info "building commit $head (uncommitted changes are not in it)"
t0=$(date +%s)
(cd "$W/src" && dpkg-buildpackage -us -uc -b) >"$W/build.log" 2>&1 ||
	fail "dpkg-buildpackage failed: $(tail -20 "$W/build.log")"
info "dpkg-buildpackage: $(($(date +%s) - t0)) s ($(grep -c "^  CC " "$W/build.log") objects compiled)"
DEB=$(ls "$W"/tlsd_*.deb)
TT=$(ls "$W"/tlsd-testtools_*.deb)

lintian "$W"/tlsd_*.changes >"$W/lintian.txt" 2>&1
grep '^[EW]: ' "$W/lintian.txt" | sed 's/^/  lintian /'
info "lintian: $(grep -c '^E: ' "$W/lintian.txt") errors, $(grep -c '^W: ' "$W/lintian.txt") warnings"
! grep -q '^E: ' "$W/lintian.txt" || fail "lintian found errors"

# What each package holds.
dpkg-deb -c "$DEB" | awk '{ print $6 }' >"$W/tlsd.list"
dpkg-deb -c "$TT" | awk '{ print $6 }' >"$W/tt.list"
for f in ./usr/sbin/tlsd ./usr/bin/tlsctl ./usr/sbin/tls-classifier ./etc/tlsd/tlsd.conf \
	./usr/share/man/man8/tlsd.8.gz ./usr/share/man/man8/tlsctl.8.gz \
	./usr/share/man/man8/tls-classifier.8.gz; do
	grep -qx "$f" "$W/tlsd.list" || fail "tlsd lacks $f"
done
grep -q '/systemd/system/tlsd.service$' "$W/tlsd.list" || fail "tlsd lacks the systemd unit"
! grep -E '/(psemu|tls-emu|bench-[a-z]+)$' "$W/tlsd.list" || fail "test tools in the tlsd package"
for f in ./usr/bin/psemu ./usr/bin/tls-emu ./usr/libexec/tlsd/bench-classifier; do
	grep -qx "$f" "$W/tt.list" || fail "tlsd-testtools lacks $f"
done
info "tlsd: $(grep -vc '/$' "$W/tlsd.list") files, tlsd-testtools: $(grep -vc '/$' "$W/tt.list"); no test tool in tlsd"

# A root qdisc of the user's own, which every way out must put back.
in_ps tc qdisc add dev "$IF_PS" root handle 5: pfifo limit 777 || fail "pfifo"
in_ps tc qdisc show dev "$IF_PS" >"$W/qdisc.before"

INSTALLED=1
pkg_dpkg "$W/install.log" -i "$DEB" || fail "dpkg -i failed: $(cat "$W/install.log")"
for f in /usr/sbin/tlsd /usr/bin/tlsctl /etc/tlsd/tlsd.conf; do
	[ -e "$f" ] || fail "$f not installed"
done
[ -L /etc/systemd/system/multi-user.target.wants/tlsd.service ] || fail "tlsd.service not enabled"
if [ -d /run/systemd/system ]; then
	! systemctl -q is-active tlsd.service || fail "tlsd.service started on installation"
fi
info "installed: tlsd.service enabled, not started"

# An upgrade (here the same version again) keeps the admin's edits.
echo '# edited by the admin' >>/etc/tlsd/tlsd.conf
pkg_dpkg "$W/reinstall.log" -i "$DEB" || fail "reinstall failed: $(cat "$W/reinstall.log")"
tail -1 /etc/tlsd/tlsd.conf | grep -q 'edited by the admin' || fail "reinstall replaced the edited tlsd.conf"
info "reinstalled: the edited tlsd.conf kept"

pkg_dpkg "$W/tt.log" -i "$TT" || fail "dpkg -i tlsd-testtools failed: $(cat "$W/tt.log")"
expect 0 "Usage" psemu --help
expect 0 "usage" tls-emu --help
expect 2 "usage" /usr/libexec/tlsd/bench-stats --help
pkg_dpkg "$W/tt.log" --purge tlsd-testtools || fail "purging tlsd-testtools failed: $(cat "$W/tt.log")"
[ ! -e /usr/bin/psemu ] && [ ! -e /usr/libexec/tlsd ] || fail "tlsd-testtools left files after its purge"

cat >"$W/tlsd.conf" <<EOC
interface = "$IF_PS";
link_rate = "100mbit";
policy = "roundrobin";
interval = "1s";
control_socket = "$TMPD/tlsd.sock";
discovery = { enabled = false; };
replace_qdisc = true;
EOC
expect 0 "" /usr/sbin/tlsd --check-config -c "$W/tlsd.conf"
start_tlsd() {
	: >"$TMPD/tlsd.log"
	bg_ps "$TMPD/tlsd.log" /usr/sbin/tlsd -f -v -c "$W/tlsd.conf"
	TLSD_PID=$LAST
	wait_line "$TMPD/tlsd.log" 10 "^ready" || fail "tlsd did not start: $(cat "$TMPD/tlsd.log")"
	in_ps tc qdisc show dev "$IF_PS" | grep -q "qdisc htb" || fail "no HTB root"
	expect 0 "" /usr/bin/tlsctl -s "$TMPD/tlsd.sock" status
}

# SIGTERM: the restore a container's grace period must cover.
start_tlsd
t0=$(date +%s%N)
kill -TERM "$TLSD_PID"
wait_pid "$TLSD_PID" 10 || fail "tlsd did not exit on SIGTERM"
info "SIGTERM to exit (interface restored): $((($(date +%s%N) - t0) / 1000000)) ms"
in_ps tc qdisc show dev "$IF_PS" | cmp -s - "$W/qdisc.before" || fail "SIGTERM did not restore the qdisc"

# A tlsd that died: the prerm's --cleanup must restore the interface.
start_tlsd
kill -KILL "$TLSD_PID"
wait_pid "$TLSD_PID" 5 || fail "tlsd did not die"
[ -d "$PIN" ] || fail "no pins after the crash ($PIN)"
[ -f "$STATE" ] || fail "no state file after the crash ($STATE)"
pkg_dpkg "$W/remove.log" --remove tlsd || fail "dpkg --remove failed: $(cat "$W/remove.log")"
in_ps tc qdisc show dev "$IF_PS" >"$W/qdisc.after"
cmp -s "$W/qdisc.before" "$W/qdisc.after" ||
	fail "qdisc not restored by dpkg --remove: before: $(cat "$W/qdisc.before") after: $(cat "$W/qdisc.after") prerm: $(cat "$W/remove.log")"
[ ! -e "$PIN" ] || fail "pins left after dpkg --remove: $(ls "$PIN")"
[ ! -e "$STATE" ] || fail "state file left after dpkg --remove: $STATE"
in_ps tc filter show dev "$IF_PS" egress | grep -q . && fail "a tc filter left after dpkg --remove"
[ ! -e /usr/sbin/tlsd ] || fail "/usr/sbin/tlsd still there"
[ -e /etc/tlsd/tlsd.conf ] || fail "dpkg --remove removed the configuration"
info "prerm: $(grep -m1 'removed tlsd from' "$W/remove.log")"
info "after a crash and dpkg --remove: $(cat "$W/qdisc.after") (as before), no pins, no state file, config kept"

pkg_dpkg "$W/purge.log" --purge tlsd || fail "dpkg --purge failed: $(cat "$W/purge.log")"
INSTALLED=""
[ ! -e /etc/tlsd ] || fail "/etc/tlsd left after purge"
[ ! -L /etc/systemd/system/multi-user.target.wants/tlsd.service ] || fail "enable link left after purge"
echo "PASS: built, lintian without errors, installed, scheduled, removed and purged; interface as before"

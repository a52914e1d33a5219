#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The shipped systemd units:
#  a. systemd-analyze security --offline=true: exposure at most 4.0 for
#     tlsd.service and tlsd@.service, whose hardening is the same;
#  b. for real, under systemd itself: PID 1 here is not systemd, so the
#     test boots one (tests/ns/systemd_boot.sh) in pid, mount and cgroup
#     namespaces of its own, in the test's network namespace, with the
#     units as `make install` writes them, and starts tlsd@IF for two
#     interfaces: both run with exactly the unit's capabilities, no new
#     privileges and the system call filter, each on its own socket though
#     their files name the same one, and discover a PS of user nobody (its
#     /proc files and sockets are what CAP_SYS_PTRACE and
#     CAP_DAC_READ_SEARCH are for);
#  c. systemctl reload: a bad file fails the reload and tlsd keeps running;
#     journald files the refusal at level err (tlsd's "<3>" prefix), not
#     as text with "<3>" in it;
#  d. systemctl stop restores both interfaces and removes the pins.
. "$(dirname "$0")/lib.sh"

UNIT="$TOP/config/tlsd.service"
TMPL="$TOP/config/tlsd@.service"
SYSTEMD=/lib/systemd/systemd
command -v systemd-analyze >/dev/null 2>&1 ||
	skip "systemd-analyze not installed (Debian package systemd)"

# a. The exposure figure, and the two units' hardening the same.
for u in "$UNIT" "$TMPL"; do
	out=$(systemd-analyze security --offline=true "$u" 2>&1)
	e=$(echo "$out" | sed -n 's/^.*Overall exposure level for .*: \([0-9.]*\) .*$/\1/p')
	[ -n "$e" ] || fail "systemd-analyze security gave no exposure for $u: $out"
	info "systemd-analyze security --offline=true ${u##*/}: exposure $e"
	awk -v e="$e" 'BEGIN { exit !(e <= 4.0) }' ||
		fail "${u##*/}: exposure $e is above 4.0: $(echo "$out" | grep '✗')"
done
hardening() { sed -n '/^# --- Hardening/,/^\[Install\]/p' "$1"; }
[ -n "$(hardening "$UNIT")" ] && [ "$(hardening "$UNIT")" = "$(hardening "$TMPL")" ] ||
	fail "tlsd.service and tlsd@.service differ in their hardening"

# b. systemd itself.
[ -x "$SYSTEMD" ] || skip "no $SYSTEMD to run the units under"
command -v unshare >/dev/null 2>&1 && command -v capsh >/dev/null 2>&1 ||
	skip "unshare and capsh are needed"
CGH=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CGH" ] || skip "no cgroup v2 hierarchy mounted: systemd needs one to run units"
CG="$CGH/$PFX"
ns_setup
IF2="${PFX}q"
instance_add "$IF2"
ip link add "$IF2" netns "$NS_PS" type veth peer name "${PFX}x" netns "$NS_WK" &&
	in_ps ip link set "$IF2" up && in_wk ip link set "${PFX}x" up ||
	fail "cannot create the second veth pair"

R="$TMPD/root"
mkdir -p "$R/sbin" "$R/etc" "$R/units/tlsd@.service.d" "$R/units/tlsd.service.d"
cp "$BIN/tlsd" "$BIN/tlsctl" "$EMU" "$R/sbin/"
# tlsctl run inside the test's namespaces: its copy there, since their /tmp
# is their own (a checkout under /tmp is not seen from in there)
SD_CTL=/run/tlsd-test/sbin/tlsctl
# What make install does to the units (SBINDIR, SYSCONFDIR), into the
# container's /run/tlsd-test.
for u in "$UNIT" "$TMPL"; do
	sed 's|/usr/local/sbin|/run/tlsd-test/sbin|; s|/etc/tlsd|/run/tlsd-test/etc|' "$u" \
		>"$R/units/${u##*/}"
done
# The manager runs what the test names and no more: not sysinit.target and
# the host's units it pulls in (tmpfiles, sysctl, udev). [Unit] only: the
# [Service] part is the shipped one.
printf '[Unit]\nDefaultDependencies=no\n' >"$R/units/tlsd@.service.d/test.conf"
cp "$R/units/tlsd@.service.d/test.conf" "$R/units/tlsd.service.d/"
printf '[Unit]\nDescription=test_systemd_unit\nWants=systemd-journald.socket systemd-journald.service\n' \
	>"$R/units/tlsd-test.target"
# Nor anything a boot runs: systemd-tmpfiles --boot would empty /tmp, others
# write /var and /dev (/dev/log): systemd_boot.sh keeps the host read-only
# besides.
# A unit that needs one of these fails instead of starting.
for u in sysinit.target basic.target local-fs.target sockets.target timers.target \
	paths.target swap.target multi-user.target graphical.target \
	$(ls /lib/systemd/system/sysinit.target.wants /etc/systemd/system/sysinit.target.wants \
		/lib/systemd/system/local-fs.target.wants 2>/dev/null | grep -v ':$' | grep -v journald) \
	systemd-tmpfiles-clean.timer systemd-tmpfiles-clean.service \
	systemd-journald-dev-log.socket systemd-journald-audit.socket; do
	ln -sf /dev/null "$R/units/$u"
done
conf() {	# conf NAME INTERFACE [LINE]: the file NAME.conf. The instances' files
	# name eth0 and the same socket: -i and -s of the template win.
	cat >"$R/etc/$1.conf" <<EOC
interface = "$2";
control_socket = "/run/tlsd/tlsd.sock";
control_group = "nogroup";
link_rate = "100mbit";
policy = "roundrobin";
discovery = { rescan = "200ms"; trust = { users = [ "root", "nobody" ]; }; };
${3:-}
EOC
}
conf "$IF_PS" eth0
conf "$IF2" eth0
conf tlsd "$IF2"	# tlsd.service's

INIT=""
sd_cleanup() {
	if [ -n "$INIT" ] && kill -0 "$INIT" 2>/dev/null; then
		# halt: the manager stops the units (tlsd restores), then exits
		kill -s RTMIN+3 "$INIT" 2>/dev/null
		wait_pid "$BOOT" 15 || info "the test's systemd did not halt in 15 s"
	fi
	ns_cleanup
	[ -d "$CG" ] && find "$CG" -depth -type d -exec rmdir {} + 2>/dev/null
}
trap sd_cleanup EXIT

mkdir "$CG" || fail "cannot create cgroup $CG"
# --kill-child: should the test die, the manager and its units go with it.
bg_host "$TMPD/boot" nsenter --net="/run/netns/$NS_PS" -- sh -c \
	'echo $$ >"$1/cgroup.procs" && exec unshare --pid --fork --mount --uts --cgroup \
	--mount-proc --propagation private --kill-child sh "$2" "$3"' \
	sh "$CG" "$TOP/tests/ns/systemd_boot.sh" "$R"
BOOT=$LAST
i=0
while [ -z "$INIT" ] && [ $i -lt 50 ]; do
	INIT=$(cat "/proc/$BOOT/task/$BOOT/children" 2>/dev/null | tr -d ' ')
	[ -n "$INIT" ] || sleep 0.1
	i=$((i + 1))
done
[ -n "$INIT" ] || fail "systemd did not start: $(cat "$TMPD/boot")"
sd() { nsenter -t "$INIT" -m -p -u -n -C -- "$@"; }
i=0	# its bus socket comes a moment after it starts
until st=$(sd timeout 30 systemctl is-system-running --wait 2>&1) || [ $i -ge 50 ]; do
	case $st in offline | *"connect to bus"*) ;; *) break ;; esac
	sleep 0.1
	i=$((i + 1))
done
case $st in
running | degraded) ;;
*) fail "the test's systemd is '$st': $(cat "$TMPD/boot"; sd journalctl -b --no-pager 2>&1 | tail -20)" ;;
esac
info "systemd $(systemctl --version | awk 'NR == 1 { print $2 }') is PID 1 of the test's namespaces ($st)"

U1="tlsd@$IF_PS.service"
U2="tlsd@$IF2.service"
journal() { sd journalctl --no-pager -u "$@"; }
sd timeout 30 systemctl start "$U1" "$U2" ||
	fail "systemctl start failed: $(journal "$U1" -u "$U2" -o cat | tail -20)"
for u in "$U1" "$U2"; do
	[ "$(sd systemctl is-active "$u")" = active ] || fail "$u is not active"
done
in_ps tc qdisc show dev "$IF_PS" | grep -q "qdisc htb [0-9a-f]*: root" || fail "no HTB on $IF_PS: $(in_ps tc qdisc show dev "$IF_PS"; journal "$U1" -o cat)"
in_ps tc qdisc show dev "$IF2" | grep -q "qdisc htb [0-9a-f]*: root" || fail "no HTB on $IF2"
for i in "$IF_PS" "$IF2"; do
	sd "$SD_CTL" -s "/run/tlsd/$i.sock" status >"$TMPD/status" 2>&1 ||
		fail "tlsctl on /run/tlsd/$i.sock: $(cat "$TMPD/status")"
	grep -q "$i" "$TMPD/status" || fail "the tlsd on /run/tlsd/$i.sock is not $i's: $(cat "$TMPD/status")"
	g=$(sd stat -c '%G %a' "/run/tlsd/$i.sock")
	[ "$g" = "nogroup 660" ] || fail "/run/tlsd/$i.sock: group and mode $g, not control_group's"
	# the state file, in the unit's RuntimeDirectory, root's and 0600
	g=$(sd stat -c '%U %a' "/run/tlsd/$(inst "$i").state" 2>&1)
	[ "$g" = "root 600" ] || fail "/run/tlsd/$(inst "$i").state: $g"
done
journal "$U1" -u "$U2" -o cat | grep -q "cannot keep tlsd's state" &&
	fail "the units could not write the state file: $(journal "$U1" -u "$U2" -o cat | grep state)"
info "$U1 and $U2 active, each on its own socket and interface, each with its state file"

# Exactly the unit's capabilities, no new privileges, the seccomp filter.
PID=$(sd systemctl show -P MainPID "$U1")
sd cat "/proc/$PID/status" >"$TMPD/pstatus"
want=$(sed -n 's/^CapabilityBoundingSet=//p' "$TMPL" | tr ' ' '\n' | tr A-Z a-z | sort | tr '\n' ' ')
for f in CapBnd CapEff CapPrm; do
	v=$(awk -v f="$f:" '$1 == f { print $2 }' "$TMPD/pstatus")
	got=$(capsh --decode="$v" | sed 's/.*=//' | tr ',' '\n' | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || fail "tlsd's $f is '$got', the unit grants '$want'"
done
grep -q '^NoNewPrivs:[[:space:]]*1' "$TMPD/pstatus" || fail "tlsd runs without NoNewPrivs"
grep -q '^Seccomp:[[:space:]]*2' "$TMPD/pstatus" || fail "tlsd runs without a seccomp filter"
info "tlsd (pid $PID in the container): capabilities $want; NoNewPrivs 1, Seccomp 2"
# Its view of the file systems: read-only but for the pins and /run/tlsd.
mnt() { sd nsenter -t "$PID" -m findmnt -n -o OPTIONS -T "$1" | cut -d, -f1; }
for p in / /etc /usr /proc/sys /sys /sys/fs/cgroup /run; do
	[ "$(mnt "$p")" = ro ] || fail "$p is writable for tlsd: $(sd nsenter -t "$PID" -m findmnt -rn -o TARGET,OPTIONS | grep -v "^/proc/|^/sys/kernel|^/dev/")"
done
for p in /sys/fs/bpf /run/tlsd; do
	[ "$(mnt "$p")" = rw ] || fail "$p is read-only for tlsd"
done
sd nsenter -t "$PID" -m test -e /home/. && [ -n "$(sd nsenter -t "$PID" -m ls -A /home)" ] &&
	fail "tlsd sees /home"
info "tlsd's mounts: read-only but /sys/fs/bpf and /run/tlsd; /home empty"

# PSes of nobody's (the dmlc rule), started by this systemd: one in tlsd's
# network namespace, one in a namespace of its own (a container's: tlsd
# reads its sockets there through setns). tlsd reads their environment and
# takes their sockets through the sandbox.
ps_unit() {	# ps_unit NAME ADDR:PORT [PROPERTY]
	sd systemd-run -q --unit="$PFX-$1" -p DefaultDependencies=no -p User=nobody \
		${3:+-p "$3"} -E DMLC_ROLE=server -E DMLC_PS_ROOT_URI="${2%:*}" \
		-E DMLC_PS_ROOT_PORT="${2##*:}" /run/tlsd-test/sbin/tls-emu ps -l "$2" -t 30 ||
		fail "cannot start PS $1"
}
ps_unit ps $PS4:9000
ps_unit psnet 127.0.0.1:9001 PrivateNetwork=yes
jobs() { sd "$SD_CTL" -s "/run/tlsd/$IF_PS.sock" jobs 2>&1; }
i=0	# the job's row with the PS's port: its socket was found
until jobs | grep -q "dmlc:$PS4:9000 .* 9000 " && jobs | grep -q "dmlc:127.0.0.1:9001 .* 9001 "; do
	[ $i -lt 100 ] || fail "tlsd did not discover both PSes of nobody's: $(jobs;
		journal "$U1" -o cat | tail -5)"
	sleep 0.1
	i=$((i + 1))
done
info "discovered nobody's PSes with their ports:"
jobs | grep dmlc | while read -r l; do info "  $l"; done
sd systemctl stop "$PFX-ps" "$PFX-psnet"

# c. Reload: good, bad (refused before the signal), good again.
sd systemctl reload "$U1" || fail "reload of a good file failed"
conf "$IF_PS" eth0 'bands = 99;'
sd sh -c "cat >/run/tlsd-test/etc/$IF_PS.conf" <"$R/etc/$IF_PS.conf"
sd systemctl reload "$U1" 2>/dev/null && fail "systemctl reload succeeded on a bad file"
[ "$(sd systemctl is-active "$U1")" = active ] || fail "a bad reload stopped $U1"
info "bad file: systemctl reload failed, $U1 still active"
journal "$U1" -p err..err -o cat >"$TMPD/err"
grep -q "configuration: .*bands" "$TMPD/err" ||
	fail "the refusal is not in the journal at level err: $(journal "$U1" -o cat | tail -5)"
info "journal, level err: $(grep 'configuration:' "$TMPD/err" | tail -1)"
journal "$U1" -p warning..warning -o cat | grep -q "configuration:" &&
	fail "the refusal is filed as a warning too"
journal "$U1" -o cat | grep -q '^<[0-9]>' && fail "the journal has a raw <N> prefix in a message"
info "$U1's journal entries by PRIORITY: $(journal "$U1" -o verbose |
	sed -n 's/^ *PRIORITY=//p' | sort | uniq -c | awk '{ printf "%s%s: %s", s, $2, $1; s = ", " }')"
conf "$IF_PS" eth0
sd sh -c "cat >/run/tlsd-test/etc/$IF_PS.conf" <"$R/etc/$IF_PS.conf"
sd systemctl reload "$U1" || fail "reload of the good file again failed"

# d. Stop: both interfaces as they were, no pins.
sd timeout 30 systemctl stop "$U1" "$U2" || fail "systemctl stop failed"
for i in "$IF_PS" "$IF2"; do
	in_ps tc qdisc show dev "$i" | grep -q 'htb\|clsact' &&
		fail "$i still has tlsd's qdiscs after stop: $(in_ps tc qdisc show dev "$i")"
	[ -d "/sys/fs/bpf/tlsd/$(inst "$i")" ] && fail "pins of $i left after stop"
	sd test -e "/run/tlsd/$(inst "$i").state" && fail "the state file of $i left after stop"
done
info "systemctl stop: both interfaces restored, pins and state files removed"

# tlsd.service: the same hardening, its interface from /etc/tlsd/tlsd.conf.
sd timeout 30 systemctl start tlsd.service ||
	fail "systemctl start tlsd.service failed: $(journal tlsd.service -o cat | tail -20)"
sd "$SD_CTL" status >"$TMPD/status" 2>&1 && grep -q "$IF2" "$TMPD/status" ||
	fail "tlsctl on the default socket: $(cat "$TMPD/status")"
sd systemctl reload tlsd.service || fail "reload of tlsd.service failed"
sd timeout 30 systemctl stop tlsd.service || fail "systemctl stop tlsd.service failed"
in_ps tc qdisc show dev "$IF2" | grep -q 'htb\|clsact' && fail "tlsd.service left its qdiscs"
info "tlsd.service: started on $IF2 (its file's), reloaded, stopped, $IF2 restored"
echo "PASS"

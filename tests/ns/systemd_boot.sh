#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# PID 1 of the namespaces test_systemd_unit.sh makes (pid, mount, uts,
# cgroup, and its test network namespace): sets up a private /run, the
# test's cgroup v2 subtree as /sys/fs/cgroup and the test's units, then
# becomes systemd, the service manager the units are written for.
# $1: the test's tree: sbin/ etc/ units/ (copied to /run/tlsd-test, where
# the units, made as `make install SBINDIR=... SYSCONFDIR=...` makes them,
# find tlsd and its files whatever the checkout's path: PrivateTmp and
# ProtectHome would hide a /tmp or /home one).
#
# Nothing here may change the host. A manager at boot runs units that do
# (systemd-tmpfiles --boot empties /tmp, others write /var, /dev, /root):
# the test's units mask sysinit.target and them, and, should one run all
# the same, the host's root and /dev are read-only in this mount namespace and /tmp,
# /var and /run are empty tmpfs.
set -e
ROOT=$1

mount -t tmpfs -o mode=0755 tmpfs /run
mkdir /run/tlsd-test
cp -r "$ROOT/sbin" "$ROOT/etc" /run/tlsd-test/
mkdir /run/tlsd-test/units
cp -r "$ROOT/units/." /run/tlsd-test/units/
mount -o remount,bind,ro /
mount --bind /dev /dev
mount -o remount,bind,ro /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /var
mkdir -m 1777 /var/tmp
ln -s ../run /var/run
mount -t tmpfs -o mode=0755 tmpfs /etc/systemd/system
cp -r /run/tlsd-test/units/. /etc/systemd/system/
# The cgroup namespace's root is the test's cgroup: systemd's tree below it.
# The host's hierarchies go (only in this mount namespace): mounts hidden
# under a new one still stand in /proc/self/mounts.
umount -R /sys/fs/cgroup 2>/dev/null || true
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
# container=: what systemd-nspawn and other managers set, so that systemd
# leaves the host's hardware (udev, swap, consoles) alone.
exec env -i container=tlsd-test PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	/lib/systemd/systemd --unit=tlsd-test.target --log-target=journal

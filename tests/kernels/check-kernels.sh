#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make check-kernels`: the BPF tier and the tlsd lifecycle test on real
# distribution kernels, each booted under qemu-system-x86_64 (TCG: these
# machines have no KVM). Kernels are Debian packages, downloaded and
# unpacked with dpkg-deb -x, never installed. The guest sees the host's
# filesystem read-only (9p, or virtiofs where the kernel has no 9p, as
# Debian's cloud kernel) and runs tests/kernels/init from a busybox
# initramfs built here; it has no network device at all.
#
# One line per kernel:
#   kernel VERSION: FEATURES FOUND[; missing: NAME(ERRNO) ...]; N passed, N failed (S s)
# then the totals; exits 1 if any kernel failed.
#
#   KERNELS   Debian packages to boot (default: Debian 12's stock kernel,
#             generic and cloud, from linux-image-amd64 and
#             linux-image-cloud-amd64, and the newest 6.12 it offers)
#   KERNEL_TIMEOUT  seconds per kernel (1800)
set -u
OUT=${OUT:-build}
cd "$(dirname "$0")/../.." || exit 1
TOP=$(pwd)
KDIR="$TOP/$OUT/kernels"
TIMEOUT=${KERNEL_TIMEOUT:-1800}
MEM=2048

die() {
	echo "check-kernels: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root: the guest reads the host's tree as root, and the tests inside need it"
case "$TOP" in *[!A-Za-z0-9/._+-]*) die "the source tree's path '$TOP' has characters a kernel command line cannot carry" ;; esac
[ -x "$OUT/tlsd" ] || die "$OUT/tlsd is not built: run make first"
sh tools/install-deps.sh qemu-system-x86 || die "cannot install qemu-system-x86"
mkdir -p "$KDIR" || die "cannot create $KDIR"

QEMU_PID=""
VFS_PID=""
cleanup() {
	[ -n "$QEMU_PID" ] && kill "$QEMU_PID" 2>/dev/null
	[ -n "$VFS_PID" ] && kill "$VFS_PID" 2>/dev/null
	[ -n "$QEMU_PID" ] && wait "$QEMU_PID" 2>/dev/null
	[ -n "$VFS_PID" ] && wait "$VFS_PID" 2>/dev/null
	QEMU_PID=""
	VFS_PID=""
	rm -f "$KDIR/virtiofs.sock"
	[ -d "$KDIR/root" ] && rmdir "$KDIR/root" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

apt_download() {	# PACKAGE DIR: the package unpacked into DIR, once
	[ -f "$2/.unpacked" ] && return 0
	rm -rf "$2" && mkdir -p "$2" || return 1
	(cd "$KDIR" && apt-get -q -o APT::Sandbox::User=root download "$1" >/dev/null) || {
		echo "check-kernels: apt-get download $1 failed" >&2
		return 1
	}
	dpkg-deb -x "$KDIR/$1"_*.deb "$2" && rm -f "$KDIR/$1"_*.deb && touch "$2/.unpacked"
}

# The package apt would install for a metapackage such as linux-image-amd64.
resolve() {
	apt-cache show --no-all-versions "$1" 2>/dev/null |
		sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -n 1
}

if [ -z "${KERNELS:-}" ]; then
	apt-cache show linux-image-amd64 >/dev/null 2>&1 || apt-get update -qq
	KERNELS="$(resolve linux-image-amd64) $(resolve linux-image-cloud-amd64)"
	KERNELS="$KERNELS $(apt-cache pkgnames linux-image-6.12 |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' | sort -V | tail -n 1)"
fi
[ -n "$(echo $KERNELS)" ] || die "no kernel packages found: is apt configured for Debian 12?"

# A static busybox for the initramfs, unpacked here rather than installed
# (it conflicts with the dynamic busybox a host may have).
apt_download busybox-static "$KDIR/busybox" || die "cannot fetch busybox-static"
BB="$KDIR/busybox/bin/busybox"

# initramfs KERNEL_ROOT VERSION SHARE: $KDIR/initrd-VERSION.gz
initramfs() {
	mods="$1/lib/modules/$2"
	case $3 in
	9p) want="virtio_pci 9pnet_virtio 9p" ;;
	virtiofs) want="virtio_pci virtiofs" ;;
	esac
	# What the tests use, loaded at boot: autoloading goes through
	# busybox modprobe, which cannot load compressed modules.
	# (cls_u32: the lifecycle test's filter of another tool, beside tlsd's)
	want="$want veth sch_htb sch_ingress cls_bpf cls_u32 sch_tbf sch_netem sch_prio sch_fq"
	work="$KDIR/initrd-$2"
	rm -rf "$work" && mkdir -p "$work/bin" "$work/mods" "$work/proc" "$work/sys" "$work/dev" || return 1
	cp "$BB" "$work/bin/busybox" && cp tests/kernels/init "$work/init" && chmod 755 "$work/init" || return 1
	# Each wanted module and what modules.dep says it needs; built-in
	# ones have no line. init loads them over a few passes, so the order
	# does not matter.
	for m in $want; do
		awk -v m="$m" '{
			f = $1; sub(":$", "", f); n = f; sub(".*/", "", n); sub("\\.ko(\\.xz|\\.zst|\\.gz)?$", "", n)
			gsub("-", "_", n)
			if (n == m) { print f; for (i = 2; i <= NF; i++) print $i }
		}' "$mods/modules.dep"
	done | sort -u >"$work/list"
	# Decompressed here (Debian compresses 6.12's modules with xz): the
	# initramfs's insmod then need not know the format.
	while read -r ko; do
		b=$(basename "$ko")
		case $ko in
		*.xz) "$BB" xzcat "$mods/$ko" >"$work/mods/${b%.xz}" ;;
		*.gz) gzip -dc "$mods/$ko" >"$work/mods/${b%.gz}" ;;
		*.zst) zstd -qdc "$mods/$ko" >"$work/mods/${b%.zst}" ;;
		*) cp "$mods/$ko" "$work/mods/" ;;
		esac || return 1
		echo "${b%.ko*}.ko" >>"$work/mods/order"
	done <"$work/list"
	rm -f "$work/list"
	touch "$work/mods/order"
	(cd "$work" && find . | "$BB" cpio -o -H newc 2>/dev/null | gzip -1) >"$KDIR/initrd-$2.gz" || return 1
	rm -rf "$work"
}

# boot KERNEL_ROOT VERSION SHARE LOG: runs the guest to its end
boot() {
	root=$1 ver=$2 share=$3 log=$4
	set -- -accel tcg${KERNEL_ACCEL_OPTS:-,thread=multi} ${KERNEL_QEMU_EXTRA:-} -cpu max -smp 2 -m "$MEM" \
		-nodefaults -nic none -display none -serial stdio -no-reboot \
		-kernel "$root/boot/vmlinuz-$ver" -initrd "$KDIR/initrd-$ver.gz" \
		-append "console=ttyS0 quiet panic=-1 tlsk_top=$TOP tlsk_out=$OUT tlsk_mods=$root/lib/modules/$ver tlsk_share=$share"
	if [ "$share" = 9p ]; then
		set -- "$@" -virtfs "local,path=/,mount_tag=host,security_model=passthrough,readonly=on,multidevs=remap"
	else
		# virtiofsd has no read-only mode: it serves a read-only bind
		# of / in a mount namespace of its own. unshare and sh exec,
		# so $! is virtiofsd itself.
		mkdir -p "$KDIR/root"
		rm -f "$KDIR/virtiofs.sock"
		unshare -m --propagation private sh -c 'mount --rbind / "$1" &&
			mount -o remount,bind,ro "$1" &&
			exec /usr/lib/qemu/virtiofsd --socket-path="$2" -o source="$1" -o cache=always -o sandbox=chroot' \
			sh "$KDIR/root" "$KDIR/virtiofs.sock" >"$log.virtiofsd" 2>&1 &
		VFS_PID=$!
		i=0
		while [ ! -S "$KDIR/virtiofs.sock" ] && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		[ -S "$KDIR/virtiofs.sock" ] || {
			echo "virtiofsd did not start: $(cat "$log.virtiofsd")" >"$log"
			return 1
		}
		set -- "$@" -object "memory-backend-memfd,id=mem,size=${MEM}M,share=on" -numa node,memdev=mem \
			-chardev "socket,id=vfs,path=$KDIR/virtiofs.sock" -device vhost-user-fs-pci,chardev=vfs,tag=host
	fi
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 "$@" </dev/null >"$log" 2>&1 &
	QEMU_PID=$!
	wait "$QEMU_PID"
	QEMU_PID=""
	if [ -n "$VFS_PID" ]; then
		kill "$VFS_PID" 2>/dev/null
		wait "$VFS_PID" 2>/dev/null
		VFS_PID=""
	fi
}

nk=0
nfail=0
summary="$KDIR/summary.txt"
: >"$summary"
for pkg in $KERNELS; do
	nk=$((nk + 1))
	root="$KDIR/$pkg"
	if ! apt_download "$pkg" "$root"; then
		echo "kernel $pkg: cannot download; 0 passed, 1 failed (0 s)" | tee -a "$summary"
		nfail=$((nfail + 1))
		continue
	fi
	ver=$(ls "$root/lib/modules" | head -n 1)
	cfg="$root/boot/config-$ver"
	[ -f "$root/lib/modules/$ver/modules.dep" ] || "$BB" depmod -b "$root" "$ver"
	if grep -q '^CONFIG_NET_9P_VIRTIO=[ym]' "$cfg" && grep -q '^CONFIG_9P_FS=[ym]' "$cfg"; then
		share=9p
	elif grep -q '^CONFIG_VIRTIO_FS=[ym]' "$cfg"; then
		share=virtiofs
	else
		echo "kernel $ver: neither 9p nor virtiofs to share the host's tree; 0 passed, 1 failed (0 s)" | tee -a "$summary"
		nfail=$((nfail + 1))
		continue
	fi
	log="$KDIR/$ver.log"
	echo "check-kernels: booting $ver ($share; log: $log)"
	start=$(date +%s)
	initramfs "$root" "$ver" "$share" && boot "$root" "$ver" "$share" "$log"
	secs=$(($(date +%s) - start))
	feat=$(sed -n 's/^TLSK features: //p' "$log" | tr -d '\r' | head -n 1)
	res=$(sed -n 's/^TLSK result: //p' "$log" | tr -d '\r' | head -n 1)
	p=$(echo "$res" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
	f=$(echo "$res" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	if [ -z "$p" ] || [ -z "$f" ]; then
		# No result: the guest did not finish (timeout, panic, no mount).
		echo "  the guest gave no result; the end of its console:"
		tr -d '\r' <"$log" | tail -n 15 | sed 's/^/  | /'
		p=${p:-0}
		f=$((${f:-0} + 1))
	fi
	[ "$f" -gt 0 ] && nfail=$((nfail + 1))
	echo "kernel $ver: ${feat:-(no probe)}; $p passed, $f failed ($secs s)" | tee -a "$summary"
done
echo "$nk kernels: $((nk - nfail)) passed, $nfail failed"
[ "$nfail" -eq 0 ]

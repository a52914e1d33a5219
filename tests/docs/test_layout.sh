#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The layout's promises (docs/design.md, "Parts"), checked on the build:
#  - tlsctl needs json-c and the C library only (its ELF's NEEDED entries):
#    nothing of the BPF side, netlink, libconfig or libsystemd;
#  - tls-classifier, the BPF side's tool, needs none of the daemon's own
#    libraries (libconfig, libsystemd; libnl-route is the BPF side's too:
#    lib/bpf/tc_filters.c counts the clsact filters with it);
#  - no library includes a header of the daemon (tcd/), none of lib/util,
#    lib/client or lib/model one of lib/bpf (the compiler enforces it with
#    the Makefile's INC_*; this says so by name if a file tries);
#  - the daemon and the tools make no raw map call: every map is read and
#    written through the BPF-side library (lib/bpf), which has one reader of
#    each kind (job counters, socket flows, batches with their fallbacks);
#  - in the daemon, only the membership table (tcd/membership.c) writes or
#    reads back endpoints, pids and socket tags.
OUT=${OUT:-build}
cd "$(dirname "$0")/../.." || exit 1
command -v readelf >/dev/null 2>&1 || { echo "SKIP: readelf (binutils) is needed"; exit 77; }
rc=0
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }

got=$(needed "$OUT/tlsctl")
for lib in $got; do
	case $lib in
	libjson-c.so.* | libc.so.* | libm.so.*) ;;
	*) echo "FAIL: tlsctl needs $lib (only json-c and the C library: $got)"; rc=1 ;;
	esac
done
echo "  tlsctl: $got($(wc -c <"$OUT/tlsctl") bytes)"
got=$(needed "$OUT/tls-classifier")
for lib in $got; do
	case $lib in
	libconfig* | libsystemd*)
		echo "FAIL: tls-classifier needs $lib, a library of the daemon's"; rc=1 ;;
	esac
done
echo "  tls-classifier: $got"

# includes across the layers, by name: a layer's rank (util 0, client and
# model 1, bpf 2, the daemon 3); a file includes headers of its own
# directory or of a lower rank only
rank() {
	case $1 in
	util) echo 0 ;; client | model) echo 1 ;; bpf) echo 2 ;; *) echo 3 ;;
	esac
}
for f in lib/*/*.c lib/*/*.h; do
	layer=${f#lib/}
	layer=${layer%%/*}
	for h in $(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f"); do
		[ -e "lib/$layer/$h" ] && continue
		if [ -e "tcd/$h" ]; then
			echo "FAIL: $f includes the daemon's $h"; rc=1
			continue
		fi
		for d in util client model bpf; do
			[ -e "lib/$d/$h" ] || continue
			if [ "$(rank $d)" -ge "$(rank "$layer")" ]; then
				echo "FAIL: $f (lib/$layer) includes lib/$d's $h, a layer not below it"
				rc=1
			fi
		done
	done
done
# membership has one writer in the daemon (docs/design.md, Discovery): the
# table in tcd/membership.c; nothing else writes or reads back the
# endpoints, pids or socket tags
writers='tls_(add|del)_(endpoint|process|pid|socket_fd)|tls_(get_endpoint|endpoint_keys|pid_keys)'
others=$(grep -nE "\b($writers)\(" tcd/*.c | grep -v '^tcd/membership\.c:')
if [ -n "$others" ]; then
	echo "FAIL: membership written or read back outside tcd/membership.c:"
	echo "$others"
	rc=1
fi

[ $rc -eq 0 ] && echo "PASS: tlsctl needs json-c and libc only, tls-classifier none of the daemon's libraries, no library includes a header above it, the daemon and tools make no raw map call, and only tcd/membership.c writes membership"
exit $rc

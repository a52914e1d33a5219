#!/bin/sh
# Install the Debian packages tlsd needs to build, test and run its demo.
# Idempotent and quiet when nothing is missing; called by `make` itself.
# With arguments, installs those packages instead (`make check-kernels`
# asks for qemu this way).
set -eu

# libclang-rt-dev: clang's libFuzzer and sanitizer runtimes for tests/fuzz/,
# only a recommendation of clang's (not installed with it here).
# python3-prometheus-client: the Prometheus and OpenMetrics parsers that
# tests/ns/test_metrics.sh reads tlsd's metrics with; python3-yaml: the same
# test reads the alert rules in contrib/. python3-numpy: the module that
# `tlsctl calibrate --format spotdnn` writes uses it, as spotDNN does, and
# tests/ns/test_spotdnn_export.sh imports it.
PKGS="clang llvm gcc make pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libnl-3-dev libnl-route-3-dev libmnl-dev libjson-c-dev libconfig-dev libsystemd-dev libcmocka-dev
libclang-rt-dev
iproute2 ethtool procps util-linux python3 python3-prometheus-client python3-yaml python3-numpy gnuplot-nox"
[ $# -gt 0 ] && PKGS="$*"

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "install-deps: not a Debian system; make sure the equivalents of these are installed:" >&2
	echo "  $PKGS" | tr '\n' ' ' >&2
	echo >&2
	exit 0
fi

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing missing Debian packages:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "install-deps: not root and no sudo; install these as root:$missing" >&2
		exit 1
	fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086 # word splitting of the package list is wanted
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2

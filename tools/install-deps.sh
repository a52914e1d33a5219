#!/bin/sh
# The Debian packages tlsd needs to build, test and run its demo.
#
#   install-deps.sh              install the missing ones (`make deps`, and
#                                first thing in `make check`, `demo`, `bench`)
#   install-deps.sh PKG...       install those instead (`make check-kernels`
#                                asks for qemu this way)
#   install-deps.sh --check SET  install nothing: name the missing packages of
#                                SET and exit 1 (plain `make` and `make
#                                install`, which must never run apt-get);
#                                SET is tools (tlsd, tlsctl, tls-classifier,
#                                the emulators: what debian/control lists) or
#                                all (the tests and benchmarks too)
# Idempotent and quiet when nothing is missing.
set -eu

# What the programs are built with.
TOOLS_PKGS="clang llvm gcc make pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
libnl-3-dev libnl-route-3-dev libmnl-dev libjson-c-dev libconfig-dev libsystemd-dev"
# What the tests and benchmarks are built with. libclang-rt-dev: clang's
# libFuzzer and sanitizer runtimes for tests/fuzz/, only a recommendation of
# clang's (not installed with it here).
TEST_BUILD_PKGS="libcmocka-dev libclang-rt-dev"
# What the tests, the demo and the benchmarks run.
# python3-prometheus-client: the Prometheus and OpenMetrics parsers that
# tests/ns/test_metrics.sh reads tlsd's metrics with; python3-yaml: the same
# test reads the alert rules in contrib/. python3-numpy: the module that
# `tlsctl calibrate --format spotdnn` writes uses it, as spotDNN does, and
# tests/ns/test_spotdnn_export.sh imports it. git, dpkg-dev, debhelper,
# lintian: tests/pkg/test_deb.sh builds the Debian packages from a fresh clone.
RUN_PKGS="iproute2 ethtool procps util-linux python3 python3-prometheus-client python3-yaml
python3-numpy gnuplot-nox git dpkg-dev debhelper lintian"

check=""
if [ "${1:-}" = --check ]; then
	case "${2:-}" in
	tools) PKGS=$TOOLS_PKGS ;;
	all) PKGS="$TOOLS_PKGS $TEST_BUILD_PKGS" ;;
	*)
		echo "install-deps: --check takes 'tools' or 'all', not '${2:-}'" >&2
		exit 2
		;;
	esac
	check=1
elif [ $# -gt 0 ]; then
	PKGS="$*"
else
	PKGS="$TOOLS_PKGS $TEST_BUILD_PKGS $RUN_PKGS"
fi

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

if [ -n "$check" ]; then
	echo "missing Debian packages to build:$missing" >&2
	echo "install them with 'make deps' (as root), or: apt-get install$missing" >&2
	exit 1
fi

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

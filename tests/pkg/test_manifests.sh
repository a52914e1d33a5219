#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# contrib/kubernetes/ and contrib/container/: the manifests parse and carry
# what tlsd needs (manifests_check.py), the ConfigMap's tlsd.conf passes
# `tlsd --check-config`, and the container's runtime stage installs the
# tlsd package only. `kubectl --dry-run=client` needs an API server for its
# schemas and is not run here.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml not installed"; exit 77; }

python3 "$TOP/tests/pkg/manifests_check.py" "$TOP/contrib/kubernetes" "$T/tlsd.conf" ||
	fail "the Kubernetes manifests"
"$TOP/$OUT/tlsd" --check-config -c "$T/tlsd.conf" >"$T/check" 2>&1 ||
	fail "the ConfigMap's tlsd.conf: $(cat "$T/check")"
echo "  ConfigMap: $(cat "$T/check")"

CF="$TOP/contrib/container/Containerfile"
# the last stage: from its FROM to the end
awk '/^FROM /{ s = "" } { s = s $0 "\n" } END { printf "%s", s }' "$CF" >"$T/runtime"
grep -q 'tlsd_\*\.deb' "$T/runtime" || fail "the runtime stage does not install the tlsd package"
! grep -q 'testtools' "$T/runtime" || fail "the runtime stage installs the test tools"
grep -q '^ENTRYPOINT \["/usr/sbin/tlsd", "-f", "-c", "/etc/tlsd/tlsd.conf"\]' "$T/runtime" ||
	fail "the runtime stage's ENTRYPOINT is not tlsd -f on /etc/tlsd/tlsd.conf"
echo "PASS: manifests and Containerfile"

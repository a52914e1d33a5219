#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# One version for every program: tlsd, tlsctl, tls-classifier, psemu and
# tls-emu each answer --version (and -V) with exit 0 and "NAME VERSION" as
# the VERSION file says, and the newest entries of CHANGELOG.md and
# debian/changelog are that version.
OUT=${OUT:-build}
cd "$(dirname "$0")/../.." || exit 1
want=$(cat VERSION) || { echo "FAIL: no VERSION file"; exit 1; }
echo "$want" | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' ||
	{ echo "FAIL: VERSION '$want' is not MAJOR.MINOR.PATCH"; exit 1; }
rc=0
for p in tlsd tlsctl tls-classifier psemu tls-emu; do
	for opt in --version -V; do
		got=$("$OUT/$p" $opt 2>&1)
		st=$?
		if [ $st -ne 0 ] || [ "$(echo "$got" | head -1 | cut -d' ' -f1-2)" != "$p $want" ]; then
			echo "FAIL: $p $opt: exit $st, '$got' (expected '$p $want')"
			rc=1
		fi
	done
	echo "  $("$OUT/$p" --version 2>&1 | head -1)"
done
top=$(sed -n 's/^## \[\([^]]*\)\].*/\1/p' CHANGELOG.md | head -1)
[ "$top" = "$want" ] || { echo "FAIL: CHANGELOG.md's newest entry is '$top', VERSION says '$want'"; rc=1; }
deb=$(sed -n '1s/^tlsd (\([^)]*\)).*/\1/p' debian/changelog)
[ "$deb" = "$want" ] || { echo "FAIL: debian/changelog's newest entry is '$deb', VERSION says '$want'"; rc=1; }
[ $rc -eq 0 ] && echo "PASS: every program says version $want, as VERSION, CHANGELOG.md and debian/changelog"
exit $rc

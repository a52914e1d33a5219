#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Plain `make` and `make install` never run apt-get: with a build package
# missing they stop before building and name it and `make deps`; `make deps`
# (what `make check`, `demo` and `bench` run first) still installs it. A
# dpkg-query first on PATH says the package is missing; an apt-get first on
# PATH records that it ran (and installs nothing).
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v dpkg-query >/dev/null 2>&1 || { echo "SKIP: not a Debian system"; exit 77; }

mkdir "$T/bin"
cat >"$T/bin/dpkg-query" <<'EOS'
#!/bin/sh
# the last argument is the package: missing if it is FAKE_MISSING
for p; do :; done
[ "$p" = "$FAKE_MISSING" ] && exit 1
printf installed
EOS
cat >"$T/bin/apt-get" <<'EOS'
#!/bin/sh
echo "apt-get $*" >>"$APT_LOG"
EOS
chmod +x "$T/bin/dpkg-query" "$T/bin/apt-get"
export PATH="$T/bin:$PATH" FAKE_MISSING=libconfig-dev APT_LOG="$T/apt.log"

# make GOAL...: its status and output (OUT in T: nothing of the tree is built)
run() {
	make -C "$TOP" OUT="$T/out" DESTDIR="$T/dest" "$@" >"$T/make.out" 2>&1
}
for goal in "" install tools; do
	run $goal && fail "'make $goal' succeeded without libconfig-dev"
	grep -q "missing Debian packages to build: libconfig-dev" "$T/make.out" ||
		fail "'make $goal' did not name libconfig-dev: $(cat "$T/make.out")"
	grep -q "make deps" "$T/make.out" || fail "'make $goal' did not say 'make deps'"
	[ ! -e "$APT_LOG" ] || fail "'make $goal' ran apt-get: $(cat "$APT_LOG")"
	[ ! -e "$T/out/tlsd" ] && [ ! -e "$T/dest" ] || fail "'make $goal' built or installed"
	echo "  make $goal: $(grep missing "$T/make.out")"
done

run deps || fail "'make deps' failed: $(cat "$T/make.out")"
grep -q "apt-get install.* libconfig-dev" "$APT_LOG" 2>/dev/null ||
	fail "'make deps' did not install libconfig-dev: $(cat "$APT_LOG" 2>/dev/null)"
echo "  make deps: $(grep install "$APT_LOG")"
echo "PASS: make and make install stop and name the package; make deps installs it"

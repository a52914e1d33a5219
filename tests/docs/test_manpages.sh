#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Each man page against its program's --help (options and commands, both
# ways), tlsd.conf(5) against the settings tlsd's parser accepts and its
# example against tlsd --check-config: tests/docs/check_docs.py. Needs no
# root.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-build}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed"; exit 77; }
exec python3 "$TOP/tests/docs/check_docs.py" "$TOP/$OUT"

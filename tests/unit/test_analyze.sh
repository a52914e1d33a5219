#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The benchmark's least mean JCT the link allows (tests/bench/analyze.py),
# against simulated schedules: tests/bench/test_analyze.py.
exec python3 "$(dirname "$0")/../bench/test_analyze.py"

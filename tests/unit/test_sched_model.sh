#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The benchmark's idealized model of its jobs (tests/bench/sched_model.py):
# tests/bench/test_sched_model.py.
exec python3 "$(dirname "$0")/../bench/test_sched_model.py"

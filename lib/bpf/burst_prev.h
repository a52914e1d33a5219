/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Policy bursts's order as a previous instance left it: found through the
 * tail-call slot it pinned, so that a takeover carries the order over
 * instead of starting it empty.
 */
#ifndef TLS_BURST_PREV_H
#define TLS_BURST_PREV_H

#include <linux/types.h>

struct btf;

/*
 * A descriptor of the burst order map used by the program in slot 0 of the
 * prog array pinned at tail_pin, if that map is this build's (its name,
 * sizes, and its value laid out as value_type_id of btf): -ENOENT if there
 * is no such slot, program or map, -ESTALE if its layout differs (another
 * version's), another negative errno if the kernel refused a step.
 */
int tls_burst_prev_open(const char *tail_pin, const struct btf *btf, __u32 value_type_id);

#endif

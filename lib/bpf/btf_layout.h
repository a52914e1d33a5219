/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether two BTF types lay memory out alike: before tlsd reads a value
 * that another build's program wrote (the burst order a previous instance
 * leaves behind) as one of its own structs.
 */
#ifndef TLS_BTF_LAYOUT_H
#define TLS_BTF_LAYOUT_H

#include <stdbool.h>
#include <linux/types.h>

struct btf;

/*
 * Type ida of a and type idb of b: the same kind and size, integers of the
 * same width and signedness, arrays of the same length of alike elements,
 * structs and unions whose members have the same names, offsets, bitfield
 * sizes and alike types. Typedefs and qualifiers are looked through; a
 * pointer is alike to a pointer of the same size. Nesting deeper than a
 * few levels is taken as different (the types may come from anyone who
 * could load a program: the work is bounded).
 */
bool tls_btf_same_layout(const struct btf *a, __u32 ida, const struct btf *b, __u32 idb);

#endif

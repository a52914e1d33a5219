// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program of "another version" for the BPF tier: its burst order map has
 * tlsd's name and size, but another layout, as a tlsd whose struct
 * tls_burst changed would leave pinned behind its tail-call slot. A
 * takeover must refuse to read it (tls_burst_prev_open: -ESTALE).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "tls_common.h"

/* The same size and lock, the rest one array: no member where tlsd's are. */
struct tls_burst_other {
	struct bpf_spin_lock lock;
	__u8 rest[sizeof(struct tls_burst) - sizeof(struct bpf_spin_lock)];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tls_burst_other);
} tls_burst SEC(".maps");

SEC("tc")
int tls_stale(struct __sk_buff *skb)
{
	__u32 zero = 0;
	struct tls_burst_other *o = bpf_map_lookup_elem(&tls_burst, &zero);

	if (o)
		o->rest[0]++;
	return -1; /* TC_ACT_UNSPEC */
}

char LICENSE[] SEC("license") = "GPL";

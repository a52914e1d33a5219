// SPDX-License-Identifier: GPL-2.0-only
/* The benchmark's baseline: a tc program that does nothing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("tc")
int tls_empty(struct __sk_buff *skb)
{
	return -1; /* TC_ACT_UNSPEC, as the classifier returns */
}

char LICENSE[] SEC("license") = "GPL";

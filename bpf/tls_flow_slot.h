/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which set of tls_flow_slots a flow known by endpoint lives in, and of
 * tls_in_slots an ingress flow. Pure, so the same code runs in the
 * classifier, in tlsd (which checks the seals) and in the tests that build
 * colliding flows on purpose.
 *
 * A multilinear hash of the key's five 64-bit words (odd multipliers, the top
 * bits kept): five independent multiplies, a few cycles, and unlike jhash no
 * helper or loop. Not keyed: a sender that makes its flows collide only
 * pushes its own flows' records to the LRU map sooner, a statistic; the
 * classification of a flow not in its set comes from tls_endpoints.
 */
#ifndef TLS_FLOW_SLOT_H
#define TLS_FLOW_SLOT_H

#ifndef TLS_INLINE
#define TLS_INLINE static inline __attribute__((always_inline))
#endif

_Static_assert(sizeof(struct tls_flow_key) == 5 * sizeof(__u64), "flow key: five words");

/* The key's hash: it picks the set, and it seals a slot's cached job. */
TLS_INLINE __u64 tls_flow_hash(const struct tls_flow_key *k)
{
	const __u64 *w = (const __u64 *)k;

	return w[0] * 0x9e3779b97f4a7c15ULL + w[1] * 0xc2b2ae3d27d4eb4fULL +
	       w[2] * 0x165667b19e3779f9ULL + w[3] * 0xd6e8feb86659fd93ULL +
	       w[4] * 0xff51afd7ed558ccdULL;
}

/* The first slot of the set of a key with hash h; the set's ways follow it. */
TLS_INLINE __u32 tls_flow_set_slot(__u64 h)
{
	return (__u32)(h >> (64 - TLS_FLOW_SET_BITS)) * TLS_FLOW_WAYS;
}

/* The same for the ingress counter's slots (tls_in_slots). */
TLS_INLINE __u32 tls_in_set_slot(__u64 h)
{
	return (__u32)(h >> (64 - TLS_IN_SET_BITS)) * TLS_IN_WAYS;
}

/*
 * A slot's seal (struct tls_flow.check): the key's hash, the job and the
 * endpoint generation it was resolved at, never 0. Written last; the
 * classifier trusts a slot's cached job only while the seal matches, so a
 * record that two CPUs wrote at once (one's key, the other's job) is not
 * trusted: the packet resolves its job from the endpoints again.
 */
TLS_INLINE __u32 tls_flow_check(__u64 h, __u32 job, __u32 gen)
{
	return ((__u32)(h >> 32) ^ (__u32)h ^ job * 0x9e3779b1u ^ gen * 0x85ebca6bu) | 1;
}

/* The seal of an ingress slot (struct tls_flow_in.check): also the endpoint
 * generation, since a job found by endpoint holds only while it is current. */
TLS_INLINE __u32 tls_flow_in_check(__u64 h, __u32 job, __u32 gen, __u32 egen)
{
	return tls_flow_check(h, job, gen ^ egen * 0xc2b2ae35u);
}

/*
 * The seal of a PS socket's flow mirrored into its slot (the classifier's
 * sk_flow_mirror, on kernels without the socket-storage iterator): XORed into
 * tls_flow_check(), so it is never 0 (readers take the slot) and never equal
 * to an endpoint flow's seal (the classifier never takes its job from it).
 */
#define TLS_FLOW_MIRROR 2u

#endif /* TLS_FLOW_SLOT_H */

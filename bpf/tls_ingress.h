/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The ingress counter (issue 17, both directions): a second, small program
 * on clsact ingress of tlsd's interface counts what each job's PS receives,
 * per job and per flow, so that push (gradients into the PS) is measured as
 * the classifier measures pull (the model out). A program of its own, not
 * the classifier on both hooks: the classifier is near the verifier's
 * million instructions, and ingress needs none of its steering. It never
 * changes a packet and always lets it pass (TC_ACT_UNSPEC: the next filter,
 * another tool's, still runs).
 *
 * Included by tls_classifier.bpf.c (one object: the maps it shares, the
 * socket storage and the endpoints, are the classifier's). A packet's job:
 *  1. the receiving socket's tag (tls_sk_jobs), found with a socket lookup
 *     of the packet's 4-tuple: a PS socket whatever port it uses;
 *  2. else the packet's destination in tls_endpoints, as the classifier's
 *     fallback matches the source.
 * The flow's record caches the job, valid while the job's generation (and,
 * for a job found by endpoint, the endpoints' generation) is unchanged: a
 * known flow's packet costs its key's hash and up to four array loads.
 */
#ifndef TLS_INGRESS_H
#define TLS_INGRESS_H

#define TLS_EGEN_SOCKET 0xffffffffu

/* Set by the loader: an idle gap this long between payload packets of a
 * flow ends its burst (one push). 0: no bursts counted. */
const volatile __u64 ingress_gap_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TLS_MAX_JOBS);
	__type(key, __u32);
	__type(value, struct tls_job_in);
} tls_job_in SEC(".maps");

/*
 * A PS flow's ingress record lives in a slot of tls_in_slots, in the set of
 * four chosen by the flow key's hash: found with a few inlined array loads, and read by tlsd from
 * the array's mapped memory, where a hash map's batch reading locks each of its 65536 buckets at
 * every statistics reading (a quarter of tlsd's CPU without scrapes, measured). A new flow takes an
 * empty slot of its set or the one idle longest; the flow it pushes out moves to tls_flows_in, and
 * takes its record back from there when it returns. Four ways, not tls_flow_slots' two: a set of
 * two holding three busy flows passes them in turn through the LRU map at nearly every packet (1024
 * flows had four such, measured), and a busy record there makes tlsd read the whole map at every
 * reading. tls_in_used has a byte for each set ever used, counting its takes, its flows'
 * resumes and its records started again in place for the id's next job (tls_common.h), so that a
 * reader visits those alone (4 kB) and not the 2 MB of slots, and of those the ways it saw holding
 * a flow not idle (lib/bpf/slot_ways.h).
 *
 * Not pinned (lib/bpf/classifier.c): only the running tlsd's statistics read
 * them, and a tlsd that takes over starts its statistics afresh.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TLS_IN_SLOTS);
	__type(key, __u32);
	__type(value, struct tls_flow_in_rec);
} tls_in_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TLS_IN_USED_ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
} tls_in_used SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TLS_MAX_FLOWS);
	__type(key, struct tls_flow_key);
	__type(value, struct tls_flow_in);
} tls_flows_in SEC(".maps");

/* The job of the local socket the packet is for; TLS_JOB_NONE if none is
 * a PS's. p's key is the flow's: local = the packet's destination. */
static __always_inline __u32 ingress_socket_job(struct __sk_buff *skb, const struct pkt *p,
						__u32 *gen)
{
	struct bpf_sock_tuple t = {};
	struct tls_flow_rec *s;
	struct bpf_sock *sk;
	__u32 len, job = TLS_JOB_NONE;

	if (p->key.family == AF_INET) {
		__builtin_memcpy(&t.ipv4.saddr, p->key.raddr, 4);
		__builtin_memcpy(&t.ipv4.daddr, p->key.laddr, 4);
		t.ipv4.sport = p->key.rport;
		t.ipv4.dport = p->key.lport;
		len = sizeof(t.ipv4);
	} else {
		__builtin_memcpy(t.ipv6.saddr, p->key.raddr, 16);
		__builtin_memcpy(t.ipv6.daddr, p->key.laddr, 16);
		t.ipv6.sport = p->key.rport;
		t.ipv6.dport = p->key.lport;
		len = sizeof(t.ipv6);
	}
	if (p->key.proto == IPPROTO_TCP)
		sk = bpf_sk_lookup_tcp(skb, &t, len, BPF_F_CURRENT_NETNS, 0);
	else
		sk = bpf_sk_lookup_udp(skb, &t, len, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return TLS_JOB_NONE;
	s = bpf_sk_storage_get(&tls_sk_jobs, sk, 0, 0);
	if (s && sk_tag_current(s)) {
		job = s->flow.job;
		*gen = s->flow.gen;
	}
	bpf_sk_release(sk);
	return job;
}

static __always_inline void ingress_flow(struct tls_flow_in *f, __u64 bytes, bool data, __u64 now)
{
	__sync_fetch_and_add(&f->bytes, bytes);
	__sync_fetch_and_add(&f->packets, 1);
	f->seen_ns = now;
	if (!data)
		return;
	__sync_fetch_and_add(&f->data_bytes, bytes);
	if (ingress_gap_ns && f->burst_bytes && now - f->last_ns > ingress_gap_ns) {
		f->done_bytes += f->burst_bytes;
		f->bursts++;
		f->burst_bytes = 0;
	}
	f->burst_bytes += bytes;
	f->last_ns = now;
}

/* Way j of the set whose first slot is set. */
static __always_inline struct tls_flow_in_rec *in_way(__u32 set, __u32 j)
{
	__u32 i = set + j;

	return bpf_map_lookup_elem(&tls_in_slots, &i);
}

/* The flow's slot (hash *h), or NULL and in *victim the slot it would take:
 * an empty one of its set, else the one idle longest. *set: the set's first
 * slot. */
static __always_inline struct tls_flow_in_rec *
in_slot_find(const struct tls_flow_key *k, __u64 *h, struct tls_flow_in_rec **victim, __u32 *set)
{
	struct tls_flow_in_rec *w, *v = NULL;

	*h = tls_flow_hash(k);
	*set = tls_in_set_slot(*h);
	*victim = NULL;
	/* The keys first: they share a cache line with nothing the packets
	 * write, so a hit reads no other flow's counters. */
#pragma unroll
	for (__u32 j = 0; j < TLS_IN_WAYS; j++) {
		w = in_way(*set, j);
		if (!w)
			return NULL;
		if (key_eq(&w->key, k))
			return w;
	}
	/* A miss: the victim, by the last packets' times. */
#pragma unroll
	for (__u32 j = 0; j < TLS_IN_WAYS; j++) {
		w = in_way(*set, j);
		if (w &&
		    (!v || (v->key.family && (!w->key.family || w->in.seen_ns < v->in.seen_ns))))
			v = w;
	}
	*victim = v;
	return NULL;
}

/* The job a slot caches: trusted while its seal holds (a slot two CPUs
 * wrote at once is not), the job id's generation is the same, and, for a
 * job found by endpoint, the endpoints' too. */
static __always_inline __u32 in_slot_job(const struct tls_flow_in_rec *r, __u64 h)
{
	const struct tls_flow_in *f = &r->in;

	if (f->job == TLS_JOB_NONE || f->check != tls_flow_in_check(h, f->job, f->gen, f->egen))
		return TLS_JOB_NONE;
	if (f->gen != job_gen(f->job) || (f->egen != TLS_EGEN_SOCKET && f->egen != current_gen()))
		return TLS_JOB_NONE;
	return f->job;
}

/* The flow takes slot r of the set at slot set: the flow there moves to
 * tls_flows_in with its counters, and a flow of this job that was pushed
 * out before takes its own back (its counters go on). The set is marked
 * used. */
static __always_inline void in_slot_take(struct tls_flow_in_rec *r, __u32 set,
					 const struct tls_flow_key *k, __u32 job, __u32 gen)
{
	struct tls_flow_in *old;
	bool mine;

	if (r->key.family && r->in.first_ns) {
		bpf_map_update_elem(&tls_flows_in, &r->key, &r->in, BPF_ANY);
		lru_moved(&tls_in_used, TLS_IN_USED_WORDS);
	}
	r->key = *k;
	old = bpf_map_lookup_elem(&tls_flows_in, k);
	mine = old && old->job == job && old->gen == gen && old->first_ns;
	if (mine)
		r->in = *old;
	else
		__builtin_memset(&r->in, 0, sizeof(r->in));
	/* The job's record of this key goes (any generation): a key of a
	 * job lives in one place, or its bursts would count twice. Another
	 * job's stays: another flow to the readers, not read to its end. */
	if (old && (old->job == job || !old->first_ns)) {
		bpf_map_delete_elem(&tls_flows_in, k);
		lru_moved(&tls_in_used, TLS_IN_USED_WORDS);
	}
	r->in.seen_ns = stamp_ns(); /* not the idlest of its set meanwhile */
	mark_used(&tls_in_used, set / TLS_IN_WAYS);
}

SEC("tc")
int tls_ingress(struct __sk_buff *skb)
{
	struct tls_flow_in_rec *r = NULL, *victim = NULL;
	struct tls_job_in *st;
	struct pkt p = {};
	__u32 job = TLS_JOB_NONE, gen = 0, egen = TLS_EGEN_SOCKET, segs, set = 0;
	__u8 a[16];
	__u16 port;
	__u64 bytes, now, prev, h = 0;
	bool data;

	parse(skb, &p);
	/* the flow's key: the PS (the destination) is local */
	__builtin_memcpy(a, p.key.laddr, 16);
	__builtin_memcpy(p.key.laddr, p.key.raddr, 16);
	__builtin_memcpy(p.key.raddr, a, 16);
	port = p.key.lport;
	p.key.lport = p.key.rport;
	p.key.rport = port;
	bytes = wire_bytes(skb, &p, &segs);
	data = !p.hdr_len || skb->len > p.hdr_len;

	if (p.has_ports) {
		r = in_slot_find(&p.key, &h, &victim, &set);
		if (r)
			job = in_slot_job(r, h);
		if (job == TLS_JOB_NONE &&
		    (p.key.proto == IPPROTO_TCP || p.key.proto == IPPROTO_UDP)) {
			job = ingress_socket_job(skb, &p, &gen);
			if (job == TLS_JOB_NONE && port_has_endpoints(&p)) {
				egen = current_gen();
				job = job_of_endpoint(&p);
				gen = job_gen(job);
			}
			if (job != TLS_JOB_NONE) {
				if (!r)
					r = victim;
				if (r) {
					r->in.check = 0;
					compiler_barrier();
					if (r == victim)
						in_slot_take(r, set, &p.key, job, gen);
					else if (r->in.job != job || r->in.gen != gen) {
						/* the id is another job's now: a new flow,
						 * counted as a take (its slot may be one
						 * tlsd no longer reads: idle) */
						__builtin_memset(&r->in, 0, sizeof(r->in));
						mark_used(&tls_in_used, set / TLS_IN_WAYS);
					}
					r->in.job = job;
					r->in.gen = gen;
					r->in.egen = egen;
					compiler_barrier();
					r->in.check = tls_flow_in_check(h, job, gen, egen);
				}
			}
		}
	}
	st = bpf_map_lookup_elem(&tls_job_in, &job);
	if (st) {
		st->bytes += bytes;
		st->packets++;
		st->segs += segs;
	}
	if (job == TLS_JOB_NONE || !r)
		return TC_ACT_UNSPEC;
	now = stamp_ns();
	if (!r->in.first_ns)
		r->in.first_ns = now;
	prev = r->in.seen_ns;
	ingress_flow(&r->in, bytes, data, now);
	/* the flow's first packet in TLS_SLOT_RESUME_NS: a resume, counted in
	 * its set's byte after the counters' stores (tlsd reads the ways of a
	 * set whose byte changed; an idle flow's it does not: slot_ways.h).
	 * Signed: the coarse and the fine clock mix. */
	if (prev && (__s64)(now - prev) > (__s64)TLS_SLOT_RESUME_NS)
		mark_used(&tls_in_used, set / TLS_IN_WAYS);
	return TC_ACT_UNSPEC;
}

#endif /* TLS_INGRESS_H */

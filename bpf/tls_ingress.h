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
 * known flow's packet costs one hash lookup.
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

/* Not pinned (lib/bpf/classifier.c): only the running tlsd's statistics read
 * them, and a tlsd that takes over starts its statistics afresh. */
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

SEC("tc")
int tls_ingress(struct __sk_buff *skb)
{
	struct tls_flow_in *f, nf = {};
	struct tls_job_in *st;
	struct pkt p = {};
	__u32 job = TLS_JOB_NONE, gen = 0, egen = TLS_EGEN_SOCKET, segs;
	__u8 a[16];
	__u16 port;
	__u64 bytes, now;
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

	f = NULL;
	if (p.has_ports) {
		f = bpf_map_lookup_elem(&tls_flows_in, &p.key);
		if (f && f->job != TLS_JOB_NONE && f->gen == job_gen(f->job) &&
		    (f->egen == TLS_EGEN_SOCKET || f->egen == current_gen()))
			job = f->job;
		else if (p.key.proto == IPPROTO_TCP || p.key.proto == IPPROTO_UDP) {
			job = ingress_socket_job(skb, &p, &gen);
			if (job == TLS_JOB_NONE && port_has_endpoints(&p)) {
				egen = current_gen();
				job = job_of_endpoint(&p);
				gen = job_gen(job);
			}
			if (job != TLS_JOB_NONE && f) {
				/* the id is another job's now: a new flow */
				__builtin_memset(f, 0, sizeof(*f));
				f->job = job;
				f->gen = gen;
				f->egen = egen;
			}
		}
	}
	st = bpf_map_lookup_elem(&tls_job_in, &job);
	if (st) {
		st->bytes += bytes;
		st->packets++;
		st->segs += segs;
	}
	if (job == TLS_JOB_NONE || !p.has_ports)
		return TC_ACT_UNSPEC;
	now = stamp_ns();
	if (!f) {
		nf.first_ns = now;
		nf.job = job;
		nf.gen = gen;
		nf.egen = egen;
		bpf_map_update_elem(&tls_flows_in, &p.key, &nf, BPF_NOEXIST);
		f = bpf_map_lookup_elem(&tls_flows_in, &p.key);
		if (!f)
			return TC_ACT_UNSPEC;
	}
	if (!f->first_ns)
		f->first_ns = now;
	ingress_flow(f, bytes, data, now);
	return TC_ACT_UNSPEC;
}

#endif /* TLS_INGRESS_H */

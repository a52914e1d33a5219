// SPDX-License-Identifier: GPL-2.0-only
/*
 * tlsd's tc classifier: steers a PS's model-update packets into its job's HTB
 * band class and counts them per job and per flow.
 *
 * It runs on clsact egress and sets skb->priority to the band's class id;
 * HTB's htb_classify() takes that leaf directly and runs no filter of its own.
 * Why clsact rather than a filter on the HTB qdisc: clsact egress runs before
 * the qdisc, outside its root lock, so the parsing, map lookups and counters
 * of every CPU run in parallel instead of serialised under the lock; and the
 * program outlives any rebuild of the HTB tree (crash takeover, tc tinkering).
 * Packets not of a PS are left untouched and fall to HTB's default class.
 *
 * Membership, first match wins:
 *  1. the sending socket's local storage (tls_sk_jobs): set by the cgroup
 *     sock_create hook below for sockets a PS opens, by tlsd for sockets that
 *     existed before, and cloned by the kernel to sockets accepted from a PS
 *     listener (BPF_F_CLONE). This covers the connections a PS opens itself
 *     from ephemeral ports (ps-lite, gloo) as well as accepted ones;
 *  2. the packet's source (address, port) in tls_endpoints, exact then
 *     wildcard address: for packets with no local socket, e.g. a
 *     containerised PS's packets forwarded to this interface. Such a flow's
 *     state lives in a slot of tls_flow_slots, which also caches the job
 *     its endpoint resolved to.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "tls_common.h"
#include "tls_flowlet.h"
#include "tls_rr.h"
#include "tls_burst.h"
#include "tls_flow_slot.h"

/* UNSPEC, not OK: a direct-action OK would end the filter chain and skip
 * any other tool's egress filter behind ours. */
#define TC_ACT_UNSPEC	 (-1)
#define AF_INET		 2
#define AF_INET6	 10
#define ETH_P_IP	 0x0800
#define ETH_P_IPV6	 0x86DD
#define ETH_P_8021Q	 0x8100
#define ETH_P_8021AD	 0x88A8
#define IP_MF		 0x2000
#define IP_OFFSET	 0x1FFF
#define IPV6_FRAG_OFFSET 0xFFF8
#define NEXTHDR_HOP	 0
#define NEXTHDR_ROUTING	 43
#define NEXTHDR_FRAGMENT 44
#define NEXTHDR_DEST	 60
#define MAX_VLAN_TAGS	 2
#define MAX_IPV6_EXT	 6

/* Set by the loader between open and load. */
const volatile __u64 flowlet_gap_ns = 0; /* 0: flowlet switching off */
const volatile __u64 flowlet_hold_ns = 0;
const volatile __u8 dscp_enabled = 0;
/*
 * What the kernel has, as the loader probed it (lib/bpf/kernel_features.c). A gate that
 * is off makes its code dead; the verifier never looks at dead code's helper
 * calls and removes it, so the program loads on kernels without the helper.
 */
const volatile __u8 have_tcp_sock = 1;	   /* bpf_skc_to_tcp_sock (5.9) */
const volatile __u8 have_coarse_clock = 1; /* bpf_ktime_get_coarse_ns (5.11) */
/* No socket-storage iterator, or no release hook: the flow of a PS socket is
 * mirrored into the flow slots on every packet, which tlsd reads anyway. */
const volatile __u8 sk_flow_mirror = 0;
/* Policy bursts's tail call: 0 when its program is not loaded (observe
 * mode, or a verifier that refuses it); the branch is then dead. */
const volatile __u8 have_bursts = 1;

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct tls_flow_rec); /* job, the socket's flow state */
} tls_sk_jobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TLS_MAX_PIDS);
	__type(key, __u32);   /* tgid */
	__type(value, __u32); /* job */
} tls_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TLS_MAX_ENDPOINTS);
	__type(key, struct tls_endpoint_key);
	__type(value, __u32); /* job */
} tls_endpoints SEC(".maps");

/* Bumped by tlsd whenever an endpoint is added or removed: a flow caches the
 * job its endpoint resolved to, valid while the generation is unchanged, so
 * a PS flow's packets pay one flow lookup instead of that plus an endpoint
 * lookup. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tls_gen SEC(".maps");

/* Endpoints per local port, any family and address: a packet from a port
 * with none skips both endpoint hash lookups for one array load. Most
 * packets that reach the fallback are no PS's. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);   /* port, host order */
	__type(value, __u32); /* number of endpoints with this port */
} tls_ports SEC(".maps");

/* mmapable: tlsd writes a rotation straight into the map's memory, one
 * 8-byte store per job, without a syscall. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TLS_MAX_JOBS);
	__type(key, __u32);
	__type(value, struct tls_job);
} tls_jobs SEC(".maps");

/* Per job id, its generation: tlsd bumps it when it frees the id. A socket
 * tagged with a job keeps the generation it was tagged at (flow.gen), so a
 * socket that outlives its job (handed to another process before the PS
 * exited) is not taken for the job that gets the id next. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TLS_MAX_JOBS);
	__type(key, __u32);
	__type(value, __u32);
} tls_job_gens SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TLS_MAX_BANDS);
	__type(key, __u32);
	__type(value, struct tls_band);
} tls_bands SEC(".maps");

/* Policy roundrobin's order (tls_rr.h), two entries (tls_common.h): a job
 * flagged TLS_JOB_F_RR takes its band from the clock. Not pinned: tlsd
 * writes it at start, with the jobs' entries. mmapable: tlsd reads the
 * order in use without a syscall (a scrape asks every job's band). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct tls_rr);
} tls_rr SEC(".maps");

/* Policy `bursts`: the order of the jobs' bursts (tls_burst.h). Not pinned:
 * a new tlsd starts with an empty order, which the next packets fill. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tls_burst);
} tls_burst SEC(".maps");

/* Policy `bursts`: each job's weight in the order's fair share, written by
 * tlsd from the statistics (TLS_BURST_W1 units; 0: TLS_BURST_W1). Not
 * pinned, as the order: a new program's start equal until tlsd's next
 * statistics sample writes them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TLS_MAX_JOBS);
	__type(key, __u32);
	__type(value, __u32);
} tls_weight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TLS_MAX_JOBS);
	__type(key, __u32);
	__type(value, struct tls_job_stats);
} tls_job_stats SEC(".maps");

/* Flows known by endpoint, TLS_FLOW_WAYS slots per set, the set chosen by a
 * hash of the flow key: a lookup is two inlined array loads and a compare.
 * A new flow takes an empty slot of its set or the one idle longest; the
 * flow it pushes out moves to tls_flows. So a collision costs a statistic's
 * continuity at worst, never a classification (a flow not in its set
 * resolves its job from tls_endpoints). mmapable, for readers that want it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TLS_FLOW_SLOTS);
	__type(key, __u32);
	__type(value, struct tls_flow_rec);
} tls_flow_slots SEC(".maps");

/* A byte for each set of tls_flow_slots, counting the takes of its slots
 * and the resumes of their flows (tls_common.h): a reader visits the sets
 * ever used (8 kB) and not the 1.4 MB of slots, and of those the ways it
 * saw holding a flow (lib/bpf/slot_ways.h). Not pinned: each program marks what it takes, and tlsd
 * marks what the slots held before (a takeover's), by a scan of their memory
 * (lib/bpf/flow_slots.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, TLS_FLOW_USED_ENTRIES);
	__type(key, __u32);
	__type(value, __u64);
} tls_slots_used SEC(".maps");

/* Flows that ended (released PS sockets) or were pushed out of their slot. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, TLS_MAX_FLOWS);
	__type(key, struct tls_flow_key);
	__type(value, struct tls_flow);
} tls_flows SEC(".maps");

/* Not used by the programs: kept pinned beside the maps for the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tls_state);
} tls_state SEC(".maps");

/* Not used by the programs either: the layout version of the pins
 * (lib/bpf/pin_layout.h). Its format (one __u32) never changes. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tls_layout SEC(".maps");

/* What the parser learned of a packet. */
struct pkt {
	struct tls_flow_key key; /* local = source, remote = destination */
	__u32 l3_off;
	__u32 hdr_len; /* L2 through L4 header; 0 when not known */
	__u8 has_l3;
	__u8 has_ports;
};

/* What tls_classify hands to tls_classify_bursts through the tail call: the
 * packet as parsed, its job, the endpoints' generation it resolved the job
 * under, and what it counted. Per CPU: the tail call runs on its caller's
 * CPU right after it. seq (first: the BPF tests read it) tells a context
 * another packet wrote meanwhile: a writer moves it on before it writes
 * the rest, and both halves check it after (tls_classify before its tail
 * call, tls_classify_bursts after its copy) against the packet's cb[0]. */
struct tls_tail_ctx {
	__u32 seq;
	__u32 job;
	__u32 band;
	__u32 gen;
	__u64 bytes;
	struct pkt p;
	__u8 data;
	__u8 from_sk;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tls_tail_ctx);
} tls_tail_ctx SEC(".maps");

/* Slot 0: tls_classify_bursts, put there by tlsd after the load. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tls_tail SEC(".maps");

struct vlan_tag {
	__be16 tci;
	__be16 proto;
};

struct ext_hdr {
	__u8 nexthdr;
	__u8 hdrlen;
};

/*
 * Every read is bounds-checked against data_end, so a frame truncated at any
 * point yields what was learned before the cut and never an out-of-bounds read.
 */
static __always_inline void parse_l4(void *data, void *end, __u32 off, struct pkt *p)
{
	if (off > 1024)
		return;
	if (p->key.proto == IPPROTO_TCP) {
		struct tcphdr *th = data + off;

		if ((void *)(th + 1) > end)
			return;
		p->key.lport = th->source;
		p->key.rport = th->dest;
		p->has_ports = 1;
		p->hdr_len = off + th->doff * 4;
	} else if (p->key.proto == IPPROTO_UDP) {
		struct udphdr *uh = data + off;

		if ((void *)(uh + 1) > end)
			return;
		p->key.lport = uh->source;
		p->key.rport = uh->dest;
		p->has_ports = 1;
		p->hdr_len = off + sizeof(*uh);
	}
}

static __always_inline void parse_ipv4(void *data, void *end, __u32 off, struct pkt *p)
{
	struct iphdr *iph = data + off;
	__u32 ihl;

	if ((void *)(iph + 1) > end || iph->version != 4)
		return;
	ihl = iph->ihl * 4;
	if (ihl < sizeof(*iph))
		return;
	p->key.family = AF_INET;
	p->key.proto = iph->protocol;
	__builtin_memcpy(p->key.laddr, &iph->saddr, 4);
	__builtin_memcpy(p->key.raddr, &iph->daddr, 4);
	p->l3_off = off;
	p->has_l3 = 1;
	/* A non-first fragment carries no L4 header: no ports to match. */
	if (iph->frag_off & bpf_htons(IP_OFFSET))
		return;
	parse_l4(data, end, off + ihl, p);
}

static __always_inline void parse_ipv6(void *data, void *end, __u32 off, struct pkt *p)
{
	struct ipv6hdr *ip6 = data + off;
	__u8 nexthdr;
	int i;

	if ((void *)(ip6 + 1) > end || ip6->version != 6)
		return;
	p->key.family = AF_INET6;
	__builtin_memcpy(p->key.laddr, &ip6->saddr, 16);
	__builtin_memcpy(p->key.raddr, &ip6->daddr, 16);
	p->l3_off = off;
	p->has_l3 = 1;
	nexthdr = ip6->nexthdr;
	off += sizeof(*ip6);

#pragma unroll
	for (i = 0; i < MAX_IPV6_EXT; i++) {
		struct ext_hdr *eh = data + off;

		if (nexthdr != NEXTHDR_HOP && nexthdr != NEXTHDR_ROUTING &&
		    nexthdr != NEXTHDR_DEST && nexthdr != NEXTHDR_FRAGMENT && nexthdr != IPPROTO_AH)
			break;
		if (off > 512 || (void *)(eh + 1) > end)
			return;
		if (nexthdr == NEXTHDR_FRAGMENT) {
			struct frag_hdr *fh = data + off;

			if ((void *)(fh + 1) > end)
				return;
			if (fh->frag_off & bpf_htons(IPV6_FRAG_OFFSET))
				return; /* later fragment: no ports */
			nexthdr = fh->nexthdr;
			off += sizeof(*fh);
			continue;
		}
		/* The length is the current header's: AH counts 32-bit words
		 * minus 2, the others 8-byte units minus 1. */
		if (nexthdr == IPPROTO_AH)
			off += (eh->hdrlen + 2) * 4;
		else
			off += (eh->hdrlen + 1) * 8;
		nexthdr = eh->nexthdr;
	}
	p->key.proto = nexthdr;
	parse_l4(data, end, off, p);
}

static __always_inline void parse(struct __sk_buff *skb, struct pkt *p)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	__be16 proto;
	int i;

	if ((void *)(eth + 1) > end)
		return;
	proto = eth->h_proto;
#pragma unroll
	for (i = 0; i < MAX_VLAN_TAGS; i++) {
		struct vlan_tag *vt = data + off;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vt + 1) > end)
			return;
		proto = vt->proto;
		off += sizeof(*vt);
	}
	if (proto == bpf_htons(ETH_P_IP))
		parse_ipv4(data, end, off, p);
	else if (proto == bpf_htons(ETH_P_IPV6))
		parse_ipv6(data, end, off, p);
}

static __always_inline __u32 job_gen(__u32 job)
{
	__u32 *g = bpf_map_lookup_elem(&tls_job_gens, &job);

	return g ? *g : 0;
}

/* A socket's tag is its job's while the job id has not been freed since. */
static __always_inline bool sk_tag_current(const struct tls_flow_rec *s)
{
	return s->flow.job != TLS_JOB_NONE && s->flow.gen == job_gen(s->flow.job);
}

/* The flow record of the sending socket, if it belongs to a PS. */
static __always_inline struct tls_flow_rec *socket_flow(struct __sk_buff *skb)
{
	struct bpf_sock *sk = skb->sk;
	struct tls_flow_rec *s;

	/* A socket with no local port sends no flow of a job. Checked before
	 * the storage lookup, a helper call (a plain load of the socket): it
	 * also spares that call for the socket BPF_PROG_TEST_RUN attaches to
	 * its packets, which has no port, so that the benchmark measures the
	 * fallback path as a forwarded packet (no socket at all) takes it. The
	 * storage lookup itself refuses request and timewait sockets. */
	if (!sk || !sk->src_port)
		return NULL;
	s = bpf_sk_storage_get(&tls_sk_jobs, sk, 0, 0);
	if (!s || s->flow.job == TLS_JOB_NONE)
		return NULL;
	if (!sk_tag_current(s)) {
		/* Its job is gone: the socket is no PS's from now on (its
		 * packets take the endpoint path, like any other socket's). */
		s->flow.job = TLS_JOB_NONE;
		return NULL;
	}
	return s;
}

static __always_inline bool port_has_endpoints(struct pkt *p)
{
	__u32 port = bpf_ntohs(p->key.lport);
	__u32 *n = bpf_map_lookup_elem(&tls_ports, &port);

	return n && *n;
}

static __always_inline __u32 current_gen(void)
{
	__u32 zero = 0, *g = bpf_map_lookup_elem(&tls_gen, &zero);

	return g ? *g : 0;
}

static __always_inline __u32 job_of_endpoint(struct pkt *p)
{
	struct tls_endpoint_key k = {
		.family = p->key.family,
		.proto = p->key.proto,
		.port = p->key.lport,
	};
	__u32 *job;

	__builtin_memcpy(k.addr, p->key.laddr, sizeof(k.addr));
	job = bpf_map_lookup_elem(&tls_endpoints, &k);
	if (job)
		return *job;
	__builtin_memset(k.addr, 0, sizeof(k.addr));
	job = bpf_map_lookup_elem(&tls_endpoints, &k);
	return job ? *job : TLS_JOB_NONE;
}

/* Rewrite the DSCP bits, keeping ECN, fixing the IPv4 header checksum. */
static __always_inline void set_dscp(struct __sk_buff *skb, struct pkt *p, __u8 dscp)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	__u32 off = p->l3_off;
	__be16 *word = data + off;
	__be16 old, new;

	if (off > 64 || (void *)(word + 1) > end)
		return;
	old = *word;
	if (p->key.family == AF_INET) {
		__u16 h = bpf_ntohs(old);

		new = bpf_htons((h & 0xff03) | ((__u16)dscp << 2));
		if (new == old)
			return;
		if (bpf_l3_csum_replace(skb, off + offsetof(struct iphdr, check), old, new, 2))
			return; /* leave the packet valid, unmarked */
	} else {
		/* version:4 | traffic class:8 | flow label:4 of the first 16 bits */
		__u16 h = bpf_ntohs(old);

		new = bpf_htons((h & 0xf03f) | ((__u16)dscp << 6));
		if (new == old)
			return;
	}
	bpf_skb_store_bytes(skb, off, &new, sizeof(new), 0);
}

/*
 * Time: bpf_ktime_get_ns() costs ~28 ns a call here, more than half the
 * program, while the coarse clock (the last tick, same CLOCK_MONOTONIC base,
 * never ahead of the fine one) is nearly free. So a flow is stamped with the
 * coarse clock, and the fine clock is read only while its band differs from
 * its job's, i.e. around a rotation. The first such packet compares against a
 * coarse stamp, which may lag the true last packet by up to one tick: it adds
 * a tick (1/CONFIG_HZ) so that an idle gap is never overestimated. While a promotion is pending,
 * stamps are fine.
 */
extern unsigned int CONFIG_HZ __kconfig __weak; /* 0 when the config is unknown */

static __always_inline __u64 coarse_slack_ns(void)
{
	/* One tick; 10 ms (HZ=100, the slowest) when HZ is unknown; none when
	 * the stamps are fine ones. */
	if (!have_coarse_clock)
		return 0;
	return CONFIG_HZ ? 1000000000ULL / CONFIG_HZ : 10ULL * 1000 * 1000;
}

/* The stamp clock: coarse where the kernel has it. */
static __always_inline __u64 stamp_ns(void)
{
	return have_coarse_clock ? bpf_ktime_get_coarse_ns() : bpf_ktime_get_ns();
}

/* What one skb adds to its socket's write memory beyond its length: the
 * sk_buff, the shared info and the head (~1.1-1.3 KB for TCP's skbs). A
 * data packet queued before this one adds its length and as much again. */
#define SKB_OVERHEAD_MAX 2048

/*
 * Whether the sending TCP socket has no packet below TCP but this one: its
 * write memory (sk_wmem_alloc: 1 plus the true size of every skb it has
 * handed down and not had freed) holds this packet alone, i.e. less than its
 * length plus one skb's overhead. A queued pure ACK may go unseen (overtaking
 * an ACK reorders no data). 1 yes, 0 no, -1 not a TCP socket (ask the
 * clock). Read only around a band change. The skb's own true size would be
 * exact, but reading it needs bpf_cast_to_kern_ctx (kernel 6.2). Sound while
 * the leaf qdiscs keep skbs charged until they dequeue them (HTB's pfifo,
 * fq_codel do; netem orphans them).
 */
static __always_inline int sk_drained(struct __sk_buff *skb)
{
	struct bpf_sock *bsk = skb->sk;
	struct tcp_sock *tp;
	int wmem;

	if (!have_tcp_sock || !bsk)
		return -1;
	tp = bpf_skc_to_tcp_sock(bsk);
	if (!tp)
		return -1;
	wmem = tp->inet_conn.icsk_inet.sk.sk_wmem_alloc.refs.counter;
	return wmem - 1 < (int)skb->len + SKB_OVERHEAD_MAX;
}

/* Count a packet of flow f and decide its band (flowlet switching). skb:
 * the packet, when f is its socket's flow; NULL for a flow known by
 * endpoint. hold_ns, demote_hold_ns: the longest a change to a higher,
 * or a lower, priority band waits for the flow to drain (the flowlet
 * hold; policy bursts has its own, burst_band()). */
static __always_inline __u32 flow_update(struct tls_flow *f, __u32 target, __u64 bytes,
					 struct tls_job_stats *st, struct __sk_buff *skb, __u64 hold_ns,
					 __u64 demote_hold_ns)
{
	__u64 now = stamp_ns(), fine, last;
	enum tls_flowlet_verdict v;
	int drained;

	/* Plain adds, not atomics: a local TCP socket transmits under its
	 * socket lock, so one flow's packets do not race here; a forwarded
	 * flow stays on its RSS CPU. A rare lost update costs a few bytes of
	 * a per-flow statistic, never a classification. */
	f->bytes += bytes;
	f->packets++;
	if (!f->first_ns) {
		/* first packet: a new flow takes its job's band at once */
		f->first_ns = now;
		f->last_ns = now;
		f->pending_ns = 0;
		f->band = target;
		return target;
	}
	if (f->band == target) {
		f->pending_ns = 0;
		f->last_ns = now;
		return target;
	}
	fine = bpf_ktime_get_ns();
	if (target > f->band)
		hold_ns = demote_hold_ns;
	drained = skb ? sk_drained(skb) : -1;
	if (drained >= 0) {
		v = tls_flowlet_step_drained(&f->band, &f->pending_ns, target, fine, drained,
					     flowlet_gap_ns, hold_ns);
	} else {
		last = f->pending_ns ? f->last_ns : f->last_ns + coarse_slack_ns();
		v = tls_flowlet_step(&f->band, &f->pending_ns, last, target, fine, flowlet_gap_ns,
				     hold_ns);
	}
	f->last_ns = fine;
	if (st) {
		if (v == TLS_FLOWLET_DEMOTE)
			st->demotions++;
		else if (v == TLS_FLOWLET_PROMOTE)
			st->promotions++;
		else if (v == TLS_FLOWLET_HOLD)
			st->held++;
	}
	return f->band;
}

static __always_inline bool key_eq(const struct tls_flow_key *a, const struct tls_flow_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

_Static_assert(TLS_FLOW_WAYS == 2, "slot_find looks at two ways");

/* The slot of a flow (hash *h), or NULL and in *victim the slot a new flow
 * of this set would take. */
static __always_inline struct tls_flow_rec *slot_find_key(const struct tls_flow_key *k, __u64 *h,
							  struct tls_flow_rec **victim)
{
	__u32 i, i1;
	struct tls_flow_rec *a, *b;

	*h = tls_flow_hash(k);
	i = tls_flow_set_slot(*h);
	i1 = i + 1;
	a = bpf_map_lookup_elem(&tls_flow_slots, &i);
	b = bpf_map_lookup_elem(&tls_flow_slots, &i1);
	*victim = NULL;
	if (!a || !b)
		return NULL;
	if (key_eq(&a->key, k))
		return a;
	if (key_eq(&b->key, k))
		return b;
	/* an empty slot, else the one idle longer */
	if (!a->key.family)
		*victim = a;
	else if (!b->key.family)
		*victim = b;
	else
		*victim = a->flow.last_ns <= b->flow.last_ns ? a : b;
	return NULL;
}

static __always_inline struct tls_flow_rec *slot_find(const struct pkt *p, __u64 *h,
						      struct tls_flow_rec **victim)
{
	return slot_find_key(&p->key, h, victim);
}

#define compiler_barrier() __asm__ __volatile__("" : : : "memory")

/* A flow takes a slot of set number set, or resumes after an idle time
 * (TLS_SLOT_RESUME_NS): count it in the set's byte of a map of used sets
 * (tls_slots_used, tls_in_used), which is never 0 again (the set is used). A plain load and store:
 * CPUs that count at once may count one take where there were two, but the byte still changes, and
 * a change is what tlsd looks for (lib/bpf/slot_ways.h). */
static __always_inline void mark_used(void *used_map, __u32 set)
{
	__u32 w = set / 8;
	__u8 *used = bpf_map_lookup_elem(used_map, &w);

	if (used) /* 1..255, then 1 again */
		used[set % 8] = used[set % 8] % 255 + 1;
}

/* A record went into or out of an LRU flow map: count it in the last
 * entry of that slot array's used map (at index words; TLS_FLOW_USED_ENTRIES
 * says why). An add whose result is not used: kernels before 5.12 take it. */
static __always_inline void lru_moved(void *used_map, __u32 words)
{
	__u64 *n = bpf_map_lookup_elem(used_map, &words);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/*
 * A flow found by its endpoint: its state lives in a slot of tls_flow_slots.
 * Plain stores, like the counters; the seal (check) goes last, so that a
 * slot two CPUs wrote at once is not trusted (see tls_flow_check).
 */
static __always_inline __u32 endpoint_flow_band(struct tls_flow_rec *f, struct tls_flow_rec *victim,
						struct pkt *p, __u64 h, __u32 job, __u32 gen,
						__u32 target, __u64 bytes, struct tls_job_stats *st,
						__u64 hold_ns, __u64 demote_hold_ns)
{
	struct tls_flow *old;
	__u64 last;
	__u32 band;

	if (!f) {
		if (!victim)
			return target;
		f = victim;
		f->flow.check = 0;
		compiler_barrier();
		/* The flow pushed out keeps its counters, in the LRU map. */
		if (f->key.family && f->flow.first_ns) {
			bpf_map_update_elem(&tls_flows, &f->key, &f->flow, BPF_ANY);
			lru_moved(&tls_slots_used, TLS_FLOW_USED_WORDS);
		}
		f->key = p->key;
		/* counted once the way holds its key (a reader that sees the
		 * count reads the way) */
		mark_used(&tls_slots_used, tls_flow_set_slot(h) / TLS_FLOW_WAYS);
		/* A flow coming back takes its state along: its counters go on,
		 * and a band change it was holding still waits; its record
		 * goes, a key of a job lives in one place. Another job's record
		 * of the key stays: it is another flow to the readers (key and
		 * job), whose last counters they may not have read yet. */
		old = bpf_map_lookup_elem(&tls_flows, &p->key);
		if (old && (old->job == job || !old->first_ns)) {
			bool mine = old->job == job && old->first_ns;

			if (mine)
				f->flow = *old;
			bpf_map_delete_elem(&tls_flows, &p->key);
			lru_moved(&tls_slots_used, TLS_FLOW_USED_WORDS);
			if (mine)
				goto update;
		}
	} else if (f->flow.job == job) {
		goto update;
	}
	/* a new flow, or one whose endpoint now names another job */
	f->flow.check = 0;
	compiler_barrier();
	f->key = p->key; /* another CPU may have put another flow's key here */
	/* a way another CPU emptied meanwhile (unmirror_sk_flow) holds a
	 * flow again: counted as a take */
	mark_used(&tls_slots_used, tls_flow_set_slot(h) / TLS_FLOW_WAYS);
	f->flow.first_ns = stamp_ns();
	f->flow.last_ns = f->flow.first_ns;
	f->flow.bytes = bytes;
	f->flow.packets = 1;
	f->flow.pending_ns = 0;
	f->flow.job = job;
	f->flow.band = target;
	f->flow.gen = gen;
	compiler_barrier();
	f->flow.check = tls_flow_check(h, job, gen);
	return target;
update:
	f->flow.gen = gen;
	last = f->flow.last_ns;
	band = flow_update(&f->flow, target, bytes, st, NULL, hold_ns, demote_hold_ns);
	if (last && (__s64)(f->flow.last_ns - last) > (__s64)TLS_SLOT_RESUME_NS)
		mark_used(&tls_slots_used, tls_flow_set_slot(h) / TLS_FLOW_WAYS);
	compiler_barrier();
	f->flow.check = tls_flow_check(h, job, gen);
	return band;
}

/*
 * sk_flow_mirror: a copy of a PS socket's flow in its slot, for readers that
 * cannot walk socket storage. Sealed with TLS_FLOW_MIRROR, so the endpoint
 * path never trusts it for a job. A flow taking a slot pushes the one there
 * to tls_flows, as the endpoint path does, and drops an older copy of its
 * own from there, or the two would be counted twice.
 */
static __always_inline void mirror_sk_flow(struct tls_flow_rec *s, const struct pkt *p)
{
	struct tls_flow_rec *f, *victim;
	struct tls_flow *old;
	__u64 h;

	f = slot_find(p, &h, &victim);
	if (!f) {
		if (!victim)
			return;
		f = victim;
		f->flow.check = 0;
		compiler_barrier();
		if (f->key.family && f->flow.first_ns)
			bpf_map_update_elem(&tls_flows, &f->key, &f->flow, BPF_ANY);
		/* its own older copy goes; another job's record of the key
		 * stays, as on the endpoint path */
		old = bpf_map_lookup_elem(&tls_flows, &p->key);
		if (old && (old->job == s->flow.job || !old->first_ns))
			bpf_map_delete_elem(&tls_flows, &p->key);
		lru_moved(&tls_slots_used, TLS_FLOW_USED_WORDS);
		f->key = p->key;
		mark_used(&tls_slots_used, tls_flow_set_slot(h) / TLS_FLOW_WAYS);
	} else {
		/* The same key, but the endpoint path's record: the packets
		 * sent before the socket was a full one (the SYN-ACK of a
		 * request socket). They become the socket's flow's: one flow,
		 * one record, as the release hook will file it. */
		bool mine = f->flow.check ==
			    (tls_flow_check(h, f->flow.job, f->flow.gen) ^ TLS_FLOW_MIRROR);

		f->flow.check = 0;
		compiler_barrier();
		if (!mine && f->flow.first_ns) {
			s->flow.bytes += f->flow.bytes;
			s->flow.packets += f->flow.packets;
			if (f->flow.first_ns < s->flow.first_ns)
				s->flow.first_ns = f->flow.first_ns;
		}
		/* the copy's flow was idle: a resume (TLS_SLOT_RESUME_NS) */
		if (f->flow.last_ns &&
		    (__s64)(s->flow.last_ns - f->flow.last_ns) > (__s64)TLS_SLOT_RESUME_NS)
			mark_used(&tls_slots_used, tls_flow_set_slot(h) / TLS_FLOW_WAYS);
	}
	compiler_barrier();
	f->flow = s->flow;
	compiler_barrier();
	f->flow.check = tls_flow_check(h, s->flow.job, s->flow.gen) ^ TLS_FLOW_MIRROR;
}

/* The socket is gone: its mirrored copy leaves the slots (the release hook
 * files the final state in tls_flows). */
static __always_inline void unmirror_sk_flow(const struct tls_flow_key *k)
{
	struct tls_flow_rec *f, *victim;
	__u64 h;

	f = slot_find_key(k, &h, &victim);
	if (!f)
		return;
	f->flow.check = 0;
	compiler_barrier();
	f->key.family = 0;
	/* a reader that skips the way as idle reads it empty now */
	mark_used(&tls_slots_used, tls_flow_set_slot(h) / TLS_FLOW_WAYS);
}

/* Policy `bursts`: the job's place in the order of bursts decides its band
 * (tls_burst.h); `fallback` if the order cannot be had. payload: the
 * packet's bytes if it carries payload, else 0.
 *
 * *hold_ns: how long a flow with packets still queued keeps its old band
 * when its band rises. Under this policy a band rises only when the bands
 * run out and all move up at once (tls_burst_place): each flow keeps the
 * order it had among the others, so it may keep its old band until it
 * drains, for as long as the order lets any burst hold the link
 * (limit_ns). With the flowlet hold instead (100 ms, set for rotations),
 * a starved flow moved up while still starved and reordered its own
 * packets (tests/bench/RESULTS.md). */
static __always_inline __u32 burst_band(__u32 job, __u32 fallback, __u64 payload, __u64 *hold_ns,
					__u64 *demote_hold_ns)
{
	struct tls_burst *o;
	__u32 zero = 0, band, w = TLS_BURST_W1, *wp;
	__u64 now = stamp_ns();

	/* before the lock: no helper call while it is held. As written (tlsd
	 * writes 0 or TLS_BURST_W1..TLS_BURST_W_MAX, tls_set_job_weight): a
	 * clamp here is two more branches in every path after it. */
	wp = bpf_map_lookup_elem(&tls_weight, &job);
	if (wp)
		w = *wp;
	o = bpf_map_lookup_elem(&tls_burst, &zero);
	if (!o)
		return fallback;
	bpf_spin_lock(&o->lock);
	band = tls_burst_step_w(o, job, now, payload, w);
	if (o->limit_ns)
		*hold_ns = o->limit_ns;
	*demote_hold_ns = o->demote_hold_ns;
	bpf_spin_unlock(&o->lock);
	return band;
}

/* The packet's bytes on the wire, *segs its segments, for the ingress
 * counter. HTB counts qdisc_pkt_len(): every GSO segment with its headers.
 * tls_classify keeps its own copy of these lines: through this function the
 * verifier's path count for it changes (727,760 to 641,012 instructions on
 * 6.18), and its figures are measured with that code (tests/bench). */
static __always_inline __u64 wire_bytes(struct __sk_buff *skb, const struct pkt *p, __u32 *segs)
{
	__u64 bytes = skb->len;
	__u32 n = skb->gso_segs;

	if (!n && skb->gso_size && p->hdr_len && skb->len > p->hdr_len)
		/* untrusted GSO (virtio, tap): HTB recomputes the count too */
		n = (skb->len - p->hdr_len + skb->gso_size - 1) / skb->gso_size;
	if (!n)
		n = 1;
	if (n > 1 && p->hdr_len)
		bytes += (__u64)(n - 1) * p->hdr_len;
	*segs = n;
	return bytes;
}

/*
 * The rest of a packet's way once its job's band is known: its flow's
 * state (the flowlet step) and the band that goes on the packet. s: the
 * sending socket's flow record; else f, victim, h: its endpoint flow's
 * slot, as slot_find() found them, gen the endpoints' generation.
 */
static __always_inline int classify_finish(struct __sk_buff *skb, struct pkt *p,
					   struct tls_flow_rec *s, struct tls_flow_rec *f,
					   struct tls_flow_rec *victim, __u64 h, __u32 job, __u32 gen,
					   __u32 band, __u64 bytes, int data, struct tls_job_stats *st,
					   __u64 hold, __u64 demote_hold)
{
	struct tls_band *b;

	if (s) {
		if (!s->flow.first_ns && p->has_ports)
			s->key = p->key; /* for the release hook */
		band = flow_update(&s->flow, band, bytes, st, skb, hold, demote_hold);
		if (sk_flow_mirror && p->has_ports)
			mirror_sk_flow(s, p);
	} else if (p->has_ports)
		band = endpoint_flow_band(f, victim, p, h, job, gen, band, bytes, st, hold,
					  demote_hold);
	/* A PS's pure ACK goes first, whatever the policy's band for its
	 * job. In a lower band, behind a broadcast, it would hold back its
	 * workers' gradients, and the job's next broadcast with them: under
	 * a 2 s rotation a job in the last band waited 1.4 s for its last
	 * gradient (tests/bench/RESULTS.md, issue 13). It takes next to
	 * nothing from the link. Its flow's band (the flowlet state) stays
	 * that of its data. */
	if (!data && band < TLS_MAX_BANDS)
		band = 0;
	if (band >= TLS_MAX_BANDS)
		return TC_ACT_UNSPEC;
	b = bpf_map_lookup_elem(&tls_bands, &band);
	if (!b || !b->classid)
		return TC_ACT_UNSPEC;
	skb->priority = b->classid;
	if (dscp_enabled && b->dscp != TLS_DSCP_NONE && p->has_l3)
		set_dscp(skb, p, b->dscp);
	return TC_ACT_UNSPEC;
}

/*
 * Policy bursts's half of the classifier, reached by a tail call from
 * tls_classify for a job under it, with the packet as tls_classify parsed
 * it (tls_tail_ctx). Verified apart: the burst order's step and the flow
 * step behind it, each with its branches, were one program before, at
 * 589,820 of the verifier's million instructions, and one more branch in
 * the per-packet path took it past the million (docs/design.md, "The
 * verifier's budget"). A tail call, not a subprogram call: older verifiers
 * refuse a call while the order's spin lock is held.
 */
SEC("tc")
int tls_classify_bursts(struct __sk_buff *skb)
{
	struct tls_flow_rec *s = NULL, *f = NULL, *victim = NULL;
	__u64 h = 0, bytes, hold = flowlet_hold_ns, demote_hold = flowlet_hold_ns;
	struct tls_job_stats *st;
	struct tls_tail_ctx *c;
	__u32 zero = 0, job, band, gen = 0;
	struct pkt p;
	int data;

	c = bpf_map_lookup_elem(&tls_tail_ctx, &zero);
	if (!c)
		return TC_ACT_UNSPEC;
	p = c->p;
	__asm__ __volatile__("" : : "r"(&p) : "memory");
	job = c->job;
	band = c->band;
	gen = c->gen;
	bytes = c->bytes;
	data = c->data;
	compiler_barrier();
	/* Another packet's context, or part of one: on the egress path the
	 * two halves run back to back with bottom halves off, but where
	 * those do not keep others off this CPU (BPF_PROG_TEST_RUN; a
	 * PREEMPT_RT kernel without its softirq lock) another sender can
	 * come in between. This packet is then left to the default class
	 * rather than given another's band or flow. */
	if (*(volatile __u32 *)&c->seq != skb->cb[0])
		return TC_ACT_UNSPEC;
	if (c->from_sk) {
		s = socket_flow(skb);
	} else if (p.has_ports) {
		/* the generation tls_classify resolved the job under: read
		 * again, a later one would seal a job the endpoints may no
		 * longer give */
		f = slot_find(&p, &h, &victim);
	}
	st = bpf_map_lookup_elem(&tls_job_stats, &job);
	/* A burst that passes another takes its band at once (demote_hold
	 * 0): held, the passed flows would share it (FSP's order undone).
	 * Their new packets can pass their own queued ones only while the
	 * lower band is under its floor rate (16 kB). Measured both ways:
	 * tests/bench/RESULTS.md. */
	band = burst_band(job, band, data ? bytes : 0, &hold, &demote_hold);
	return classify_finish(skb, &p, s, f, victim, h, job, gen, band, bytes, data, st, hold,
			       demote_hold);
}

SEC("tc")
int tls_classify(struct __sk_buff *skb)
{
	struct tls_flow_rec *s, *f = NULL, *victim = NULL;
	__u64 h = 0;
	struct pkt p = {};
	struct tls_job_stats *st;
	struct tls_tail_ctx *c;
	struct tls_job *j;
	__u32 job = TLS_JOB_NONE, band, segs, gen = 0, zero = 0;
	int data = 1;
	__u64 bytes;

	parse(skb, &p);
	/* Keep the parsed packet one object in memory. Without this clang
	 * splits it into scalars and copies the rest of the program once per
	 * parse outcome: twice the instructions, a third slower (measured). */
	__asm__ __volatile__("" : : "r"(&p) : "memory");
	/* A PS socket carries its job and its flow state: no hash lookup. */
	s = socket_flow(skb);
	if (s) {
		job = s->flow.job;
	} else if (p.has_ports && port_has_endpoints(&p)) {
		/* The fallback. A packet from a port no endpoint uses costs no
		 * hash lookup at all; a known flow reuses the job its endpoint
		 * resolved to until the endpoints change. */
		f = slot_find(&p, &h, &victim);
		gen = current_gen();
		if (f && f->flow.check == tls_flow_check(h, f->flow.job, gen))
			job = f->flow.job;
		else
			job = job_of_endpoint(&p);
	}

	/* HTB counts qdisc_pkt_len(): every GSO segment with its headers. */
	segs = skb->gso_segs;
	if (!segs && skb->gso_size && p.hdr_len && skb->len > p.hdr_len)
		/* untrusted GSO (virtio, tap): HTB recomputes the count too */
		segs = (skb->len - p.hdr_len + skb->gso_size - 1) / skb->gso_size;
	if (!segs)
		segs = 1;
	bytes = skb->len;
	if (segs > 1 && p.hdr_len)
		bytes += (__u64)(segs - 1) * p.hdr_len;

	st = bpf_map_lookup_elem(&tls_job_stats, &job);
	if (st) {
		st->bytes += bytes;
		st->packets++;
		st->segs += segs;
	}
	if (job == TLS_JOB_NONE)
		return TC_ACT_UNSPEC;

	j = bpf_map_lookup_elem(&tls_jobs, &job);
	if (!j)
		return TC_ACT_UNSPEC;
	band = (j->flags & TLS_JOB_F_BAND) ? j->band : TLS_BAND_NONE;
	if ((j->flags & (TLS_JOB_F_BAND | TLS_JOB_F_RR)) == (TLS_JOB_F_BAND | TLS_JOB_F_RR)) {
		/* roundrobin: the band of this moment, rotations at their
		 * exact time: the coarse clock where it cannot be a step
		 * behind, else the precise one (tls_rr.h) */
		__u32 sel = TLS_JOB_RR_SEL(j->flags);
		struct tls_rr *r = bpf_map_lookup_elem(&tls_rr, &sel);

		if (r) {
			__u64 turn = *(volatile __u64 *)&r->turn, t = turn, now = stamp_ns();
			__u32 lead;

			if (have_coarse_clock && !tls_rr_sure(r, turn, now))
				now = bpf_ktime_get_ns();
			lead = tls_rr_lead(r, now, &t);

			if (t != turn) /* one 8-byte store: step and leader together */
				*(volatile __u64 *)&r->turn = t;
			band = tls_rr_band_at(r, TLS_JOB_RR_INDEX(j->flags), lead, band);
		}
	}
	/* payload, or not known not to have any */
	data = !p.hdr_len || skb->len > p.hdr_len;
	if (have_bursts &&
	    (j->flags & (TLS_JOB_F_BAND | TLS_JOB_F_BURST)) == (TLS_JOB_F_BAND | TLS_JOB_F_BURST) &&
	    (c = bpf_map_lookup_elem(&tls_tail_ctx, &zero))) {
		__u32 seq = c->seq + 1;

		c->seq = seq;
		compiler_barrier();
		c->p = p;
		c->job = job;
		c->band = band;
		c->gen = gen;
		c->bytes = bytes;
		c->data = data;
		c->from_sk = s != NULL;
		skb->cb[0] = seq;
		compiler_barrier();
		/* still this packet's (see tls_classify_bursts) */
		if (*(volatile __u32 *)&c->seq == seq)
			bpf_tail_call(skb, &tls_tail, 0);
		/* No program in the slot (tlsd fills it after the load, and
		 * pins it), or the context taken meanwhile: the job's own
		 * band, as under a static policy. */
	}
	return classify_finish(skb, &p, s, f, victim, h, job, gen, band, bytes, data, st,
			       flowlet_hold_ns, flowlet_hold_ns);
}

#include "tls_ingress.h"

/*
 * cgroup sock_create: a socket opened by a process of a PS (by tgid) carries
 * its job from birth, whatever ports it later binds or connects to.
 */
SEC("cgroup/sock_create")
int tls_sock_create(struct bpf_sock *sk)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct tls_flow_rec *s;
	__u32 *job;

	if (sk->family != AF_INET && sk->family != AF_INET6)
		return 1;
	job = bpf_map_lookup_elem(&tls_pids, &tgid);
	if (!job)
		return 1;
	s = bpf_sk_storage_get(&tls_sk_jobs, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (s) {
		s->flow.job = *job;
		s->flow.gen = job_gen(*job);
	}
	return 1; /* never deny a socket */
}

/*
 * cgroup sock_release: a PS socket's flow counters outlive it in tls_flows
 * (an LRU map), so that a flow that ended between two samples is still seen.
 */
SEC("cgroup/sock_release")
int tls_sock_release(struct bpf_sock *sk)
{
	struct tls_flow_rec *s;

	if (sk->family != AF_INET && sk->family != AF_INET6)
		return 1;
	s = bpf_sk_storage_get(&tls_sk_jobs, sk, 0, 0);
	if (!s || !sk_tag_current(s) || !s->flow.first_ns || !s->key.family)
		return 1;
	s->flow.check = 0; /* never a cached endpoint result */
	if (sk_flow_mirror)
		unmirror_sk_flow(&s->key);
	bpf_map_update_elem(&tls_flows, &s->key, &s->flow, BPF_ANY);
	lru_moved(&tls_slots_used, TLS_FLOW_USED_WORDS);
	return 1;
}

/*
 * The per-flow counters of PS sockets, for tlsd: an iterator over the socket
 * storage writes one tls_flow_rec per PS socket that has sent a packet.
 * Socket storage cannot be walked from user space any other way.
 */
SEC("iter/bpf_sk_storage_map")
int tls_dump_sk_flows(struct bpf_iter__bpf_sk_storage_map *ctx)
{
	struct tls_flow_rec *v = ctx->value;
	struct sock *sk = ctx->sk;
	struct tls_flow_rec r = {};
	__u32 *d6;

	if (!sk || !v || !sk_tag_current(v) || !v->flow.first_ns)
		return 0;
	r.key.family = sk->__sk_common.skc_family;
	r.key.proto = sk->sk_protocol;
	r.key.lport = bpf_htons(sk->__sk_common.skc_num);
	r.key.rport = sk->__sk_common.skc_dport;
	d6 = sk->__sk_common.skc_v6_daddr.in6_u.u6_addr32;
	/* A dual-stack socket talking IPv4 sends IPv4 packets: report it as
	 * the tls_flows key of such a packet would read. */
	if (r.key.family == AF_INET6 && !d6[0] && !d6[1] && d6[2] == bpf_htonl(0xffff))
		r.key.family = AF_INET;
	if (r.key.family == AF_INET) {
		__builtin_memcpy(r.key.laddr, &sk->__sk_common.skc_rcv_saddr, 4);
		__builtin_memcpy(r.key.raddr, &sk->__sk_common.skc_daddr, 4);
	} else {
		__builtin_memcpy(r.key.laddr, &sk->__sk_common.skc_v6_rcv_saddr, 16);
		__builtin_memcpy(r.key.raddr, &sk->__sk_common.skc_v6_daddr, 16);
	}
	r.flow = v->flow;
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";

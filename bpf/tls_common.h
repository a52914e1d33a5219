/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every map key and value shared by the tc classifier (bpf/) and tlsd (tcd/).
 * No struct here is defined anywhere else. Only fixed-width types: the BPF side
 * gets them from vmlinux.h, user space from <linux/types.h>.
 */
#ifndef TLS_COMMON_H
#define TLS_COMMON_H

#ifndef __VMLINUX_H__  /* the BPF side has its types from vmlinux.h */
#include <linux/bpf.h> /* struct bpf_spin_lock */
#include <linux/types.h>
#endif

/* Job ids are array indexes. 0 means "no job": it collects the counters of
 * everything the classifier left in the default class. */
#define TLS_JOB_NONE 0
#define TLS_MAX_JOBS 1024

/* HTB has 8 priority levels; the default class takes the lowest, so jobs get at
 * most 7 bands. Band 0 is the highest priority. */
#define TLS_MAX_BANDS 7
#define TLS_BAND_NONE 0xffffffffu /* job counted but left in the default class */

#define TLS_MAX_ENDPOINTS 65536
#define TLS_MAX_PIDS	  65536
#define TLS_MAX_FLOWS	  65536

/* The flow table of flows known by endpoint: TLS_FLOW_SETS sets of
 * TLS_FLOW_WAYS slots in an array, indexed by a hash of the flow key. */
#define TLS_FLOW_SET_BITS 13
#define TLS_FLOW_SETS	  (1u << TLS_FLOW_SET_BITS)
#define TLS_FLOW_WAYS	  2
#define TLS_FLOW_SLOTS	  (TLS_FLOW_SETS * TLS_FLOW_WAYS)
/* The ingress counter's flow table: as many slots, in sets of four ways
 * (fewer flows pushed out by three others of their set, tls_ingress.h). */
#define TLS_IN_SET_BITS 12
#define TLS_IN_SETS	(1u << TLS_IN_SET_BITS)
#define TLS_IN_WAYS	4
#define TLS_IN_SLOTS	(TLS_IN_SETS * TLS_IN_WAYS)
/* Each slot array's map of the sets ever used: a byte a set, 8 to a 64-bit
 * map value (tls_slots_used, tls_in_used), never 0 once a flow took one of
 * the set's slots, and changed at each take and each resume (below), at
 * each record started again in place for another job (egress: a flow
 * whose endpoint now names another job; ingress: the id's next job), and, egress, at each
 * slot emptied, so that a reader sees which sets may hold a
 * flow it does not read. A byte, not a bit: the
 * classifier counts with a plain store, where setting a bit among others
 * would need an atomic OR, which kernels before 5.12 refuse. */
/* A flow of a slot (egress or ingress) idle this long counts in its set's
 * byte at its next packet, as a take does: tlsd stops reading the slots of flows idle
 * twice as long (TLS_SLOT_IDLE_NS, lib/bpf/slot_ways.h) until their set's
 * byte changes. */
#define TLS_SLOT_RESUME_NS  (1000ULL * 1000 * 1000)
#define TLS_FLOW_USED_WORDS (TLS_FLOW_SETS / 8)
#define TLS_IN_USED_WORDS   (TLS_IN_SETS / 8)
/* After those words, one more: the count of records the slots moved into
 * or out of their LRU map (tls_flows, tls_flows_in). tlsd reads that map
 * only every so often while it looks quiet, and at once when this count
 * changed, or a flow moving between slot and map would be read twice or
 * not at all until then. */
#define TLS_FLOW_USED_ENTRIES (TLS_FLOW_USED_WORDS + 1)
#define TLS_IN_USED_ENTRIES   (TLS_IN_USED_WORDS + 1)

#define TLS_DSCP_NONE 0xff /* band leaves the DSCP field as it is */

/* A local endpoint of a PS: the fallback for packets that carry no socket of a
 * known PS. addr is an IPv4 address in its first 4 bytes (rest zero) or an IPv6
 * address; an all-zero addr is the wildcard "any local address". */
struct tls_endpoint_key {
	__u8 family; /* AF_INET or AF_INET6 */
	__u8 proto;  /* IPPROTO_TCP or IPPROTO_UDP */
	__u16 port;  /* network byte order */
	__u8 addr[16];
};

/* Per job, written by tlsd: which band the job's packets go to now. An
 * all-zero entry (no TLS_JOB_F_BAND) leaves the job in the default class.
 * With TLS_JOB_F_BURST too (policy `bursts`), the classifier decides the
 * band itself from the burst order (tls_burst.h); band is where the job goes
 * when the order is full. */
#define TLS_JOB_F_BAND	1u
#define TLS_JOB_F_BURST 2u
/* Policy roundrobin: the band follows the clock (tls_rr.h), from the order
 * in tls_rr's entry TLS_JOB_RR_SEL(flags), where the job arrived
 * TLS_JOB_RR_INDEX(flags)-th; band is the job's band when tlsd wrote the
 * entry (what a classifier without the order, an older one in a takeover,
 * uses). Two entries: tlsd writes the one no job names, then the jobs, so
 * the classifier never reads an order being written. */
#define TLS_JOB_F_RR	    4u
#define TLS_JOB_F_RR_SEL    8u
#define TLS_JOB_RR_SHIFT    16
#define TLS_JOB_RR_INDEX(f) ((f) >> TLS_JOB_RR_SHIFT)
#define TLS_JOB_RR_SEL(f)   (((f)&TLS_JOB_F_RR_SEL) ? 1u : 0u)
struct tls_job {
	__u32 band; /* 0..TLS_MAX_BANDS-1 when TLS_JOB_F_BAND is set */
	__u32 flags;
};

/* Policy roundrobin's order (tls_rr.h): at epoch_ns the job that arrived
 * lead-th of n leads, and the lead passes to the next every interval_ns.
 * gen: the later of the two entries is the one in use (tlsd writes the
 * other). turn: the classifier's cache of the step it last computed and
 * that step's leader (TLS_RR_TURN), so that a packet within the same step
 * needs no division. first[b]: the first position in band b
 * (tls_rr_fill), so that a packet's band needs none either. tick_ns: the
 * coarse clock's step (tls_rr_sure). */
#define TLS_RR_TURN_SHIFT	16
#define TLS_RR_TURN(step, lead) (((__u64)(step) << TLS_RR_TURN_SHIFT) | (lead))
struct tls_rr {
	__u64 epoch_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 interval_ns;
	__u64 turn;
	__u32 lead;
	__u32 n;
	__u32 nbands;
	__u32 gen;
	__u32 tick_ns;
	__u16 first[TLS_MAX_BANDS];
};

/* The burst order of policy `bursts` (bpf/tls_burst.h), one entry: the jobs
 * whose current burst (a broadcast: the PS's egress until it goes idle) has
 * started, earliest finish under a fair share first (tls_burst.h). The i-th
 * leads band i.
 * gap_ns, grace_ns, limit_ns, ns_per_kib and nbands are tlsd's (written with
 * BPF_F_LOCK); the rest is the classifier's, under the lock. A job's
 * estimate is the size of its last bursts, kept in a small direct-mapped
 * memory (slot job % TLS_BURST_MEMORY) while it computes. */
#define TLS_BURST_SLOTS	 8 /* a power of 2 */
/* A job's weight in the fair share, in 1/16ths: TLS_BURST_W1 is an equal
 * share; tlsd writes sqrt(flows) (tls_policy_burst_weight) per job in
 * tls_weight, 0 read as TLS_BURST_W1, at most TLS_BURST_W_MAX (16: 256
 * flows; one job of many flows gets at most 16 times the share). */
#define TLS_BURST_W1	 16u
#define TLS_BURST_W_MAX	 (16u * TLS_BURST_W1)
#define TLS_BURST_MEMORY 16 /* a power of 2 */
struct tls_burst {
	struct bpf_spin_lock lock;
	__u32 n;      /* jobs in the order */
	__u32 nbands; /* bands of the HTB tree */
	__u32 fresh;  /* the leader has sent nothing since it took the lead */
	__u64 gap_ns;	/* the leader idle this long: its burst has ended */
	__u64 grace_ns; /* the same for a fresh leader (its flows recover) */
	__u64 limit_ns; /* a job leading longer yields; 0: never */
	/* the link's time per KiB (8 Ki bits / rate); 0: rate unknown, the
	 * order is then by bytes left alone */
	__u64 ns_per_kib;
	__u64 vtime;	/* the fair share's clock, bytes per weight (tls_burst.h) */
	__u64 vtime_ns; /* when it last moved */
	__u64 wsum;	/* the entries' weights summed (tls_burst_w: 0 as 1) */
	__u64 lead_ns;	/* when the leader took the lead */
	__u32 job[TLS_BURST_SLOTS];
	__u32 mem_job[TLS_BURST_MEMORY];
	__u64 vfinish[TLS_BURST_SLOTS]; /* its virtual finish (tls_burst.h) */
	__u64 last_ns[TLS_BURST_SLOTS]; /* its last packet with payload */
	__u64 sent[TLS_BURST_SLOTS];	/* bytes of its current burst */
	__u64 est[TLS_BURST_SLOTS];	/* its burst's expected size; 0 unknown */
	__u64 mem_est[TLS_BURST_MEMORY];
	/* each entry's band: increasing along the order, kept while the order
	 * allows (tls_burst.h: a band change costs the flow reordering) */
	__u32 band[TLS_BURST_SLOTS];
	/* each entry's weight in the fair share (TLS_BURST_W1 = 1), its
	 * job's from tls_weight when its burst started or it yielded
	 * (tls_burst.h) */
	__u32 w[TLS_BURST_SLOTS];
	__u64 compactions; /* times the bands were renumbered by place */
	/* How long a flow passed by another burst keeps its band while its
	 * packets are queued: 0, at once (the classifier says why). A field,
	 * not a constant: the verifier then sees the holds of both policies
	 * as unknown alike and prunes their paths together (a constant 0
	 * took the classifier past its limit on kernels without sk_iter). */
	__u64 demote_hold_ns;
	__u32 scratch;	   /* tls_burst_opaque()'s: no state */
	__u32 pad;
	/* the largest burst that ended lately (decaying by 1/8 per burst, as
	 * the memory's estimates): a first burst's guess (tls_burst_guess) */
	__u64 mem_most;
	/* A compaction that raised the leader (its band by place, 0) left its
	 * queued packets in its old band, lead_floor: until its burst ends,
	 * the jobs after it are sent no higher than that band, or they pass
	 * the leader's own packets (tls_burst_place, tls_burst_step). Valid
	 * while the leader is lead_floor_job. */
	__u32 lead_floor_job;
	__u32 lead_floor;
	/* The last leader whose burst ended after its gap within the last
	 * eighth of its estimate (a cut): its job, when its gap ran out, and
	 * the burst as it was. Its packets within a queue's drain of then
	 * continue that burst, with its key (tls_burst_resume); cut_job 0:
	 * none (job 0 is traffic of no job). */
	__u32 cut_job;
	__u32 cut_w; /* its weight */
	__u64 cut_ns;
	__u64 cut_sent;
	__u64 cut_est;
	__u64 cut_vfinish;
	__u64 resumes; /* cut bursts resumed */
};

/* Per band, written by tlsd when it builds the HTB tree. */
struct tls_band {
	__u32 classid; /* HTB leaf class, major:minor as tc_classid */
	__u8 dscp;     /* 0..63, or TLS_DSCP_NONE */
	__u8 pad[3];
};

/* Per job and CPU. bytes counts what HTB counts (qdisc_pkt_len): a GSO packet
 * as the sum of its segments' lengths, headers included, so the two agree. */
struct tls_job_stats {
	__u64 bytes;
	__u64 packets;	  /* skbs seen by the classifier */
	__u64 segs;	  /* GSO segments: packets on the wire */
	__u64 demotions;  /* flowlet band changes to a lower priority */
	__u64 promotions; /* flowlet band changes to a higher priority */
	__u64 held;	  /* packets kept in the old band by flowlet hold */
};

/* Per job and CPU, what the PS received (the ingress program,
 * bpf/tls_ingress.h): counted as tls_job_stats counts the egress, a GSO/GRO
 * packet as the sum of its segments with their headers. */
struct tls_job_in {
	__u64 bytes;
	__u64 packets; /* skbs seen */
	__u64 segs;    /* segments: packets on the wire */
};

/*
 * A PS flow as its ingress sees it, keyed as the egress sees it: local = the
 * PS's end, remote = the worker's. It lives in a slot of tls_in_slots (the
 * set chosen as tls_flow_slots' are), or, pushed out of its slot by another
 * flow, in the tls_flows_in LRU map. Only packets with payload count in
 * data_bytes and make bursts: the ACKs of a pull are not a push.
 * A burst is a run of payload packets with no idle gap over the loader's
 * ingress_gap_ns: one push of gradients, one iteration of its worker.
 * Shared across CPUs: counters are atomic adds; the burst fields are the
 * receiving CPU's (a TCP flow is received on one at a time), a race there
 * costs one burst's size at worst.
 */
struct tls_flow_in {
	/* With the key, a slot's first cache line: written when the flow
	 * takes its slot or finds its job again, read at every packet, so
	 * the packets' stores leave it clean for the key comparisons of
	 * other CPUs (tls_flow_in_rec). tlsd's reading measured no gain from
	 * it: under heavy traffic both lines are cold at each reading. */
	__u64 first_ns; /* CLOCK_MONOTONIC, as tls_flow's */
	__u32 job;
	__u32 gen;  /* job generation (tls_job_gens) when the job was found */
	__u32 egen; /* endpoint generation (tls_gen), ~0: found by its socket */
	__u32 check; /* in a slot: seal of key, job, gen and egen (tls_flow_in_check), 0 elsewhere
		      */
	/* written at every packet */
	__u64 last_ns; /* the last packet with payload */
	__u64 seen_ns; /* the last packet: a pull's flow receives only ACKs */
	__u64 bytes;   /* every packet */
	__u64 packets;
	__u64 data_bytes;  /* packets with payload */
	__u64 burst_bytes; /* of the burst under way */
	__u64 done_bytes;  /* of the bursts that ended */
	__u64 bursts;	   /* bursts that ended */
};

/* One flow of a PS: keyed by its worker endpoint (remote) and local endpoint.
 * 8-byte aligned: the classifier hashes and compares it as five words. */
struct __attribute__((aligned(8))) tls_flow_key {
	__u8 family;
	__u8 proto;
	__u16 lport; /* network byte order */
	__u16 rport; /* network byte order */
	__u16 pad;
	__u8 laddr[16];
	__u8 raddr[16];
};

/*
 * A flow's state and counters. A flow of a PS socket keeps it in the
 * socket's local storage (tls_sk_jobs): found with the socket, no hash lookup
 * per packet; when the socket is released, its final state moves to the
 * tls_flows LRU map. A flow known only by its endpoint (no local socket)
 * lives in a slot of tls_flow_slots, an array indexed by a hash of its key
 * (an inlined array load instead of a hash-map lookup: about half the
 * classifier's cost per packet); a flow pushed out of its slot by another
 * moves to tls_flows like a released socket's.
 *
 * Shared across CPUs on purpose, not per-CPU: a TCP flow may be sent from
 * whichever CPU runs its ACK processing, and flowlet switching must see the
 * flow's last packet from any CPU, or it would promote a flow that is still
 * sending. A local TCP socket transmits under its socket lock, so the
 * counters are plain adds (see the classifier). Times are CLOCK_MONOTONIC
 * ns; last_ns is the coarse clock except while a promotion is pending;
 * first_ns == 0 means no packet yet.
 */
struct tls_flow {
	__u64 first_ns;
	__u64 last_ns;
	__u64 bytes;
	__u64 packets;
	__u64 pending_ns; /* when a promotion became pending, 0 = none */
	__u32 job;
	__u32 band;  /* band the flow's packets use now */
	/* A flow known by endpoint: the endpoint generation (tls_gen) its job
	 * was resolved at. A PS socket's: its job id's generation
	 * (tls_job_gens) when it was tagged; another one means the job is
	 * gone and the id may be another job's now. */
	__u32 gen;
	__u32 check; /* in a slot: seal of key, job and gen (tls_flow_check), 0 elsewhere */
};

/* A PS socket's local storage (tls_sk_jobs): its job and flow state, and the
 * flow's key once a packet showed it, so that the sock_release hook can file
 * the final counters in tls_flows. Also what the socket-flow iterator writes
 * per PS socket, and a slot of tls_flow_slots (key family 0: empty). */
struct tls_flow_rec {
	struct tls_flow_key key; /* family 0: not known yet */
	struct tls_flow flow;
};

/* A slot of tls_in_slots (key family 0: empty): 128 bytes, the first 64
 * the key and what changes only with the flow's job (tls_flow_in); two
 * cache lines where the array is mmapable (its values page-aligned). */
struct tls_flow_in_rec {
	struct tls_flow_key key;
	struct tls_flow_in in;
};
_Static_assert(sizeof(struct tls_flow_in_rec) == 128 &&
		       __builtin_offsetof(struct tls_flow_in_rec, in.last_ns) == 64,
	       "an ingress slot: the key's line and the counters' line");

/* What the loader created, pinned with the maps so that a later run (after a
 * crash, or `--cleanup`) removes exactly that and nothing else. */
struct tls_state {
	char ifname[16]; /* IFNAMSIZ: ifindex alone may be reused */
	__u32 ifindex;
	__u32 tc_handle;
	__u32 tc_prio;
	__u32 created_clsact; /* 1: we created the clsact qdisc, so we delete it */
};

/* tlsd's number, 0x715d ("7l5d": t, l, s, d): the HTB root's major and the
 * classifier filter's handle and priority, one value so that `tc` output
 * shows at a glance what is tlsd's. */
#define TLS_TC_MAGIC 0x715d

/* A job's name, with its NUL: the daemon's bound (its state file keeps each
 * job id's name, so that a start that takes over a crashed run gives each
 * job the id it had, and its counters and endpoints carry on). */
#define TLS_JOB_NAME_LEN 64

#endif /* TLS_COMMON_H */

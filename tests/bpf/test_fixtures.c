// SPDX-License-Identifier: GPL-2.0-only
/*
 * BPF tier: the real classifier, loaded into the kernel, driven with
 * bpf_prog_test_run_opts() over a table of frames, each with the class id it
 * must get and the job whose counters it must move. Also the socket
 * membership paths (cgroup sock_create hook, clone to accepted sockets,
 * adoption of an existing socket) on real sockets. Needs root.
 */
#define _GNU_SOURCE /* sched_setaffinity */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "burst_prev.h"
#include "classifier.h"
#include "clock.h"
#include "endpoint.h"
#include "job_counters.h"
#include "kernel_features.h"
#include "libbpf_log.h"
#include "log.h"
#include "map_batch.h"
#include "packets.h"
#include "slot_ways.h"
#include "stats_ingress.h"
#include "stats_lru.h"
#include "tls_burst.h"
#include "tls_flow_slot.h"

#define CLASS(b)  (0x00010010u + (b)) /* band b -> HTB class 1:1b */
#define UNTOUCHED 0x7u		      /* skb->priority a socket might have set */
#define PS4	  "198.18.0.1"
#define WK4	  "198.18.1.1"
#define PS6	  "fd00::1"
#define WK6	  "fd00::1:1"

struct fixture {
	const char *name;
	struct pkt_spec s;
	__u32 classid; /* expected skb->priority */
	__u32 job;     /* whose counters move */
	__u32 gso_segs;
};

/* One fixture per entry, laid out by hand. */
// clang-format off
static const struct fixture fixtures[] = {
	{ "v4 tcp PS->worker", { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 40000, .payload = 100 },
	  CLASS(0), 1 },
	{ "v4 tcp worker->PS", { 0, 4, IPPROTO_TCP, WK4, PS4, 40000, 9000, .payload = 100 },
	  UNTOUCHED, 0 },
	{ "v4 tcp unknown port", { 0, 4, IPPROTO_TCP, PS4, WK4, 9999, 40000, .payload = 10 },
	  UNTOUCHED, 0 },
	{ "v4 tcp other local address",
	  { 0, 4, IPPROTO_TCP, "198.18.0.2", WK4, 9000, 40000, .payload = 10 }, UNTOUCHED, 0 },
	{ "v4 udp same port as tcp job",
	  { 0, 4, IPPROTO_UDP, PS4, WK4, 9000, 40000, .payload = 10 }, UNTOUCHED, 0 },
	{ "v6 tcp PS->worker", { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .payload = 100 },
	  CLASS(1), 2 },
	{ "v6 tcp worker->PS", { 0, 6, IPPROTO_TCP, WK6, PS6, 40000, 9000, .payload = 100 },
	  UNTOUCHED, 0 },
	{ "v4 udp wildcard endpoint",
	  { 0, 4, IPPROTO_UDP, "198.18.0.9", WK4, 7000, 5000, .payload = 64 }, CLASS(2), 3 },
	{ "v6 udp wildcard endpoint",
	  { 0, 6, IPPROTO_UDP, "fd00::9", WK6, 7000, 5000, .payload = 64 }, CLASS(2), 3 },
	{ "v4 icmp from PS address", { 0, 4, IPPROTO_ICMP, PS4, WK4, .payload = 56 }, UNTOUCHED,
	  0 },
	{ "v6 icmp-ish from PS address", { 0, 6, 58, PS6, WK6, .payload = 56 }, UNTOUCHED, 0 },
	{ "arp", { 0, 0 }, UNTOUCHED, 0 },
	{ "802.1Q v4 tcp", { 1, 4, IPPROTO_TCP, PS4, WK4, 9000, 40000, .payload = 100 }, CLASS(0),
	  1 },
	{ "QinQ v4 tcp", { 2, 4, IPPROTO_TCP, PS4, WK4, 9000, 40000, .payload = 100 }, CLASS(0), 1 },
	{ "802.1Q v6 tcp", { 1, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .payload = 100 }, CLASS(1),
	  2 },
	{ "v4 options 12 bytes",
	  { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 40000, .ip_opt_words = 3, .payload = 50 },
	  CLASS(0), 1 },
	{ "v4 options 40 bytes",
	  { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 40000, .ip_opt_words = 10, .payload = 50 },
	  CLASS(0), 1 },
	{ "v4 first fragment",
	  { 0, 4, IPPROTO_UDP, "198.18.0.9", WK4, 7000, 5000, .frag = FRAG_FIRST, .payload = 200 },
	  CLASS(2), 3 },
	{ "v4 later fragment",
	  { 0, 4, IPPROTO_UDP, "198.18.0.9", WK4, 7000, 5000, .frag = FRAG_LATER, .payload = 200 },
	  UNTOUCHED, 0 },
	{ "v6 hop-by-hop", { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .v6_ext = 1, .payload = 20 },
	  CLASS(1), 2 },
	{ "v6 hop-by-hop + dstopts + routing",
	  { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .v6_ext = 3, .payload = 20 }, CLASS(1), 2 },
	{ "v6 AH",
	  { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .payload = 20, .v6_ah = 1 }, CLASS(1), 2 },
	{ "v6 hop-by-hop + AH",
	  { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .v6_ext = 1, .payload = 20, .v6_ah = 1 },
	  CLASS(1), 2 },
	{ "v6 hop-by-hop + dstopts + routing + AH, GSO",
	  { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .v6_ext = 3, .payload = 300, .v6_ah = 1 },
	  CLASS(1), 2, 3 },
	{ "v6 first fragment",
	  { 0, 6, IPPROTO_UDP, "fd00::9", WK6, 7000, 5000, .frag = FRAG_FIRST, .payload = 100 },
	  CLASS(2), 3 },
	{ "v6 later fragment",
	  { 0, 6, IPPROTO_UDP, "fd00::9", WK6, 7000, 5000, .frag = FRAG_LATER, .payload = 100 },
	  UNTOUCHED, 0 },
	{ "v6 ext + later fragment",
	  { 0, 6, IPPROTO_UDP, "fd00::9", WK6, 7000, 5000, .v6_ext = 2, .frag = FRAG_LATER },
	  UNTOUCHED, 0 },
	{ "job without a band: counted, untouched",
	  { 0, 4, IPPROTO_TCP, PS4, WK4, 9100, 40000, .payload = 10 }, UNTOUCHED, 5 },
	{ "GSO 10 segments", { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 40000, .payload = 400 },
	  CLASS(0), 1, 10 },
	{ "GSO v6 4 segments", { 1, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .payload = 400 },
	  CLASS(1), 2, 4 },
	/* Truncation at every header boundary and inside each header.
	 * BPF_PROG_TEST_RUN refuses (EINVAL) an untagged IPv4 or IPv6 frame
	 * shorter than its IP header, so cuts before the end of the IP header
	 * come behind an 802.1Q tag, which it does not look through. */
	{ "cut: ethernet only", { 1, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 14 }, UNTOUCHED,
	  0 },
	{ "cut: inside 802.1Q tag", { 1, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 16 }, UNTOUCHED,
	  0 },
	{ "cut: after 802.1Q tag", { 1, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 18 }, UNTOUCHED,
	  0 },
	{ "cut: after QinQ tags", { 2, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 22 }, UNTOUCHED,
	  0 },
	{ "cut: inside IPv4 header", { 1, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 18 + 12 },
	  UNTOUCHED, 0 },
	{ "cut: one byte short of IPv4 header",
	  { 1, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 18 + 19 }, UNTOUCHED, 0 },
	{ "cut: after IPv4 header", { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 14 + 20 },
	  UNTOUCHED, 0 },
	{ "cut: inside IPv4 options",
	  { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .ip_opt_words = 4, .cut = 14 + 28 }, UNTOUCHED,
	  0 },
	{ "cut: after TCP ports", { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 14 + 20 + 4 },
	  UNTOUCHED, 0 },
	{ "cut: one byte short of TCP header",
	  { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 14 + 20 + 19 }, UNTOUCHED, 0 },
	{ "cut: exactly the TCP header", { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 1, .cut = 14 + 40 },
	  CLASS(0), 1 },
	{ "cut: one byte short of UDP header",
	  { 0, 4, IPPROTO_UDP, "198.18.0.9", WK4, 7000, 1, .cut = 14 + 20 + 7 }, UNTOUCHED, 0 },
	{ "cut: inside IPv6 header", { 1, 6, IPPROTO_TCP, PS6, WK6, 9000, 1, .cut = 18 + 20 },
	  UNTOUCHED, 0 },
	{ "cut: one byte short of IPv6 header",
	  { 1, 6, IPPROTO_TCP, PS6, WK6, 9000, 1, .cut = 18 + 39 }, UNTOUCHED, 0 },
	{ "cut: after IPv6 header, tagged",
	  { 1, 6, IPPROTO_TCP, PS6, WK6, 9000, 1, .cut = 18 + 40 }, UNTOUCHED, 0 },
	{ "cut: after IPv6 header", { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 1, .cut = 14 + 40 },
	  UNTOUCHED, 0 },
	{ "cut: inside IPv6 extension header",
	  { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 1, .v6_ext = 2, .cut = 14 + 40 + 12 }, UNTOUCHED,
	  0 },
	{ "cut: inside IPv6 fragment header",
	  { 0, 6, IPPROTO_UDP, "fd00::9", WK6, 7000, 1, .frag = FRAG_FIRST, .cut = 14 + 40 + 4 },
	  UNTOUCHED, 0 },
};
// clang-format on

/* A test of policy bursts, skipped where the verifier refused its code
 * (6.1 did, before it was a program of its own). */
#define SKIP_WITHOUT_BURSTS()                                                                      \
	do {                                                                                       \
		if (tls_features()[TLS_FEAT_BURSTS].state == TLS_FEAT_MISSING) {                   \
			print_message(                                                             \
				"policy bursts's code not loaded on this kernel: skipped\n");      \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

struct env {
	struct tls_cls *cls;
	const struct tls_maps *m;
};

static void add_ep(const struct tls_maps *m, const char *ep, __u8 proto, __u32 job)
{
	struct tls_endpoint_key keys[2];
	char err[128];
	int n = tls_endpoint_parse(ep, proto, keys, err, sizeof(err));

	assert_true(n > 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(tls_add_endpoint(m, &keys[i], job), 0);
}

static void del_ep(const struct tls_maps *m, const char *ep, __u8 proto)
{
	struct tls_endpoint_key keys[2];
	char err[128];
	int n = tls_endpoint_parse(ep, proto, keys, err, sizeof(err));

	assert_true(n > 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(tls_del_endpoint(m, &keys[i]), 0);
}

static int setup_cls(void **state, __u64 gap_ns, __u64 hold_ns, bool dscp, bool observe)
{
	struct tls_cls_opts o = { .flowlet_gap_ns = gap_ns,
				  .flowlet_hold_ns = hold_ns,
				  .dscp = dscp,
				  .observe = observe,
				  .cgroup = "" };
	struct env *e = calloc(1, sizeof(*e));
	__u32 b;

	if (!e || tls_cls_load(&o, &e->cls)) {
		free(e);
		return -1;
	}
	e->m = tls_cls_maps(e->cls);
	/* observe: no class ids, as tlsd writes them in observe mode */
	for (b = 0; b < TLS_MAX_BANDS; b++)
		if (tls_set_band(e->m, b, observe ? 0 : CLASS(b), dscp ? 8 * b + 6 : TLS_DSCP_NONE))
			return -1;
	add_ep(e->m, PS4 ":9000", IPPROTO_TCP, 1);
	add_ep(e->m, "[" PS6 "]:9000", IPPROTO_TCP, 2);
	add_ep(e->m, "*:7000", IPPROTO_UDP, 3);
	add_ep(e->m, PS4 ":9100", IPPROTO_TCP, 5);
	if (tls_set_job_band(e->m, 1, 0) || tls_set_job_band(e->m, 2, 1) ||
	    tls_set_job_band(e->m, 3, 2))
		return -1;
	*state = e;
	return 0;
}

static int setup_plain(void **state)
{
	/* A long gap and hold: flowlet decisions do not depend on timing. */
	return setup_cls(state, 1000000000ULL, 1000000000ULL, false, false);
}

static int setup_short_hold(void **state)
{
	/* flows never idle long enough (1 s); a short flowlet hold */
	return setup_cls(state, 1000000000ULL, 100000000ULL, false, false);
}

static int setup_dscp(void **state)
{
	return setup_cls(state, 0, 0, true, false);
}

/* Observe mode as tlsd sets it up, with what else would steer or mark:
 * bands without class ids but with DSCP, and jobs left in bands (a
 * scheduling run's job map). */
static int setup_observe(void **state)
{
	return setup_cls(state, 0, 0, true, true);
}

static int teardown(void **state)
{
	struct env *e = *state;

	tls_cls_close(e->cls);
	free(e);
	return 0;
}

static __u32 run(struct env *e, uint8_t *frame, size_t len, __u32 gso_segs, uint8_t *out,
		 __u32 *out_len)
{
	struct __sk_buff ctx = { .priority = UNTOUCHED };
	uint8_t dummy[512];
	DECLARE_LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = len,
			    .data_out = out ? out : dummy, .data_size_out = 512, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .ctx_out = &ctx,
			    .ctx_size_out = sizeof(ctx), .repeat = 1);

	if (gso_segs > 1) {
		ctx.gso_segs = gso_segs;
		ctx.gso_size = 100;
	}
	assert_int_equal(bpf_prog_test_run_opts(tls_cls_prog_fd(e->cls), &t), 0);
	assert_int_equal((int)t.retval, -1); /* TC_ACT_UNSPEC: chain goes on */
	if (out_len)
		*out_len = t.data_size_out;
	return ctx.priority;
}

static void test_fixture_table(void **state)
{
	struct env *e = *state;
	size_t i;

	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture *f = &fixtures[i];
		struct tls_job_stats before, after, before0, after0;
		uint8_t frame[512];
		struct pkt_layout lay = pkt_build(&f->s, frame);
		__u32 segs = f->gso_segs ? f->gso_segs : 1, prio;
		__u64 bytes = lay.len + (__u64)(segs - 1) * lay.hdr_len;

		print_message("  fixture %-40s len %3zu -> class %#x job %u\n", f->name, lay.len,
			      f->classid, f->job);
		assert_int_equal(tls_read_job_stats(e->m, f->job, &before), 0);
		assert_int_equal(tls_read_job_stats(e->m, 0, &before0), 0);
		prio = run(e, frame, lay.len, f->gso_segs, NULL, NULL);
		assert_int_equal(tls_read_job_stats(e->m, f->job, &after), 0);
		assert_int_equal(tls_read_job_stats(e->m, 0, &after0), 0);
		if (prio != f->classid)
			fail_msg("fixture '%s': class %#x, expected %#x", f->name, prio,
				 f->classid);
		if (after.bytes - before.bytes != bytes || after.packets - before.packets != 1 ||
		    after.segs - before.segs != segs)
			fail_msg("fixture '%s': job %u counters moved by %llu bytes %llu packets "
				 "%llu segs, expected %llu, 1, %u",
				 f->name, f->job, (unsigned long long)(after.bytes - before.bytes),
				 (unsigned long long)(after.packets - before.packets),
				 (unsigned long long)(after.segs - before.segs),
				 (unsigned long long)bytes, segs);
		if (f->job != 0 && after0.packets != before0.packets)
			fail_msg("fixture '%s': also counted as unclassified", f->name);
	}
	assert_true(i >= 20);
}

struct flow_find {
	__u16 rport;
	struct tls_flow f;
	int found;
};

static int find_flow(const struct tls_flow_key *k, const struct tls_flow *f, void *ctx)
{
	struct flow_find *ff = ctx;

	if (ntohs(k->rport) == ff->rport) {
		ff->f = *f;
		ff->found++;
	}
	return 0;
}

/* A flow's counters are keyed by its worker endpoint and hold its bytes. */
static void test_flow_counters(void **state)
{
	struct env *e = *state;
	struct pkt_spec s = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 41234, .payload = 300 };
	struct flow_find ff = { .rport = 41234 };
	uint8_t frame[512];
	struct pkt_layout lay = pkt_build(&s, frame);
	int i;

	for (i = 0; i < 5; i++)
		run(e, frame, lay.len, 0, NULL, NULL);
	assert_int_equal(tls_for_each_flow(e->m, find_flow, &ff), 0);
	assert_int_equal(ff.found, 1);
	assert_int_equal(ff.f.job, 1);
	assert_int_equal(ff.f.packets, 5);
	assert_int_equal(ff.f.bytes, 5 * lay.len);
	assert_true(ff.f.first_ns > 0 && ff.f.last_ns >= ff.f.first_ns);

	/* A job id given to a new job starts from zero. */
	struct tls_job_stats st;

	assert_int_equal(tls_read_job_stats(e->m, 1, &st), 0);
	assert_true(st.packets >= 5);
	assert_int_equal(tls_reset_job_stats(e->m, 1), 0);
	assert_int_equal(tls_read_job_stats(e->m, 1, &st), 0);
	assert_int_equal(st.packets, 0);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(tls_reset_job_stats(e->m, TLS_MAX_JOBS), -EINVAL);
}

static struct tls_flow_key flow4(__u16 lport, __u16 rport)
{
	struct tls_flow_key k = { .family = AF_INET, .proto = IPPROTO_TCP };

	k.lport = htons(lport);
	k.rport = htons(rport);
	assert_int_equal(inet_pton(AF_INET, PS4, k.laddr), 1);
	assert_int_equal(inet_pton(AF_INET, WK4, k.raddr), 1);
	return k;
}

static __u64 flow_packets(struct env *e, __u16 rport, int *records)
{
	struct flow_find ff = { .rport = rport };

	assert_int_equal(tls_for_each_flow(e->m, find_flow, &ff), 0);
	*records = ff.found;
	return ff.f.packets;
}

/* Known per-CPU values written into a job's counters: CPU c has
 * (job * 1000 + c + 1) * (field + 1) in each field. */
static __u64 known(__u32 job, int c, unsigned int field)
{
	return ((__u64)job * 1000 + c + 1) * (field + 1);
}

static void write_known(int fd, __u32 job, unsigned int nfields, int ncpu)
{
	__u64 *v = calloc((size_t)ncpu * nfields, sizeof(*v));

	assert_non_null(v);
	for (int c = 0; c < ncpu; c++)
		for (unsigned int f = 0; f < nfields; f++)
			v[(size_t)c * nfields + f] = known(job, c, f);
	assert_int_equal(bpf_map_update_elem(fd, &job, v, BPF_ANY), 0);
	free(v);
}

struct got {
	unsigned int calls;
	__u32 last;
	__u64 sum[TLS_MAX_JOBS][6];
	unsigned int seen[TLS_MAX_JOBS];
	unsigned int nfields;
};

static void got_one(__u32 job, const void *sum, void *ctx)
{
	struct got *g = ctx;

	/* ascending, each once */
	assert_true(g->calls == 0 || job > g->last);
	g->last = job;
	g->calls++;
	g->seen[job]++;
	memcpy(g->sum[job], sum, g->nfields * sizeof(__u64));
}

/*
 * The one reader of the per-job counters, egress and ingress alike: the
 * jobs marked, each once, ascending, summed over the CPUs, in runs (ids
 * close together, far apart, more than a batch's worth) or one lookup a
 * job; the same sums either way (the refuse shim's run has no batch
 * operations), and marks cleared after a reading.
 */
static void test_job_counters(void **state)
{
	static const __u32 ids[] = { 6, 7, 9, 40, 41, 47, 100, 170, 1023 };
	static const enum tls_counters kinds[] = { TLS_COUNTERS_OUT, TLS_COUNTERS_IN };
	struct env *e = *state;
	int ncpu = libbpf_num_possible_cpus();
	struct got *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	assert_true(ncpu > 0);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		bool in = kinds[k] == TLS_COUNTERS_IN;
		int fd = in ? e->m->job_in : e->m->job_stats;
		struct tls_job_counters *r;
		unsigned int wanted = 0;

		memset(g, 0, sizeof(*g));
		g->nfields = (in ? sizeof(struct tls_job_in) : sizeof(struct tls_job_stats)) /
			     sizeof(__u64);
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			write_known(fd, ids[i], g->nfields, ncpu);
		/* every id of a run of more than a batch (64): 200..330 */
		for (__u32 j = 200; j <= 330; j++)
			write_known(fd, j, g->nfields, ncpu);
		assert_int_equal(tls_job_counters_new(kinds[k], &r), 0);
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
			tls_job_counters_want(r, ids[i]);
			tls_job_counters_want(r, ids[i]); /* duplicates read once */
			wanted++;
		}
		for (__u32 j = 200; j <= 330; j++, wanted++)
			tls_job_counters_want(r, j);
		tls_job_counters_want(r, TLS_MAX_JOBS); /* ignored */
		assert_int_equal(tls_job_counters_read(r, e->m, got_one, g), 0);
		assert_int_equal(g->calls, wanted);
		for (__u32 j = 0; j < TLS_MAX_JOBS; j++) {
			if (!g->seen[j])
				continue;
			assert_int_equal(g->seen[j], 1);
			for (unsigned int f = 0; f < g->nfields; f++) {
				__u64 want = 0;

				for (int c = 0; c < ncpu; c++)
					want += known(j, c, f);
				assert_int_equal(g->sum[j][f], want);
			}
		}
		/* 8 (not marked) was read in the run 6..9, not given */
		assert_int_equal(g->seen[8], 0);
		/* the fallback where the kernel refuses batch lookups */
		assert_int_equal(tls_job_counters_batched(r), tls_feature_has(TLS_FEAT_MAP_BATCH));
		/* the marks went with the reading */
		g->calls = 0;
		assert_int_equal(tls_job_counters_read(r, e->m, got_one, g), 0);
		assert_int_equal(g->calls, 0);
		/* zeroed: a fresh id */
		assert_int_equal(tls_job_counters_zero(e->m, kinds[k], 41), 0);
		assert_int_equal(tls_job_counters_zero(e->m, kinds[k], TLS_MAX_JOBS), -EINVAL);
		tls_job_counters_want(r, 41);
		assert_int_equal(tls_job_counters_read(r, e->m, got_one, g), 0);
		assert_int_equal(g->calls, 1);
		for (unsigned int f = 0; f < g->nfields; f++)
			assert_int_equal(g->sum[41][f], 0);
		tls_job_counters_free(r);
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			assert_int_equal(tls_job_counters_zero(e->m, kinds[k], ids[i]), 0);
		for (__u32 j = 200; j <= 330; j++)
			assert_int_equal(tls_job_counters_zero(e->m, kinds[k], j), 0);
	}
	free(g);
}

/* The CLI's readings of the counters are the same reader's. */
static void test_jobs_stats_at_once(void **state)
{
	struct env *e = *state;
	int ncpu = libbpf_num_possible_cpus();
	const unsigned int nf = sizeof(struct tls_job_stats) / sizeof(__u64);
	struct tls_job_stats *all = calloc(TLS_MAX_JOBS, sizeof(*all)), one;

	assert_non_null(all);
	write_known(e->m->job_stats, 70, nf, ncpu);
	write_known(e->m->job_stats, 140, nf, ncpu);
	assert_int_equal(tls_read_jobs_stats(e->m, 140, all), 0);
	assert_int_equal(tls_read_job_stats(e->m, 140, &one), 0);
	assert_memory_equal(&all[140], &one, sizeof(one));
	assert_int_equal(tls_read_job_stats(e->m, 70, &one), 0);
	assert_memory_equal(&all[70], &one, sizeof(one));
	assert_int_equal(one.held, ((__u64)70 * 1000 * ncpu + (__u64)ncpu * (ncpu + 1) / 2) * 6);
	assert_int_equal(tls_read_jobs_stats(e->m, TLS_MAX_JOBS, all), -EINVAL);
	assert_int_equal(tls_reset_job_stats(e->m, 70), 0);
	assert_int_equal(tls_reset_job_stats(e->m, 140), 0);
	free(all);
}

/* The one delete with a fallback: a batch, else (a key already gone, or no
 * batch operations) one at a time; the count is of those deleted. */
static void test_delete_flows(void **state)
{
	struct env *e = *state;
	struct tls_flow_key k[5];
	struct tls_flow f = { .first_ns = 1, .last_ns = 2, .bytes = 3, .packets = 1, .job = 1 };
	struct tls_flow out;

	for (int i = 0; i < 5; i++) {
		k[i] = flow4(9000, 50000 + i);
		assert_int_equal(bpf_map_update_elem(e->m->flows, &k[i], &f, BPF_ANY), 0);
	}
	assert_int_equal(tls_delete_flows(e->m, k, 2), 2);
	assert_int_not_equal(bpf_map_lookup_elem(e->m->flows, &k[0], &out), 0);
	assert_int_not_equal(bpf_map_lookup_elem(e->m->flows, &k[1], &out), 0);
	/* k[1] is gone: the batch fails, the others go one at a time */
	assert_int_equal(tls_delete_flows(e->m, k + 1, 4), 3);
	for (int i = 2; i < 5; i++)
		assert_int_not_equal(bpf_map_lookup_elem(e->m->flows, &k[i], &out), 0);
	assert_int_equal(tls_delete_flows(e->m, k, 0), 0);
}

/*
 * n worker ports whose flows to PS4:9000 fall in one set of the slot array
 * fd (records starting with their key; the ingress counter's if in), a set
 * all of whose slots are empty: returns its first slot.
 */
static __u32 colliding_ports(int fd, bool in, __u16 *rport, int n)
{
	union {
		struct tls_flow_rec out;
		struct tls_flow_in_rec in;
	} r;
	int ways = in ? TLS_IN_WAYS : TLS_FLOW_WAYS, found = 0;
	__u32 set = 0;

	for (__u32 p = 40000; p < 50000 && !found; p++) {
		struct tls_flow_key k = flow4(9000, (__u16)p);
		__u64 h = tls_flow_hash(&k);
		int empty = 0;

		set = in ? tls_in_set_slot(h) : tls_flow_set_slot(h);
		for (int j = 0; j < ways; j++) {
			__u32 i = set + (__u32)j;

			assert_int_equal(bpf_map_lookup_elem(fd, &i, &r), 0);
			empty += !r.out.key.family;
		}
		if (empty == ways)
			rport[found++] = (__u16)p;
	}
	assert_int_equal(found, 1);
	for (__u32 p = rport[0] + 1u; p < 65536 && found < n; p++) {
		struct tls_flow_key k = flow4(9000, (__u16)p);
		__u64 h = tls_flow_hash(&k);

		if ((in ? tls_in_set_slot(h) : tls_flow_set_slot(h)) == set)
			rport[found++] = (__u16)p;
	}
	assert_int_equal(found, n);
	return set;
}

/* The slot of set (ways of them, in array fd) that holds the flow from
 * worker port rport; its record (starting with the key) in rec. */
static __u32 slot_of(int fd, __u32 set, int ways, __u16 rport, void *rec)
{
	struct tls_flow_key k = flow4(9000, rport);

	for (__u32 i = set; i < set + (__u32)ways; i++) {
		assert_int_equal(bpf_map_lookup_elem(fd, &i, rec), 0);
		if (!memcmp(rec, &k, sizeof(k)))
			return i;
	}
	fail_msg("port %u holds no slot of set %u", rport, set);
	return 0;
}

/* Three flows of one slot set (two ways): the third takes the slot of the
 * one idle longest, whose counters move to the LRU map; every packet is
 * classified all along. */
static void test_flow_slot_collision(void **state)
{
	struct env *e = *state;
	__u16 rport[3];
	int records, i;
	__u32 set;

	/* a set no earlier test's flow holds */
	set = colliding_ports(e->m->flow_slots, false, rport, 3);
	for (i = 0; i < 3; i++) { /* a: 2 packets, b: 3, c: 1, in that order */
		struct pkt_spec s = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, rport[i], .payload = 100 };
		uint8_t frame[512];
		struct pkt_layout lay = pkt_build(&s, frame);

		for (int j = 0; j < (i == 0 ? 2 : i == 1 ? 3 : 1); j++)
			assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(0));
	}
	/* a left its slot for c, with its counters */
	struct flow_find in_slots = { .rport = rport[0] };

	assert_int_equal(tls_for_each_slot_flow(e->m, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 0);
	assert_int_equal(flow_packets(e, rport[0], &records), 2);
	assert_int_equal(records, 1);
	assert_int_equal(flow_packets(e, rport[1], &records), 3);
	assert_int_equal(records, 1);
	assert_int_equal(flow_packets(e, rport[2], &records), 1);
	assert_int_equal(records, 1);
	in_slots.rport = rport[1];
	assert_int_equal(tls_for_each_slot_flow(e->m, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 1);
	/* the same read by syscalls, as tools that open the pins read it */
	struct tls_maps by_syscall = *e->m;

	/* mapped where the kernel has mmapable maps (kernel_features.h) */
	assert_int_equal(e->m->slots_mem != NULL, tls_feature_has(TLS_FEAT_MMAPABLE));
	by_syscall.slots_mem = NULL;
	in_slots.found = 0;
	assert_int_equal(tls_for_each_slot_flow(&by_syscall, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 1);
	in_slots.rport = rport[0];
	in_slots.found = 0;
	assert_int_equal(tls_for_each_slot_flow(&by_syscall, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 0);

	/* a again: classified, back in a slot, b's or c's (whichever was idle
	 * longer: on the coarse clock they may tie), whose counters move; a
	 * takes its own record back from the LRU map and counts on */
	struct pkt_spec s = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, rport[0], .payload = 100 };
	uint8_t frame[512];
	struct pkt_layout lay = pkt_build(&s, frame);

	__u64 moves = tls_flow_map_moves(e->m, TLS_FLOW_MAP_OUT);

	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(0));
	/* one record out to the LRU map, a's out of it */
	assert_int_equal(tls_flow_map_moves(e->m, TLS_FLOW_MAP_OUT), moves + 2);
	in_slots.rport = rport[0];
	in_slots.found = 0;
	assert_int_equal(tls_for_each_slot_flow(e->m, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 1);
	assert_int_equal(flow_packets(e, rport[0], &records), 3);
	assert_int_equal(records, 1);
	int left = 0, out = 0;

	for (i = 1; i < 3; i++) {
		in_slots.rport = rport[i];
		in_slots.found = 0;
		assert_int_equal(tls_for_each_slot_flow(e->m, find_flow, &in_slots), 0);
		left += in_slots.found;
		if (!in_slots.found)
			out = i;
		assert_int_equal(flow_packets(e, rport[i], &records), i == 1 ? 3 : 1);
		assert_int_equal(records, 1);
	}
	assert_int_equal(left, 1);

	/* a slot whose seal does not hold for its key, job and generation is
	 * not read, from memory or by syscall */
	struct tls_flow_rec sr;
	__u32 ia = slot_of(e->m->flow_slots, set, TLS_FLOW_WAYS, rport[0], &sr);

	sr.flow.check ^= 0x100;
	assert_int_equal(bpf_map_update_elem(e->m->flow_slots, &ia, &sr, BPF_ANY), 0);
	in_slots.rport = rport[0];
	in_slots.found = 0;
	assert_int_equal(tls_for_each_slot_flow(e->m, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 0);
	assert_int_equal(tls_for_each_slot_flow(&by_syscall, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 0);
	sr.flow.check ^= 0x100;
	assert_int_equal(bpf_map_update_elem(e->m->flow_slots, &ia, &sr, BPF_ANY), 0);

	/* the flow out in the LRU map, its record there now another job's: it
	 * comes back as a new flow of its own job, and that record stays, the
	 * other job's flow (key and job), its last counters perhaps not read */
	struct tls_flow_key ko = flow4(9000, rport[out]);
	struct tls_flow fo;
	__u64 fo_packets;

	assert_int_equal(bpf_map_lookup_elem(e->m->flows, &ko, &fo), 0);
	fo.job = 2;
	fo_packets = fo.packets;
	assert_int_equal(bpf_map_update_elem(e->m->flows, &ko, &fo, BPF_ANY), 0);
	s.dport = rport[out];
	lay = pkt_build(&s, frame);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(0));
	assert_int_equal(bpf_map_lookup_elem(e->m->flows, &ko, &fo), 0);
	assert_int_equal(fo.job, 2);
	assert_int_equal(fo.packets, fo_packets);
	in_slots.rport = rport[out];
	in_slots.found = 0;
	assert_int_equal(tls_for_each_slot_flow(e->m, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 1);
	assert_int_equal(in_slots.f.job, 1);
	assert_int_equal(in_slots.f.packets, 1);
	flow_packets(e, rport[out], &records);
	assert_int_equal(records, 2);

	/* the set is marked used (in_slots reads through that map where the
	 * slots are mapped, and found them); a set a previous program filled,
	 * unmarked, is marked again by a scan of the slots */
	__u32 sn = set / TLS_FLOW_WAYS, w = sn / 8;
	__u64 bits, zero = 0;

	assert_int_equal(bpf_map_lookup_elem(e->m->slots_used, &w, &bits), 0);
	/* its byte counts the takes: a, b, c, a again at least */
	assert_true(((__u8 *)&bits)[sn % 8] >= 4);
	assert_int_equal(e->m->slots_used_mem != NULL, tls_feature_has(TLS_FEAT_MMAPABLE));
	if (!e->m->slots_used_mem)
		return;
	assert_int_equal(bpf_map_update_elem(e->m->slots_used, &w, &zero, BPF_ANY), 0);
	in_slots.rport = rport[0];
	in_slots.found = 0;
	assert_int_equal(tls_for_each_slot_flow(e->m, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 0);
	assert_true(tls_slots_mark_all(e->m) >= 1);
	assert_int_equal(((volatile __u8 *)e->m->slots_used_mem)[sn], 1);
	assert_int_equal(tls_slots_mark_all(e->m), 0);
	assert_int_equal(tls_for_each_slot_flow(e->m, find_flow, &in_slots), 0);
	assert_int_equal(in_slots.found, 1);
}

/* A frame from worker port rport to the PS's 9000 through the ingress
 * counter: payload bytes of payload (0: a pure ACK). */
static void run_in(struct env *e, __u16 rport, unsigned int payload)
{
	struct pkt_spec s = { 0, 4, IPPROTO_TCP, WK4, PS4, rport, 9000, .payload = payload };
	uint8_t frame[512], out[512];
	struct pkt_layout lay = pkt_build(&s, frame);
	struct __sk_buff ctx = {};
	DECLARE_LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = lay.len,
			    .data_out = out, .data_size_out = sizeof(out), .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(tls_cls_in_prog_fd(e->cls), &t), 0);
	assert_int_equal((int)t.retval, -1); /* TC_ACT_UNSPEC: never changes a packet */
}

struct in_find {
	__u16 rport;
	struct tls_flow_in f;
	int found;
};

static int find_in_flow(__u32 slot, const struct tls_flow_key *k, const struct tls_flow_in *f,
			void *ctx)
{
	struct in_find *ff = ctx;

	(void)slot;
	if (ntohs(k->rport) == ff->rport) {
		ff->f = *f;
		ff->found++;
	}
	return 0;
}

/* The flow's ingress record in the slots (packets; -1 if none there, and
 * the reading by syscalls must agree) and in the LRU map (*lru: packets,
 * -1 if none). */
static long in_slot_packets(struct env *e, __u16 rport, long *lru)
{
	struct in_find ff = { .rport = rport }, fs = { .rport = rport };
	struct tls_maps by_syscall = *e->m;
	struct tls_flow_key k = flow4(9000, rport);
	struct tls_flow_in v;

	assert_int_equal(tls_for_each_in_slot_flow(e->m, find_in_flow, &ff), 0);
	by_syscall.in_slots_mem = NULL;
	by_syscall.in_used_mem = NULL;
	assert_int_equal(tls_for_each_in_slot_flow(&by_syscall, find_in_flow, &fs), 0);
	assert_int_equal(ff.found, fs.found);
	assert_true(ff.found <= 1);
	if (ff.found)
		assert_int_equal(ff.f.packets, fs.f.packets);
	*lru = bpf_map_lookup_elem(e->m->flows_in, &k, &v) ? -1 : (long)v.packets;
	return ff.found ? (long)ff.f.packets : -1;
}

static int drop_slot_find(__u32 slot, const struct tls_flow_key *k, const struct tls_flow *f,
			  void *ctx)
{
	(void)slot;
	return find_flow(k, f, ctx);
}

/* The slots a reading skipped as idle (slot_ways.h): how many, and
 * whether skip_want was one. */
static __u32 skip_want = ~0u;
static unsigned int skipped_n;
static bool skip_hit;

static int count_skipped(__u32 slot, void *ctx)
{
	(void)ctx;
	skip_hit |= slot == skip_want;
	skipped_n++;
	return 0;
}

/* Flows of the egress slots with worker port rport, by a reading with kw
 * (ways: *visits, the slots it read; skipped_n, those it skipped as idle). */
static int ways_find(struct env *e, struct tls_slot_ways *kw, __u16 rport, unsigned int *visits)
{
	struct flow_find ff = { .rport = rport };
	struct tls_slot_ways_info wi;

	skipped_n = 0;
	skip_hit = false;
	assert_int_equal(tls_for_each_slot_flow_ways(e->m, kw, drop_slot_find, count_skipped, &ff),
			 0);
	tls_slot_ways_info(kw, &wi);
	*visits = wi.last_visits;
	return ff.found;
}

/* The ways of used sets that hold a record (family set), egress or
 * ingress, from the slots' memory; *fresh: those whose last packet came
 * within the last second (a reading that knows the ways reads those at
 * least, and no more than all). */
static unsigned int held_ways(const struct tls_maps *m, bool in, unsigned int *fresh)
{
	__u32 sets = in ? TLS_IN_SETS : TLS_FLOW_SETS, ways = in ? TLS_IN_WAYS : TLS_FLOW_WAYS;
	const volatile __u8 *used =
		(const volatile __u8 *)(in ? (const volatile void *)m->in_used_mem :
					     (const volatile void *)m->slots_used_mem);
	struct timespec ts;
	unsigned int n = 0;
	__u64 now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	*fresh = 0;
	for (__u32 s = 0; s < sets; s++)
		for (__u32 j = 0; used[s] && j < ways; j++) {
			__u32 i = s * ways + j;
			__u64 last =
				in ? m->in_slots_mem[i].in.seen_ns : m->slots_mem[i].flow.last_ns;

			if (!(in ? m->in_slots_mem[i].key.family : m->slots_mem[i].key.family))
				continue;
			n++;
			*fresh += last + 1000000000ULL > now;
		}
	return n;
}

struct in_count {
	__u16 rport;
	int found;
};

static int in_count_cb(__u32 slot, const struct tls_flow_key *k, const struct tls_flow_in *f,
		       void *ctx)
{
	struct in_count *c = ctx;

	(void)slot;
	(void)f;
	c->found += ntohs(k->rport) == c->rport;
	return 0;
}

static int in_ways_find(struct env *e, struct tls_slot_ways *kw, __u16 rport, unsigned int *visits)
{
	struct in_count c = { .rport = rport };
	struct tls_slot_ways_info wi;

	skipped_n = 0;
	skip_hit = false;
	assert_int_equal(tls_for_each_in_slot_flow_ways(e->m, kw, in_count_cb, count_skipped, &c),
			 0);
	tls_slot_ways_info(kw, &wi);
	*visits = wi.last_visits;
	return c.found;
}

/*
 * A reader that knows the ways (lib/bpf/slot_ways.h) reads the ways it saw
 * holding a flow not idle, not the empty ways of the used sets, from the
 * third reading on; a flow that takes an empty way of a used set is read
 * at the next reading (the classifier counts the take in the set's byte);
 * a flow idle TLS_SLOT_IDLE_NS is read once more, then not, until its
 * next packet (the classifier counts a resume); after
 * tls_slot_ways_forget() every way of the used sets again. Egress and
 * ingress slots.
 */
static void test_slot_ways(void **state)
{
	struct env *e = *state;
	struct tls_slot_ways *kw, *kin;
	unsigned int v1, v, all, fresh;
	__u16 rport[2], iport[2];
	struct tls_flow_rec sr;
	struct tls_flow_in_rec ir;
	__u32 set, i;

	if (!e->m->slots_mem || !e->m->slots_used_mem || !e->m->in_slots_mem)
		skip(); /* read by syscalls: every way, kw learns nothing */
	assert_int_equal(tls_slot_ways_new(TLS_FLOW_MAP_OUT, &kw), 0);
	assert_int_equal(tls_slot_ways_new(TLS_FLOW_MAP_IN, &kin), 0);
	/* the other kind's reader is refused, both ways */
	assert_int_equal(tls_for_each_slot_flow_ways(e->m, kin, drop_slot_find, NULL, NULL),
			 -EINVAL);
	assert_int_equal(tls_for_each_in_slot_flow_ways(e->m, kw, in_count_cb, NULL, NULL),
			 -EINVAL);

	/* egress: a takes one way of a set no earlier flow holds */
	set = colliding_ports(e->m->flow_slots, false, rport, 2);
	struct pkt_spec s = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, rport[0], .payload = 100 };
	uint8_t frame[512];
	struct pkt_layout lay = pkt_build(&s, frame);

	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(0));
	/* the first two readings: every way of the used sets */
	assert_int_equal(ways_find(e, kw, rport[0], &v1), 1);
	assert_int_equal(ways_find(e, kw, rport[0], &v), 1);
	assert_int_equal(v, v1);
	/* then the ways that hold a flow not idle: fewer (a's set has an
	 * empty way), no fewer than those active in the last second */
	assert_int_equal(ways_find(e, kw, rport[0], &v), 1);
	all = held_ways(e->m, false, &fresh);
	assert_true(v <= all && v >= fresh);
	assert_true(v < v1);
	/* b takes the empty way of a's set: read at the next reading */
	s.dport = rport[1];
	lay = pkt_build(&s, frame);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(0));
	assert_int_equal(ways_find(e, kw, rport[1], &v), 1);
	assert_int_equal(ways_find(e, kw, rport[1], &v), 1);
	assert_int_equal(ways_find(e, kw, rport[1], &v), 1);
	assert_int_equal(ways_find(e, kw, rport[0], &v), 1);
	/* a idle (its last packet made old): read once more, then not, but
	 * told as skipped (its slot) */
	i = slot_of(e->m->flow_slots, set, TLS_FLOW_WAYS, rport[0], &sr);
	sr.flow.last_ns = 1;
	assert_int_equal(bpf_map_update_elem(e->m->flow_slots, &i, &sr, BPF_ANY), 0);
	skip_want = i;
	assert_int_equal(ways_find(e, kw, rport[0], &v1), 1);
	assert_false(skip_hit);
	assert_int_equal(ways_find(e, kw, rport[0], &v), 0);
	assert_true(v < v1);
	assert_true(skip_hit);
	/* a sends again: read at the next reading (a resume) */
	s.dport = rport[0];
	lay = pkt_build(&s, frame);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(0));
	assert_int_equal(ways_find(e, kw, rport[0], &v), 1);
	assert_int_equal(ways_find(e, kw, rport[0], &v), 1);
	assert_int_equal(ways_find(e, kw, rport[0], &v), 1);
	/* forgotten: every way of the used sets, twice (a, idle again, is
	 * read then, and skipped after) */
	assert_int_equal(bpf_map_lookup_elem(e->m->flow_slots, &i, &sr), 0);
	sr.flow.last_ns = 1;
	assert_int_equal(bpf_map_update_elem(e->m->flow_slots, &i, &sr, BPF_ANY), 0);
	assert_int_equal(ways_find(e, kw, rport[0], &v), 1);
	assert_int_equal(ways_find(e, kw, rport[0], &v1), 0);
	tls_slot_ways_forget(kw);
	assert_int_equal(ways_find(e, kw, rport[0], &v), 1);
	assert_true(v > v1);
	assert_int_equal(ways_find(e, kw, rport[0], &v1), 1);
	assert_int_equal(v1, v);
	assert_int_equal(ways_find(e, kw, rport[0], &v), 0);
	assert_true(v < v1);

	/* ingress: the same with a set of four */
	set = colliding_ports(e->m->in_slots, true, iport, 2);
	run_in(e, iport[0], 100);
	assert_int_equal(in_ways_find(e, kin, iport[0], &v1), 1);
	assert_int_equal(in_ways_find(e, kin, iport[0], &v), 1);
	assert_int_equal(in_ways_find(e, kin, iport[0], &v), 1);
	all = held_ways(e->m, true, &fresh);
	assert_true(v <= all && v >= fresh);
	assert_true(v + 3 <= v1); /* at least the three empty ways of its set */
	run_in(e, iport[1], 100);
	assert_int_equal(in_ways_find(e, kin, iport[1], &v), 1);
	assert_int_equal(in_ways_find(e, kin, iport[1], &v), 1);
	assert_int_equal(in_ways_find(e, kin, iport[1], &v), 1);
	/* an idle ingress flow (no packet, not even an ACK): read once more,
	 * then skipped and told, until its next packet (a resume) */
	i = slot_of(e->m->in_slots, set, TLS_IN_WAYS, iport[0], &ir);
	ir.in.seen_ns = 1;
	assert_int_equal(bpf_map_update_elem(e->m->in_slots, &i, &ir, BPF_ANY), 0);
	skip_want = i;
	assert_int_equal(in_ways_find(e, kin, iport[0], &v1), 1);
	assert_false(skip_hit);
	assert_int_equal(in_ways_find(e, kin, iport[0], &v), 0);
	assert_true(v < v1);
	assert_true(skip_hit);
	run_in(e, iport[0], 0); /* a pure ACK is a packet */
	assert_int_equal(in_ways_find(e, kin, iport[0], &v), 1);
	assert_int_equal(in_ways_find(e, kin, iport[0], &v), 1);
	assert_int_equal(in_ways_find(e, kin, iport[0], &v), 1);
	assert_false(skip_hit);
	tls_slot_ways_free(kw);
	tls_slot_ways_free(kin);
}

/* The two ingress samplers' results agree: S_param, the job's and each
 * flow's figures in their engines. */
static void ingress_same(struct tls_stats *const st[2], struct tls_ingress_sampler *const sm[2],
			 __u32 job)
{
	struct tls_stats_flow_info fa[64], fb[64];
	struct tls_stats_job_info ja, jb;
	struct tls_sparam pa, pb;
	size_t na, nb;

	tls_ingress_sparam(sm[0], job, &pa);
	tls_ingress_sparam(sm[1], job, &pb);
	assert_int_equal(pa.bursts, pb.bursts);
	assert_int_equal(pa.bytes, pb.bytes);
	assert_int_equal(pa.flows, pb.flows);
	assert_int_equal(tls_stats_job(st[0], job, &ja), 0);
	assert_int_equal(tls_stats_job(st[1], job, &jb), 0);
	assert_int_equal(ja.n, jb.n);
	assert_int_equal(ja.nflows, jb.nflows);
	assert_int_equal(ja.iter_ns, jb.iter_ns);
	assert_memory_equal(&ja.flows, &jb.flows, sizeof(ja.flows));
	na = tls_stats_flows(st[0], job, fa, 64);
	nb = tls_stats_flows(st[1], job, fb, 64);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na && i < 64; i++) {
		assert_memory_equal(&fa[i].key, &fb[i].key, sizeof(fa[i].key));
		assert_memory_equal(&fa[i].acc, &fb[i].acc, sizeof(fa[i].acc));
		assert_int_equal(fa[i].last_active_ns, fb[i].last_active_ns);
		assert_true(fa[i].rate == fb[i].rate);
	}
}

/*
 * The ingress sampler skips idle flows (slot_ways.h) and gets what it got
 * reading every way: S_param from the bursts it kept for them, the engine
 * from tls_stats_flow_unchanged(); a skipped flow the engine no longer
 * holds is read after all; a flow that resumes (ending a burst), and an
 * idle one whose record starts again in place for the id's next job, are
 * read at the next reading, the classifier having counted them.
 */
static void test_ingress_sampler_ways(void **state)
{
	struct env *e = *state;
	struct tls_stats_conf c;
	struct tls_stats *st[2];
	struct tls_ingress_sampler *sm[2];
	struct tls_flow_in_rec r;
	unsigned int first = 0, v;
	__u16 p[TLS_IN_WAYS];
	__u32 set, job = 1, gen;
	__u64 now, bursts;

	if (!e->m->in_slots_mem || !e->m->in_used_mem)
		skip(); /* read by syscalls: every way */
	tls_stats_conf_defaults(&c);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tls_stats_new(&c, &st[i]), 0);
		assert_int_equal(tls_ingress_sampler_new(st[i], &sm[i]), 0);
	}
	tls_ingress_sampler_every_way(sm[1], true);
	set = colliding_ports(e->m->in_slots, true, p, TLS_IN_WAYS);
	for (int k = 0; k < TLS_IN_WAYS; k++)
		run_in(e, p[k], 100);
	/* 0, 1 and 3 with bursts that ended; 0 idle since long ago (history
	 * to the engines), with a burst under way (its next payload ends it);
	 * 2 and 3 idle 3 s, which the engines track */
	now = tls_now_ns();
	for (int k = 0; k < TLS_IN_WAYS; k++) {
		__u32 i = slot_of(e->m->in_slots, set, TLS_IN_WAYS, p[k], &r);

		r.in.bursts = k < 2 ? 3 + (__u64)k : k == 3 ? 5 : 0;
		r.in.done_bytes = r.in.bursts * 1000;
		if (k == 0) {
			r.in.first_ns = r.in.last_ns = r.in.seen_ns = 1;
			r.in.burst_bytes = 700;
		}
		if (k >= 2) {
			r.in.first_ns = now - 10 * 1000000000ULL;
			r.in.last_ns = r.in.seen_ns = now - 3 * 1000000000ULL;
		}
		assert_int_equal(bpf_map_update_elem(e->m->in_slots, &i, &r, BPF_ANY), 0);
	}
	assert_int_equal(bpf_map_lookup_elem(e->m->job_gens, &job, &gen), 0);
	for (int t = 0; t < 9; t++) {
		now += 100ULL * 1000 * 1000;
		if (t == 4) /* the engines drop their flows: skipped ones refused, read */
			for (int i = 0; i < 2; i++)
				tls_stats_forget_job(st[i], job);
		if (t == 5) { /* resumes: 0's burst ends */
			run_in(e, p[0], 100);
			run_in(e, p[2], 100);
		}
		if (t == 7) { /* the id's next job: 3's record starts again in place */
			__u32 next = gen + 1;

			assert_int_equal(bpf_map_update_elem(e->m->job_gens, &job, &next, BPF_ANY),
					 0);
			run_in(e, p[3], 100);
		}
		for (int i = 0; i < 2; i++)
			assert_int_equal(tls_ingress_tick(sm[i], e->m, &job, 1, now, true), 0);
		ingress_same(st, sm, job);
		v = tls_ingress_sampler_visits(sm[0]);
		if (t == 0)
			first = v;
		if (t == 3) /* the idle flows skipped, and the empty ways */
			assert_true(v + 3 <= first);
	}
	/* 3's bursts are its new record's (none), read though it was idle */
	slot_of(e->m->in_slots, set, TLS_IN_WAYS, p[3], &r);
	assert_int_equal(r.in.bursts, 0);
	assert_int_equal(r.in.gen, gen + 1);
	assert_int_equal(bpf_map_update_elem(e->m->job_gens, &job, &gen, BPF_ANY), 0);
	/* the resume's burst was read: 3 + 1 */
	slot_of(e->m->in_slots, set, TLS_IN_WAYS, p[0], &r);
	assert_int_equal(r.in.bursts, 4);
	struct tls_sparam sp;

	tls_ingress_sparam(sm[0], job, &sp);
	bursts = sp.bursts;
	assert_true(bursts >= 4 + 4);
	for (int i = 0; i < 2; i++) {
		tls_ingress_sampler_free(sm[i]);
		tls_stats_free(st[i]);
	}
}

/*
 * The ingress counter's flows (bpf/tls_ingress.h): each in a slot of its
 * set of four, the set marked in the bitmap; a fifth flow of a full set
 * pushes out the one idle longest, with its counters, to the LRU map, and
 * it takes them back when it returns; a slot whose seal does not hold is
 * not read, and its flow's next packet finds its job again with its
 * counters kept; so does a flow after an endpoint change.
 */
static void test_ingress_slots(void **state)
{
	struct env *e = *state;
	enum { N = TLS_IN_WAYS + 1 };
	__u16 rport[N];
	long lru, in_lru = 0;
	__u32 set;

	set = colliding_ports(e->m->in_slots, true, rport, N);
	assert_int_equal(e->m->in_slots_mem != NULL, tls_feature_has(TLS_FEAT_MMAPABLE));

	/* the first four: i + 1 packets each (a pure ACK among them) */
	for (int i = 0; i < N - 1; i++)
		for (int j = 0; j <= i; j++)
			run_in(e, rport[i], j == 1 ? 0 : 100);
	for (int i = 0; i < N - 1; i++) {
		assert_int_equal(in_slot_packets(e, rport[i], &lru), i + 1);
		assert_int_equal(lru, -1);
	}
	/* the set marked used, its byte counting the four takes, by syscall
	 * as in memory */
	__u32 sn = set / TLS_IN_WAYS, w = sn / 8;
	__u64 bits;

	assert_int_equal(bpf_map_lookup_elem(e->m->in_used, &w, &bits), 0);
	assert_int_equal(((__u8 *)&bits)[sn % 8], N - 1);
	if (e->m->in_used_mem)
		assert_int_equal(((const volatile __u8 *)e->m->in_used_mem)[sn], N - 1);

	/* the fifth: the flow idle longest moves to the LRU map with its
	 * counters. Which one that is the test decides, not the coarse clock
	 * (on which the four may tie, and the first way would win): v's last
	 * packet is made the oldest, and v holds neither the first way nor
	 * the last. */
	enum { V = N - 3 };
	struct tls_flow_in_rec r;
	__u32 ia = slot_of(e->m->in_slots, set, TLS_IN_WAYS, rport[V], &r);

	assert_true(ia != set && ia != set + TLS_IN_WAYS - 1);
	r.in.seen_ns = 1;
	assert_int_equal(bpf_map_update_elem(e->m->in_slots, &ia, &r, BPF_ANY), 0);
	run_in(e, rport[N - 1], 100);
	for (int i = 0; i < N; i++) {
		long want = i < N - 1 ? i + 1 : 1;

		assert_int_equal(in_slot_packets(e, rport[i], &lru), i == V ? -1 : want);
		assert_int_equal(lru, i == V ? want : -1);
	}

	/* v again: back in a slot with its own record, which leaves the LRU
	 * map; one of the others is pushed out in its place, with its
	 * counters; both moves counted */
	__u64 moves = tls_flow_map_moves(e->m, TLS_FLOW_MAP_IN);
	int out = 0;

	assert_true(moves >= 1);
	run_in(e, rport[V], 100);
	assert_int_equal(tls_flow_map_moves(e->m, TLS_FLOW_MAP_IN), moves + 2);
	assert_int_equal(in_slot_packets(e, rport[V], &lru), V + 2);
	assert_int_equal(lru, -1);
	for (int i = 0; i < N; i++) {
		long want = i < N - 1 ? i + 1 : 1, got;

		if (i == V)
			continue;
		got = in_slot_packets(e, rport[i], &lru);
		if (got == -1) {
			assert_int_equal(lru, want);
			in_lru++;
			out = i;
		} else {
			assert_int_equal(got, want);
			assert_int_equal(lru, -1);
		}
	}
	assert_int_equal(in_lru, 1);

	/* a slot whose seal does not hold is not read; the flow's next packet
	 * finds its job again, and its counters go on */
	ia = slot_of(e->m->in_slots, set, TLS_IN_WAYS, rport[V], &r);
	assert_int_equal(r.in.job, 1);
	r.in.check ^= 0x100;
	assert_int_equal(bpf_map_update_elem(e->m->in_slots, &ia, &r, BPF_ANY), 0);
	assert_int_equal(in_slot_packets(e, rport[V], &lru), -1);
	run_in(e, rport[V], 100);
	assert_int_equal(in_slot_packets(e, rport[V], &lru), V + 3);

	/* an endpoint change anywhere: the job is found again, the flow's
	 * counters go on */
	add_ep(e->m, PS4 ":9001", IPPROTO_TCP, 1);
	run_in(e, rport[V], 100);
	assert_int_equal(in_slot_packets(e, rport[V], &lru), V + 4);
	del_ep(e->m, PS4 ":9001", IPPROTO_TCP);

	/* the flow out in the LRU map, its record there now another job's: it
	 * comes back as a new flow, and that record stays (another job's
	 * flow, its bursts that job's) */
	struct tls_flow_key ko = flow4(9000, rport[out]);
	long out_packets;

	assert_int_equal(bpf_map_lookup_elem(e->m->flows_in, &ko, &r.in), 0);
	r.in.job = 2;
	out_packets = (long)r.in.packets;
	assert_int_equal(bpf_map_update_elem(e->m->flows_in, &ko, &r.in, BPF_ANY), 0);
	run_in(e, rport[out], 100);
	assert_int_equal(in_slot_packets(e, rport[out], &lru), 1);
	assert_int_equal(lru, out_packets);
}

struct lru_seen {
	unsigned int records;
	uint64_t since;
};

static uint64_t lru_seen_one(const struct tls_flow_key *k, const void *val, uint64_t since,
			     void *ctx)
{
	const struct tls_flow_in *v = val;
	struct lru_seen *ls = ctx;

	(void)k;
	ls->records++;
	ls->since = since;
	return v->seen_ns;
}

/*
 * The samplers' reading of an LRU flow map (tcd/stats_lru.h), on the
 * ingress one, with times of the test's own: read when first asked; then,
 * while no record was active since the reading before, only once quiet_ns
 * passed; at every call while one was; records idle for prune_ns deleted.
 */
static void test_lru_reader(void **state)
{
	const uint64_t ms = 1000 * 1000;
	struct timespec ts;
	struct tls_lru_opts o = { .quiet_ns = 100 * ms,
				  .prune_ns = 60000 * ms,
				  .slack_ns = 4 * ms };
	struct env *e = *state;
	struct lru_seen ls = {};
	struct tls_lru_reader *r;
	struct tls_lru_info li;
	struct tls_flow_key k[3];
	struct tls_flow_in v = { .first_ns = 1, .packets = 1, .job = 1 }, out;
	uint64_t t0;
	bool read;

	/* after the records earlier tests left (a flow pushed out of its slot) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* 100 s on: a record idle 61 s before t0 is after 0 on a machine
	 * booted a moment ago (a test kernel's guest), not wrapped round */
	t0 = (uint64_t)ts.tv_sec * 1000 * ms + (uint64_t)ts.tv_nsec + 100000 * ms;
	assert_int_equal(tls_lru_reader_new(TLS_FLOW_MAP_IN, lru_seen_one, &ls, &r), 0);
	for (int i = 0; i < 3; i++) {
		k[i] = flow4(9000, 60000 + i);
		v.seen_ns = t0 - (i == 2 ? 61000 : 1000) * ms; /* k[2]: idle 61 s */
		assert_int_equal(bpf_map_update_elem(e->m->flows_in, &k[i], &v, BPF_ANY), 0);
	}
	assert_int_equal(tls_lru_read(r, e->m, &o, t0, &read), 0);
	assert_true(read);
	assert_true(ls.records >= 3);
	assert_int_equal(ls.since, t0); /* the first reading counts from now */
	assert_int_not_equal(bpf_map_lookup_elem(e->m->flows_in, &k[2], &out), 0);
	assert_int_equal(bpf_map_lookup_elem(e->m->flows_in, &k[0], &out), 0);
	tls_lru_info(r, &li);
	assert_int_equal(li.reads, 1);
	assert_true(li.pruned >= 1);

	/* quiet: not before quiet_ns */
	ls.records = 0;
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 50 * ms, &read), 0);
	assert_false(read);
	assert_int_equal(ls.records, 0);
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 100 * ms, &read), 0);
	assert_true(read);
	assert_int_equal(ls.since, t0);

	/* a record active since that reading: not seen before quiet_ns
	 * passed; then the map is busy, read at the next call */
	v.seen_ns = t0 + 120 * ms;
	assert_int_equal(bpf_map_update_elem(e->m->flows_in, &k[1], &v, BPF_ANY), 0);
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 150 * ms, &read), 0);
	assert_false(read);
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 200 * ms, &read), 0);
	assert_true(read);
	assert_int_equal(ls.since, t0 + 100 * ms);
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 210 * ms, &read), 0);
	assert_true(read);
	/* that reading saw nothing active since t0 + 200 ms: quiet again */
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 220 * ms, &read), 0);
	assert_false(read);
	/* quiet, but the classifier moved a record in or out: read now */
	__u32 mi = TLS_IN_USED_WORDS;
	__u64 moves = tls_flow_map_moves(e->m, TLS_FLOW_MAP_IN) + 1;

	assert_int_equal(bpf_map_update_elem(e->m->in_used, &mi, &moves, BPF_ANY), 0);
	assert_int_equal(tls_flow_map_moves(e->m, TLS_FLOW_MAP_IN), moves);
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 230 * ms, &read), 0);
	assert_true(read);
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 240 * ms, &read), 0);
	assert_false(read);
	tls_lru_info(r, &li);
	assert_int_equal(li.reads, 5);

	/* a reading that fails is no reading, and is not tried at every
	 * call: again a quiet period later, from the same since */
	struct tls_maps broken = *e->m;

	broken.flows_in = -1;
	assert_int_equal(bpf_map_update_elem(e->m->in_used, &mi, &(__u64){ moves + 1 }, BPF_ANY),
			 0);
	assert_true(tls_lru_read(r, &broken, &o, t0 + 300 * ms, &read) < 0);
	assert_true(read);
	assert_int_equal(tls_lru_read(r, &broken, &o, t0 + 310 * ms, &read), 0);
	assert_false(read);
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 390 * ms, &read), 0);
	assert_false(read);
	assert_int_equal(tls_lru_read(r, e->m, &o, t0 + 400 * ms, &read), 0);
	assert_true(read);
	assert_int_equal(ls.since, t0 + 230 * ms);
	tls_lru_info(r, &li);
	assert_int_equal(li.reads, 6);
	for (int i = 0; i < 2; i++)
		assert_int_equal(bpf_map_delete_elem(e->m->flows_in, &k[i]), 0);
	tls_lru_reader_free(r);
}

/* Flowlets: a demotion applies at once, a promotion of a busy flow waits. */
static void test_flowlet_rotation(void **state)
{
	struct env *e = *state;
	struct pkt_spec s = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 42000, .payload = 100 };
	struct tls_job_stats a, b;
	uint8_t frame[512];
	struct pkt_layout lay = pkt_build(&s, frame);

	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(0));
	assert_int_equal(tls_set_job_band(e->m, 1, 3), 0); /* demote */
	assert_int_equal(tls_read_job_stats(e->m, 1, &a), 0);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(3));
	assert_int_equal(tls_set_job_band(e->m, 1, 0), 0); /* promote: 1 s gap and hold */
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(3));
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(3));
	assert_int_equal(tls_read_job_stats(e->m, 1, &b), 0);
	assert_int_equal(b.demotions - a.demotions, 1);
	assert_int_equal(b.held - a.held, 2);
	/* A new flow of the job takes the job's band at once. */
	s.dport = 42001;
	lay = pkt_build(&s, frame);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(0));
	/* The job leaves its band: default class at once. */
	assert_int_equal(tls_set_job_band(e->m, 1, TLS_BAND_NONE), 0);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), UNTOUCHED);
	assert_int_equal(tls_set_job_band(e->m, 1, 0), 0);
}

/* A whole rotation written at once (into the mapped job map when it is
 * mmapable) reaches the classifier; bad input changes nothing. */
static void test_bands_at_once(void **state)
{
	struct env *e = *state;
	struct pkt_spec s1 = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44000, .payload = 10 };
	struct pkt_spec s2 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44000, .payload = 10 };
	__u32 ids[2] = { 1, 2 }, bands[2] = { 4, TLS_BAND_NONE }, bad[2] = { 1, 9 }, b;
	uint8_t f1[512], f2[512];
	size_t l1 = pkt_build(&s1, f1).len, l2 = pkt_build(&s2, f2).len;

	/* the job map is mapped where the kernel has mmapable maps */
	assert_int_equal(e->m->jobs_mem != NULL, tls_feature_has(TLS_FEAT_MMAPABLE));
	assert_int_equal(tls_set_job_bands(e->m, ids, bands, 2, 0), 0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(4));
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), UNTOUCHED);
	assert_int_equal(tls_get_job_band(e->m, 1, &b), 0);
	assert_int_equal(b, 4);
	assert_int_equal(tls_set_job_bands(e->m, ids, bad, 2, 0), -EINVAL);
	assert_int_equal(tls_get_job_band(e->m, 2, &b), 0);
	assert_int_equal(b, TLS_BAND_NONE);
	bands[0] = 0;
	bands[1] = 1;
	assert_int_equal(tls_set_job_bands(e->m, ids, bands, 2, 0), 0);
}

/* Roundrobin from the clock (bpf/tls_rr.h): one write of the order, and
 * the classifier's band follows the time; tlsd's reading of a job's band
 * agrees; each write goes to the entry no job names; bad orders change
 * nothing; a static write after it takes the jobs off the clock. Flowlets
 * off (setup_dscp): a band change applies at once. */
static void test_rr_from_clock(void **state)
{
	struct env *e = *state;
	struct pkt_spec s1 = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44100, .payload = 10 };
	struct pkt_spec s2 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44100, .payload = 10 };
	const __u64 sec = 1000000000ULL;
	__u32 ids[2] = { 1, 2 }, now_b[2] = { 0, 1 }, bad[2] = { 0, TLS_MAX_BANDS }, b;
	struct tls_rr o = { .interval_ns = sec, .lead = 0, .n = 2, .nbands = 2 }, r0, r1, x;
	uint8_t f1[512], f2[512];
	size_t l1 = pkt_build(&s1, f1).len, l2 = pkt_build(&s2, f2).len;
	__u64 now = tls_now_ns();

	/* half way through the first turn: job 1 (arrived first) leads */
	o.epoch_ns = now - sec / 2;
	assert_int_equal(tls_set_job_rr(e->m, ids, now_b, 2, &o), 0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(0));
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(1));
	assert_int_equal(tls_get_job_band(e->m, 2, &b), 0);
	assert_int_equal(b, 1);
	/* the same order started a turn earlier: job 2 leads now, without
	 * another write of the jobs' bands (they say 0 and 1 still) */
	o.epoch_ns = now - 3 * sec / 2;
	assert_int_equal(tls_set_job_rr(e->m, ids, now_b, 2, &o), 0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(1));
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(0));
	assert_int_equal(tls_get_job_band(e->m, 1, &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(tls_get_job_band(e->m, 2, &b), 0);
	assert_int_equal(b, 0);
	/* the two writes went to both entries, the later one the newer */
	assert_int_equal(tls_get_rr_order(e->m, 0, &r0), 0);
	assert_int_equal(tls_get_rr_order(e->m, 1, &r1), 0);
	assert_int_equal(r0.gen + r1.gen, 3);
	assert_int_equal((r0.gen > r1.gen ? r0 : r1).epoch_ns, o.epoch_ns);
	/* an order that starts later: its first turn (job 2 leads at lead 1) */
	o.epoch_ns = now + 10 * sec;
	o.lead = 1;
	assert_int_equal(tls_set_job_rr(e->m, ids, now_b, 2, &o), 0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(1));
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(0));
	/* bad orders: refused, nothing written */
	for (int k = 0; k < 4; k++) {
		x = o;
		if (k == 0)
			x.n = 3;
		else if (k == 1)
			x.lead = 2;
		else if (k == 2)
			x.nbands = 0;
		else
			x.interval_ns = 0;
		assert_int_equal(tls_set_job_rr(e->m, ids, now_b, 2, &x), -EINVAL);
	}
	assert_int_equal(tls_set_job_rr(e->m, ids, bad, 2, &o), -EINVAL);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(1));
	assert_int_equal(tls_get_rr_order(e->m, 0, &r0), 0);
	assert_int_equal(tls_get_rr_order(e->m, 1, &r1), 0);
	assert_int_equal(r0.gen + r1.gen, 5); /* 2 and 3: none of the bad ones */
	/* a static write takes the jobs off the clock */
	assert_int_equal(tls_set_job_bands(e->m, ids, now_b, 2, 0), 0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(0));
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(1));
}

/* Under every policy a PS's pure ACK goes to band 0, whatever its job's
 * band (issue 13: a job two bands down could not finish its barrier, its
 * workers' gradients waiting for the ACKs); its data stays in the job's
 * band, and the ACK moves no flowlet state (the data after it is not held
 * as a promotion would be). A packet of a job without a band stays
 * untouched. */
static void test_pure_ack_first(void **state)
{
	struct env *e = *state;
	struct pkt_spec d = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44301, .payload = 100 };
	struct pkt_spec a = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44301, .payload = 0 };
	struct pkt_spec d6 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44302, .payload = 100 };
	struct pkt_spec a6 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44302, .payload = 0 };
	__u32 ids[2] = { 1, 2 }, low[2] = { 3, 4 }, none[2] = { TLS_BAND_NONE, TLS_BAND_NONE };
	__u32 plain[2] = { 0, 1 };
	uint8_t fd[512], fa[512], fd6[512], fa6[512];
	size_t ld = pkt_build(&d, fd).len, la = pkt_build(&a, fa).len;
	size_t ld6 = pkt_build(&d6, fd6).len, la6 = pkt_build(&a6, fa6).len;
	struct tls_job_stats s0, s1;

	assert_int_equal(tls_set_job_bands(e->m, ids, low, 2, 0), 0);
	assert_int_equal(tls_read_job_stats(e->m, 1, &s0), 0);
	assert_int_equal(run(e, fd, ld, 0, NULL, NULL), CLASS(3));
	assert_int_equal(run(e, fa, la, 0, NULL, NULL), CLASS(0));
	assert_int_equal(run(e, fd, ld, 0, NULL, NULL), CLASS(3));
	assert_int_equal(run(e, fd6, ld6, 0, NULL, NULL), CLASS(4));
	assert_int_equal(run(e, fa6, la6, 0, NULL, NULL), CLASS(0));
	assert_int_equal(run(e, fd6, ld6, 0, NULL, NULL), CLASS(4));
	assert_int_equal(tls_read_job_stats(e->m, 1, &s1), 0);
	assert_int_equal(s1.packets - s0.packets, 3);
	assert_int_equal(s1.promotions - s0.promotions, 0);
	assert_int_equal(s1.held - s0.held, 0);
	/* no band: untouched, pure ACKs too */
	assert_int_equal(tls_set_job_bands(e->m, ids, none, 2, 0), 0);
	assert_int_equal(run(e, fa, la, 0, NULL, NULL), UNTOUCHED);
	assert_int_equal(run(e, fd, ld, 0, NULL, NULL), UNTOUCHED);
	assert_int_equal(tls_set_job_bands(e->m, ids, plain, 2, 0), 0);
}

/* Policy bursts: the classifier orders the jobs' bursts, first bursts as
 * they start; a pure ACK goes first; the leader idle past the gap hands
 * over; with histories the least left goes first. */
static void test_bursts_policy(void **state)
{
	struct env *e = *state;
	struct pkt_spec d1 = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44101, .payload = 100 };
	struct pkt_spec d2 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44102, .payload = 100 };
	struct pkt_spec a2 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44102, .payload = 0 };
	struct pkt_spec d3 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44103, .payload = 100 };
	struct pkt_spec d4 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44104, .payload = 100 };
	struct pkt_spec d5 = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44105, .payload = 100 };
	struct pkt_spec d6 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44106, .payload = 100 };
	__u32 ids[2] = { 1, 2 }, last[2] = { 2, 2 }, plain[2] = { 0, 1 };
	uint8_t f1[512], f2[512], f3[512], fa[512], f4[512], f5[512], f6[512];
	size_t l1 = pkt_build(&d1, f1).len, l2 = pkt_build(&d2, f2).len;
	size_t l3 = pkt_build(&d3, f3).len, la = pkt_build(&a2, fa).len;
	size_t l4 = pkt_build(&d4, f4).len, l5 = pkt_build(&d5, f5).len;
	size_t l6 = pkt_build(&d6, f6).len;

	/* A kernel whose verifier refuses the code (6.1 did, before it was a
	 * program of its own): loaded without it, as tlsd does, said once;
	 * nothing of it to test here. */
	SKIP_WITHOUT_BURSTS();

	assert_int_equal(tls_set_burst_order(e->m, 0, 20000000, 20000000, 0, 0, NULL), -EINVAL);
	assert_int_equal(tls_set_burst_order(e->m, 3, 20000000, 20000000, 2000000000, 0, NULL), 0);
	assert_int_equal(tls_set_job_bands(e->m, ids, last, 2, TLS_JOB_F_BURST), 0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(0)); /* 1 starts: leads */
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(1)); /* 2 behind it */
	assert_int_equal(run(e, fa, la, 0, NULL, NULL), CLASS(0)); /* 2's pure ACK */
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(1));
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(0));
	usleep(40000); /* past the 20 ms gap (and the 4 ms coarse tick) */
	/* 1 done: 2 leads in the band it has (band 0 is empty: no flow of
	 * it changes band, none can be reordered); a new flow of job 2
	 * takes that band too, 1's new burst the next. */
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(1));
	assert_int_equal(run(e, f3, l3, 0, NULL, NULL), CLASS(1));
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(2)); /* 1's new burst */
	/* Everyone idle: pure ACKs end the leader (2), then 1 past its grace. */
	usleep(60000);
	assert_int_equal(run(e, fa, la, 0, NULL, NULL), CLASS(0));
	usleep(60000);
	assert_int_equal(run(e, fa, la, 0, NULL, NULL), CLASS(0));
	/* With histories (1: bursts of 2 packets, then 1; 2: of 4), the least
	 * left goes first: 2 starts, 1 starts later and overtakes it (new
	 * flows, which take their band at once). */
	assert_int_equal(run(e, f4, l4, 0, NULL, NULL), CLASS(0));
	assert_int_equal(run(e, f5, l5, 0, NULL, NULL), CLASS(0));
	assert_int_equal(run(e, f6, l6, 0, NULL, NULL), CLASS(1));
	/* the flag off: the bands tlsd writes again */
	assert_int_equal(tls_set_job_bands(e->m, ids, plain, 2, 0), 0);
}

/* Policy bursts's fair share is weighted by the weights tlsd writes: two
 * first bursts of one guessed size (10 MB, from the memory), job 2's
 * started just after job 1's. With equal weights job 1 finishes first
 * under the share and keeps the lead; with job 2's weight four times job
 * 1's (16 flows against one) job 2's finish comes first and it passes job
 * 1 at its first packet. A weight out of range is refused, and a freed job
 * id's weight is gone. */
static void test_bursts_weighted(void **state)
{
	struct env *e = *state;
	struct pkt_spec d1 = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44151, .payload = 100 };
	struct pkt_spec d2 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44152, .payload = 100 };
	__u32 ids[2] = { 1, 2 }, last[2] = { 2, 2 }, plain[2] = { 0, 1 }, w = 1;
	struct tls_burst mem = { .mem_most = 10000000 };
	struct tls_burst_seed s = { ids, NULL, 0, 0, &mem };
	uint8_t f1[512], f2[512];
	size_t l1, l2;
	struct tls_burst o;

	SKIP_WITHOUT_BURSTS();
	assert_int_equal(tls_set_job_weight(e->m, 2, TLS_BURST_W_MAX + 1), -EINVAL);
	assert_int_equal(tls_set_job_weight(e->m, 2, TLS_BURST_W1 - 1), -EINVAL);
	assert_int_equal(tls_set_job_weight(e->m, TLS_MAX_JOBS, TLS_BURST_W1), -EINVAL);
	assert_int_equal(tls_set_job_bands(e->m, ids, last, 2, TLS_JOB_F_BURST), 0);
	for (int weighted = 0; weighted < 2; weighted++) {
		/* new flows each time: a flow's band rises at once only
		 * with no packet of it in flight (the flowlet's hold) */
		d1.dport = (uint16_t)(44153 + 2 * weighted);
		d2.dport = (uint16_t)(d1.dport + 1);
		l1 = pkt_build(&d1, f1).len;
		l2 = pkt_build(&d2, f2).len;
		assert_int_equal(tls_set_job_weight(e->m, 2, weighted ? 4 * TLS_BURST_W1 : 0), 0);
		/* 1 Gbit/s: the clock moves 125 kB per ms, far less than the
		 * 7.5 MB between the two finishes */
		assert_int_equal(tls_set_burst_order(e->m, 3, 150000000, 250000000, 2000000000,
						     1000000000, &s),
				 0);
		assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(0)); /* 1 starts: leads */
		assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(weighted ? 0 : 1));
		assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(weighted ? 1 : 0));
		assert_int_equal(tls_read_burst_order(e->m, &o), 0);
		assert_int_equal(o.n, 2);
		assert_int_equal(o.job[0], weighted ? 2 : 1);
		/* each entry keeps the weight its burst started with (0,
		 * unset, counts as 1) */
		assert_int_equal(o.w[weighted ? 0 : 1], weighted ? 4 * TLS_BURST_W1 : 0);
		assert_int_equal(tls_burst_weight(&o, weighted ? 1 : 0), TLS_BURST_W1);
		assert_int_equal(o.wsum, (weighted ? 5 : 2) * TLS_BURST_W1);
	}
	assert_int_equal(tls_get_job_weight(e->m, 2, &w), 0);
	assert_int_equal(w, 4 * TLS_BURST_W1);
	assert_int_equal(tls_free_job_id(e->m, 2), 0);
	assert_int_equal(tls_get_job_weight(e->m, 2, &w), 0);
	assert_int_equal(w, 0);
	assert_int_equal(tls_set_burst_order(e->m, 3, 150000000, 250000000, 2000000000, 0, NULL),
			 0);
	assert_int_equal(tls_set_job_bands(e->m, ids, plain, 2, 0), 0);
}

/* Policy bursts's program sits behind a tail call: with its slot empty
 * (never filled, or its pin removed while no tlsd holds it), a job under
 * the policy keeps the band tlsd last wrote; with the program back, the
 * order decides again (job 1's first burst leads: band 0, not its own 2). */
static void test_bursts_tail_empty(void **state)
{
	struct env *e = *state;
	struct pkt_spec d1 = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44301, .payload = 100 };
	__u32 ids[2] = { 1, 2 }, last[2] = { 2, 2 }, plain[2] = { 0, 1 }, zero = 0, id = 0;
	uint8_t f1[512];
	size_t l1 = pkt_build(&d1, f1).len;
	int fd;

	SKIP_WITHOUT_BURSTS();
	assert_true(e->m->tail >= 0);
	/* the slot holds a program; its id is what a lookup gives */
	assert_int_equal(bpf_map_lookup_elem(e->m->tail, &zero, &id), 0);
	fd = bpf_prog_get_fd_by_id(id);
	assert_true(fd >= 0);
	assert_int_equal(tls_set_burst_order(e->m, 3, 20000000, 20000000, 2000000000, 0, NULL), 0);
	assert_int_equal(tls_set_job_bands(e->m, ids, last, 2, TLS_JOB_F_BURST), 0);
	assert_int_equal(bpf_map_delete_elem(e->m->tail, &zero), 0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(2));
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(2));
	assert_int_equal(bpf_map_update_elem(e->m->tail, &zero, &fd, BPF_ANY), 0);
	close(fd);
	/* a new flow of job 1, so that its flow state starts afresh */
	d1.dport = 44302;
	l1 = pkt_build(&d1, f1).len;
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(0));
	assert_int_equal(tls_set_job_bands(e->m, ids, plain, 2, 0), 0);
}

/* Policy bursts: when the bands run out, all move up at once (a
 * compaction); a flow that has not drained keeps its old band for as long
 * as the order lets a burst hold the link (its limit, here 1 s), not only
 * the flowlet hold (100 ms in this group): moved up while its packets
 * still wait in the old band, it would send new ones past them. */
static void test_bursts_hold(void **state)
{
	struct env *e = *state;
	struct pkt_spec d1 = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44201, .payload = 100 };
	struct pkt_spec d2 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 44202, .payload = 100 };
	__u32 ids[2] = { 1, 2 }, last[2] = { 2, 2 }, plain[2] = { 0, 1 }, zero = 0;
	uint8_t f1[512], f2[512];
	size_t l1 = pkt_build(&d1, f1).len, l2 = pkt_build(&d2, f2).len;
	struct tls_burst o;
	int i;

	SKIP_WITHOUT_BURSTS();
	assert_int_equal(tls_set_burst_order(e->m, 3, 20000000, 20000000, 1000000000, 0, NULL), 0);
	assert_int_equal(tls_set_job_bands(e->m, ids, last, 2, TLS_JOB_F_BURST), 0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(0)); /* 1 leads */
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(1)); /* 2 behind */
	usleep(40000);
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(1)); /* 1 ended: 2 leads */
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(2)); /* 1's next burst */
	for (i = 0; i < 4; i++) { /* 2 silent past its gap: 1 leads, band 2 */
		usleep(10000);
		assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(2));
	}
	/* 2's next burst: no band after 2, so all move up: 1 to 0, 2 to 1;
	 * but 1's queued packets are in band 2, so 2 is sent no higher than
	 * that while 1 leads (the leader's floor) */
	assert_int_equal(run(e, f2, l2, 0, NULL, NULL), CLASS(2));
	assert_int_equal(bpf_map_lookup_elem(e->m->burst, &zero, &o), 0);
	assert_int_equal(o.compactions, 1);
	assert_int_equal(o.band[0], 0);
	/* 1's flow never idle: it keeps band 2 past the flowlet hold */
	for (i = 0; i < 20; i++) {
		usleep(10000);
		assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(2));
	}
	assert_int_equal(tls_set_job_bands(e->m, ids, plain, 2, 0), 0);
}

/* A burst order of two entries: its jobs and their bands. */
static void assert_order2(const struct tls_burst *o, __u32 j0, __u32 j1, __u32 b0, __u32 b1)
{
	assert_int_equal(o->n, 2);
	assert_int_equal(o->job[0], j0);
	assert_int_equal(o->job[1], j1);
	assert_int_equal(o->band[0], b0);
	assert_int_equal(o->band[1], b1);
}

/* Policy bursts's order set up with the jobs sending (tlsd's seed at a
 * reset): a leader that never pauses yields to a seeded job within its
 * limit (here 200 ms) even though that job has sent nothing since. Left
 * empty, the order would hold the leader alone, which never yields. */
static void test_bursts_seeded(void **state)
{
	struct env *e = *state;
	struct pkt_spec d1 = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44501, .payload = 100 };
	__u32 ids[2] = { 1, 2 }, last[2] = { 2, 2 }, plain[2] = { 0, 1 };
	__u32 seed[2] = { 1, 2 }, twice[2] = { 2, 2 }, bad[1] = { TLS_MAX_JOBS };
	__u32 high[2] = { 0, 3 }, kept[2] = { 1, 2 };
	struct tls_burst_seed s_twice = { twice, NULL, 2, 0, NULL },
			      s_bad = { bad, NULL, 1, 0, NULL };
	struct tls_burst_seed s_high = { seed, high, 2, 0, NULL },
			      s_floor = { seed, NULL, 2, 3, NULL };
	struct tls_burst_seed s_kept = { seed, kept, 2, 1, NULL }, s = { seed, NULL, 2, 0, NULL };
	struct tls_burst mem = { .mem_most = 777 };
	uint8_t f1[512];
	size_t l1 = pkt_build(&d1, f1).len;
	struct timespec t0, t1;
	struct tls_burst o;
	int i;

	SKIP_WITHOUT_BURSTS();
	assert_int_equal(tls_set_burst_order(e->m, 3, 150000000, 250000000, 200000000, 0, &s_twice),
			 -EINVAL);
	assert_int_equal(tls_set_burst_order(e->m, 3, 150000000, 250000000, 200000000, 0, &s_bad),
			 -EINVAL);
	/* bands, and the floor, within the tree's 3 */
	assert_int_equal(tls_set_burst_order(e->m, 3, 150000000, 250000000, 200000000, 0, &s_high),
			 -EINVAL);
	assert_int_equal(tls_set_burst_order(e->m, 3, 150000000, 250000000, 200000000, 0, &s_floor),
			 -EINVAL);
	/* bands given, the leader's floor, and the memory of burst sizes */
	mem.mem_job[5] = 5;
	mem.mem_est[5] = 123456;
	s_kept.memory = &mem;
	assert_int_equal(tls_set_burst_order(e->m, 3, 150000000, 250000000, 200000000, 0, &s_kept),
			 0);
	assert_int_equal(tls_read_burst_order(e->m, &o), 0);
	assert_order2(&o, 1, 2, 1, 2);
	assert_int_equal(o.lead_floor, 1);
	assert_int_equal(o.lead_floor_job, 1);
	assert_int_equal(o.mem_most, 777);
	assert_int_equal(o.mem_job[5], 5);
	assert_int_equal(o.mem_est[5], 123456);
	/* written whole: read back as written; refused if it does not hold
	 * together */
	o.sent[1] = 4242;
	assert_int_equal(tls_write_burst_order(e->m, &o), 0);
	memset(&mem, 0, sizeof(mem));
	assert_int_equal(tls_read_burst_order(e->m, &mem), 0);
	assert_int_equal(mem.n, 2);
	assert_int_equal(mem.sent[1], 4242);
	assert_int_equal(mem.mem_est[5], 123456);
	mem.job[1] = 1; /* twice */
	assert_int_equal(tls_write_burst_order(e->m, &mem), -EINVAL);
	mem.job[1] = 2;
	mem.band[1] = 3; /* past the 3 bands */
	assert_int_equal(tls_write_burst_order(e->m, &mem), -EINVAL);
	mem.band[1] = 2;
	mem.n = TLS_BURST_SLOTS + 1;
	assert_int_equal(tls_write_burst_order(e->m, &mem), -EINVAL);
	/* the run: bands by place, no memory */
	assert_int_equal(tls_set_burst_order(e->m, 3, 150000000, 250000000, 200000000, 0, &s), 0);
	assert_int_equal(tls_read_burst_order(e->m, &o), 0);
	assert_order2(&o, 1, 2, 0, 1);
	assert_int_equal(o.lead_floor, 0);
	assert_int_equal(o.mem_most, 0);
	assert_int_equal(tls_set_job_bands(e->m, ids, last, 2, TLS_JOB_F_BURST), 0);
	/* job 1 sends every 10 ms, up to a second; job 2 never does (a gap
	 * of 150 ms: a loaded machine's late wakeup does not end job 1's
	 * burst before its limit) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(run(e, f1, l1, 0, NULL, NULL), CLASS(0));
	for (i = 0; i < 100; i++) {
		usleep(10000);
		run(e, f1, l1, 0, NULL, NULL);
		assert_int_equal(tls_read_burst_order(e->m, &o), 0);
		if (o.job[0] != 1)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(o.n, 2);
	assert_int_equal(o.job[0], 2); /* 1 yielded, at its limit and not before */
	assert_int_equal(o.job[1], 1);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec >=
		    200000000LL);
	assert_int_equal(tls_set_job_bands(e->m, ids, plain, 2, 0), 0);
}

/* Policy bursts's half seals an endpoint flow's cached job with the
 * endpoints' generation its caller resolved the job under, not the one it
 * finds: an endpoint deleted between the two halves (the generation moves
 * on after the change) must not leave the flow sealed in the old job under
 * the new generation. Run here by hand: the classifier's half, then the
 * endpoint deleted, then the bursts half alone with the context the first
 * left (this CPU's: the test stays on one CPU). */
static void test_bursts_tail_gen(void **state)
{
	struct env *e = *state;
	struct pkt_spec d = { 0, 4, IPPROTO_TCP, PS4, WK4, 9000, 44401, .payload = 100 };
	__u32 ids[2] = { 1, 2 }, last[2] = { 2, 2 }, plain[2] = { 0, 1 }, zero = 0, id = 0;
	struct tls_endpoint_key keys[2];
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info), seq;
	int ncpu = libbpf_num_possible_cpus(), fd, cpu = sched_getcpu(), n;
	uint8_t f[512], dummy[512], *vals;
	size_t len = pkt_build(&d, f).len, vsz;
	cpu_set_t one, was;
	char err[128];

	SKIP_WITHOUT_BURSTS();
	assert_true(ncpu > 0 && cpu >= 0 && cpu < ncpu);
	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(bpf_obj_get_info_by_fd(e->m->tail_ctx, &info, &ilen), 0);
	vsz = (info.value_size + 7) / 8 * 8;
	vals = calloc((size_t)ncpu, vsz);
	assert_non_null(vals);
	assert_int_equal(bpf_map_lookup_elem(e->m->tail, &zero, &id), 0);
	fd = bpf_prog_get_fd_by_id(id);
	assert_true(fd >= 0);
	assert_int_equal(tls_set_burst_order(e->m, 3, 20000000, 20000000, 2000000000, 0, NULL), 0);
	assert_int_equal(tls_set_job_bands(e->m, ids, last, 2, TLS_JOB_F_BURST), 0);
	/* both halves: the flow's slot sealed in job 1 */
	assert_int_equal(run(e, f, len, 0, NULL, NULL), CLASS(0));
	assert_int_equal(bpf_map_lookup_elem(e->m->tail_ctx, &zero, vals), 0);
	memcpy(&seq, vals + (size_t)cpu * vsz, sizeof(seq)); /* seq comes first */
	/* the endpoint goes (the generation moves on), then the second half */
	n = tls_endpoint_parse(PS4 ":9000", IPPROTO_TCP, keys, err, sizeof(err));
	assert_int_equal(n, 1);
	assert_int_equal(tls_del_endpoint(e->m, &keys[0]), 0);
	for (int k = 0; k < 2; k++) {
		/* first with another packet's number: the context is not this
		 * packet's, which is left to the default class */
		struct __sk_buff ctx = { .priority = UNTOUCHED, .cb = { k ? seq : seq + 1 } };
		DECLARE_LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = f, .data_size_in = len,
				    .data_out = dummy, .data_size_out = sizeof(dummy),
				    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .ctx_out = &ctx,
				    .ctx_size_out = sizeof(ctx), .repeat = 1);

		assert_int_equal(bpf_prog_test_run_opts(fd, &t), 0);
		assert_int_equal(ctx.priority, k ? CLASS(0) : UNTOUCHED); /* it ran the packet */
	}
	/* the next packet: the endpoint is gone, so is the flow's job (IPv6
	 * keeps port 9000 in the endpoints: the flow's slot is looked at) */
	assert_int_equal(run(e, f, len, 0, NULL, NULL), UNTOUCHED);
	add_ep(e->m, PS4 ":9000", IPPROTO_TCP, 1);
	assert_int_equal(tls_set_job_bands(e->m, ids, plain, 2, 0), 0);
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
	close(fd);
	free(vals);
}

/* A flow caches its endpoint's job; changing the endpoints invalidates it. */
static void test_endpoint_change(void **state)
{
	struct env *e = *state;
	struct pkt_spec s = { 0, 4, IPPROTO_TCP, "198.18.0.5", WK4, 9500, 43000, .payload = 10 };
	struct tls_endpoint_key keys[2], other[2];
	uint8_t frame[512];
	struct pkt_layout lay = pkt_build(&s, frame);
	char err[64];

	assert_int_equal(tls_endpoint_parse("198.18.0.5:9500", IPPROTO_TCP, keys, err, sizeof(err)),
			 1);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), UNTOUCHED);
	assert_int_equal(tls_add_endpoint(e->m, &keys[0], 2), 0);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(1));
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(1)); /* cached */
	assert_int_equal(tls_del_endpoint(e->m, &keys[0]), 0);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), UNTOUCHED);
	/* Same port, other job, wildcard address: the flow follows. */
	assert_int_equal(tls_endpoint_parse("*:9500", IPPROTO_TCP, keys, err, sizeof(err)), 2);
	assert_int_equal(tls_add_endpoint(e->m, &keys[0], 3), 0);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(2));
	/* Another endpoint on another port also invalidates; the flow re-resolves
	 * to the same job and keeps its class. */
	assert_int_equal(
		tls_endpoint_parse("198.18.0.5:9501", IPPROTO_TCP, other, err, sizeof(err)), 1);
	assert_int_equal(tls_add_endpoint(e->m, &other[0], 1), 0);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), CLASS(2));
	assert_int_equal(tls_del_endpoint(e->m, &other[0]), 0);
	assert_int_equal(tls_del_endpoint(e->m, &keys[0]), 0);
	assert_int_equal(tls_del_endpoint(e->m, &keys[0]), -ENOENT);
	assert_int_equal(run(e, frame, lay.len, 0, NULL, NULL), UNTOUCHED);
}

/* Each port's endpoint count is exact through adds, re-adds and deletes
 * (deletes count down without a walk of the map), and deleting a port's
 * last endpoint stops the classifier matching it. Prints the time of a
 * mass delete (TLS_MAX_ENDPOINTS / 2 endpoints; a reload to no jobs). */
static void test_port_counts_exact(void **state)
{
	struct env *e = *state;
	struct pkt_spec s = { 0, 4, IPPROTO_TCP, "198.18.1.1", WK4, 9201, 43001, .payload = 10 };
	enum { N = TLS_MAX_ENDPOINTS / 2, PORTS = 7 };
	static struct tls_endpoint_key keys[N];
	struct tls_endpoint_key two[2]; /* what a parse may fill */
	unsigned int left[PORTS] = { 0 }, i, p;
	uint8_t frame[512];
	size_t len = pkt_build(&s, frame).len;
	struct timespec t0, t1;
	char ep[64], err[64];

	for (i = 0; i < N; i++) {
		snprintf(ep, sizeof(ep), "198.18.%u.%u:%u", 1 + i / 250, i % 250, 9200 + i % PORTS);
		assert_int_equal(tls_endpoint_parse(ep, IPPROTO_TCP, two, err, sizeof(err)), 1);
		keys[i] = two[0];
		assert_int_equal(tls_add_endpoint(e->m, &keys[i], 1 + i % 5), 0);
		left[i % PORTS]++;
	}
	/* the same again, some with another job: no new endpoint */
	for (i = 0; i < N; i += 3)
		assert_int_equal(tls_add_endpoint(e->m, &keys[i], 1 + (i + 1) % 5), 0);
	for (i = 0; i < N; i += 2) {
		assert_int_equal(tls_del_endpoint(e->m, &keys[i]), 0);
		left[i % PORTS]--;
	}
	assert_int_equal(tls_del_endpoint(e->m, &keys[0]), -ENOENT); /* gone: no count */
	for (p = 0; p < PORTS; p++) {
		__u32 port = 9200 + p, n = 0;

		assert_int_equal(bpf_map_lookup_elem(e->m->ports, &port, &n), 0);
		assert_int_equal(n, left[p]);
	}
	assert_int_equal(run(e, frame, len, 0, NULL, NULL), CLASS(1)); /* 198.18.1.1:9201, job 2 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 1; i < N; i += 2)
		assert_int_equal(tls_del_endpoint(e->m, &keys[i]), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("deleted %u endpoints in %.1f ms\n", N / 2,
		      (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	for (p = 0; p < PORTS; p++) {
		__u32 port = 9200 + p, n = 1;

		assert_int_equal(bpf_map_lookup_elem(e->m->ports, &port, &n), 0);
		assert_int_equal(n, 0);
	}
	assert_int_equal(run(e, frame, len, 0, NULL, NULL), UNTOUCHED);
}

/* DSCP marking keeps ECN and leaves a valid IPv4 header checksum. */
static void test_dscp(void **state)
{
	struct env *e = *state;
	/* data: a pure ACK would go to band 0 (test_pure_ack_first) */
	struct pkt_spec s4 = { 1, 4, IPPROTO_TCP, PS4, WK4, 9000, 40000, .ip_opt_words = 2,
			       .payload = 20 };
	struct pkt_spec s6 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000, .payload = 20 };
	struct pkt_spec other = { 0, 4, IPPROTO_TCP, WK4, PS4, 40000, 9000 };
	uint8_t frame[512], out[512];
	struct pkt_layout lay;
	__u32 out_len;
	uint8_t tc;

	lay = pkt_build(&s4, frame);
	assert_int_equal(run(e, frame, lay.len, 0, out, &out_len), CLASS(0));
	assert_int_equal(out_len, lay.len);
	assert_int_equal(out[lay.l3_off + 1], (6 << 2) | 0x01); /* band 0: DSCP 6, ECN kept */
	assert_int_equal(pkt_csum(out + lay.l3_off, 28), 0);	/* checksum verifies */

	lay = pkt_build(&s6, frame);
	assert_int_equal(run(e, frame, lay.len, 0, out, &out_len), CLASS(1));
	tc = (out[lay.l3_off] & 0x0f) << 4 | out[lay.l3_off + 1] >> 4;
	assert_int_equal(tc, (14 << 2) | 0x01); /* band 1: DSCP 14, ECN kept */
	assert_int_equal(out[lay.l3_off] >> 4, 6);

	lay = pkt_build(&other, frame);
	assert_int_equal(run(e, frame, lay.len, 0, out, &out_len), UNTOUCHED);
	assert_memory_equal(out, frame, lay.len); /* not ours: not one bit changed */
}

/* Observe mode: a job's packets are counted, and leave as they came:
 * skb->priority as the socket set it, not one bit of the frame changed. */
static void test_observe(void **state)
{
	struct env *e = *state;
	struct pkt_spec s4 = { 1, 4, IPPROTO_TCP, PS4, WK4, 9000, 40000 };
	struct pkt_spec s6 = { 0, 6, IPPROTO_TCP, PS6, WK6, 9000, 40000 };
	struct tls_job_stats st;
	uint8_t frame[512], out[512];
	struct pkt_layout lay;
	__u32 out_len;

	lay = pkt_build(&s4, frame);
	assert_int_equal(run(e, frame, lay.len, 0, out, &out_len), UNTOUCHED);
	assert_int_equal(out_len, lay.len);
	assert_memory_equal(out, frame, lay.len);
	assert_int_equal(tls_read_job_stats(e->m, 1, &st), 0);
	assert_int_equal(st.packets, 1);
	assert_int_equal(st.bytes, lay.len);

	lay = pkt_build(&s6, frame);
	assert_int_equal(run(e, frame, lay.len, 3, out, &out_len), UNTOUCHED);
	assert_memory_equal(out, frame, lay.len);
	assert_int_equal(tls_read_job_stats(e->m, 2, &st), 0);
	assert_int_equal(st.packets, 1);
	assert_int_equal(st.segs, 3);
}

/*
 * A takeover carries policy bursts's order over: a second instance loaded
 * over the first one's pins starts with the first's order, copied at its
 * load (before any attach), if the first ran bursts (its jobs flagged so in
 * the pinned job map); an instance over pins whose jobs are not under
 * bursts, or over no pins, starts empty. The directories and the
 * instances go in the teardown, also when an assertion fails.
 */
struct carry {
	char dir[128];
	struct tls_cls *a, *b, *c, *f;
};

static int setup_carry(void **state)
{
	struct carry *k = calloc(1, sizeof(*k));

	if (!k)
		return -1;
	snprintf(k->dir, sizeof(k->dir), TLS_PIN_ROOT "/test-carry-%d", (int)getpid());
	*state = k;
	return 0;
}

static int teardown_carry(void **state)
{
	struct carry *k = *state;
	char fresh[160];

	tls_cls_close(k->f);
	tls_cls_close(k->c);
	tls_cls_close(k->b);
	tls_cls_close(k->a);
	tls_cls_remove_pinned(k->dir);
	snprintf(fresh, sizeof(fresh), "%s-fresh", k->dir);
	tls_cls_remove_pinned(fresh);
	free(k);
	return 0;
}

static void test_bursts_carried(void **state)
{
	struct carry *k = *state;
	struct tls_cls_opts o = { .cgroup = "", .pin_dir = k->dir };
	__u32 seed[2] = { 7, 9 }, bands[2] = { 1, 2 }, ids[2] = { 7, 9 }, last[2] = { 2, 2 };
	struct tls_burst mem = { .mem_most = 999 }, got;
	struct tls_burst_seed s = { seed, bands, 2, 0, &mem };
	char fresh[160];

	SKIP_WITHOUT_BURSTS();
	assert_int_equal(tls_cls_load(&o, &k->a), 0);
	assert_int_equal(tls_cls_attach(k->a), 0); /* pins its program and tail slot */
	assert_false(tls_cls_burst_carried(k->a)); /* the first: nothing before it */
	mem.mem_job[7] = 7;
	mem.mem_est[7] = 31337;
	assert_int_equal(tls_set_burst_order(tls_cls_maps(k->a), 3, 20000000, 250000000, 2000000000,
					     100000000, &s),
			 0);
	assert_int_equal(tls_set_job_bands(tls_cls_maps(k->a), ids, last, 2, TLS_JOB_F_BURST), 0);

	assert_int_equal(tls_cls_load(&o, &k->b), 0);
	assert_true(tls_cls_took_over(k->b));
	assert_true(tls_cls_burst_carried(k->b));
	memset(&got, 0, sizeof(got));
	assert_int_equal(tls_read_burst_order(tls_cls_maps(k->b), &got), 0);
	assert_order2(&got, 7, 9, 1, 2);
	assert_int_equal(got.nbands, 3);
	assert_int_equal(got.ns_per_kib, tls_burst_ns_per_kib(100000000));
	assert_int_equal(got.mem_est[7], 31337);
	assert_int_equal(got.mem_most, 999);
	{
		__u32 fl = 0;

		assert_int_equal(tls_get_job_flags(tls_cls_maps(k->b), 9, &fl), 0);
		assert_int_equal(fl, TLS_JOB_F_BAND | TLS_JOB_F_BURST);
	}

	/* the first one's jobs no longer under bursts: its order is stale */
	assert_int_equal(tls_set_job_bands(tls_cls_maps(k->a), ids, last, 2, 0), 0);
	assert_int_equal(tls_cls_load(&o, &k->c), 0);
	assert_true(tls_cls_took_over(k->c));
	assert_false(tls_cls_burst_carried(k->c));
	assert_int_equal(tls_read_burst_order(tls_cls_maps(k->c), &got), 0);
	assert_int_equal(got.n, 0);

	snprintf(fresh, sizeof(fresh), "%s-fresh", k->dir);
	o.pin_dir = fresh;
	assert_int_equal(tls_cls_load(&o, &k->f), 0);
	assert_false(tls_cls_took_over(k->f));
	assert_false(tls_cls_burst_carried(k->f));
}

/* A file built beside this program (in OUT): its path in buf. */
static const char *beside_me(char *buf, size_t len, const char *name)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	assert_true(n > 0);
	buf[n] = 0;
	slash = strrchr(buf, '/');
	assert_non_null(slash);
	assert_true((size_t)snprintf(slash + 1, len - (size_t)(slash + 1 - buf), "%s", name) <
		    len - (size_t)(slash + 1 - buf));
	return buf;
}

/*
 * A previous program of another version behind the pinned tail-call slot,
 * its order laid out otherwise (tests/bpf/stale_burst.bpf.c: tlsd's map
 * name, size and lock, other members): a takeover does not read that
 * order (-ESTALE), where it reads this build's program's.
 */
static void test_bursts_stale_layout(void **state)
{
	struct carry *k = *state;
	struct bpf_object *mine, *stale;
	char tail_pin[192], file[4096];
	__u32 zero = 0, type_id;
	int tail, prog, fd;

	SKIP_WITHOUT_BURSTS();
	assert_non_null(k->a); /* attached by test_bursts_carried: its slot pinned */
	snprintf(tail_pin, sizeof(tail_pin), "%s/tls_tail", k->dir);
	mine = bpf_object__open_file(beside_me(file, sizeof(file), "tls_classifier.bpf.o"), NULL);
	assert_non_null(mine);
	type_id = bpf_map__btf_value_type_id(bpf_object__find_map_by_name(mine, "tls_burst"));
	assert_true(bpf_object__btf(mine) && type_id);

	fd = tls_burst_prev_open(tail_pin, bpf_object__btf(mine), type_id);
	assert_true(fd >= 0); /* this build's */
	close(fd);

	stale = bpf_object__open_file(beside_me(file, sizeof(file), "stale_burst.bpf.o"), NULL);
	assert_non_null(stale);
	assert_int_equal(bpf_object__load(stale), 0);
	prog = bpf_program__fd(bpf_object__find_program_by_name(stale, "tls_stale"));
	tail = bpf_obj_get(tail_pin);
	assert_true(prog >= 0 && tail >= 0);
	assert_int_equal(bpf_map_update_elem(tail, &zero, &prog, BPF_ANY), 0);
	assert_int_equal(tls_burst_prev_open(tail_pin, bpf_object__btf(mine), type_id), -ESTALE);
	/* and a load over it still takes over, its order not read */
	tls_cls_close(k->c);
	k->c = NULL;
	{
		struct tls_cls_opts o = { .cgroup = "", .pin_dir = k->dir };

		assert_int_equal(tls_cls_load(&o, &k->c), 0);
		assert_true(tls_cls_took_over(k->c));
		assert_false(tls_cls_burst_carried(k->c));
	}
	close(tail);
	bpf_object__close(stale);
	bpf_object__close(mine);
}

/*
 * Socket membership: sockets a member process opens get the job from the
 * cgroup hook; sockets accepted from its listener inherit it; a socket that
 * existed before the process joined is adopted through pidfd_getfd.
 */
static int setup_hook(void **state)
{
	struct tls_cls_opts o = { 0 }; /* cgroup NULL: the cgroup2 root */
	struct env *e = calloc(1, sizeof(*e));

	if (!e || tls_cls_load(&o, &e->cls) || tls_cls_attach(e->cls)) {
		if (e && e->cls)
			tls_cls_close(e->cls);
		free(e);
		return -1;
	}
	e->m = tls_cls_maps(e->cls);
	*state = e;
	return 0;
}

static __u32 sk_job(struct env *e, int fd)
{
	struct tls_flow_rec s = { 0 };

	if (bpf_map_lookup_elem(e->m->sk_jobs, &fd, &s))
		return 0;
	return s.flow.job;
}

static void test_socket_membership(void **state)
{
	struct env *e = *state;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
	socklen_t alen = sizeof(a);
	int before, lfd, cfd, afd, pfd[2], status, pidfd, child_fd;
	pid_t child;
	char c;

	/* Adoption: a child process's socket made before it joins job 9. Done
	 * before any socket of ours exists, since the child inherits our fds. */
	assert_int_equal(pipe(pfd), 0);
	child_fd = dup(pfd[0]); /* the number the child's socket will get */
	close(child_fd);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int s = socket(AF_INET6, SOCK_DGRAM, 0);

		if (s != child_fd)
			_exit(1);
		/* An assertion failure in the parent must not leave us behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(pfd[0], &c, 1), 1);
	assert_int_equal(tls_add_process(e->m, child, 9), 1); /* its one INET socket */
	pidfd = syscall(SYS_pidfd_open, child, 0);
	assert_true(pidfd >= 0);
	cfd = syscall(SYS_pidfd_getfd, pidfd, child_fd, 0);
	assert_true(cfd >= 0);
	assert_int_equal(sk_job(e, cfd), 9);
	assert_int_equal(tls_del_process(e->m, child), 1); /* untagged again */
	assert_int_equal(sk_job(e, cfd), 0);
	close(cfd);
	close(pidfd);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	assert_int_equal(tls_del_pid(e->m, child), -ENOENT); /* already forgotten */
	assert_int_equal(tls_del_process(e->m, child), 0);   /* gone: nothing to do */

	before = socket(AF_INET, SOCK_STREAM, 0); /* before joining: not a member */
	assert_true(before >= 0);
	assert_int_equal(sk_job(e, before), 0);
	assert_int_equal(tls_add_pid(e->m, getpid(), 7), 0);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(sk_job(e, lfd), 7);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 4), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(tls_del_pid(e->m, getpid()), 0);
	/* The client is not a member; the accepted socket clones the listener's. */
	cfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(sk_job(e, cfd), 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&a, sizeof(a)), 0);
	afd = accept(lfd, NULL, NULL);
	assert_true(afd >= 0);
	assert_int_equal(sk_job(e, afd), 7);
	assert_int_equal(sk_job(e, cfd), 0);

	/* Errors name the problem and change nothing. */
	assert_int_equal(tls_add_pid(e->m, getpid(), 0), -EINVAL);
	assert_int_equal(tls_add_pid(e->m, getpid(), TLS_MAX_JOBS), -EINVAL);
	assert_true(tls_add_process(e->m, 0x3ffffff0, 3) < 0);
	assert_int_equal(tls_set_job_band(e->m, 3, TLS_MAX_BANDS), -EINVAL);
	assert_int_equal(tls_set_band(e->m, TLS_MAX_BANDS, 0x10010, TLS_DSCP_NONE), -EINVAL);
	close(pfd[0]);
	close(pfd[1]);
	close(afd);
	close(cfd);
	close(lfd);
	close(before);
}

int main(void)
{
	const struct CMUnitTest plain[] = {
		cmocka_unit_test(test_fixture_table),
		cmocka_unit_test(test_flow_counters),
		cmocka_unit_test(test_flow_slot_collision),
		cmocka_unit_test(test_ingress_slots),
		cmocka_unit_test(test_slot_ways),
		cmocka_unit_test(test_ingress_sampler_ways),
		cmocka_unit_test(test_lru_reader),
		cmocka_unit_test(test_flowlet_rotation),
		cmocka_unit_test(test_endpoint_change),
		cmocka_unit_test(test_bands_at_once),
		cmocka_unit_test(test_pure_ack_first),
		cmocka_unit_test(test_bursts_policy),
		cmocka_unit_test(test_bursts_weighted),
		cmocka_unit_test(test_bursts_tail_empty),
		cmocka_unit_test(test_bursts_tail_gen),
		cmocka_unit_test(test_bursts_seeded),
		cmocka_unit_test(test_port_counts_exact),
		cmocka_unit_test(test_job_counters),
		cmocka_unit_test(test_jobs_stats_at_once),
		cmocka_unit_test(test_delete_flows),
	};
	const struct CMUnitTest dscp[] = { cmocka_unit_test(test_dscp),
					   cmocka_unit_test(test_rr_from_clock) };
	const struct CMUnitTest hold[] = { cmocka_unit_test(test_bursts_hold) };
	const struct CMUnitTest observe[] = { cmocka_unit_test(test_observe) };
	const struct CMUnitTest hook[] = { cmocka_unit_test(test_socket_membership) };
	const struct CMUnitTest carry[] = { cmocka_unit_test(test_bursts_carried),
					    cmocka_unit_test(test_bursts_stale_layout) };
	int fails = 0;

	if (geteuid() != 0) {
		printf("SKIP: BPF tests need root (BPF_PROG_TEST_RUN, maps, cgroup hook)\n");
		return 77;
	}
	tls_log_libbpf();
	fails += cmocka_run_group_tests_name("classifier fixtures", plain, setup_plain, teardown);
	fails += cmocka_run_group_tests_name("classifier dscp", dscp, setup_dscp, teardown);
	fails += cmocka_run_group_tests_name("classifier bursts hold", hold, setup_short_hold,
					     teardown);
	fails += cmocka_run_group_tests_name("classifier observe", observe, setup_observe,
					     teardown);
	fails += cmocka_run_group_tests_name("socket membership", hook, setup_hook, teardown);
	fails += cmocka_run_group_tests_name("bursts order carried over", carry, setup_carry,
					     teardown_carry);
	return fails ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cost of one stats tick (tcd/stats_sampler.c + lib/model/stats.c) on real BPF
 * maps, ticking every 10 ms (the shortest stats period) with 64 jobs:
 *
 *   sock   1024 flows of PS sockets: real TCP connections over loopback in
 *          a network namespace of this process's own (gone when it exits),
 *          the classifier on lo's clsact egress, every PS socket tagged
 *          with its job and sending a byte each period, so that every flow
 *          is active (the engine's worst case per flow);
 *   lru    1024 flows in the tls_flows LRU map (flows known by endpoint,
 *          closed PS sockets), their counters advanced each period;
 *   stale  the LRU map full: 1024 active flows and 64512 records of
 *          flows long finished: with pruning (the default: the first
 *          reading deletes them) and without (every reading reads all);
 *   slots  every egress flow slot held, as on a host whose flows came and
 *          went (a slot keeps its flow until another needs it): 1024
 *          active flows and 15360 idle ones, the flows read every tick,
 *          by a reader that knows the ways (lib/bpf/slot_ways.h: the idle
 *          ones not read) and by one that reads every way, as before;
 *   inslots the same for the ingress sampler (tcd/stats_ingress.h) and
 *          its slots: 1024 active flows and 15360 idle ones with bursts
 *          that ended (S_param sums them at each reading).
 *
 * The sampler's defaults apply (the LRU map read every 1 s while quiet,
 * records idle 60 s pruned), and the sock case is run again reading the
 * LRU map every tick, to show what the quiet cadence saves.
 *
 * The engine alone (no BPF, the same samples fed from memory) is measured
 * too, to tell its share from the map reads'.
 *
 * Per tick: wall time and this thread's CPU time of tls_sampler_tick(); the
 * CPU figure over the 10 ms period is the share of one core tlsd spends
 * sampling. Output: `name: value unit` lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "classifier.h"
#include "libbpf_log.h"
#include "log.h"
#include "stats.h"
#include "stats_ingress.h"
#include "stats_sampler.h"
#include "tls_flow_slot.h"

#define JOBS	 64
#define FLOWS	 1024
#define PERIOD	 (10ULL * 1000 * 1000) /* 10 ms */
#define WARMUP	 50
#define MAX_TICK 2000

static unsigned int ticks = 500;
static const char *only; /* one scenario, or all */

static bool want(const char *name)
{
	return !only || !strcmp(only, name);
}

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct result {
	uint64_t wall[MAX_TICK], cpu[MAX_TICK];
	unsigned int n;
	uint64_t flows_tracked, flows_read, lru_reads, pruned;
	uint64_t job_bytes, flow_bytes; /* jobs 1..JOBS: their counters, their flows */
};

static double worst_default; /* CPU % of the default options' worst case */

static double report(const char *name, struct result *r)
{
	uint64_t sum = 0;
	double pct;

	for (unsigned int i = 0; i < r->n; i++)
		sum += r->cpu[i];
	qsort(r->wall, r->n, sizeof(uint64_t), cmp_u64);
	qsort(r->cpu, r->n, sizeof(uint64_t), cmp_u64);
	printf("stats_tick_wall_us_median_%s: %.1f us\n", name, r->wall[r->n / 2] / 1e3);
	printf("stats_tick_wall_us_p99_%s: %.1f us\n", name, r->wall[r->n * 99 / 100] / 1e3);
	printf("stats_tick_cpu_us_median_%s: %.1f us\n", name, r->cpu[r->n / 2] / 1e3);
	pct = 100.0 * sum / r->n / PERIOD;
	printf("stats_cpu_pct_10ms_%s: %.2f %%\n", name, pct);
	return pct;
}

static void report_default(const char *name, struct result *r)
{
	double pct = report(name, r);

	if (pct > worst_default)
		worst_default = pct;
}

static int jobs_setup(const struct tls_maps *m, uint32_t *ids)
{
	for (int b = 0; b < TLS_MAX_BANDS; b++)
		if (tls_set_band(m, b, 0x10010 + b, TLS_DSCP_NONE))
			return -1;
	for (int j = 0; j < JOBS; j++) {
		ids[j] = 1 + j;
		if (tls_set_job_band(m, ids[j], j % TLS_MAX_BANDS))
			return -1;
	}
	return 0;
}

static struct tls_stats *engine(void)
{
	struct tls_stats_conf c;
	struct tls_stats *st;

	tls_stats_conf_defaults(&c);
	c.link_bps = 10000000000ULL;
	c.clock_slack_ns = tls_sampler_clock_slack_ns();
	if (tls_stats_new(&c, &st)) {
		fprintf(stderr, "cannot create the stats engine\n");
		exit(1);
	}
	return st;
}

typedef void (*advance_fn)(void *ctx);
/* One sampler tick at t: 0, or it failed. */
typedef int (*tick_fn)(void *ctx, uint64_t t);

/* Tick every 10 ms, WARMUP ticks then `ticks` timed (wall and this
 * thread's CPU into r); advance() makes traffic before each tick, untimed. */
static void timed_ticks(advance_fn advance, void *actx, tick_fn tick, void *tctx, struct result *r)
{
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	r->n = 0;
	for (unsigned int i = 0; i < WARMUP + ticks; i++) {
		uint64_t w0, c0;

		next.tv_nsec += PERIOD;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		advance(actx);
		w0 = now_ns(CLOCK_MONOTONIC);
		c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		if (tick(tctx, w0)) {
			fprintf(stderr, "sampler tick failed\n");
			exit(1);
		}
		if (i >= WARMUP) {
			r->cpu[r->n] = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			r->wall[r->n++] = now_ns(CLOCK_MONOTONIC) - w0;
		}
	}
}

struct egress_tick {
	struct tls_sampler *sm;
	const struct tls_maps *m;
	const uint32_t *ids;
};

static int egress_tick(void *ctx, uint64_t t)
{
	struct egress_tick *e = ctx;

	return tls_sampler_tick(e->sm, e->m, e->ids, JOBS, t);
}

/* Tick every 10 ms; advance() makes traffic before each tick, untimed. */
static void run(const struct tls_maps *m, const uint32_t *ids, advance_fn advance, void *ctx,
		const struct tls_sampler_opts *opts, struct result *r)
{
	struct tls_stats *st = engine();
	struct tls_sampler *sm;
	struct tls_stats_link_info l;
	struct tls_sampler_info si;
	struct egress_tick et;

	if (tls_sampler_new_opts(st, opts, &sm)) {
		fprintf(stderr, "cannot create the sampler\n");
		exit(1);
	}
	et = (struct egress_tick){ sm, m, ids };
	timed_ticks(advance, ctx, egress_tick, &et, r);
	tls_stats_link(st, &l);
	tls_sampler_info(sm, &si);
	r->job_bytes = r->flow_bytes = 0;
	for (int j = 0; j < JOBS; j++) {
		struct tls_stats_job_info ji;

		if (tls_stats_job(st, ids[j], &ji) == 0) {
			r->job_bytes += ji.bytes;
			r->flow_bytes += ji.flows.bytes;
		}
	}
	r->flows_tracked = l.flows;
	r->flows_read = si.flows_read;
	r->lru_reads = si.lru_reads;
	r->pruned = si.pruned;
	tls_sampler_free(sm);
	tls_stats_free(st);
}

/* ---- sock: PS sockets over loopback ---- */

struct sock_ctx {
	int ps[FLOWS];
};

static int lo_up(void)
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	ifr.ifr_flags |= IFF_UP;
	if (!ret)
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	close(fd);
	return ret;
}

static int sock_setup(const struct tls_maps *m, struct sock_ctx *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) || listen(lfd, 128))
		return -1;
	for (int i = 0; i < FLOWS; i++) {
		/* the worker connects; the PS's end (accepted) sends */
		int w = socket(AF_INET, SOCK_STREAM, 0);

		if (w < 0 || connect(w, (struct sockaddr *)&a, sizeof(a)))
			return -1;
		s->ps[i] = accept(lfd, NULL, NULL);
		if (s->ps[i] < 0)
			return -1;
		setsockopt(s->ps[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (tls_add_socket_fd(m, s->ps[i], 1 + i % JOBS))
			return -1;
		/* w stays open, never read: a message per period fits its buffer */
	}
	close(lfd);
	return 0;
}

/*
 * What each PS socket sends per period: a small message, whose frames (106
 * bytes with the headers) the statistics take for data. One byte (67-byte
 * frames) would read as a period of pure ACKs (under 96 bytes a frame on
 * average: lib/model/stats.c's acks_only), which the engine rightly does
 * not count as activity, and the flows would show no bytes.
 */
#define SOCK_MSG 40

static void sock_advance(void *ctx)
{
	static const char msg[SOCK_MSG];
	struct sock_ctx *s = ctx;

	for (int i = 0; i < FLOWS; i++)
		if (send(s->ps[i], msg, sizeof(msg), MSG_DONTWAIT) != (ssize_t)sizeof(msg)) {
			perror("send");
			exit(1);
		}
}

/* ---- lru: flows in the tls_flows map ---- */

struct lru_ctx {
	const struct tls_maps *m;
	struct tls_flow_key key[FLOWS];
	struct tls_flow flow[FLOWS];
};

static void lru_key(struct tls_flow_key *k, unsigned int i)
{
	memset(k, 0, sizeof(*k));
	k->family = AF_INET;
	k->proto = IPPROTO_TCP;
	k->lport = htons(9000 + i % JOBS);
	k->rport = htons(10000 + i % 50000);
	k->laddr[0] = 198;
	k->laddr[1] = 18;
	k->laddr[3] = 1;
	k->raddr[0] = 198;
	k->raddr[1] = 19;
	k->raddr[2] = i >> 16;
	k->raddr[3] = i >> 8;
}

static void lru_advance(void *ctx)
{
	struct lru_ctx *c = ctx;
	uint64_t t = now_ns(CLOCK_MONOTONIC);

	for (int i = 0; i < FLOWS; i++) {
		c->flow[i].bytes += 1500;
		c->flow[i].packets++;
		c->flow[i].last_ns = t;
		if (!c->flow[i].first_ns)
			c->flow[i].first_ns = t;
		if (bpf_map_update_elem(c->m->flows, &c->key[i], &c->flow[i], BPF_ANY)) {
			perror("flow map update");
			exit(1);
		}
	}
}

static int lru_setup(struct lru_ctx *c, const struct tls_maps *m, unsigned int stale)
{
	struct tls_flow old = { .first_ns = 1, .last_ns = 1, .bytes = 1000, .packets = 1 };

	c->m = m;
	for (unsigned int i = 0; i < FLOWS; i++) {
		lru_key(&c->key[i], i);
		memset(&c->flow[i], 0, sizeof(c->flow[i]));
		c->flow[i].job = 1 + i % JOBS;
	}
	for (unsigned int i = 0; i < stale; i++) {
		struct tls_flow_key k;

		lru_key(&k, FLOWS + i);
		k.rport = htons(i % 60000);
		old.job = 1 + i % JOBS;
		if (bpf_map_update_elem(m->flows, &k, &old, BPF_ANY))
			return -1;
	}
	return 0;
}

/* ---- slots: every egress slot held, most by idle flows ---- */

struct slots_ctx {
	const struct tls_maps *m;
	struct tls_flow_rec rec[FLOWS]; /* the active ones, at slots 0, 16, 32, ... */
};

#define SLOT_STRIDE (TLS_FLOW_SLOTS / FLOWS)

static void slots_write(const struct tls_maps *m, __u32 i, struct tls_flow_rec *r)
{
	r->flow.check = tls_flow_check(tls_flow_hash(&r->key), r->flow.job, r->flow.gen);
	if (bpf_map_update_elem(m->flow_slots, &i, r, BPF_ANY)) {
		perror("flow slot update");
		exit(1);
	}
}

static void slots_advance(void *ctx)
{
	struct slots_ctx *c = ctx;
	uint64_t t = now_ns(CLOCK_MONOTONIC);

	for (unsigned int i = 0; i < FLOWS; i++) {
		struct tls_flow *f = &c->rec[i].flow;

		f->bytes += 1500;
		f->packets++;
		f->last_ns = t;
		if (!f->first_ns)
			f->first_ns = t;
		slots_write(c->m, i * SLOT_STRIDE, &c->rec[i]);
	}
}

static int slots_setup(struct slots_ctx *c, const struct tls_maps *m)
{
	c->m = m;
	if (!m->slots_mem || !m->slots_used_mem)
		return -1; /* read by syscalls: no ways to know */
	for (__u32 i = 0; i < TLS_FLOW_SLOTS; i++) {
		struct tls_flow_rec r = {
			.flow = { .first_ns = 1, .last_ns = 1, .bytes = 1000, .packets = 1 }
		};

		lru_key(&r.key, i);
		r.key.rport = htons(i % 60000);
		r.flow.job = 1 + i % JOBS;
		if (i % SLOT_STRIDE == 0) {
			memset(&r.flow, 0, sizeof(r.flow));
			r.flow.job = 1 + i % JOBS;
			c->rec[i / SLOT_STRIDE] = r;
		}
		slots_write(m, i, &r);
	}
	return 0;
}

/* ---- inslots: every ingress slot held, most by idle flows ---- */

struct inslots_ctx {
	const struct tls_maps *m;
	struct tls_flow_in_rec rec[FLOWS]; /* the active ones, at slots 0, 16, 32, ... */
};

#define IN_SLOT_STRIDE (TLS_IN_SLOTS / FLOWS)

static void inslots_write(const struct tls_maps *m, __u32 i, struct tls_flow_in_rec *r)
{
	struct tls_flow_in *f = &r->in;

	f->check = tls_flow_in_check(tls_flow_hash(&r->key), f->job, f->gen, f->egen);
	if (bpf_map_update_elem(m->in_slots, &i, r, BPF_ANY)) {
		perror("ingress slot update");
		exit(1);
	}
}

static void inslots_advance(void *ctx)
{
	struct inslots_ctx *c = ctx;
	uint64_t t = now_ns(CLOCK_MONOTONIC);

	for (unsigned int i = 0; i < FLOWS; i++) {
		struct tls_flow_in *f = &c->rec[i].in;

		f->bytes += 1500;
		f->data_bytes += 1500;
		f->packets++;
		f->last_ns = f->seen_ns = t;
		if (!f->first_ns)
			f->first_ns = t;
		inslots_write(c->m, i * IN_SLOT_STRIDE, &c->rec[i]);
	}
}

static int inslots_setup(struct inslots_ctx *c, const struct tls_maps *m)
{
	__u64 all = 0x0101010101010101ULL; /* each set used, counted once */

	c->m = m;
	if (!m->in_slots_mem || !m->in_used_mem)
		return -1; /* read by syscalls: no ways to know */
	for (__u32 i = 0; i < TLS_IN_SLOTS; i++) {
		struct tls_flow_in_rec r = { .in = { .first_ns = 1,
						     .last_ns = 1,
						     .seen_ns = 1,
						     .bytes = 3000,
						     .packets = 2,
						     .data_bytes = 3000,
						     .done_bytes = 3000,
						     .bursts = 2 } };

		lru_key(&r.key, i);
		r.key.rport = htons(i % 60000);
		r.in.job = 1 + i % JOBS;
		r.in.egen = ~0u; /* TLS_EGEN_SOCKET: found by its socket */
		if (i % IN_SLOT_STRIDE == 0) {
			memset(&r.in, 0, sizeof(r.in));
			r.in.job = 1 + i % JOBS;
			r.in.egen = ~0u;
			c->rec[i / IN_SLOT_STRIDE] = r;
		}
		inslots_write(m, i, &r);
	}
	for (__u32 w = 0; w < TLS_IN_USED_WORDS; w++)
		if (bpf_map_update_elem(m->in_used, &w, &all, BPF_ANY))
			return -1;
	return 0;
}

struct ingress_tick {
	struct tls_ingress_sampler *sm;
	const struct tls_maps *m;
	const uint32_t *ids;
};

static int ingress_tick(void *ctx, uint64_t t)
{
	struct ingress_tick *e = ctx;

	return tls_ingress_tick(e->sm, e->m, e->ids, JOBS, t, true);
}

/* The ingress sampler ticking every 10 ms, its flows read at each tick;
 * every_way: reading every way of the used sets. */
static void run_in(struct inslots_ctx *c, const uint32_t *ids, bool every_way, struct result *r)
{
	struct tls_stats *st = engine();
	struct tls_ingress_sampler *sm;
	struct tls_stats_link_info l;
	struct ingress_tick it;

	if (tls_ingress_sampler_new(st, &sm)) {
		fprintf(stderr, "cannot create the ingress sampler\n");
		exit(1);
	}
	tls_ingress_sampler_every_way(sm, every_way);
	it = (struct ingress_tick){ sm, c->m, ids };
	timed_ticks(inslots_advance, c, ingress_tick, &it, r);
	tls_stats_link(st, &l);
	r->flows_tracked = l.flows;
	/* S_param: every flow's ended bursts, the idle ones' included */
	r->job_bytes = 0;
	for (int j = 0; j < JOBS; j++) {
		struct tls_sparam sp;

		tls_ingress_sparam(sm, ids[j], &sp);
		r->job_bytes += sp.bursts;
	}
	tls_ingress_sampler_free(sm);
	tls_stats_free(st);
}

/* ---- the engine alone ---- */

static void engine_only(struct result *r)
{
	struct tls_stats *st = engine();
	struct lru_ctx *c = calloc(1, sizeof(*c));
	uint64_t jb[JOBS + 1] = {};

	for (unsigned int i = 0; i < FLOWS; i++) {
		lru_key(&c->key[i], i);
		c->flow[i].job = 1 + i % JOBS;
	}
	r->n = 0;
	for (unsigned int i = 0; i < WARMUP + ticks; i++) {
		uint64_t t = 1000000000ULL + i * PERIOD, w0, c0;

		for (int f = 0; f < FLOWS; f++) {
			c->flow[f].bytes += 1500;
			c->flow[f].last_ns = t;
			if (!c->flow[f].first_ns)
				c->flow[f].first_ns = t - PERIOD;
			jb[c->flow[f].job] += 1500;
		}
		w0 = now_ns(CLOCK_MONOTONIC);
		c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		tls_stats_begin(st, t);
		for (int j = 0; j <= JOBS; j++)
			tls_stats_add_job(st, j, jb[j]);
		for (int f = 0; f < FLOWS; f++)
			tls_stats_add_flow(st, &c->key[f], &c->flow[f]);
		tls_stats_end(st);
		if (i >= WARMUP) {
			r->cpu[r->n] = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			r->wall[r->n++] = now_ns(CLOCK_MONOTONIC) - w0;
		}
	}
	{
		struct tls_stats_link_info l;

		tls_stats_link(st, &l);
		r->flows_tracked = l.flows;
	}
	free(c);
	tls_stats_free(st);
}

static void check(const char *name, const struct result *r, uint64_t want)
{
	if (r->flows_tracked != want) {
		fprintf(stderr, "%s: the engine tracks %llu flows, want %llu\n", name,
			(unsigned long long)r->flows_tracked, (unsigned long long)want);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct tls_cls_opts o = { .cgroup = "" };
	struct rlimit rl = { 8192, 8192 };
	static struct result r;
	static struct sock_ctx sc;
	static struct lru_ctx lc;
	uint32_t ids[JOBS];
	struct tls_cls *cls;
	struct tls_sampler_opts every_tick, no_prune;

	/* flows and the LRU map read every tick */
	tls_sampler_opts_defaults(&every_tick);
	every_tick.flow_period_ns = 0;
	every_tick.quiet_ns = 0;
	tls_sampler_opts_defaults(&no_prune);
	no_prune.flow_period_ns = 0;
	no_prune.prune_ns = 0;

	if (argc > 1)
		ticks = atoi(argv[1]);
	if (argc > 2)
		only = argv[2];
	if (ticks < 10 || ticks > MAX_TICK || argc > 3 ||
	    (only && !want("engine") && !want("sock") && !want("lru") && !want("stale") &&
	     !want("slots") && !want("inslots"))) {
		fprintf(stderr,
			"usage: bench-stats [TICKS [engine|sock|lru|stale|slots|inslots]]\n"
			"  TICKS: 10..%d ticks of 10 ms per scenario (default 500); all scenarios "
			"unless one is named\n",
			MAX_TICK);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bench-stats needs root\n");
		return 77;
	}
	tls_log_libbpf();

	if (want("engine")) {
		engine_only(&r);
		check("engine", &r, FLOWS);
		report("engine_only_64jobs_1024flows", &r);
	}

	/* A network namespace of our own: its lo carries the PS sockets, and
	 * it vanishes with this process, filter and all. */
	if (unshare(CLONE_NEWNET) || lo_up()) {
		perror("private network namespace");
		return 1;
	}
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		perror("setrlimit");
		return 1;
	}
	o.ifname = "lo";
	if (want("sock")) {
		if (tls_cls_load(&o, &cls) || tls_cls_attach(cls) ||
		    jobs_setup(tls_cls_maps(cls), ids) || sock_setup(tls_cls_maps(cls), &sc)) {
			fprintf(stderr, "cannot set up the classifier and %d PS sockets on lo\n",
				FLOWS);
			return 1;
		}
		/* defaults: flows read every 100 ms, the empty LRU map too */
		run(tls_cls_maps(cls), ids, sock_advance, &sc, NULL, &r);
		check("sock", &r, FLOWS);
		/* what was measured: every job's counter, and its flows (read up
		 * to 100 ms earlier: a little less) */
		if (!r.job_bytes || r.flow_bytes > r.job_bytes ||
		    r.flow_bytes < r.job_bytes * 0.9) {
			fprintf(stderr, "sock: the jobs counted %llu bytes, their flows %llu\n",
				(unsigned long long)r.job_bytes, (unsigned long long)r.flow_bytes);
			return 1;
		}
		report_default("64jobs_1024sockflows", &r);
		/* flows and the LRU map read every tick */
		run(tls_cls_maps(cls), ids, sock_advance, &sc, &every_tick, &r);
		check("sock", &r, FLOWS);
		report("64jobs_1024sockflows_flows_every_tick", &r);
		tls_cls_close(cls);
		for (int i = 0; i < FLOWS; i++)
			close(sc.ps[i]);
	}

	o.ifname = NULL;
	if (want("lru")) {
		if (tls_cls_load(&o, &cls) || jobs_setup(tls_cls_maps(cls), ids) ||
		    lru_setup(&lc, tls_cls_maps(cls), 0)) {
			fprintf(stderr, "cannot set up the classifier's flow map\n");
			return 1;
		}
		run(tls_cls_maps(cls), ids, lru_advance, &lc, NULL, &r);
		check("lru", &r, FLOWS);
		report_default("64jobs_1024lruflows", &r);
		run(tls_cls_maps(cls), ids, lru_advance, &lc, &every_tick, &r);
		check("lru", &r, FLOWS);
		report("64jobs_1024lruflows_flows_every_tick", &r);
		tls_cls_close(cls);
	}

	for (int prune = 1; prune >= 0 && want("stale"); prune--) {
		if (tls_cls_load(&o, &cls) || jobs_setup(tls_cls_maps(cls), ids) ||
		    lru_setup(&lc, tls_cls_maps(cls), TLS_MAX_FLOWS - FLOWS)) {
			fprintf(stderr, "cannot fill the classifier's flow map\n");
			return 1;
		}
		run(tls_cls_maps(cls), ids, lru_advance, &lc, prune ? NULL : &no_prune, &r);
		check("stale", &r, FLOWS);
		if (prune) {
			/* the LRU map may have evicted a few while it filled */
			printf("stats_stale_records_pruned: %llu records\n",
			       (unsigned long long)r.pruned);
			report_default("64jobs_1024lruflows_64512stale", &r);
		} else {
			printf("stats_flow_records_read_stale_noprune: %llu records\n",
			       (unsigned long long)r.flows_read);
			report("64jobs_1024lruflows_64512stale_noprune", &r);
		}
		tls_cls_close(cls);
	}
	if (want("slots")) {
		static struct slots_ctx slc;
		struct tls_sampler_opts every_way = every_tick;
		double known, all;

		every_way.every_way = true;
		if (tls_cls_load(&o, &cls) || jobs_setup(tls_cls_maps(cls), ids) ||
		    slots_setup(&slc, tls_cls_maps(cls))) {
			fprintf(stderr, "cannot fill the classifier's flow slots (mapped)\n");
			return 1;
		}
		run(tls_cls_maps(cls), ids, slots_advance, &slc, &every_tick, &r);
		check("slots", &r, FLOWS);
		known = report("64jobs_1024slotflows_15360idle", &r);
		printf("stats_flow_records_read_slots: %llu records\n",
		       (unsigned long long)r.flows_read);
		run(tls_cls_maps(cls), ids, slots_advance, &slc, &every_way, &r);
		check("slots", &r, FLOWS);
		all = report("64jobs_1024slotflows_15360idle_every_way", &r);
		printf("stats_flow_records_read_slots_every_way: %llu records\n",
		       (unsigned long long)r.flows_read);
		printf("stats_slots_known_ways_vs_every_way: %.2f\n", all > 0 ? known / all : 0);
		tls_cls_close(cls);
	}
	if (want("inslots")) {
		static struct inslots_ctx ic;
		double known, all;
		uint64_t bursts;

		if (tls_cls_load(&o, &cls) || jobs_setup(tls_cls_maps(cls), ids) ||
		    inslots_setup(&ic, tls_cls_maps(cls))) {
			fprintf(stderr, "cannot fill the ingress flow slots (mapped)\n");
			return 1;
		}
		run_in(&ic, ids, false, &r);
		check("inslots", &r, FLOWS);
		bursts = r.job_bytes;
		known = report("64jobs_1024inslotflows_15360idle", &r);
		run_in(&ic, ids, true, &r);
		check("inslots", &r, FLOWS);
		/* both counted every idle flow's bursts, 2 each */
		if (bursts != r.job_bytes || bursts != 2ULL * (TLS_IN_SLOTS - FLOWS)) {
			fprintf(stderr,
				"inslots: S_param counted %llu bursts, every way %llu, want %llu\n",
				(unsigned long long)bursts, (unsigned long long)r.job_bytes,
				2ULL * (TLS_IN_SLOTS - FLOWS));
			return 1;
		}
		all = report("64jobs_1024inslotflows_15360idle_every_way", &r);
		printf("stats_in_slots_known_ways_vs_every_way: %.2f\n", all > 0 ? known / all : 0);
		tls_cls_close(cls);
	}
	if (!only)
		/* the figure for the target: tlsd's sampling, default
		 * options, the worst of the cases above */
		printf("stats_sampler_cpu_pct_10ms_64jobs_1024flows: %.2f %%\n", worst_default);
	return 0;
}

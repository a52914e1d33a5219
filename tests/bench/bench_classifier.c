// SPDX-License-Identifier: GPL-2.0-only
/*
 * The classifier's cost per packet, through BPF_PROG_TEST_RUN in repeat mode,
 * with 1, 64 and 1024 endpoints installed (one job each, up to 1023 jobs).
 * The packet is a PS packet matched by its exact endpoint (the fallback path:
 * test runs have no real socket), so it pays for parsing, the endpoint
 * lookup, the job and band lookups, the per-job counters and the flow update.
 * A second figure is a packet of no job (two endpoint misses). A third, at
 * 64 endpoints, is the hit packet with its job under policy bursts (its
 * program behind the classifier's tail call: the burst order's step under
 * its lock, then the flow step), leading its burst, a 10 Gbit/s link.
 *
 * BPF_PROG_TEST_RUN's own loop costs something per run too: an empty
 * program measured the same way gives that baseline, and the net figures
 * subtract it.
 *
 * Each figure is the median of several trials, all taken in this one run,
 * interleaved so that a noisy neighbour hits every figure alike. Output: one
 * `name: value unit` line per figure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "classifier.h"
#include "clock.h"
#include "libbpf_log.h"
#include "log.h"
#include "packets.h"
#include "policy.h"

#define TRIALS 7
#define REPEAT 2000000

static const int sizes[] = { 1, 64, 1024 };
#define NSIZES (int)(sizeof(sizes) / sizeof(sizes[0]))

struct setup {
	struct tls_cls *cls;
	uint8_t hit[2048], miss[2048]; /* pkt_build writes the first 512 */
	size_t hit_len, miss_len;
};

static int prepare(struct setup *s, int endpoints)
{
	struct tls_cls_opts o = { .flowlet_gap_ns = TLS_FLOWLET_GAP_NS_DEFAULT,
				  .flowlet_hold_ns = TLS_FLOWLET_HOLD_NS_DEFAULT,
				  .cgroup = "" };
	const struct tls_maps *m;
	int i;

	if (tls_cls_load(&o, &s->cls))
		return -1;
	m = tls_cls_maps(s->cls);
	for (i = 0; i < TLS_MAX_BANDS; i++)
		if (tls_set_band(m, i, 0x10010 + i, TLS_DSCP_NONE))
			return -1;
	for (i = 0; i < endpoints; i++) {
		struct tls_endpoint_key k = { .family = AF_INET,
					      .proto = IPPROTO_TCP,
					      .port = htons(20000 + i) };
		__u32 job = 1 + i % (TLS_MAX_JOBS - 1);

		inet_pton(AF_INET, "198.18.0.1", k.addr);
		if (tls_add_endpoint(m, &k, job) || tls_set_job_band(m, job, job % TLS_MAX_BANDS))
			return -1;
	}
	/* The last endpoint installed: no luck from being first in a bucket. */
	struct pkt_spec hit = { 0,
				4,
				IPPROTO_TCP,
				"198.18.0.1",
				"198.18.1.1",
				20000 + endpoints - 1,
				40000,
				.payload = 1400 - 40 };
	struct pkt_spec miss = { 0,    4,     IPPROTO_TCP,	   "198.18.0.7", "198.18.1.1",
				 5555, 40000, .payload = 1400 - 40 };

	s->hit_len = pkt_build(&hit, s->hit).len;
	s->miss_len = pkt_build(&miss, s->miss).len;
	return 0;
}

/* The harness's own cost: a program that only returns. */
static int empty_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "tls_empty", "GPL", insns, 2, NULL);
}

static double run_fd(int fd, uint8_t *frame, size_t len)
{
	uint8_t out[2048];
	DECLARE_LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = len,
			    .data_out = out, .data_size_out = sizeof(out), .repeat = REPEAT);

	if (bpf_prog_test_run_opts(fd, &t)) {
		fprintf(stderr, "test run failed: %s\n", strerror(errno));
		exit(1);
	}
	return t.duration; /* average ns per run */
}

static double run_ns(struct setup *s, uint8_t *frame, size_t len)
{
	return run_fd(tls_cls_prog_fd(s->cls), frame, len);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	double hit[NSIZES][TRIALS], miss[NSIZES][TRIALS], base[TRIALS], bursts[TRIALS], rr[TRIALS],
		rr1s[TRIALS];
	struct setup s[NSIZES], sb, sr, sr1;
	__u32 bjob = 64, rids[64], rbands[64];
	int i, t, efd;

	if (geteuid() != 0) {
		fprintf(stderr, "bench-classifier needs root\n");
		return 77;
	}
	tls_log_libbpf();
	memset(s, 0, sizeof(s));
	for (i = 0; i < NSIZES; i++) {
		if (prepare(&s[i], sizes[i])) {
			fprintf(stderr, "cannot set up the classifier with %d endpoints\n",
				sizes[i]);
			return 1;
		}
	}
	/* the 64-endpoint setup's hit packet is job 64's (1 + 63) */
	memset(&sb, 0, sizeof(sb));
	if (prepare(&sb, 64) ||
	    tls_set_burst_order(tls_cls_maps(sb.cls), 4, 20000000, 250000000, 2000000000,
				10000000000ULL, NULL) ||
	    tls_set_job_bands(tls_cls_maps(sb.cls), &bjob, &(__u32){ 3 }, 1, TLS_JOB_F_BURST)) {
		fprintf(stderr, "cannot set up the classifier under policy bursts\n");
		return 1;
	}
	/* roundrobin from the clock (bpf/tls_rr.h), 64 jobs on 7 bands every
	 * 10 ms, beside the same 64 jobs' static bands (classifier_ns_per_pkt_64) */
	memset(&sr, 0, sizeof(sr));
	for (i = 0; i < 64; i++) {
		rids[i] = 1 + i;
		rbands[i] = tls_policy_band_of_position(i, 64, 7);
	}
	/* and every second: the coarse clock (tls_set_job_rr) */
	memset(&sr1, 0, sizeof(sr1));
	if (prepare(&sr, 64) ||
	    tls_set_job_rr(tls_cls_maps(sr.cls), rids, rbands, 64,
			   &(struct tls_rr){ .epoch_ns = tls_now_ns() - 5000000000ULL,
					     .interval_ns = 10000000,
					     .n = 64,
					     .nbands = 7 }) ||
	    prepare(&sr1, 64) ||
	    tls_set_job_rr(tls_cls_maps(sr1.cls), rids, rbands, 64,
			   &(struct tls_rr){ .epoch_ns = tls_now_ns() - 5000000000ULL,
					     .interval_ns = 1000000000,
					     .n = 64,
					     .nbands = 7 })) {
		fprintf(stderr, "cannot set up the classifier under policy roundrobin\n");
		return 1;
	}
	efd = empty_prog();
	if (efd < 0) {
		fprintf(stderr, "cannot load the empty program: %s\n", strerror(errno));
		return 1;
	}
	for (t = 0; t < TRIALS; t++) {
		base[t] = run_fd(efd, s[0].hit, s[0].hit_len);
		for (i = 0; i < NSIZES; i++) {
			hit[i][t] = run_ns(&s[i], s[i].hit, s[i].hit_len);
			miss[i][t] = run_ns(&s[i], s[i].miss, s[i].miss_len);
		}
		bursts[t] = run_ns(&sb, sb.hit, sb.hit_len);
		rr[t] = run_ns(&sr, sr.hit, sr.hit_len);
		rr1s[t] = run_ns(&sr1, sr1.hit, sr1.hit_len);
	}
	close(efd);
	qsort(base, TRIALS, sizeof(double), cmp);
	printf("testrun_harness_ns_per_pkt: %.1f ns\n", base[TRIALS / 2]);
	for (i = 0; i < NSIZES; i++) {
		qsort(hit[i], TRIALS, sizeof(double), cmp);
		qsort(miss[i], TRIALS, sizeof(double), cmp);
		printf("classifier_ns_per_pkt_%d: %.1f ns\n", sizes[i], hit[i][TRIALS / 2]);
		printf("classifier_net_ns_per_pkt_%d: %.1f ns\n", sizes[i],
		       hit[i][TRIALS / 2] - base[TRIALS / 2]);
		printf("classifier_ns_per_pkt_nojob_%d: %.1f ns\n", sizes[i], miss[i][TRIALS / 2]);
		tls_cls_close(s[i].cls);
	}
	qsort(bursts, TRIALS, sizeof(double), cmp);
	printf("classifier_ns_per_pkt_bursts_64: %.1f ns\n", bursts[TRIALS / 2]);
	tls_cls_close(sb.cls);
	qsort(rr, TRIALS, sizeof(double), cmp);
	printf("classifier_ns_per_pkt_roundrobin_64: %.1f ns\n", rr[TRIALS / 2]);
	qsort(rr1s, TRIALS, sizeof(double), cmp);
	printf("classifier_ns_per_pkt_roundrobin_1s_64: %.1f ns\n", rr1s[TRIALS / 2]);
	tls_cls_close(sr.cls);
	tls_cls_close(sr1.cls);
	return 0;
}

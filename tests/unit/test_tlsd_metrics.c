// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon's metrics with their cache (tcd/tlsd_metrics.c), over a real
 * statistics engine fed by hand: the HTTP body (its text, and the kept
 * blocks as pieces of their own memory) is byte for byte the text that
 * `tlsctl metrics` gets; a flow's counter that changed at a flow reading is
 * served at the next scrape; a job renamed between two readings is too;
 * flows that came since the last reading are named as a render without
 * the cache names them;
 * and a scrape still going out keeps the bytes of its reading while the
 * cache moves on to the next (ASan would see them freed under it).
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "jobs.h"
#include "stats.h"
#include "tlsd_metrics.h"
#include "unit.h"

#define MS     1000000ULL
#define NFLOWS 3

struct fix {
	struct tls_config cfg;
	struct tls_jobs jobs;
	struct tls_maps m;
	struct tls_stats *s;
	struct tlsd_mx_cache cache;
	struct tlsd_view v;
	/* worker flows of the job, those in active sending */
	struct tls_flow_key key[NFLOWS];
	struct tls_flow flow[NFLOWS];
	unsigned int active;
	uint64_t t, job_bytes;
	uint32_t id;
};

/* One sample 100 ms on: each active flow of the job sent bytes more;
 * flows: the flows were read too (a flow reading, which the kept blocks
 * follow). */
static void sample(struct fix *x, uint64_t bytes, bool flows)
{
	x->t += 100 * MS;
	x->v.now_ns = x->t; /* a statistics period since the last answer */
	for (unsigned int i = 0; i < NFLOWS; i++) {
		struct tls_flow *f = &x->flow[i];

		if (!(x->active & (1u << i)))
			continue;
		if (!f->first_ns)
			f->first_ns = x->t - 100 * MS;
		f->bytes += bytes;
		f->packets++;
		f->last_ns = x->t;
		x->job_bytes += bytes;
	}
	assert_int_equal(tls_stats_begin(x->s, x->t), 0);
	assert_int_equal(tls_stats_add_job(x->s, 0, 0), 0);
	assert_int_equal(tls_stats_add_job(x->s, x->id, x->job_bytes), 0);
	for (unsigned int i = 0; flows && i < NFLOWS; i++)
		if (x->flow[i].first_ns)
			assert_int_equal(tls_stats_add_flow(x->s, &x->key[i], &x->flow[i]), 0);
	assert_int_equal(tls_stats_end(x->s), 0);
}

static struct fix *setup(void)
{
	static const uint16_t port = 9000;
	struct fix *x = calloc(1, sizeof(*x));
	struct tls_stats_conf sc;

	assert_non_null(x);
	tls_config_defaults(&x->cfg);
	strcpy(x->cfg.ifname, "eth7");
	x->cfg.metrics_workers = true;
	tls_jobs_init(&x->jobs);
	assert_int_equal(tls_jobs_add(&x->jobs, "resnet", &port, 1, &x->id), 0);
	tls_maps_init(&x->m); /* no maps: the jobs' counters read as 0 */
	tls_stats_conf_defaults(&sc);
	sc.link_bps = 1000000000ULL;
	assert_int_equal(tls_stats_new(&sc, &x->s), 0);
	/* workers 198.19.0.2, .3, .4 on port 40000 */
	for (unsigned int i = 0; i < NFLOWS; i++) {
		struct tls_flow_key *k = &x->key[i];

		k->family = AF_INET;
		k->proto = IPPROTO_TCP;
		k->lport = htons(9000);
		k->rport = htons(40000);
		memcpy(k->laddr, (const uint8_t[]){ 198, 18, 0, 1 }, 4);
		memcpy(k->raddr, (const uint8_t[]){ 198, 19, 0, (uint8_t)(2 + i) }, 4);
		x->flow[i].job = x->id;
	}
	x->active = 1;
	x->t = 1000 * 1000 * MS;
	assert_int_equal(tls_stats_begin(x->s, x->t), 0); /* baselines */
	assert_int_equal(tls_stats_add_job(x->s, 0, 0), 0);
	assert_int_equal(tls_stats_add_job(x->s, x->id, 0), 0);
	assert_int_equal(tls_stats_end(x->s), 0);
	x->v = (struct tlsd_view){
		.version = "9.9",
		.cfg = &x->cfg,
		.jobs = &x->jobs,
		.m = &x->m,
		.rate_bps = sc.link_bps,
		.uptime_ns = 5 * 1000 * MS,
		.stats = x->s,
		.stats_period_ns = 100 * MS,
		.mx_cache = &x->cache,
		.now_ns = x->t,
	};
	return x;
}

static void teardown(struct fix *x)
{
	tlsd_mx_cache_clear(&x->cache);
	tls_stats_free(x->s);
	free(x);
}

/* The body as a scraper gets it: its pieces in order. NUL-terminated,
 * malloc'ed. */
static char *assemble(const struct tls_http_body *b)
{
	size_t len = 0, i;
	char *t;

	if (!b->npieces)
		return strndup(b->text, b->len);
	for (i = 0; i < b->npieces; i++)
		len += b->piece[i].len;
	t = malloc(len + 1);
	assert_non_null(t);
	len = 0;
	for (i = 0; i < b->npieces; i++) {
		memcpy(t + len, b->piece[i].buf, b->piece[i].len);
		len += b->piece[i].len;
	}
	t[len] = '\0';
	return t;
}

/* As the server does once the answer is out. */
static void body_free(struct tls_http_body *b)
{
	free(b->text);
	if (b->release)
		b->release(b->ref);
	*b = (struct tls_http_body){ 0 };
}

/* Without tlsd_start_time_seconds' sample: it is the wall clock less the
 * uptime, so it moves from one render to the next. */
static void no_start_time(char *t)
{
	char *p = strstr(t, "\ntlsd_start_time_seconds ");
	char *e = p ? strchr(p + 1, '\n') : NULL;

	assert_non_null(e);
	memmove(p, e, strlen(e) + 1);
}

static char *flat(struct fix *x, enum tls_mx_format f)
{
	char *t;
	size_t len;

	assert_int_equal(tlsd_metrics_text(&x->v, f, &t, &len), 0);
	assert_int_equal(strlen(t), len);
	no_start_time(t);
	return t;
}

static char *scrape(struct fix *x, enum tls_mx_format f, struct tls_http_body *b)
{
	char *t;

	*b = (struct tls_http_body){ 0 };
	assert_int_equal(tlsd_metrics_body(&x->v, f, b), 0);
	t = assemble(b);
	no_start_time(t);
	return t;
}

static void has(const char *t, const char *s)
{
	if (!strstr(t, s))
		fail_msg("'%s' is not in the text", s);
}

static void test_body_is_text(void **state)
{
	(void)state;
	for (int f = TLS_MX_PROMETHEUS; f <= TLS_MX_OPENMETRICS; f++) {
		struct fix *x = setup();
		struct tls_http_body b;
		char *a, *t;

		sample(x, 1000, true);
		a = scrape(x, f, &b);
		/* text, block, text, block, text; the blocks the cache's */
		assert_int_equal(b.npieces, 5);
		assert_non_null(b.release);
		assert_ptr_equal(b.piece[1].buf, x->cache.fmt[f].kept->text[TLS_MX_JOB_STATS]);
		assert_ptr_equal(b.piece[3].buf, x->cache.fmt[f].kept->text[TLS_MX_WORKERS]);
		assert_true(b.piece[1].len > 0 && b.piece[3].len > 0);
		t = flat(x, f);
		assert_string_equal(a, t);
		has(a, "tlsd_worker_bytes_total{job=\"resnet\",worker=\"198.19.0.2:40000\","
		       "ps=\"198.18.0.1:9000\",direction=\"pull\"} 1000\n");
		has(a, f == TLS_MX_OPENMETRICS ? "# EOF\n" : "tlsd_http_responses");
		body_free(&b);
		free(a);
		free(t);
		teardown(x);
	}
}

/* A flow reading that changed a flow's counter: the next scrape serves
 * the new value, while a scrape of the reading before, still going out,
 * keeps its bytes (its blocks are not freed nor written again). */
static void test_changed_counter(void **state)
{
	struct fix *x = setup();
	struct tls_http_body b1, b2, b3;
	char *a1, *a2, *a1again, *a3;

	(void)state;
	sample(x, 1000, true);
	a1 = scrape(x, TLS_MX_PROMETHEUS, &b1);
	has(a1, "direction=\"pull\"} 1000\n");
	sample(x, 500, true);
	a2 = scrape(x, TLS_MX_PROMETHEUS, &b2);
	has(a2, "tlsd_worker_bytes_total{job=\"resnet\",worker=\"198.19.0.2:40000\","
		"ps=\"198.18.0.1:9000\",direction=\"pull\"} 1500\n");
	assert_null(strstr(a2, "direction=\"pull\"} 1000\n"));
	a1again = assemble(&b1);
	no_start_time(a1again);
	assert_string_equal(a1again, a1);
	/* a period later with no flow reading since: a new answer of the
	 * same blocks, the same memory */
	sample(x, 0, false);
	a3 = scrape(x, TLS_MX_PROMETHEUS, &b3);
	assert_ptr_not_equal(b3.ref, b2.ref);
	assert_string_equal(a3, a2);
	assert_ptr_equal(b3.piece[3].buf, b2.piece[3].buf);
	/* the cache emptied (its engine gone) while scrapes still send */
	tlsd_mx_cache_clear(&x->cache);
	free(a1again);
	a1again = assemble(&b1);
	no_start_time(a1again);
	assert_string_equal(a1again, a1);
	body_free(&b1);
	body_free(&b2);
	body_free(&b3);
	free(a1);
	free(a1again);
	free(a2);
	free(a3);
	teardown(x);
}

/* A job renamed between two flow readings: its workers' series carry the
 * new name at the next scrape. */
static void test_renamed_job(void **state)
{
	struct fix *x = setup();
	struct tls_http_body b;
	char *a;

	(void)state;
	sample(x, 1000, true);
	a = scrape(x, TLS_MX_OPENMETRICS, &b);
	has(a, "tlsd_worker_bytes_total{job=\"resnet\"");
	body_free(&b);
	free(a);
	strcpy(x->jobs.job[0].name, "bert");
	a = scrape(x, TLS_MX_OPENMETRICS, &b);
	has(a, "tlsd_worker_bytes_total{job=\"bert\"");
	assert_null(strstr(a, "resnet"));
	body_free(&b);
	free(a);
	teardown(x);
}

/* Flows come between two readings, before and after the one the last
 * reading had: the kept endpoints are matched by key, the new ones
 * formatted, and the text is the one a render without any cache makes. */
static void test_flows_come(void **state)
{
	struct fix *x = setup();
	struct tlsd_mx_cache *c = x->v.mx_cache;
	struct tls_http_body b;
	char *a, *t;

	(void)state;
	x->active = 2; /* 198.19.0.3 alone */
	sample(x, 1000, true);
	a = scrape(x, TLS_MX_PROMETHEUS, &b);
	has(a, "worker=\"198.19.0.3:40000\"");
	assert_null(strstr(a, "198.19.0.2"));
	assert_int_equal(c->names[0].n, 1);
	body_free(&b);
	free(a);
	x->active = 7;
	sample(x, 1000, true);
	a = scrape(x, TLS_MX_PROMETHEUS, &b);
	assert_int_equal(c->names[0].n, 3);
	x->v.mx_cache = NULL;
	t = flat(x, TLS_MX_PROMETHEUS);
	x->v.mx_cache = c;
	assert_string_equal(a, t);
	for (int i = 2; i <= 4; i++) {
		char w[64];

		snprintf(w, sizeof(w), "worker=\"198.19.0.%d:40000\",ps=\"198.18.0.1:9000\"", i);
		has(a, w);
	}
	body_free(&b);
	free(a);
	free(t);
	teardown(x);
}

/* No statistics engine: no blocks kept, the body is the answer's text,
 * whole, in one piece. */
static void test_no_stats(void **state)
{
	struct fix *x = setup();
	struct tls_http_body b;
	char *a, *t;

	(void)state;
	x->v.stats = NULL;
	a = scrape(x, TLS_MX_PROMETHEUS, &b);
	assert_int_equal(b.npieces, 1);
	assert_non_null(b.release);
	t = flat(x, TLS_MX_PROMETHEUS);
	assert_string_equal(a, t);
	body_free(&b);
	free(a);
	free(t);
	teardown(x);
}

/* The whole answer is kept for a statistics period: a scrape within it
 * gets the same bytes (a rotation since does not show), one after it a new
 * answer; a reload or a job come or gone makes one at once; an answer
 * still going out keeps its bytes while the cache moves on, and after the
 * cache is emptied. */
static void test_answer_kept(void **state)
{
	struct fix *x = setup();
	struct tls_http_body b1, b2, b3, b4;
	char *a1, *a2, *a3, *a4, *again;

	(void)state;
	sample(x, 1000, true);
	a1 = scrape(x, TLS_MX_PROMETHEUS, &b1);
	has(a1, "\ntlsd_rotations_total 0\n");
	x->v.step = 42;
	x->v.now_ns += 99 * MS;
	a2 = scrape(x, TLS_MX_PROMETHEUS, &b2);
	assert_string_equal(a2, a1);
	assert_int_equal(b2.npieces, b1.npieces);
	for (size_t i = 0; i < b1.npieces; i++)
		assert_ptr_equal(b2.piece[i].buf, b1.piece[i].buf);
	/* the other format is an answer of its own */
	body_free(&b2);
	free(a2);
	a2 = scrape(x, TLS_MX_OPENMETRICS, &b2);
	has(a2, "\ntlsd_rotations_total 42\n");
	x->v.now_ns += 1 * MS; /* a period after the first */
	a3 = scrape(x, TLS_MX_PROMETHEUS, &b3);
	has(a3, "\ntlsd_rotations_total 42\n");
	x->v.step = 43;
	x->v.reloads = 1;
	a4 = scrape(x, TLS_MX_PROMETHEUS, &b4);
	has(a4, "\ntlsd_rotations_total 43\n");
	has(a4, "\ntlsd_reloads_total 1\n");
	body_free(&b4);
	free(a4);
	x->v.step = 44;
	assert_int_equal(tls_jobs_add(&x->jobs, "bert", (const uint16_t[]){ 9100 }, 1, &x->id), 0);
	a4 = scrape(x, TLS_MX_PROMETHEUS, &b4);
	has(a4, "\ntlsd_rotations_total 44\n");
	has(a4, "tlsd_job_bytes_total{job=\"bert\"} 0\n");
	tlsd_mx_cache_clear(&x->cache);
	again = assemble(&b1);
	no_start_time(again);
	assert_string_equal(again, a1);
	body_free(&b1);
	body_free(&b2);
	body_free(&b3);
	body_free(&b4);
	free(again);
	free(a1);
	free(a2);
	free(a3);
	free(a4);
	teardown(x);
}

/* metrics_workers off: the per-job families, no per-worker one; turned on
 * by a reload, the next scrape has them. */
static void test_workers_off(void **state)
{
	struct fix *x = setup();
	struct tls_http_body b;
	char *a;

	(void)state;
	x->cfg.metrics_workers = false;
	sample(x, 1000, true);
	a = scrape(x, TLS_MX_PROMETHEUS, &b);
	assert_null(strstr(a, "tlsd_worker_"));
	has(a, "tlsd_job_workers{job=\"resnet\",direction=\"pull\"} 1\n");
	body_free(&b);
	free(a);
	x->cfg.metrics_workers = true;
	x->v.reloads++;
	a = scrape(x, TLS_MX_PROMETHEUS, &b);
	has(a, "tlsd_worker_bytes_total{job=\"resnet\",worker=\"198.19.0.2:40000\"");
	body_free(&b);
	free(a);
	teardown(x);
}

int run_tlsd_metrics_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_body_is_text), cmocka_unit_test(test_changed_counter),
		cmocka_unit_test(test_renamed_job),  cmocka_unit_test(test_flows_come),
		cmocka_unit_test(test_no_stats),     cmocka_unit_test(test_answer_kept),
		cmocka_unit_test(test_workers_off),
	};

	return cmocka_run_group_tests_name("tlsd_metrics", tests, NULL, NULL);
}

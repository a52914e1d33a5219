// SPDX-License-Identifier: GPL-2.0-only
/*
 * The metrics text (tcd/metrics.c): label values escaped as the format says
 * (quotes, backslashes, newlines, bytes that are not UTF-8), never cut in
 * the middle of an escape; and the whole text of a state built by hand, in
 * both dialects: every family has HELP and TYPE before its samples, a
 * counter is named as each dialect wants, unknown values are no samples,
 * and OpenMetrics ends in "# EOF"; and a job's rotations as the job
 * table counts them.
 */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jobs.h"
#include "metrics.h"
#include "unit.h"

static void escaped(const char *in, const char *want)
{
	char out[256];

	assert_int_equal(tls_mx_escape(in, out, sizeof(out)), strlen(want));
	assert_string_equal(out, want);
}

static void test_escape(void **state)
{
	(void)state;
	escaped("resnet50", "resnet50");
	escaped("", "");
	escaped("a\"b", "a\\\"b");
	escaped("back\\slash", "back\\\\slash");
	escaped("two\nlines", "two\\nlines");
	escaped("\"\\\n", "\\\"\\\\\\n");
	/* tabs, carriage returns and UTF-8 need no escape */
	escaped("t\tr\r", "t\tr\r");
	escaped("gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80",
		"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x98\x80");
	/* not UTF-8: each bad byte becomes U+FFFD */
	escaped("a\xff"
		"b",
		"a\xef\xbf\xbd"
		"b");
	escaped("\xc3", "\xef\xbf\xbd");				 /* cut short */
	escaped("\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd");		 /* overlong '/' */
	escaped("\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* a surrogate */
	escaped("\xf4\x90\x80\x80",
		"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"); /* > U+10FFFF */
}

/* A buffer too small: whole escapes only, and the length it would need. */
static void test_escape_short(void **state)
{
	char out[4];

	(void)state;
	assert_int_equal(tls_mx_escape("ab\"c", out, sizeof(out)), 5);
	assert_string_equal(out, "ab"); /* not "ab\\" */
	assert_int_equal(tls_mx_escape("a\xe2\x82\xac", out, sizeof(out)), 4);
	assert_string_equal(out, "a"); /* not half a euro sign */
	assert_int_equal(tls_mx_escape("abc", out, sizeof(out)), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(tls_mx_escape("x", NULL, 0), 1);
}

static const struct tls_mx_job jobs[] = {
	{ .name = "resnet50",
	  .bytes = 123456789012ULL,
	  .packets = 1000,
	  .segs = 80000,
	  .demotions = 3,
	  .promotions = 4,
	  .held = 5,
	  .rotations = 6,
	  .band = 0,
	  .has_stats = true,
	  .workers = 4,
	  .b_wk = 1.25e7,
	  .b_req = 2.5e7,
	  .p_direct = 0.5,
	  .p_solved = NAN },
	{ .name = "b \"q\" \\ x\ny", .bytes = 7, .band = TLS_MX_BAND_DEFAULT },
};

static const struct tls_mx_worker workers[] = {
	{ .job = "resnet50",
	  .worker = "198.18.0.2:40000",
	  .ps = "198.18.0.1:9000",
	  .bytes = 99,
	  .b_wk = 1e6,
	  .b_req = NAN,
	  .p_direct = 0,
	  .p_solved = NAN },
};

static const struct tls_mx_class classes[] = {
	{ .handle = 0x715d0001, .band = TLS_MX_BAND_ROOT, .bytes = 10 },
	{ .handle = 0x715d0010,
	  .band = 0,
	  .bytes = 123456789000ULL,
	  .packets = 90000,
	  .drops = 12,
	  .overlimits = 34,
	  .qlen = 2,
	  .backlog = 3000 },
	{ .handle = 0x715d00ff, .band = TLS_MX_BAND_DEFAULT, .bytes = 5 },
};

static const struct tls_mx_feature features[] = {
	{ .name = "sk_iter", .in_use = true },
	{ .name = "proc_cn_filter", .missing = true },
};

static const struct tls_mx_http http[] = { { 200, 17 }, { 404, 1 } };

static void state_of(struct tls_mx *m)
{
	*m = (struct tls_mx){
		.version = "0.1",
		.ifname = "eth0",
		.policy = "roundrobin",
		.start_time_s = 1700000000.5,
		.rate_bps = 10000000000ULL,
		.bands = 4,
		.interval_ns = 20000000000ULL,
		.rotations = 42,
		.reloads = 3,
		.reload_failures = 1,
		.njobs = 2,
		.jobs = jobs,
		.other_bytes = 1000,
		.other_packets = 10,
		.has_tree = true,
		.tree_state = "yielded",
		.watched = true,
		.heals = 6,
		.failed_heals = 1,
		.yields = 1,
		.returns = 2,
		.rate_changes = 0,
		.heals_recent = 6,
		.heal_limit = 5,
		.last_heal_s = 0.0052,
		.stats = true,
		.b_ps = 1.25e9,
		.b_ps_measured = true,
		.saturated = false,
		.sat_s = 12.5,
		.fit_ok = false,
		.fit_a = 1.5,
		.fit_b = 0.5,
		.workers_on = true,
		.nworkers = 1,
		.workers = workers,
		.htb_read = true,
		.nclasses = 3,
		.classes = classes,
		.nfeatures = 2,
		.features = features,
		.nhttp = 2,
		.http = http,
	};
}

static char *render(const struct tls_mx *m, enum tls_mx_format f)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(tls_mx_render(out, m, f), 0);
	assert_int_equal(fclose(out), 0);
	return text;
}

static void has(const char *text, const char *line)
{
	char *want;

	assert_true(asprintf(&want, "\n%s\n", line) > 0);
	if (!strstr(text, want))
		fail_msg("no line '%s' in:\n%s", line, text);
	free(want);
}

static void hasnt(const char *text, const char *part)
{
	if (strstr(text, part))
		fail_msg("'%s' should not be in:\n%s", part, text);
}

/* Every sample's family was announced by HELP then TYPE just before its
 * first sample, and no family comes twice. */
static void families_whole(const char *text, enum tls_mx_format f)
{
	char seen[200][96], cur[96] = "";
	size_t nseen = 0;
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		char name[96];

		assert_non_null(nl);
		if (!strncmp(p, "# HELP ", 7)) {
			assert_int_equal(sscanf(p + 7, "%95s", cur), 1);
			for (size_t i = 0; i < nseen; i++)
				if (!strcmp(seen[i], cur))
					fail_msg("family %s twice", cur);
			assert_true(nseen < 200);
			strcpy(seen[nseen++], cur);
			/* TYPE right after, of the same name */
			assert_int_equal(sscanf(nl + 1, "# TYPE %95s", name), 1);
			assert_string_equal(name, cur);
			p = strchr(nl + 1, '\n') + 1;
			continue;
		}
		if (!strcmp(p, "# EOF\n")) {
			assert_int_equal(f, TLS_MX_OPENMETRICS);
			assert_int_equal(nl[1], '\0');
			break;
		}
		assert_int_not_equal(p[0], '#');
		assert_int_equal(sscanf(p, "%95[a-z0-9_]", name), 1);
		/* a counter's family (OpenMetrics) lacks the sample's _total */
		if (strcmp(name, cur)) {
			size_t n = strlen(cur);

			assert_int_equal(f, TLS_MX_OPENMETRICS);
			assert_true(!strncmp(name, cur, n) && !strcmp(name + n, "_total"));
		}
		p = nl + 1;
	}
	if (f == TLS_MX_OPENMETRICS)
		assert_non_null(strstr(text, "\n# EOF\n"));
	else
		assert_null(strstr(text, "# EOF"));
}

static void test_render_prometheus(void **state)
{
	struct tls_mx m;
	char *t;

	(void)state;
	state_of(&m);
	t = render(&m, TLS_MX_PROMETHEUS);
	families_whole(t, TLS_MX_PROMETHEUS);
	has(t, "# TYPE tlsd_job_bytes_total counter");
	has(t, "tlsd_job_bytes_total{job=\"resnet50\"} 123456789012");
	/* a user's job name, escaped */
	has(t, "tlsd_job_bytes_total{job=\"b \\\"q\\\" \\\\ x\\ny\"} 7");
	has(t, "tlsd_job_band{job=\"resnet50\"} 0");
	has(t, "tlsd_job_band{job=\"b \\\"q\\\" \\\\ x\\ny\"} -1");
	has(t, "tlsd_job_leader{job=\"resnet50\"} 1");
	has(t, "tlsd_job_leader{job=\"b \\\"q\\\" \\\\ x\\ny\"} 0");
	has(t, "tlsd_job_rotations_total{job=\"resnet50\"} 6");
	has(t, "tlsd_job_demotions_total{job=\"resnet50\"} 3");
	has(t, "tlsd_job_promotions_total{job=\"resnet50\"} 4");
	has(t, "tlsd_job_workers{job=\"resnet50\",direction=\"pull\"} 4");
	has(t, "tlsd_job_bandwidth_bytes_per_second{job=\"resnet50\",direction=\"pull\"} 12500000");
	has(t, "tlsd_job_contention_ratio{job=\"resnet50\",direction=\"pull\"} 0.5");
	/* no push engine: no push series */
	hasnt(t, "direction=\"push\"");
	/* P solved not known; the second job has no statistics */
	hasnt(t, "tlsd_job_contention_solved_ratio{");
	hasnt(t, "tlsd_job_workers{job=\"b");
	hasnt(t, "NaN");
	has(t,
	    "tlsd_worker_bandwidth_bytes_per_second{job=\"resnet50\",worker=\"198.18.0.2:40000\","
	    "ps=\"198.18.0.1:9000\",direction=\"pull\"} 1000000");
	has(t, "tlsd_worker_bytes_total{job=\"resnet50\",worker=\"198.18.0.2:40000\","
	       "ps=\"198.18.0.1:9000\",direction=\"pull\"} 99");
	has(t, "tlsd_info{version=\"0.1\",interface=\"eth0\",policy=\"roundrobin\",mode=\"schedule\"} 1");
	has(t, "tlsd_start_time_seconds 1700000000.5");
	has(t, "tlsd_link_rate_bytes_per_second 1250000000");
	has(t, "tlsd_rotation_interval_seconds 20");
	has(t, "tlsd_rotations_total 42");
	has(t, "tlsd_reload_failures_total 1");
	has(t, "tlsd_feature_in_use{feature=\"sk_iter\"} 1");
	has(t, "tlsd_feature_missing{feature=\"proc_cn_filter\"} 1");
	has(t, "tlsd_feature_missing{feature=\"sk_iter\"} 0");
	has(t, "tlsd_tree_intact{interface=\"eth0\"} 0");
	has(t, "tlsd_tree_state{interface=\"eth0\",state=\"yielded\"} 1");
	has(t, "tlsd_tree_state{interface=\"eth0\",state=\"intact\"} 0");
	has(t, "tlsd_tree_heals_total{interface=\"eth0\"} 6");
	has(t, "tlsd_tree_failed_heals_total{interface=\"eth0\"} 1");
	has(t, "tlsd_tree_yields_total{interface=\"eth0\"} 1");
	has(t, "tlsd_tree_interface_returns_total{interface=\"eth0\"} 2");
	has(t, "tlsd_tree_rate_changes_total{interface=\"eth0\"} 0");
	has(t, "tlsd_tree_last_heal_duration_seconds{interface=\"eth0\"} 0.0052");
	has(t, "tlsd_link_saturated_seconds_total 12.5");
	/* no fit: no a or b, not a number that is none */
	hasnt(t, "\ntlsd_fit_a ");
	has(t, "tlsd_htb_up{interface=\"eth0\"} 1");
	has(t, "tlsd_htb_class_bytes_total{interface=\"eth0\",class=\"715d:10\",band=\"0\"} "
	       "123456789000");
	has(t, "tlsd_htb_class_drops_total{interface=\"eth0\",class=\"715d:10\",band=\"0\"} 12");
	has(t, "tlsd_htb_class_overlimits_total{interface=\"eth0\",class=\"715d:10\",band=\"0\"} "
	       "34");
	has(t, "tlsd_htb_class_backlog_bytes{interface=\"eth0\",class=\"715d:10\",band=\"0\"} "
	       "3000");
	has(t, "tlsd_htb_class_bytes_total{interface=\"eth0\",class=\"715d:1\",band=\"root\"} 10");
	has(t, "tlsd_htb_class_bytes_total{interface=\"eth0\",class=\"715d:ff\",band=\"default\"} "
	       "5");
	has(t, "tlsd_http_responses_total{code=\"404\"} 1");
	free(t);
}

static void test_render_openmetrics(void **state)
{
	struct tls_mx m;
	char *t;

	(void)state;
	state_of(&m);
	m.fit_ok = true;
	m.tree_state = "intact";
	t = render(&m, TLS_MX_OPENMETRICS);
	families_whole(t, TLS_MX_OPENMETRICS);
	has(t, "# TYPE tlsd_job_bytes counter");
	has(t, "# HELP tlsd_job_bytes Bytes of the job's PS traffic, counted by the classifier "
	       "as HTB counts them (headers included).");
	has(t, "tlsd_job_bytes_total{job=\"resnet50\"} 123456789012");
	has(t, "# TYPE tlsd_job_band gauge");
	has(t, "tlsd_fit_a 1.5");
	has(t, "tlsd_fit_b 0.5");
	has(t, "tlsd_tree_intact{interface=\"eth0\"} 1");
	assert_string_equal(t + strlen(t) - 7, "\n# EOF\n");
	free(t);
}

/* The push engine's statistics for state_of's jobs: the first job's and
 * a worker of it; the second job has none. */
static struct tls_mx_job push_jobs[2] = {
	{ .name = "resnet50",
	  .has_stats = true,
	  .workers = 3,
	  .b_wk = 2e6,
	  .b_req = NAN,
	  .p_direct = 0.25,
	  .p_solved = NAN },
	{ .name = "b \"q\" \\ x\ny" }, /* no push statistics */
};
static struct tls_mx_worker push_worker = { .job = "resnet50",
					    .worker = "198.18.0.2:40000",
					    .ps = "198.18.0.1:9000",
					    .bytes = 77,
					    .b_wk = 3e6,
					    .b_req = NAN,
					    .p_direct = NAN,
					    .p_solved = NAN };

static void push_of(struct tls_mx *m)
{
	m->jobs_push = push_jobs;
	m->workers_push = &push_worker;
	m->nworkers_push = 1;
}

/* Both directions: the push engine's series beside the pull's, in the same
 * families, told apart by direction. */
static void test_render_push(void **state)
{
	struct tls_mx m;
	char *t;

	(void)state;
	state_of(&m);
	push_of(&m);
	t = render(&m, TLS_MX_PROMETHEUS);
	families_whole(t, TLS_MX_PROMETHEUS);
	has(t, "tlsd_job_workers{job=\"resnet50\",direction=\"pull\"} 4");
	has(t, "tlsd_job_workers{job=\"resnet50\",direction=\"push\"} 3");
	has(t, "tlsd_job_bandwidth_bytes_per_second{job=\"resnet50\",direction=\"push\"} 2000000");
	has(t, "tlsd_job_contention_ratio{job=\"resnet50\",direction=\"push\"} 0.25");
	hasnt(t, "tlsd_job_workers{job=\"b");
	has(t, "tlsd_worker_bytes_total{job=\"resnet50\",worker=\"198.18.0.2:40000\","
	       "ps=\"198.18.0.1:9000\",direction=\"push\"} 77");
	has(t, "tlsd_worker_bytes_total{job=\"resnet50\",worker=\"198.18.0.2:40000\","
	       "ps=\"198.18.0.1:9000\",direction=\"pull\"} 99");
	hasnt(t, "NaN");
	free(t);
}

/* metrics_workers off: no per-worker family at all, the per-job ones all */
static void test_render_no_workers(void **state)
{
	for (int f = TLS_MX_PROMETHEUS; f <= TLS_MX_OPENMETRICS; f++) {
		struct tls_mx m;
		char *t;

		(void)state;
		state_of(&m);
		push_of(&m);
		m.workers_on = false;
		t = render(&m, f);
		families_whole(t, f);
		hasnt(t, "tlsd_worker_");
		has(t, "tlsd_job_workers{job=\"resnet50\",direction=\"push\"} 3");
		has(t, "tlsd_job_bandwidth_bytes_per_second{job=\"resnet50\",direction=\"pull\"} "
		       "12500000");
		free(t);
	}
}

/* What is not known is not there: no tree, no statistics, no HTB. */
static void test_render_bare(void **state)
{
	struct tls_mx m = {
		.version = "0.1",
		.ifname = "eth0",
		.policy = "fifo",
		.bands = 1,
	};
	char *t;

	(void)state;
	t = render(&m, TLS_MX_OPENMETRICS);
	families_whole(t, TLS_MX_OPENMETRICS);
	hasnt(t, "tlsd_tree_");
	hasnt(t, "tlsd_worker_");
	hasnt(t, "tlsd_link_ps_bandwidth");
	has(t, "tlsd_htb_up{interface=\"eth0\"} 0");
	has(t, "# TYPE tlsd_job_bytes counter");
	hasnt(t, "tlsd_job_bytes_total{");
	free(t);
	assert_string_equal(tls_mx_content_type(TLS_MX_PROMETHEUS),
			    "text/plain; version=0.0.4; charset=utf-8");
	assert_string_equal(tls_mx_content_type(TLS_MX_OPENMETRICS),
			    "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

/* tls_mx_g15 writes what printf's "%.15g" does, its own way for most
 * values: edges of its fixed range and of rounding, then values of every
 * kind (random bits, rates, ratios, scales), both against snprintf. */
static void test_g15(void **state)
{
	static const double edge[] = { 0,
				       -0.0,
				       1e-4,
				       0.99999999999999e-4,
				       1e15,
				       1e15 - 1,
				       999999999999999.4,
				       99999999999999.95,
				       0.1 + 0.2,
				       1.0 / 3,
				       2.0 / 3,
				       12500000.5,
				       5e-324,
				       1.7976931348623157e308,
				       123456789012345.6,
				       0.000123456789012345678,
				       9.5,
				       0.5,
				       -1.25e7,
				       INFINITY,
				       NAN };
	uint64_t r = 88172645463325252ULL;
	char a[64], b[64];

	(void)state;
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]) + 400000; i++) {
		double v;

		if (i < sizeof(edge) / sizeof(edge[0])) {
			v = edge[i];
		} else {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			if (i % 4 == 0)
				memcpy(&v, &r, sizeof(v));
			else if (i % 4 == 1)
				v = (double)(r >> 11) / 9007199254740992.0 * pow(10, (int)(r % 24) - 6);
			else if (i % 4 == 2)
				v = (double)(r % 100000000000ULL) / 1000;
			else
				v = (double)(r % 1000000) / 1e6;
			if (r & 1)
				v = -v;
		}
		assert_int_equal(tls_mx_g15(v, a), snprintf(b, sizeof(b), "%.15g", v));
		if (strcmp(a, b))
			fail_msg("%.17g: '%s', printf '%s'", v, a, b);
	}
}

/* The blocks tlsd keeps between flow readings (tcd/tlsd_metrics.c): the
 * text with them handed in as text is the text rendered whole, and what is
 * handed in is what is written there. */
/* Where the blocks were cut out of a text (struct tls_mx's cut): the
 * text's length there, as its FILE was flushed. */
struct cut_rec {
	const size_t *len;
	size_t n;
	enum tls_mx_block block[TLS_MX__BLOCKS];
	size_t at[TLS_MX__BLOCKS];
};

static void cut_rec(void *ctx, enum tls_mx_block b)
{
	struct cut_rec *r = ctx;

	assert_true(r->n < TLS_MX__BLOCKS);
	r->block[r->n] = b;
	r->at[r->n++] = *r->len;
}

/* m rendered with its blocks cut out, then put back where the cuts say:
 * what a scraper of tlsd gets, whose blocks come from a file. */
static char *render_cut(struct tls_mx *m, enum tls_mx_format f)
{
	char *text = NULL, *whole;
	size_t len = 0, from = 0, wlen = 0;
	struct cut_rec r = { .len = &len };
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	m->cut = cut_rec;
	m->cut_ctx = &r;
	assert_int_equal(tls_mx_render(out, m, f), 0);
	assert_int_equal(fclose(out), 0);
	m->cut = NULL;
	/* both blocks, in the text's order */
	assert_int_equal(r.n, TLS_MX__BLOCKS);
	assert_int_equal(r.block[0], TLS_MX_JOB_STATS);
	assert_int_equal(r.block[1], TLS_MX_WORKERS);
	whole = malloc(len + m->blocks[0].len + m->blocks[1].len + 1);
	assert_non_null(whole);
	for (size_t k = 0; k <= r.n; k++) {
		size_t to = k < r.n ? r.at[k] : len;

		memcpy(whole + wlen, text + from, to - from);
		wlen += to - from;
		if (k < r.n) {
			memcpy(whole + wlen, m->blocks[r.block[k]].text, m->blocks[r.block[k]].len);
			wlen += m->blocks[r.block[k]].len;
		}
		from = to;
	}
	whole[wlen] = '\0';
	free(text);
	return whole;
}

static void test_render_blocks(void **state)
{
	(void)state;
	for (int f = TLS_MX_PROMETHEUS; f <= TLS_MX_OPENMETRICS; f++) {
		char *whole, *parts, *text[TLS_MX__BLOCKS];
		size_t len[TLS_MX__BLOCKS];
		struct tls_mx m;

		state_of(&m);
		push_of(&m);
		whole = render(&m, f);
		has(whole, "tlsd_job_workers{job=\"resnet50\",direction=\"push\"} 3");
		for (int b = 0; b < TLS_MX__BLOCKS; b++) {
			FILE *out = open_memstream(&text[b], &len[b]);

			assert_non_null(out);
			assert_int_equal(tls_mx_render_block(out, &m, f, b), 0);
			assert_int_equal(fclose(out), 0);
			assert_true(len[b] > 0);
			m.blocks[b] = (struct tls_mx_text){ text[b], len[b] };
		}
		/* the snapshot's own workers are not read for the block */
		m.workers = NULL;
		m.nworkers = 0;
		m.jobs_push = NULL;
		m.workers_push = NULL;
		m.nworkers_push = 0;
		parts = render(&m, f);
		assert_string_equal(parts, whole);
		free(parts);
		parts = render_cut(&m, f);
		assert_string_equal(parts, whole);
		free(parts);
		m.blocks[TLS_MX_WORKERS] = (struct tls_mx_text){ "X 1\n", 4 };
		parts = render(&m, f);
		hasnt(parts, "tlsd_worker_");
		has(parts, "X 1");
		free(parts);
		for (int b = 0; b < TLS_MX__BLOCKS; b++)
			free(text[b]);
		free(whole);
	}
}

/* tlsd_job_rotations_total: a job's band changes as tlsd writes them
 * (tcd/jobs.c); its first band is no change, nor is the same band again. */
static void test_rotations(void **state)
{
	unsigned int b1[] = { 0, 1 }, b2[] = { 1, 0 }, b3[] = { 1, 1 };
	uint16_t port = 9000;
	struct tls_jobs t;
	uint32_t id;

	(void)state;
	tls_jobs_init(&t);
	assert_int_equal(tls_jobs_add(&t, "a", &port, 1, &id), 0);
	assert_int_equal(tls_jobs_add(&t, "b", NULL, 0, &id), 0);
	tls_jobs_note_bands(&t, b1);
	assert_int_equal(t.job[0].band_changes + t.job[1].band_changes, 0);
	tls_jobs_note_bands(&t, b1);
	assert_int_equal(t.job[0].band_changes + t.job[1].band_changes, 0);
	tls_jobs_note_bands(&t, b2);
	tls_jobs_note_bands(&t, b3);
	assert_int_equal(t.job[0].band_changes, 1);
	assert_int_equal(t.job[1].band_changes, 2);
	/* a job that comes later starts with no band and no change */
	assert_int_equal(tls_jobs_add(&t, "c", NULL, 0, &id), 0);
	assert_int_equal(t.job[2].band, TLS_BAND_NONE);
	assert_int_equal(t.job[2].band_changes, 0);
}

int run_metrics_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_short),
		cmocka_unit_test(test_render_prometheus),
		cmocka_unit_test(test_render_openmetrics),
		cmocka_unit_test(test_render_no_workers),
		cmocka_unit_test(test_render_push),
		cmocka_unit_test(test_render_bare),
		cmocka_unit_test(test_render_blocks),
		cmocka_unit_test(test_g15),
		cmocka_unit_test(test_rotations),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The metrics text (see metrics.h). Every family is written whole, HELP and
 * TYPE first and then all its samples, as both formats require; families of
 * jobs, workers and classes come from tables of (name, help, field), so a
 * family is one line here and cannot be half added.
 */
#define _GNU_SOURCE /* fputs_unlocked, fwrite_unlocked, fflush_unlocked */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

enum kind {
	COUNTER,
	GAUGE,
};

struct out {
	FILE *f;
	enum tls_mx_format fmt;
	bool *nomem; /* set when a table's label sets could not be built */
};

struct label {
	const char *k, *v;
};

const char *tls_mx_content_type(enum tls_mx_format f)
{
	return f == TLS_MX_OPENMETRICS ? TLS_MX_CT_OPENMETRICS : TLS_MX_CT_PROMETHEUS;
}

/* The length of the valid UTF-8 sequence at s, 0 if it is not one
 * (overlong forms, surrogates and code points past U+10FFFF are not). */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
		if (s[i] < lo || s[i] > hi) /* the NUL ends it too */
			return 0;
	return n;
}

size_t tls_mx_escape(const char *s, char *out, size_t outlen)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = 0, done = 0;

	/* most values (addresses, job names) are ASCII with nothing to
	 * escape: copied whole, not byte by byte (a reading of 2048 worker
	 * flows escapes some 8000 values) */
	while (p[len] && p[len] < 0x80 && p[len] != '\\' && p[len] != '"' && p[len] != '\n')
		len++;
	if (!p[len]) {
		if (outlen) {
			done = len < outlen ? len : outlen - 1;
			memcpy(out, s, done);
			out[done] = '\0';
		}
		return len;
	}
	len = 0;
	while (*p) {
		char esc[2];
		const char *piece = (const char *)p;
		size_t n = utf8_seq(p), adv = n;

		if (*p == '\\' || *p == '"' || *p == '\n') {
			esc[0] = '\\';
			esc[1] = *p == '\n' ? 'n' : (char)*p;
			piece = esc;
			n = 2;
			adv = 1;
		} else if (!n) {
			piece = "\xef\xbf\xbd"; /* U+FFFD */
			n = 3;
			adv = 1;
		}
		/* whole pieces only: a cut escape or character would be
		 * another value, or no UTF-8 */
		if (outlen && done == len && len + n < outlen) {
			memcpy(out + len, piece, n);
			done += n;
		}
		len += n;
		p += adv;
	}
	if (outlen)
		out[done] = '\0';
	return len;
}

/* ---- the writer ----
 *
 * A scrape of 64 jobs and 1024 worker flows is 5,000 samples, 100 times a
 * second under a fast scraper: fprintf's format parsing and its double
 * conversion were most of tlsd's CPU there (perf, tests/bench/RESULTS.md).
 * So a label set is escaped once per job or worker, not once per family;
 * pieces go out with the unlocked stdio calls (a FILE is one scrape's,
 * never shared); integers are converted here.
 */

static void put(const struct out *o, const char *s)
{
	fputs_unlocked(s, o->f);
}

/* The decimal digits of v at the end of buf[0..20): where they start. */
static char *u64_digits(uint64_t v, char *end)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

static void put_u64(const struct out *o, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf);
	char *p = u64_digits(v, end);

	fwrite_unlocked(p, 1, (size_t)(end - p), o->f);
}

/*
 * The 15 significant digits of a in [1e-4, 1e15) rounded to nearest, as
 * n (10^14 <= n < 10^15) and the decimal exponent x of its first digit:
 * a ~ n * 10^(x - 14). a times an exact power of ten (10^k, k <= 18, is
 * exact in x86's 64-bit mantissa) is off by 2^-14 at most, so the digits
 * are exact unless the part after the 15th is within that of a half; then
 * false, and printf decides.
 */
static bool digits15(double a, uint64_t *n, int *x)
{
#if LDBL_MANT_DIG >= 64
	static const long double p10[] = { 1e0L,  1e1L,	 1e2L,	1e3L,  1e4L,  1e5L,  1e6L,
					   1e7L,  1e8L,	 1e9L,	1e10L, 1e11L, 1e12L, 1e13L,
					   1e14L, 1e15L, 1e16L, 1e17L, 1e18L };
	long double sc, frac;
	int e = (int)floor(log10(a));

	for (int tries = 0; tries < 3; tries++) { /* log10 may be one off */
		if (e > 14 || e < -4)
			return false;
		sc = (long double)a * p10[14 - e];
		if (sc < 1e14L)
			e--;
		else if (sc >= 1e15L)
			e++;
		else
			break;
	}
	if (sc < 1e14L || sc >= 1e15L)
		return false;
	*n = (uint64_t)sc;
	frac = sc - (long double)*n;
	if (fabsl(frac - 0.5L) < 1e-3L)
		return false;
	if (frac > 0.5L && ++*n == 1000000000000000ULL) { /* 999..9.6 -> 10^15 */
		*n = 100000000000000ULL;
		e++;
	}
	*x = e;
	return e <= 14;
#else
	(void)a;
	(void)n;
	(void)x;
	return false; /* no wider type to scale in: printf's */
#endif
}

size_t tls_mx_g15(double v, char *buf)
{
	char d[16], *p = buf;
	uint64_t n;
	int x, last;

	/* an integer below 1e15 (counts, bands, whole rates): %.15g's
	 * plain digits */
	if (fabs(v) < 1e15 && v == (double)(int64_t)v && !(v == 0 && signbit(v))) {
		char tmp[24], *end = tmp + sizeof(tmp), *q = u64_digits((uint64_t)fabs(v), end);

		if (v < 0)
			*p++ = '-';
		memcpy(p, q, (size_t)(end - q));
		p[end - q] = '\0';
		return (size_t)(p - buf) + (size_t)(end - q);
	}
	/* a fraction in %g's fixed range (exponent -4..14) from its 15
	 * digits, trailing zeros dropped; the rest as printf writes it */
	if (!isfinite(v) || !digits15(fabs(v), &n, &x))
		return (size_t)snprintf(buf, 32, "%.15g", v);
	u64_digits(n, d + 15);
	for (last = 14; last > 0 && d[last] == '0'; last--)
		;
	if (v < 0)
		*p++ = '-';
	if (x < 0) {
		*p++ = '0';
		*p++ = '.';
		for (int i = -1; i > x; i--)
			*p++ = '0';
		memcpy(p, d, (size_t)last + 1);
		p += last + 1;
	} else {
		memcpy(p, d, (size_t)x + 1);
		p += x + 1;
		if (last > x) {
			*p++ = '.';
			memcpy(p, d + x + 1, (size_t)(last - x));
			p += last - x;
		}
	}
	*p = '\0';
	return (size_t)(p - buf);
}

/* As "%.15g" writes it (tls_mx_g15): printf's double conversion was the
 * costly part of a scrape. */
static void put_dbl(const struct out *o, double v)
{
	char buf[32];

	fwrite_unlocked(buf, 1, tls_mx_g15(v, buf), o->f);
}

/* A counter's sample is NAME_total; its TYPE and HELP name the family
 * (OpenMetrics) or the sample (Prometheus 0.0.4). */
static void head(const struct out *o, const char *name, enum kind k, const char *help)
{
	const char *sfx = k == COUNTER && o->fmt == TLS_MX_PROMETHEUS ? "_total" : "";

	put(o, "# HELP ");
	put(o, name);
	put(o, sfx);
	put(o, " ");
	put(o, help);
	put(o, "\n# TYPE ");
	put(o, name);
	put(o, sfx);
	put(o, k == COUNTER ? " counter\n" : " gauge\n");
}

/*
 * The label set l[0..nl) as a sample carries it, {k="v",...} with the
 * values escaped, "" for none, in out[0..outlen) (as tls_mx_escape: whole
 * escapes, a NUL). Returns the length of the whole set, so that a caller
 * may size its buffer with out = NULL first.
 */
static size_t label_set(const struct label *l, size_t nl, char *out, size_t outlen)
{
	bool cut = !outlen; /* a piece did not fit: nothing more is written */
	size_t len = 0, i, e;

#define PUT(s, n)                                                                                  \
	do {                                                                                       \
		if (!cut && len + (n) < outlen) {                                                  \
			memcpy(out + len, s, n);                                                   \
		} else if (!cut) {                                                                 \
			out[len] = '\0';                                                           \
			cut = true;                                                                \
		}                                                                                  \
		len += (n);                                                                        \
	} while (0)
	for (i = 0; i < nl; i++) {
		PUT(i ? "," : "{", 1);
		PUT(l[i].k, strlen(l[i].k));
		PUT("=\"", 2);
		/* a value cut short ends with its NUL after what fitted */
		e = tls_mx_escape(l[i].v, cut ? NULL : out + len, cut ? 0 : outlen - len);
		if (!cut && len + e >= outlen)
			cut = true;
		len += e;
		PUT("\"", 1);
	}
	if (nl)
		PUT("}", 1);
#undef PUT
	if (!cut)
		out[len] = '\0';
	return len;
}

/* Label sets of a table (jobs, workers), each escaped once per render:
 * sets[i] for entry i, the nl labels of labels_of, then last if not NULL
 * (the direction of a statistic). NULL: no memory. */
static char **label_sets(size_t n, void (*labels_of)(const void *tab, size_t i, struct label *l),
			 const void *tab, size_t nl, const struct label *last)
{
	char **sets = calloc(n ? n : 1, sizeof(*sets));
	struct label l[4];

	if (last)
		nl++;
	for (size_t i = 0; sets && i < n; i++) {
		size_t len;

		labels_of(tab, i, l);
		if (last)
			l[nl - 1] = *last;
		len = label_set(l, nl, NULL, 0) + 1;
		sets[i] = malloc(len);
		if (!sets[i]) {
			while (i--)
				free(sets[i]);
			free(sets);
			return NULL;
		}
		label_set(l, nl, sets[i], len);
	}
	return sets;
}

static void free_sets(char **sets, size_t n)
{
	for (size_t i = 0; sets && i < n; i++)
		free(sets[i]);
	free(sets);
}

/* The label sets a table's entries came with (tls_mx_worker.set): sets[i]
 * borrowed from entry i's, or NULL if one has none (all are built then). */
static char **kept_sets(const struct tls_mx_worker *w, size_t n)
{
	char **sets;

	for (size_t i = 0; i < n; i++)
		if (!w[i].set)
			return NULL;
	sets = calloc(n ? n : 1, sizeof(*sets));
	for (size_t i = 0; sets && i < n; i++)
		sets[i] = (char *)w[i].set;
	return sets;
}

/* The start of a sample: its name and label set, then the value. */
static void sample(const struct out *o, const char *name, enum kind k, const char *set)
{
	put(o, name);
	if (k == COUNTER)
		put(o, "_total");
	put(o, set);
	fputc_unlocked(' ', o->f);
}

static void u64_set(const struct out *o, const char *name, enum kind k, const char *set, uint64_t v)
{
	sample(o, name, k, set);
	put_u64(o, v);
	fputc_unlocked('\n', o->f);
}

/* A value not known (NaN) is no sample. */
static void dbl_set(const struct out *o, const char *name, enum kind k, const char *set, double v)
{
	if (!isfinite(v))
		return;
	sample(o, name, k, set);
	put_dbl(o, v);
	fputc_unlocked('\n', o->f);
}

/* For the few samples outside the tables: the set escaped at each. */
static void u64(const struct out *o, const char *name, enum kind k, const struct label *l,
		size_t nl, uint64_t v)
{
	/* every label value tlsd has is far shorter (job names: 63 bytes) */
	char set[1024];

	label_set(l, nl, set, sizeof(set));
	u64_set(o, name, k, set, v);
}

static void dbl(const struct out *o, const char *name, enum kind k, const struct label *l,
		size_t nl, double v)
{
	char set[1024];

	label_set(l, nl, set, sizeof(set));
	dbl_set(o, name, k, set, v);
}

/* A family of one sample without labels. */
static void one_u64(const struct out *o, const char *name, enum kind k, const char *help,
		    uint64_t v)
{
	head(o, name, k, help);
	u64(o, name, k, NULL, 0, v);
}

static void one_dbl(const struct out *o, const char *name, enum kind k, const char *help, double v)
{
	head(o, name, k, help);
	dbl(o, name, k, NULL, 0, v);
}

/* ---- tables: families of jobs, workers and classes ---- */

enum vtype {
	V_U64,
	V_DBL,
	V_INT,
};

struct field {
	const char *name;
	enum kind kind;
	enum vtype type;
	size_t off;
	const char *help;
};

/* One family per entry: the tables read as the lists they are. */
/* clang-format off */
#define JF(n, k, t, m, h) { n, k, t, offsetof(struct tls_mx_job, m), h }
#define WF(n, k, t, m, h) { n, k, t, offsetof(struct tls_mx_worker, m), h }
#define CF(n, k, t, m, h) { n, k, t, offsetof(struct tls_mx_class, m), h }
/* clang-format on */

static const struct field job_fields[] = {
	JF("tlsd_job_bytes", COUNTER, V_U64, bytes,
	   "Bytes of the job's PS traffic, counted by the classifier as HTB counts them "
	   "(headers included)."),
	JF("tlsd_job_packets", COUNTER, V_U64, packets,
	   "Packets (skbs, a GSO packet as one) of the job's PS traffic."),
	JF("tlsd_job_segments", COUNTER, V_U64, segs,
	   "Segments on the wire of the job's PS traffic (a GSO packet as its segments)."),
	JF("tlsd_job_rotations", COUNTER, V_U64, rotations,
	   "Times tlsd moved the job to another band (rotations, and jobs coming and going)."),
	JF("tlsd_job_demotions", COUNTER, V_U64, demotions,
	   "Flowlet band changes of the job's flows to a lower priority."),
	JF("tlsd_job_promotions", COUNTER, V_U64, promotions,
	   "Flowlet band changes of the job's flows to a higher priority."),
	JF("tlsd_job_held_packets", COUNTER, V_U64, held,
	   "Packets kept in their flow's old band by a flowlet hold."),
	JF("tlsd_job_band", GAUGE, V_INT, band,
	   "The job's band (0 is the highest priority; -1: the default class)."),
};

/* Only for jobs the statistics engine has seen. */
static const struct field job_stat_fields[] = {
	JF("tlsd_job_workers", GAUGE, V_INT, workers,
	   "Worker flows of the job active together now (n of the spotDNN model)."),
	JF("tlsd_job_bandwidth_bytes_per_second", GAUGE, V_DBL, b_wk,
	   "B_wk of spotDNN: the bandwidth a worker of the job gets (bytes over its active time)."),
	JF("tlsd_job_demand_bytes_per_second", GAUGE, V_DBL, b_req,
	   "B_req of spotDNN: a worker's rate while the link was not saturated (its demand)."),
	JF("tlsd_job_contention_ratio", GAUGE, V_DBL, p_direct,
	   "P of spotDNN measured: the share of the workers' active time the link was saturated."),
	JF("tlsd_job_contention_solved_ratio", GAUGE, V_DBL, p_solved,
	   "P of spotDNN solved from B_wk = P*B_ps/n + (1-P)*B_req (outside 0..1 where the "
	   "measurements do not fit the model)."),
};

static const struct field worker_fields[] = {
	WF("tlsd_worker_bytes", COUNTER, V_U64, bytes,
	   "Bytes of the worker flow in its direction, as HTB counts them: sent to the worker "
	   "(direction pull), or received from it with payload (push)."),
	WF("tlsd_worker_bandwidth_bytes_per_second", GAUGE, V_DBL, b_wk,
	   "B_wk of the flow: bytes over its active time."),
	WF("tlsd_worker_demand_bytes_per_second", GAUGE, V_DBL, b_req,
	   "B_req of the flow: its rate while the link was not saturated."),
	WF("tlsd_worker_contention_ratio", GAUGE, V_DBL, p_direct,
	   "P measured for the flow: the share of its active time the link was saturated."),
	WF("tlsd_worker_contention_solved_ratio", GAUGE, V_DBL, p_solved,
	   "P of the flow solved from spotDNN's formula (may fall outside 0..1)."),
};

static const struct field class_fields[] = {
	CF("tlsd_htb_class_bytes", COUNTER, V_U64, bytes,
	   "Bytes the HTB class sent, as the kernel counts them."),
	CF("tlsd_htb_class_packets", COUNTER, V_U64, packets,
	   "Packets the HTB class sent, as the kernel counts them."),
	CF("tlsd_htb_class_drops", COUNTER, V_U64, drops,
	   "Packets dropped on their way into the HTB class (its queue full)."),
	CF("tlsd_htb_class_overlimits", COUNTER, V_U64, overlimits,
	   "Times the HTB class was over its rate and could not borrow (HTB's overlimits)."),
	CF("tlsd_htb_class_backlog_bytes", GAUGE, V_U64, backlog,
	   "Bytes queued in the HTB class now."),
	CF("tlsd_htb_class_queue_packets", GAUGE, V_U64, qlen,
	   "Packets queued in the HTB class now."),
};

#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

static void field_sample(const struct out *o, const struct field *fd, const void *st,
			 const char *set)
{
	const char *p = (const char *)st + fd->off;

	switch (fd->type) {
	case V_U64:
		u64_set(o, fd->name, fd->kind, set, *(const uint64_t *)p);
		break;
	case V_DBL:
		dbl_set(o, fd->name, fd->kind, set, *(const double *)p);
		break;
	case V_INT:
		/* int or unsigned int: both are 4 bytes here, and no
		 * unsigned field reaches INT_MAX */
		dbl_set(o, fd->name, fd->kind, set, *(const int *)p);
		break;
	}
}

static void job_labels(const void *tab, size_t i, struct label *l)
{
	l[0] = (struct label){ "job", ((const struct tls_mx_job *)tab)[i].name };
}

static void worker_labels(const void *tab, size_t i, struct label *l)
{
	const struct tls_mx_worker *w = &((const struct tls_mx_worker *)tab)[i];

	l[0] = (struct label){ "job", w->job };
	l[1] = (struct label){ "worker", w->worker };
	l[2] = (struct label){ "ps", w->ps };
}

/* A part of a table: n entries from tab, sets[i] the label set of entry i. */
struct part {
	const void *tab;
	size_t n;
	char **sets;
};

/* The families of table t, each whole, over the entries of its parts
 * (one per direction) that pass keep (NULL: all). */
static void table(const struct out *o, const struct field *t, size_t nt, const struct part *p,
		  size_t np, size_t size, bool (*keep)(const void *entry))
{
	for (size_t f = 0; f < nt; f++) {
		head(o, t[f].name, t[f].kind, t[f].help);
		for (size_t k = 0; k < np; k++) {
			for (size_t i = 0; i < p[k].n; i++) {
				const void *e = (const char *)p[k].tab + i * size;

				if (!keep || keep(e))
					field_sample(o, &t[f], e, p[k].sets[i]);
			}
		}
	}
}

static bool job_has_stats(const void *entry)
{
	return ((const struct tls_mx_job *)entry)->has_stats;
}

static void job_families(const struct out *o, const struct tls_mx *m, char **sets)
{
	const struct part p = { m->jobs, m->njobs, sets };

	table(o, job_fields, NFIELDS(job_fields), &p, 1, sizeof(*m->jobs), NULL);
	head(o, "tlsd_job_leader", GAUGE, "1 if the job is in the top band (band 0), else 0.");
	for (size_t i = 0; i < m->njobs; i++)
		u64_set(o, "tlsd_job_leader", GAUGE, sets[i], m->jobs[i].band == 0);
}

static const struct label dirs[2] = { { "direction", "pull" }, { "direction", "push" } };

/*
 * The families of a table of statistics, a series per direction measured:
 * pull from pull (n entries), push from push (npush; NULL: none), the label
 * sets the nl labels of labels_of and the direction, or kept[d] (borrowed)
 * where not NULL.
 */
static void stat_table(const struct out *o, const struct field *t, size_t nt, const void *pull,
		       size_t n, const void *push, size_t npush, size_t size, size_t nl,
		       void (*labels_of)(const void *tab, size_t i, struct label *l),
		       bool (*keep)(const void *entry), char **kept[2])
{
	struct part p[2] = { { pull, n, kept[0] }, { push, push ? npush : 0, kept[1] } };

	for (size_t d = 0; d < 2; d++)
		if (!kept[d])
			p[d].sets = label_sets(p[d].n, labels_of, p[d].tab, nl, &dirs[d]);
	if (!p[0].sets || !p[1].sets)
		*o->nomem = true;
	else
		table(o, t, nt, p, 2, size, keep);
	for (size_t d = 0; d < 2; d++) {
		if (kept[d])
			free(p[d].sets);
		else
			free_sets(p[d].sets, p[d].n);
	}
}

static void job_stat_families(const struct out *o, const struct tls_mx *m)
{
	char **none[2] = { NULL, NULL };

	stat_table(o, job_stat_fields, NFIELDS(job_stat_fields), m->jobs, m->njobs, m->jobs_push,
		   m->njobs, sizeof(*m->jobs), 1, job_labels, job_has_stats, none);
}

static void worker_families(const struct out *o, const struct tls_mx *m)
{
	char **kept[2];

	if (!m->workers_on)
		return;
	kept[0] = kept_sets(m->workers, m->nworkers);
	kept[1] = kept_sets(m->workers_push, m->workers_push ? m->nworkers_push : 0);
	stat_table(o, worker_fields, NFIELDS(worker_fields), m->workers, m->nworkers,
		   m->workers_push, m->nworkers_push, sizeof(*m->workers), 3, worker_labels, NULL,
		   kept);
}

size_t tls_mx_worker_set(const struct tls_mx_worker *w, bool push, char *out, size_t outlen)
{
	struct label l[4];

	worker_labels(w, 0, l);
	l[3] = dirs[push];
	return label_set(l, 4, out, outlen);
}

static void band_name(int band, char *buf, size_t len)
{
	if (band == TLS_MX_BAND_ROOT)
		snprintf(buf, len, "root");
	else if (band == TLS_MX_BAND_DEFAULT)
		snprintf(buf, len, "default");
	else
		snprintf(buf, len, "%d", band);
}

static void classes(const struct out *o, const struct tls_mx *m)
{
	struct label up = { "interface", m->ifname };

	head(o, "tlsd_htb_up", GAUGE,
	     "1 if the HTB classes could be read from the kernel for this answer, else 0.");
	u64(o, "tlsd_htb_up", GAUGE, &up, 1, m->htb_read);
	for (size_t f = 0; f < NFIELDS(class_fields); f++) {
		head(o, class_fields[f].name, class_fields[f].kind, class_fields[f].help);
		for (size_t i = 0; i < m->nclasses; i++) {
			const struct tls_mx_class *c = &m->classes[i];
			char cls[16], band[16], set[1024];
			struct label l[] = { { "interface", m->ifname },
					     { "class", cls },
					     { "band", band } };

			/* a few classes: their sets are built at each sample */
			snprintf(cls, sizeof(cls), "%x:%x", c->handle >> 16, c->handle & 0xffff);
			band_name(c->band, band, sizeof(band));
			label_set(l, 3, set, sizeof(set));
			field_sample(o, &class_fields[f], c, set);
		}
	}
}

/* ---- the scalar families ---- */

static void daemon_families(const struct out *o, const struct tls_mx *m)
{
	struct label info[] = { { "version", m->version },
				{ "interface", m->ifname },
				{ "policy", m->policy },
				{ "mode", m->mode ? m->mode : "schedule" } };

	head(o, "tlsd_info", GAUGE,
	     "tlsd's version, interface, policy and mode (schedule, observe) in force (always 1).");
	u64(o, "tlsd_info", GAUGE, info, 4, 1);
	one_dbl(o, "tlsd_start_time_seconds", GAUGE, "When tlsd started, in Unix time.",
		m->start_time_s);
	one_dbl(o, "tlsd_link_rate_bytes_per_second", GAUGE,
		"The link rate tlsd's HTB tree is built for.", m->rate_bps / 8.0);
	one_u64(o, "tlsd_bands", GAUGE, "HTB bands for jobs.", m->bands);
	one_u64(o, "tlsd_jobs", GAUGE, "Jobs tlsd schedules (static and discovered).", m->njobs);
	one_dbl(o, "tlsd_rotation_interval_seconds", GAUGE,
		"How often policy roundrobin rotates the bands.", m->interval_ns / 1e9);
	one_u64(o, "tlsd_rotations", COUNTER, "Rotations of policy roundrobin (its steps).",
		m->rotations);
	one_u64(o, "tlsd_reloads", COUNTER, "Configuration reloads (SIGHUP).", m->reloads);
	one_u64(o, "tlsd_reload_failures", COUNTER,
		"Reloads refused (a bad configuration: the running one is kept) or applied in part.",
		m->reload_failures);
	head(o, "tlsd_feature_in_use", GAUGE, "1 if tlsd uses this kernel feature, else 0.");
	for (size_t i = 0; i < m->nfeatures; i++) {
		struct label l = { "feature", m->features[i].name };

		u64(o, "tlsd_feature_in_use", GAUGE, &l, 1, m->features[i].in_use);
	}
	head(o, "tlsd_feature_missing", GAUGE,
	     "1 if the kernel refused this feature (tlsd --probe says why), else 0.");
	for (size_t i = 0; i < m->nfeatures; i++) {
		struct label l = { "feature", m->features[i].name };

		u64(o, "tlsd_feature_missing", GAUGE, &l, 1, m->features[i].missing);
	}
}

/* The tree's families carry the interface, so that an alert names it. */
static void tree_families(const struct out *o, const struct tls_mx *m)
{
	static const char *const states[] = { "intact", "absent", "yielded" };
	static const struct {
		const char *name, *help;
		size_t off;
	} counters[] = {
		{ "tlsd_tree_heals", "Repairs of tlsd's tree, filter or clsact qdisc.",
		  offsetof(struct tls_mx, heals) },
		{ "tlsd_tree_failed_heals", "Repairs that failed (tried again a second later).",
		  offsetof(struct tls_mx, failed_heals) },
		{ "tlsd_tree_yields",
		  "Times tlsd yielded the interface to a tool that kept replacing its tree.",
		  offsetof(struct tls_mx, yields) },
		{ "tlsd_tree_interface_returns",
		  "Times the interface was created again and scheduled anew.",
		  offsetof(struct tls_mx, returns) },
		{ "tlsd_tree_rate_changes",
		  "Link speed changes the tree followed (link_rate auto).",
		  offsetof(struct tls_mx, rate_changes) },
	};
	struct label l = { "interface", m->ifname };

	head(o, "tlsd_tree_intact", GAUGE,
	     "1 if tlsd's HTB tree and filter are in place, 0 if the interface is absent or "
	     "yielded to another tool.");
	u64(o, "tlsd_tree_intact", GAUGE, &l, 1, !strcmp(m->tree_state, "intact"));
	head(o, "tlsd_tree_state", GAUGE, "The tree's state: 1 for the one it is in.");
	for (size_t i = 0; i < 3; i++) {
		struct label ls[] = { { "interface", m->ifname }, { "state", states[i] } };

		u64(o, "tlsd_tree_state", GAUGE, ls, 2, !strcmp(m->tree_state, states[i]));
	}
	head(o, "tlsd_tree_watched", GAUGE,
	     "1 if tlsd hears of changes to its tree (rtnetlink notifications), else 0.");
	u64(o, "tlsd_tree_watched", GAUGE, &l, 1, m->watched);
	for (size_t i = 0; i < NFIELDS(counters); i++) {
		head(o, counters[i].name, COUNTER, counters[i].help);
		u64(o, counters[i].name, COUNTER, &l, 1,
		    *(const uint64_t *)((const char *)m + counters[i].off));
	}
	head(o, "tlsd_tree_heals_recent", GAUGE, "Heals within the heal window now.");
	u64(o, "tlsd_tree_heals_recent", GAUGE, &l, 1, m->heals_recent);
	head(o, "tlsd_tree_heal_limit", GAUGE,
	     "Heals allowed within the heal window; one more and tlsd yields.");
	u64(o, "tlsd_tree_heal_limit", GAUGE, &l, 1, m->heal_limit);
	head(o, "tlsd_tree_last_heal_duration_seconds", GAUGE,
	     "How long the last heal took, from the check that saw the damage.");
	dbl(o, "tlsd_tree_last_heal_duration_seconds", GAUGE, &l, 1, m->last_heal_s);
}

static void stats_families(const struct out *o, const struct tls_mx *m)
{
	one_dbl(o, "tlsd_link_ps_bandwidth_bytes_per_second", GAUGE,
		"B_ps of spotDNN: the PS link's rate (measured while saturated, else the link rate).",
		m->b_ps);
	one_u64(o, "tlsd_link_ps_bandwidth_measured", GAUGE,
		"1 if B_ps was measured on a saturated link, 0 if it is the link rate.",
		m->b_ps_measured);
	one_u64(o, "tlsd_link_saturated", GAUGE,
		"1 if the link was saturated in the last sampling period, else 0.", m->saturated);
	one_dbl(o, "tlsd_link_saturated_seconds", COUNTER,
		"Time the link was saturated (at least 90% of the link rate).", m->sat_s);
	one_u64(o, "tlsd_fit_observations", GAUGE,
		"Observations (job, n) in the fit of P(n) = min(a*sqrt(n) - b, 1).", m->fit_obs);
	/* P is a fraction of the time: a and b have no unit */
	one_dbl(o, "tlsd_fit_a", GAUGE,
		"The fitted a of P(n) = min(a*sqrt(n) - b, 1), no unit (P is a fraction).",
		m->fit_ok ? m->fit_a : NAN);
	one_dbl(o, "tlsd_fit_b", GAUGE,
		"The fitted b of P(n) = min(a*sqrt(n) - b, 1), no unit (P is a fraction).",
		m->fit_ok ? m->fit_b : NAN);
}

static void http_families(const struct out *o, const struct tls_mx *m)
{
	head(o, "tlsd_http_responses", COUNTER,
	     "Answers of the metrics endpoint, by HTTP status code.");
	for (size_t i = 0; i < m->nhttp; i++) {
		char code[8];
		struct label l = { "code", code };

		snprintf(code, sizeof(code), "%u", m->http[i].code);
		u64(o, "tlsd_http_responses", COUNTER, &l, 1, m->http[i].count);
	}
}

/* A block rendered before (tls_mx_render_block), or rendered now. */
static void block(const struct out *o, const struct tls_mx *m, enum tls_mx_block b)
{
	const struct tls_mx_text *t = &m->blocks[b];

	if (t->text && m->cut) {
		fflush_unlocked(o->f);
		m->cut(m->cut_ctx, b);
		return;
	}
	if (t->text) {
		fwrite_unlocked(t->text, 1, t->len, o->f);
		return;
	}
	if (b == TLS_MX_JOB_STATS)
		job_stat_families(o, m);
	else
		worker_families(o, m);
}

int tls_mx_render_block(FILE *f, const struct tls_mx *m, enum tls_mx_format fmt,
			enum tls_mx_block b)
{
	bool nomem = false;
	const struct out o = { .f = f, .fmt = fmt, .nomem = &nomem };

	if (b == TLS_MX_JOB_STATS)
		job_stat_families(&o, m);
	else
		worker_families(&o, m);
	return nomem ? -ENOMEM : ferror(f) ? -EIO : 0;
}

int tls_mx_render(FILE *f, const struct tls_mx *m, enum tls_mx_format fmt)
{
	bool nomem = false;
	const struct out o = { .f = f, .fmt = fmt, .nomem = &nomem };
	char **sets = label_sets(m->njobs, job_labels, m->jobs, 1, NULL);

	if (!sets)
		return -ENOMEM;
	daemon_families(&o, m);
	if (m->has_tree)
		tree_families(&o, m);
	job_families(&o, m, sets);
	block(&o, m, TLS_MX_JOB_STATS);
	free_sets(sets, m->njobs);
	one_u64(&o, "tlsd_other_bytes", COUNTER,
		"Bytes of traffic of no job (HTB's default class), as the classifier counts them.",
		m->other_bytes);
	one_u64(&o, "tlsd_other_packets", COUNTER, "Packets of traffic of no job.",
		m->other_packets);
	if (m->stats) {
		stats_families(&o, m);
		block(&o, m, TLS_MX_WORKERS);
	}
	classes(&o, m);
	http_families(&o, m);
	if (fmt == TLS_MX_OPENMETRICS)
		put(&o, "# EOF\n");
	return nomem ? -ENOMEM : ferror(f) ? -EIO : 0;
}

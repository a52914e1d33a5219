// SPDX-License-Identifier: GPL-2.0-only
/*
 * The metrics text (see metrics.h). Every family is written whole, HELP and
 * TYPE first and then all its samples, as both formats require; families of
 * jobs, workers and classes come from tables of (name, help, field), so a
 * family is one line here and cannot be half added.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "metrics.h"

enum kind {
	COUNTER,
	GAUGE,
};

struct out {
	FILE *f;
	enum tls_mx_format fmt;
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

/* ---- the writer ---- */

/* A counter's sample is NAME_total; its TYPE and HELP name the family
 * (OpenMetrics) or the sample (Prometheus 0.0.4). */
static void head(const struct out *o, const char *name, enum kind k, const char *help)
{
	const char *sfx = k == COUNTER && o->fmt == TLS_MX_PROMETHEUS ? "_total" : "";

	fprintf(o->f, "# HELP %s%s %s\n", name, sfx, help);
	fprintf(o->f, "# TYPE %s%s %s\n", name, sfx, k == COUNTER ? "counter" : "gauge");
}

static void name_labels(const struct out *o, const char *name, enum kind k, const struct label *l,
			size_t nl)
{
	/* every label value tlsd has is far shorter (job names: 63 bytes) */
	char v[1024];
	size_t i;

	fprintf(o->f, "%s%s", name, k == COUNTER ? "_total" : "");
	for (i = 0; i < nl; i++) {
		tls_mx_escape(l[i].v, v, sizeof(v));
		fprintf(o->f, "%s%s=\"%s\"", i ? "," : "{", l[i].k, v);
	}
	fputs(nl ? "} " : " ", o->f);
}

static void u64(const struct out *o, const char *name, enum kind k, const struct label *l,
		size_t nl, uint64_t v)
{
	name_labels(o, name, k, l, nl);
	fprintf(o->f, "%" PRIu64 "\n", v);
}

/* A value not known (NaN) is no sample. */
static void dbl(const struct out *o, const char *name, enum kind k, const struct label *l,
		size_t nl, double v)
{
	if (!isfinite(v))
		return;
	name_labels(o, name, k, l, nl);
	fprintf(o->f, "%.15g\n", v);
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
			 const struct label *l, size_t nl)
{
	const char *p = (const char *)st + fd->off;

	switch (fd->type) {
	case V_U64:
		u64(o, fd->name, fd->kind, l, nl, *(const uint64_t *)p);
		break;
	case V_DBL:
		dbl(o, fd->name, fd->kind, l, nl, *(const double *)p);
		break;
	case V_INT:
		/* int or unsigned int: both are 4 bytes here, and no
		 * unsigned field reaches INT_MAX */
		dbl(o, fd->name, fd->kind, l, nl, *(const int *)p);
		break;
	}
}

static void jobs(const struct out *o, const struct tls_mx *m, const struct field *t, size_t nt)
{
	for (size_t f = 0; f < nt; f++) {
		head(o, t[f].name, t[f].kind, t[f].help);
		for (size_t i = 0; i < m->njobs; i++) {
			struct label l = { "job", m->jobs[i].name };

			field_sample(o, &t[f], &m->jobs[i], &l, 1);
		}
	}
}

/* The statistics per job, a series per direction measured. */
static void job_stats(const struct out *o, const struct tls_mx *m)
{
	const struct field *t = job_stat_fields;

	for (size_t f = 0; f < NFIELDS(job_stat_fields); f++) {
		head(o, t[f].name, t[f].kind, t[f].help);
		for (size_t i = 0; i < m->njobs; i++) {
			struct label l[] = { { "job", m->jobs[i].name }, { "direction", "pull" } };

			if (m->jobs[i].has_stats)
				field_sample(o, &t[f], &m->jobs[i], l, 2);
			l[1].v = "push";
			if (m->jobs_push && m->jobs_push[i].has_stats)
				field_sample(o, &t[f], &m->jobs_push[i], l, 2);
		}
	}
}

static void leaders(const struct out *o, const struct tls_mx *m)
{
	head(o, "tlsd_job_leader", GAUGE, "1 if the job is in the top band (band 0), else 0.");
	for (size_t i = 0; i < m->njobs; i++) {
		struct label l = { "job", m->jobs[i].name };

		u64(o, "tlsd_job_leader", GAUGE, &l, 1, m->jobs[i].band == 0);
	}
}

static void worker_samples(const struct out *o, const struct field *fd,
			   const struct tls_mx_worker *ws, size_t n, const char *direction)
{
	for (size_t i = 0; i < n; i++) {
		const struct tls_mx_worker *w = &ws[i];
		struct label l[] = { { "job", w->job },
				     { "worker", w->worker },
				     { "ps", w->ps },
				     { "direction", direction } };

		field_sample(o, fd, w, l, 4);
	}
}

static void workers(const struct out *o, const struct tls_mx *m)
{
	for (size_t f = 0; f < NFIELDS(worker_fields); f++) {
		head(o, worker_fields[f].name, worker_fields[f].kind, worker_fields[f].help);
		worker_samples(o, &worker_fields[f], m->workers, m->nworkers, "pull");
		worker_samples(o, &worker_fields[f], m->workers_push, m->nworkers_push, "push");
	}
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
	     "1 if the HTB classes could be read from the kernel at this scrape, else 0.");
	u64(o, "tlsd_htb_up", GAUGE, &up, 1, m->htb_read);
	for (size_t f = 0; f < NFIELDS(class_fields); f++) {
		head(o, class_fields[f].name, class_fields[f].kind, class_fields[f].help);
		for (size_t i = 0; i < m->nclasses; i++) {
			const struct tls_mx_class *c = &m->classes[i];
			char cls[16], band[16];
			struct label l[] = { { "interface", m->ifname },
					     { "class", cls },
					     { "band", band } };

			snprintf(cls, sizeof(cls), "%x:%x", c->handle >> 16, c->handle & 0xffff);
			band_name(c->band, band, sizeof(band));
			field_sample(o, &class_fields[f], c, l, 3);
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

int tls_mx_render(FILE *f, const struct tls_mx *m, enum tls_mx_format fmt)
{
	const struct out o = { .f = f, .fmt = fmt };

	daemon_families(&o, m);
	if (m->has_tree)
		tree_families(&o, m);
	jobs(&o, m, job_fields, NFIELDS(job_fields));
	leaders(&o, m);
	job_stats(&o, m);
	one_u64(&o, "tlsd_other_bytes", COUNTER,
		"Bytes of traffic of no job (HTB's default class), as the classifier counts them.",
		m->other_bytes);
	one_u64(&o, "tlsd_other_packets", COUNTER, "Packets of traffic of no job.",
		m->other_packets);
	if (m->stats) {
		stats_families(&o, m);
		workers(&o, m);
	}
	classes(&o, m);
	http_families(&o, m);
	if (fmt == TLS_MX_OPENMETRICS)
		fputs("# EOF\n", f);
	return ferror(f) ? -EIO : 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tlsd's metrics as Prometheus/OpenMetrics text, from a snapshot of plain
 * numbers (struct tls_mx): pure, no I/O but the FILE it writes to, so that
 * the text of a given state is unit-tested. tlsd_metrics.c fills the
 * snapshot from the daemon; the HTTP endpoint (http.c) and `tlsctl metrics`
 * (the control command `metrics`) both serve what this renders.
 *
 * Two dialects of one text (docs/design.md, "Metrics"):
 *  - Prometheus text 0.0.4 (TLS_MX_PROMETHEUS): a counter's TYPE and HELP
 *    name its sample, "tlsd_job_bytes_total"; what node_exporter's
 *    textfile collector reads.
 *  - OpenMetrics 1.0.0 (TLS_MX_OPENMETRICS): a counter's TYPE and HELP name
 *    its family, "tlsd_job_bytes", whose sample is "..._total"; "# EOF" ends
 *    the text.
 * Everything else (names, labels, values, order) is the same. A value that
 * is not known (NaN in the snapshot) is left out, not written as NaN: a
 * dashboard then shows a gap, not a number that is none.
 */
#ifndef TLS_METRICS_H
#define TLS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tls_mx_format {
	TLS_MX_PROMETHEUS,
	TLS_MX_OPENMETRICS,
};

#define TLS_MX_CT_PROMETHEUS  "text/plain; version=0.0.4; charset=utf-8"
#define TLS_MX_CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

const char *tls_mx_content_type(enum tls_mx_format f);

/* A job (job 0, traffic of no job, is struct tls_mx's other_*). */
struct tls_mx_job {
	const char *name;
	uint64_t bytes, packets, segs;	/* as HTB counts them (the classifier's counters) */
	uint64_t demotions, promotions; /* flowlet band changes */
	uint64_t held;			/* packets kept in their old band by a flowlet hold */
	uint64_t rotations;		/* times tlsd moved it to another band */
	int band;			/* -1: the default class */
	/* The statistics engine's, NaN where not known; has_stats false: the
	 * engine has not seen the job (or runs not). */
	bool has_stats;
	unsigned int workers; /* its worker flows active together now (n) */
	double b_wk, b_req, p_direct, p_solved;
};

/* A worker flow of a job: the worker's endpoint (a UDP one prefixed
 * "udp:") and the PS's. */
#define TLS_MX_ENDPOINT_LEN 64 /* "udp:[v6 address]:port" */
struct tls_mx_worker {
	const char *job;
	char worker[TLS_MX_ENDPOINT_LEN];
	char ps[TLS_MX_ENDPOINT_LEN];
	uint64_t bytes;
	double b_wk, b_req, p_direct, p_solved;
	/* its samples' label set, as tls_mx_worker_set makes it for its
	 * direction, kept by the caller from one render to the next; NULL:
	 * made at the render (if one worker of a direction has none, all of
	 * that direction's are made) */
	const char *set;
};

/* A class of tlsd's HTB tree, as the kernel counts it. */
#define TLS_MX_BAND_ROOT    -2 /* the root class: the link */
#define TLS_MX_BAND_DEFAULT -1 /* the default class: traffic of no job */
struct tls_mx_class {
	uint32_t handle;
	int band; /* 0.., or TLS_MX_BAND_* */
	uint64_t bytes, packets, drops, overlimits;
	uint64_t qlen, backlog;
};

struct tls_mx_feature {
	const char *name;
	bool in_use, missing;
};

/* HTTP answers of the metrics endpoint, by status code. */
struct tls_mx_http {
	unsigned int code;
	uint64_t count;
};

/*
 * Blocks of the text that depend only on the statistics engine's figures:
 * the per-job statistics families (tlsd_job_workers ... _solved_ratio)
 * and the per-worker families. They are most of the text (5 samples per
 * worker flow), and the engine changes them only when its sampler reads
 * the flows (every 100 ms), so tlsd renders them once per reading
 * (tls_mx_render_block) and hands them to tls_mx_render as text.
 */
enum tls_mx_block {
	TLS_MX_JOB_STATS,
	TLS_MX_WORKERS,
	TLS_MX__BLOCKS,
};

/* A block's text; text NULL: render it from the snapshot. */
struct tls_mx_text {
	const char *text;
	size_t len;
};

struct tls_mx {
	const char *version, *ifname, *policy;
	const char *mode; /* schedule or observe (tlsd's mode setting) */
	double start_time_s; /* Unix time */
	uint64_t rate_bps;
	unsigned int bands;
	uint64_t interval_ns;
	uint64_t rotations; /* the policy's steps */
	uint64_t reloads, reload_failures;

	size_t njobs;
	const struct tls_mx_job *jobs;
	uint64_t other_bytes, other_packets;

	/* The self-healing tree (tree_heal.h); has_tree false: not known. */
	bool has_tree;
	const char *tree_state; /* "intact", "absent" or "yielded" */
	bool watched;
	uint64_t heals, failed_heals, yields, returns, rate_changes;
	unsigned int heals_recent, heal_limit;
	double last_heal_s; /* how long the last heal took; NaN: none yet */

	/* The statistics engine; stats false: it runs not. */
	bool stats;
	double b_ps, sat_s;
	bool b_ps_measured, saturated;
	bool fit_ok;
	double fit_a, fit_b;
	unsigned int fit_obs;
	/* the per-worker families (metrics_workers); false: left out, not
	 * even their HELP and TYPE */
	bool workers_on;
	size_t nworkers;
	const struct tls_mx_worker *workers;
	/* The push direction's engine (the ingress counter's), with the label
	 * direction="push" where the above have "pull"; jobs_push NULL: none.
	 * jobs_push is in the order of jobs; only its statistics are read. */
	const struct tls_mx_job *jobs_push;
	size_t nworkers_push;
	const struct tls_mx_worker *workers_push;

	/* The HTB classes; htb_read false: the kernel could not be asked. */
	bool htb_read;
	size_t nclasses;
	const struct tls_mx_class *classes;

	size_t nfeatures;
	const struct tls_mx_feature *features;

	size_t nhttp;
	const struct tls_mx_http *http;

	/* rendered before, of the same format; none set: rendered here */
	struct tls_mx_text blocks[TLS_MX__BLOCKS];
	/* Blocks rendered before that the caller sends apart from the text
	 * (tlsd: from a file, without copying them into each scrape): where
	 * one of them goes, nothing is written, the FILE is flushed and
	 * cut(cut_ctx, b) is called, so that the caller knows where in the
	 * text it goes. NULL: they are written into the text. */
	void (*cut)(void *ctx, enum tls_mx_block b);
	void *cut_ctx;
};

/*
 * A label value as the text format wants it: backslash, double quote and
 * line feed escaped (\\, \", \n), bytes that are not UTF-8 replaced by
 * U+FFFD (the text is UTF-8). Writes at most outlen - 1 bytes and a NUL,
 * never a cut escape or character; returns the length of the whole escaped
 * value (as snprintf: out was too small if >= outlen).
 */
size_t tls_mx_escape(const char *s, char *out, size_t outlen);

/* The label set of w's samples in direction push or pull as the text
 * carries it, into out (tls_mx_escape's rules: whole escapes, a NUL): its
 * whole length, as snprintf. */
size_t tls_mx_worker_set(const struct tls_mx_worker *w, bool push, char *out, size_t outlen);

/* v as printf's "%.15g" writes it, into buf (32 bytes at least): its
 * length. Most values without printf, which was half a scrape's cost. */
size_t tls_mx_g15(double v, char *buf);

/* The text of m in format f: 0, or -EIO if f could not be written, or
 * -ENOMEM. */
int tls_mx_render(FILE *f, const struct tls_mx *m, enum tls_mx_format fmt);

/* Block b of m's text alone (what tls_mx_render writes there when
 * m->blocks[b] is unset): 0, -EIO or -ENOMEM. */
int tls_mx_render_block(FILE *f, const struct tls_mx *m, enum tls_mx_format fmt,
			enum tls_mx_block b);

#endif /* TLS_METRICS_H */

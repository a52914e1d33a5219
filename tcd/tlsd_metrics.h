/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tlsd's metrics: the one place their text is built from the daemon's state
 * (a struct tlsd_view, as the control replies are). It reads what the
 * snapshot does not hold: the classifier's counters, the statistics engine,
 * the kernel's HTB class counters (netlink, through tc_state.h), then
 * metrics.c renders. Both the HTTP endpoint (http.h) and the control
 * command `metrics` (tlsctl metrics) serve this text.
 */
#ifndef TLSD_METRICS_H
#define TLSD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http.h"
#include "loop.h"
#include "metrics.h"
#include "tlsd_ctl.h"

/*
 * The blocks of the text that only the statistics engine's flow readings
 * change (metrics.h, enum tls_mx_block), kept from the scrape that
 * rendered them, one set per format. At 1024 worker flows they are most of
 * a scrape's cost; a scraper faster than the flow readings (every 100 ms)
 * gets them from here, as of the last reading. Zeroed: empty.
 */
struct tlsd_mx_fit {
	bool valid, ok;
	double a, b;
	unsigned int nobs;
};

/* A flow reading's blocks, shared by the cache and by the scrapes still
 * sending them (an answer goes out as they are, without a copy): freed with
 * the last reference. */
struct tlsd_mx_kept {
	unsigned int refs;
	char *text[TLS_MX__BLOCKS];
	size_t len[TLS_MX__BLOCKS];
};

/* A worker flow's endpoints as its labels carry them (they depend on the
 * flow's key alone) and its label set (tls_mx_worker_set: the job's name
 * too), kept from one flow reading to the next, in the order of the
 * statistics' flows (by job, then key). */
struct tlsd_mx_name {
	uint32_t job;
	struct tls_flow_key key;
	char worker[TLS_MX_ENDPOINT_LEN], ps[TLS_MX_ENDPOINT_LEN];
	char *set; /* malloc'ed; NULL: none */
};

/* A whole answer of the endpoint, shared by the scrapes within the
 * answers' age limit (the statistics period, at most this) and by those
 * still sending it: freed with the last reference. */
#define TLSD_MX_ANSWER_MAX_NS (1000ULL * 1000 * 1000)
struct tlsd_mx_answer {
	unsigned int refs;
	uint64_t built_ns;	   /* CLOCK_MONOTONIC */
	uint64_t key;		   /* what it is of (tlsd_metrics.c, answer_key) */
	char *text;		   /* the text around the blocks */
	struct tlsd_mx_kept *kept; /* the blocks (a reference); NULL: none */
	struct tls_piece piece[TLS_HTTP_MAX_PIECES];
	size_t npieces;
};

struct tlsd_mx_cache {
	struct tlsd_mx_answer *answer[2]; /* the last, by format; NULL: none */
	struct tlsd_mx_blocks {
		uint64_t gen;		   /* tls_stats_flow_gen they are of */
		uint64_t gen_in;	   /* and the push engine's (0: none) */
		uint64_t jobs;		   /* and the jobs' ids and names (a fingerprint) */
		bool workers;		   /* with the per-worker families (metrics_workers) */
		struct tlsd_mx_kept *kept; /* NULL: none */
		struct tlsd_mx_fit fit;	   /* tls_stats_fit's, of the same reading */
	} fmt[2];			   /* by enum tls_mx_format */
	/* the last text's length, by format and with the blocks apart (1) or
	 * in it (0): the next one's buffer */
	size_t last_len[2][2];
	/* the last reading's worker flows, by direction (0 pull, 1 push):
	 * formatting the endpoints and escaping the label sets anew (inet_ntop
	 * and printf, five calls a flow) was half of rendering a reading of
	 * 2048 flows */
	struct tlsd_mx_names {
		struct tlsd_mx_name *e;
		size_t n;
		uint64_t jobs; /* the jobs' fingerprint their sets are of */
	} names[2];
};

/* Empty it (when the statistics engine it was built from goes). */
void tlsd_mx_cache_clear(struct tlsd_mx_cache *c);

/* The text in *text (malloc'ed, NUL-terminated, its length in *len):
 * 0, or -ENOMEM / -EIO. */
int tlsd_metrics_text(const struct tlsd_view *v, enum tls_mx_format f, char **text, size_t *len);

/* The same text as an HTTP body (*b comes zeroed): the kept blocks as
 * pieces of their own memory (b->ref a reference to them, which b->release
 * drops), the rest as pieces of b->text. 0, or -ENOMEM / -EIO. */
int tlsd_metrics_body(const struct tlsd_view *v, enum tls_mx_format f, struct tls_http_body *b);

/*
 * The endpoint as metrics_listen says: "" closes it, a new address opens a
 * listener there (watched by epfd for src when epfd >= 0) and closes the old one,
 * the same address keeps it and its clients. A listener that cannot be
 * opened is said; the old one is kept if it can be (else none). 0, or the
 * -errno of the failed open.
 */
int tlsd_metrics_sync(struct tls_http **h, const char *listen, int epfd, struct tls_source *src,
		      tls_http_handler handler, void *ctx);

#endif /* TLSD_METRICS_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * tlsd's answers to control requests (ctl.h parses them): status, jobs,
 * policy, stats, calibrate and metrics (tlsd_metrics.h) from a snapshot of
 * the daemon's state, so that this file needs no daemon internals and its
 * replies can be tested on a state built by hand.
 * The daemon applies a policy change itself, then asks for the reply.
 */
#ifndef TLSD_CTL_H
#define TLSD_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classifier.h"
#include "config.h"
#include "discover.h"
#include "ctl.h"
#include "http.h"
#include "jobs.h"
#include "stats.h"
#include "stats_ingress.h"
#include "tree_heal.h"

struct json_object;

struct tlsd_mx_cache;

struct tlsd_view {
	const char *version;
	const struct tls_config *cfg; /* in force, with tlsctl's policy if it set one */
	const struct tls_jobs *jobs;
	const struct tls_maps *m; /* bands and counters are read from here */
	uint64_t rate_bps;
	uint64_t step;
	uint64_t uptime_ns;
	bool policy_live;	     /* policy and interval were set by tlsctl */
	enum tls_policy conf_policy; /* what the file and command line say */
	uint64_t conf_interval_ns;
	bool changed;		       /* this request changed the policy or interval */
	const struct tls_stats *stats; /* NULL: no statistics engine */
	/* the ingress (push) direction's; NULL: no ingress counter */
	const struct tls_stats *stats_in;
	const struct tls_ingress_sampler *isampler;
	const struct tls_discover *disc; /* NULL: discovery off */
	uint64_t stats_period_ns;
	const struct tls_heal *heal; /* the tree's state; NULL: not known */
	uint64_t now_ns;	     /* monotonic, to say how long ago */
	/* for the metrics (tlsd_metrics.h) */
	struct tls_tc_state *tcs;   /* asks the kernel for the HTB classes; NULL: not asked */
	int ifindex;		    /* of the interface; 0: absent */
	uint64_t reloads, reload_failures;
	const struct tls_http *http; /* the metrics endpoint; NULL: off */
	struct tlsd_mx_cache *mx_cache; /* tlsd_metrics.h; NULL: none */
};

/* Fill reply for req; TLS_CTL_OK or an error code with a message. */
int tlsd_ctl_reply(const struct tlsd_view *v, const struct tls_ctl_req *req,
		   struct json_object *reply, char *msg, size_t msglen);

#endif /* TLSD_CTL_H */

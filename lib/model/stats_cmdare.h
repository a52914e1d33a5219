/* SPDX-License-Identifier: GPL-2.0-only
 *
 * What CM-DARE (cake-lab/CM-DARE) joins tlsd's statistics with (issue 17,
 * Deliver 6): its logs of cluster speed, server starts and revocations
 * carry wall-clock stamps, tlsd's the monotonic clock; and two verdicts it
 * can act on, per job the share of its time the link was saturated, and
 * who holds a job back (a straggler worker, or the PS's link).
 *
 * Pure: the caller gives the wall clock's offset to the monotonic one.
 * Times in the JSON are seconds since the Unix epoch, UTC ("_utc_s", as
 * time.time() and pandas' to_datetime(unit="s") take them): numbers join
 * without parsing, beside the monotonic "_s" ones they come from.
 */
#ifndef TLS_STATS_CMDARE_H
#define TLS_STATS_CMDARE_H

#include <json-c/json.h>

#include "stats.h"

enum tls_straggler {
	TLS_STRAG_NONE = 0,
	TLS_STRAG_WORKER, /* this worker is low while the link is idle: the worker */
	TLS_STRAG_PS,	  /* all the job's workers low while the link is saturated: the PS */
};
const char *tls_straggler_str(enum tls_straggler s); /* NULL for none */

/* A worker's throughput: its bytes over the time since its first packet,
 * up to now_ns (the last sample): its pace, pauses included. NaN if none. */
double tls_flow_throughput(const struct tls_stats_flow_info *f, uint64_t now_ns);

/* The share of the job's active time the link was saturated; NaN if none. */
double tls_job_sat_share(const struct tls_stats_job_info *j);

/*
 * The verdicts for one job j and its flows fl[0..n) (out[i] for fl[i]);
 * returns the job's (TLS_STRAG_PS or none). Only the workers present are
 * judged, those active within the job's window (as n counts them): a flow
 * that ended stays tracked a while, its throughput falling, but it is
 * gone, not straggling. The thresholds are the measurements':
 * - the link was saturated for the job when it was for the greater part
 *   of the job's active time (sat share > 1/2), else idle;
 * - a worker is low against its peers when its throughput is an outlier
 *   below their median by the robust rule, more than 3 scaled median
 *   absolute deviations (1.4826 MAD: the standard deviation of normal
 *   noise), the peers' own spread, and by more than one iteration's bytes
 *   over its lifetime (the job's iteration measured from its bursts: read
 *   mid-iteration, a worker on pace lacks at most that); at least 3
 *   workers, and fewer than half of them low (else it is the job's pace,
 *   not a worker's);
 * - all workers are low against the link when each one's B_wk is below
 *   the job's measured B_req while B_req > B_ps / n (the contended regime
 *   of spotDNN's formula): the link, not the workers, sets their rate.
 */
enum tls_straggler tls_straggler_flags(const struct tls_stats_link_info *l,
				       const struct tls_stats_job_info *j,
				       const struct tls_stats_flow_info *fl, size_t n,
				       enum tls_straggler *out);

/* The wall-clock stamps (utc_off_s: CLOCK_REALTIME - CLOCK_MONOTONIC) and
 * the verdicts added to the JSON objects of tlsd's stats reply. 0 or
 * -ENOMEM. */
int tls_cmdare_link_json(struct json_object *o, const struct tls_stats_link_info *l,
			 double utc_off_s);
int tls_cmdare_job_json(struct json_object *o, const struct tls_stats_job_info *j,
			enum tls_straggler s);
int tls_cmdare_flow_json(struct json_object *o, const struct tls_stats_flow_info *f,
			 uint64_t now_ns, double utc_off_s, enum tls_straggler s);

#endif /* TLS_STATS_CMDARE_H */

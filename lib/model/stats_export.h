/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The statistics engine's results as text: JSON (json-c) for the control
 * socket, both ways, so that tlsctl formats what tlsd sent with the same
 * code; spotDNN's calibration module (profiler/tlsd_calib.py); CSV rows for offline
 * analysis.
 *
 * Units: JSON and CSV carry rates in bytes per second (keys ending in
 * "_Bps") and times in seconds ("_s"); a value that is not known (NaN in the
 * structs) is JSON null and an empty CSV field. spotDNN's bandwidths are in
 * MB/s with 1 MB = 10^6 bytes; its a and b have no unit (P is a fraction).
 */
#ifndef TLS_STATS_EXPORT_H
#define TLS_STATS_EXPORT_H

#include <stdio.h>

#include <json-c/json.h>

#include "stats.h"

/* spotDNN's unit: bytes per second in one MB/s */
#define TLS_SPOTDNN_MBPS 1e6

/* "198.18.0.1:9000", "[fd00::1]:9000"; "?" for an unknown family. */
void tls_flow_endpoint_str(const struct tls_flow_key *k, bool remote, char *buf, size_t len);
/* The inverse for one side of k (family taken from the text): 0 or -EINVAL. */
int tls_flow_endpoint_parse(const char *s, struct tls_flow_key *k, bool remote);

/* Seconds to the microsecond whatever the serializer's global format (tlsd
 * sets "%.9g", which rounds seconds since the epoch to tens of seconds):
 * for wall-clock stamps and offsets. NULL for a value that is not finite. */
struct json_object *tls_json_seconds_us(double v);

/* Objects are new references (NULL on allocation failure). from_json
 * functions return 0, or -EINVAL with a message naming the bad key. */
struct json_object *tls_stats_link_json(const struct tls_stats_link_info *l);
int tls_stats_link_from_json(struct json_object *o, struct tls_stats_link_info *l, char *err,
			     size_t errlen);
struct json_object *tls_stats_job_json(const struct tls_stats_job_info *j);
int tls_stats_job_from_json(struct json_object *o, struct tls_stats_job_info *j, char *err,
			    size_t errlen);
struct json_object *tls_stats_flow_json(const struct tls_stats_flow_info *f);
int tls_stats_flow_from_json(struct json_object *o, struct tls_stats_flow_info *f, char *err,
			     size_t errlen);
struct json_object *tls_stats_obs_json(const struct tls_stats_obs *o);
int tls_stats_obs_from_json(struct json_object *o, struct tls_stats_obs *ob, char *err,
			    size_t errlen);
/* The calibration with every observation behind it (obs may be NULL when
 * nobs is 0), and spotDNN's four values under "spotdnn". */
struct json_object *tls_stats_calib_json(const struct tls_stats_calib *c,
					 const struct tls_stats_obs *obs, size_t nobs);
int tls_stats_calib_from_json(struct json_object *o, struct tls_stats_calib *c, char *err,
			      size_t errlen);

/*
 * spotDNN's variables as a complete Python module, meant to be saved as
 * spotDNN's profiler/tlsd_calib.py and imported by one line at the end of
 * its profiler/instanceinfo.py: `bps` (the PS's bandwidth B_ps),
 * `instance_bandwith` (sic: a worker's uncontended bandwidth B_req) in MB/s,
 * `param` (S_param, param_bytes: what a worker pulls per iteration) in MB,
 * all of 10^6 bytes on the wire; `a` and `b` (no unit); and `instance_comp`
 * recomputed with the bandwidth spotDNN's profile was taken at. All or
 * nothing: 0 when the module was printed; -ENODATA, nothing printed and the
 * reason in err, when a value is not known (param_bytes NaN or <= 0: not
 * given); -EIO. job_name may be NULL.
 */
int tls_stats_print_spotdnn(FILE *f, const struct tls_stats_calib *c, double param_bytes,
			    const char *job_name, char *err, size_t errlen);
/* Where the module's values come from, for its comments (issue 17's both
 * directions): the direction c is of, and whether param was measured (the
 * mean of `bursts` pushes) rather than given. */
struct tls_spotdnn_src {
	bool push;
	bool param_measured;
	uint64_t bursts;
};
int tls_stats_print_spotdnn_src(FILE *f, const struct tls_stats_calib *c, double param_bytes,
				const struct tls_spotdnn_src *src, const char *job_name, char *err,
				size_t errlen);

/* CSV for `tlsctl stats --csv --follow`: the header once, then per sample
 * one row per job and one per flow. 0 or -EIO. */
int tls_stats_csv_header(FILE *f);
int tls_stats_csv_job(FILE *f, uint64_t t_ns, const struct tls_stats_job_info *j);
int tls_stats_csv_flow(FILE *f, uint64_t t_ns, const struct tls_stats_flow_info *fl);
/* The n sweep behind the fit, for `tlsctl calibrate --format csv`: the header,
 * then one row per observation (job, n, retired, used, active_s,
 * unsat_active_s, bytes, b_wk_Bps, b_req_Bps, p_direct, p_solved, use). 0 or
 * -EIO. */
int tls_stats_csv_obs_header(FILE *f);
int tls_stats_csv_obs(FILE *f, const struct tls_stats_obs *o);

#endif /* TLS_STATS_EXPORT_H */

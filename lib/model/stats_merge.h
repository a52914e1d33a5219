/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Several PS hosts' calibrations as one (`tlsctl calibrate --merge`):
 * spotDNN's B_ps is the cluster's, the sum over the PS hosts (each tlsd
 * measures its own link only). Pure: the callers parse the exports
 * (stats_export.h) and print the result with the same code.
 *
 * The exports are of one workload whose parameters are sharded over the PS
 * hosts (ps-lite's key ranges): every worker pulls its share from every PS,
 * so a worker's rates toward the cluster are the sums of its rates toward
 * each PS. Hence, summed over the hosts: B_ps, the link rates, B_req, and
 * per n the observations' B_wk and B_req. P direct is the hosts' P
 * weighted by active time; P solved is solved again from the sums, and the
 * fit is made again over the merged observations.
 *
 * An n is merged only when every host has an observation at it (a sum over
 * some hosts would understate a worker's rate); the others are counted in
 * *dropped. Times are the smallest host's: the time every host saw it.
 */
#ifndef TLS_STATS_MERGE_H
#define TLS_STATS_MERGE_H

#include "stats.h"

struct tls_calib_part {
	struct tls_stats_calib calib;
	const struct tls_stats_obs *obs;
	size_t nobs;
};

/*
 * Merge nparts (>= 1) calibrations into out and *obs (malloc'ed, ordered
 * by n; *nobs of them; free() it). 0; -EINVAL with the reason in err
 * (the parts' fit sources differ, or one part mixes several jobs'
 * observations); -ENOMEM.
 */
int tls_calib_merge(const struct tls_calib_part *parts, size_t nparts, struct tls_stats_calib *out,
		    struct tls_stats_obs **obs, size_t *nobs, size_t *dropped, char *err,
		    size_t errlen);

#endif /* TLS_STATS_MERGE_H */

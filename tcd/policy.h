/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The scheduling policies, as a pure function: (policy, number of jobs in
 * arrival order, number of job bands, step) -> the band of each job. No I/O,
 * no state: switching policy live is computing a new assignment.
 *
 *  fifo        every job in band 0: no prioritisation (the baseline)
 *  one         TensorLights-One: distinct static priorities by arrival order
 *  roundrobin  TensorLights-RoundRobin: the order rotates by one every step,
 *              so every job leads once per cycle of n steps
 *
 * With more jobs than bands, consecutive positions of the current order
 * share a band, in groups as even as they can be (earlier groups are the
 * larger ones): with 10 jobs on 4 bands, positions 0-2, 3-5, 6-7 and 8-9.
 */
#ifndef TLS_POLICY_H
#define TLS_POLICY_H

#include <stdint.h>

enum tls_policy {
	TLS_POLICY_FIFO,
	TLS_POLICY_ONE,
	TLS_POLICY_RR,
};

/* "fifo", "one", "roundrobin" (also "rr"); 0 or -EINVAL. */
int tls_policy_parse(const char *s, enum tls_policy *out);
const char *tls_policy_name(enum tls_policy p);

/* The position (0 = leading) of the job that arrived i-th, at this step. */
unsigned int tls_policy_position(enum tls_policy p, unsigned int n, uint64_t step, unsigned int i);
/* The band of a position among n, on nbands bands (nbands >= 1). */
unsigned int tls_policy_band_of_position(unsigned int pos, unsigned int n, unsigned int nbands);
/* bands[i] = the band of the job that arrived i-th, for i < n. */
void tls_policy_assign(enum tls_policy p, unsigned int n, unsigned int nbands, uint64_t step,
		       unsigned int *bands);

#endif /* TLS_POLICY_H */

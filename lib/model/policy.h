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
 *  bursts      the classifier orders the jobs' current bursts, the one
 *              that would finish first under an equal share of the link
 *              first (bpf/tls_burst.h): here every job
 *              gets the last band, where it goes when the order is full
 *
 * With more jobs than bands, consecutive positions of the current order
 * share a band, in groups as even as they can be (earlier groups are the
 * larger ones): with 10 jobs on 4 bands, positions 0-2, 3-5, 6-7 and 8-9.
 */
#ifndef TLS_POLICY_H
#define TLS_POLICY_H

#include <stdbool.h>
#include <stdint.h>

enum tls_policy {
	TLS_POLICY_FIFO,
	TLS_POLICY_ONE,
	TLS_POLICY_RR,
	TLS_POLICY_BURSTS,
};

/* For error messages: every name tls_policy_parse() takes. */
#define TLS_POLICY_NAMES "fifo, one, roundrobin, bursts"

/* Policy `bursts`: a leader idle this long has ended its burst, and one whose
 * burst is older than the limit yields (a job that never goes idle). The
 * gap is far above a sending job's gaps between packets (microseconds to
 * an RTT) and below the compute gaps between iterations (hundreds of ms). */
#define TLS_BURST_GAP_NS   (20ULL * 1000000ULL)
/* A leader that has sent nothing since it took the lead is given longer: its
 * flows may have waited past TCP's minimum RTO (200 ms) and be backing off.
 * Free: while it is silent the bands behind it have the link. */
#define TLS_BURST_GRACE_NS (250ULL * 1000000ULL)
#define TLS_BURST_LIMIT_NS (2ULL * 1000000000ULL)

/* "fifo", "one", "roundrobin" (also "rr"), "bursts"; 0 or -EINVAL. */
int tls_policy_parse(const char *s, enum tls_policy *out);
const char *tls_policy_name(enum tls_policy p);

/* The position (0 = leading) of the job that arrived i-th, at this step. */
unsigned int tls_policy_position(enum tls_policy p, unsigned int n, uint64_t step, unsigned int i);
/* The band of a position among n, on nbands bands (nbands >= 1). */
unsigned int tls_policy_band_of_position(unsigned int pos, unsigned int n, unsigned int nbands);
/* roundrobin: how many times the band of a job at position pos among n
 * changes over the next k steps (on nbands bands). */
uint64_t tls_policy_rr_band_changes(unsigned int n, unsigned int nbands, unsigned int pos,
				    uint64_t k);
/* bands[i] = the band of the job that arrived i-th, for i < n. */
void tls_policy_assign(enum tls_policy p, unsigned int n, unsigned int nbands, uint64_t step,
		       unsigned int *bands);
/*
 * roundrobin's leader is the job that arrived (step mod n)-th. When the job
 * that arrived gone-th of n leaves, the step that keeps the order among
 * the others, as a cycle, and the turn in progress: the leader leads on,
 * or, if it is the one leaving, the job after it takes the rest of its
 * turn. (Taken mod n - 1 as it was, the step would hand the lead to
 * another job in the middle of a turn and move every job's place: the
 * leader of the moment could fall to the last band with its turn not
 * half over; tests/bench/RESULTS.md, issue 13.) A job arriving is
 * appended: the leader stays, nobody else is passed.
 * Returns a value < n - 1 (0 when n <= 1); tlsd keeps it as the lead.
 */
unsigned int tls_policy_lead_after_leave(uint64_t step, unsigned int n, unsigned int gone);

/*
 * Policy bursts's order when it is set up again (the policy set, the bands
 * or the rate changed) while jobs send: the classifier would otherwise
 * start from an empty order and see a job only at its next packet, and a
 * job whose packets wait in a band below a leader that never pauses sends
 * nothing new until they leave at that band's floor. Measured: such a job
 * entered the new order 0.1-3.3 s after the reset, and the leader yields
 * only to a job in the order (tests/bench/RESULTS.md, "An order reset
 * with jobs sending"). Seeded, the jobs are in the order at once and the
 * leader yields within its limit.
 *
 * Of n jobs (arrival order), the active ones (active[i]) ordered by
 * rank[i], least first, ties in arrival order; their indices go to out,
 * at most max of them. Returns how many. The caller ranks a job by its
 * place in the order being replaced, else after those by the band it has,
 * so that the reset moves as few flows to another band as it can.
 */
unsigned int tls_policy_burst_seed(unsigned int n, const unsigned int *rank, const bool *active,
				   unsigned int max, unsigned int *out);

/*
 * The bands of a seeded order of n entries (leader first) given the band
 * each one's flows have now (cur): kept where the order allows, as the
 * classifier keeps bands (tls_burst_place), so that the reset moves no
 * flow whose queued packets a band change would let its own new ones pass
 * (TCP takes that reordering for loss): bands rising along the order, the
 * leader alone in its band, and entries past the last band sharing it.
 * Otherwise by place (0, 1, ..., the last band shared), as a compaction
 * renumbers them; *floor is then the band the leader's queued packets are
 * in when it is raised out of it (the jobs behind it are kept at or below
 * that band until its burst ends: tls_burst_floored), else 0. Returns
 * whether the bands were kept. out may be cur.
 */
bool tls_policy_burst_seed_bands(unsigned int n, const unsigned int *cur, unsigned int nbands,
				 unsigned int *out, unsigned int *floor);

/*
 * Policy bursts: the weight of a job with `flows` flows to its workers in
 * the order's fair share, in TLS_BURST_W1 units (bpf/tls_common.h): the
 * square root of its flows, rounded, 1 for none (not known yet), at most
 * TLS_BURST_W_MAX. Why the root: FIFO shares the link by flow, so a job of
 * many workers gets more than an equal share there; by job it lost that
 * and ended as late as under FIFO with no margin, by flow the other jobs
 * paid; the root keeps both (bpf/tls_burst.h, tests/bench/RESULTS.md).
 */
unsigned int tls_policy_burst_weight(unsigned int flows);

/*
 * The headroom (parts per million of the link) the top band (band 0) leaves
 * under policy p with njobs jobs in nbands bands: headroom_ppm under `one`
 * with at least two jobs in at least two bands, else 0 (band 0 may use the
 * whole link). Its ceiling is then tls_rate_less_ppm(rate, that).
 *
 * Why: under static priorities the jobs' broadcasts pipeline, each job
 * sending while the ones ahead compute. A job ready early is held back to
 * the end of the broadcast ahead of it; one ready late keeps its gap. So
 * the lower jobs' phases only drift later, for as long as the jobs live,
 * until the last job's broadcast runs into the leader's next one and loses
 * a whole cycle to it. A leader a few percent below the link has a slightly
 * longer cycle than the others: they catch up with it (and get that share
 * to start on while it sends) instead of drifting away. Under roundrobin
 * the order changes every interval, which bounds the drift, and the
 * headroom measured a net loss (the leader's slower cycle). Measured in
 * tests/bench/RESULTS.md ("Session 4").
 */
uint64_t tls_policy_lead_headroom(enum tls_policy p, unsigned int njobs, unsigned int nbands,
				  uint64_t headroom_ppm);

#endif /* TLS_POLICY_H */

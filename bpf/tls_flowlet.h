/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Flowlet switching: the one decision the classifier makes per packet of a
 * known flow. Pure, so the same code runs in the BPF program and in the unit
 * tests.
 *
 * Why: a rotation re-maps a job to another band in one map write. A demoted
 * flow cannot be reordered (its queued packets sit in the higher band and
 * leave first), so a demotion applies at once. A promoted flow's new packets
 * would overtake its own packets still queued in the lower band, so a
 * promotion waits for an idle gap longer than that queue's drain time, or at
 * most `hold_ns` after it became pending. gap_ns == 0 switches off flowlets:
 * every change applies at once.
 */
#ifndef TLS_FLOWLET_H
#define TLS_FLOWLET_H

#ifndef TLS_INLINE
#define TLS_INLINE static inline __attribute__((always_inline))
#endif

enum tls_flowlet_verdict {
	TLS_FLOWLET_SAME = 0, /* band unchanged */
	TLS_FLOWLET_DEMOTE,   /* moved to a lower priority band at once */
	TLS_FLOWLET_PROMOTE,  /* moved to a higher priority band */
	TLS_FLOWLET_HOLD,     /* promotion pending: packet stays in old band */
};

/*
 * Decide which band this packet of flow `*band`/`*pending_ns`, last seen at
 * `last_ns`, uses when its job's band is `target` at time `now`. Updates
 * *band and *pending_ns; the caller updates last_ns afterwards.
 */
TLS_INLINE enum tls_flowlet_verdict tls_flowlet_step(__u32 *band, __u64 *pending_ns, __u64 last_ns,
						     __u32 target, __u64 now, __u64 gap_ns,
						     __u64 hold_ns)
{
	if (*band == target) {
		*pending_ns = 0;
		return TLS_FLOWLET_SAME;
	}
	/* A flow in the default class (TLS_BAND_NONE: its job had no band yet)
	 * takes its band at once. Held back, it would sit in the default class,
	 * which every band starves: its TCP stalls for seconds (measured). */
	if (*band == TLS_BAND_NONE) {
		*band = target;
		*pending_ns = 0;
		return TLS_FLOWLET_PROMOTE;
	}
	/* Higher number = lower priority. */
	if (target > *band) {
		*band = target;
		*pending_ns = 0;
		return TLS_FLOWLET_DEMOTE;
	}
	/* now < last_ns happens: another CPU stamped the shared flow entry
	 * after this one read the clock. The flow is busy, not idle. */
	if (gap_ns == 0 || (now >= last_ns && now - last_ns >= gap_ns)) {
		*band = target;
		*pending_ns = 0;
		return TLS_FLOWLET_PROMOTE;
	}
	if (*pending_ns == 0) {
		/* 0 marks "none", so a promotion pending since boot time 0 is
		 * recorded as 1 ns. */
		*pending_ns = now ? now : 1;
	}
	if (now >= *pending_ns && now - *pending_ns >= hold_ns) {
		*band = target;
		*pending_ns = 0;
		return TLS_FLOWLET_PROMOTE;
	}
	return TLS_FLOWLET_HOLD;
}

/*
 * The same decision for a flow of a local TCP socket, which knows more than
 * the clock: `drained` when none of the flow's packets but this one is still
 * below TCP (in a qdisc or the device; the socket's write memory then holds
 * this packet alone). The clock cannot tell an idle flow from a starved one:
 * a flow in a band that gets no service enqueues nothing for a while (TCP
 * small queues) with all its packets still queued, and promoted then, its
 * new packets would overtake those. Drained, nothing of the flow can be
 * overtaken, so a change applies at once, either way. Not drained, the
 * flow keeps its band for at most hold_ns after the change became pending,
 * demotions too: a lower band under its guaranteed rate is served before a
 * higher band that borrows, so a demoted flow's new packets could pass its
 * own queued ones. gap_ns == 0 switches flowlets off, as above.
 */
TLS_INLINE enum tls_flowlet_verdict tls_flowlet_step_drained(__u32 *band, __u64 *pending_ns,
							     __u32 target, __u64 now, int drained,
							     __u64 gap_ns, __u64 hold_ns)
{
	/* TLS_BAND_NONE is above every band: leaving it is a promotion */
	enum tls_flowlet_verdict v = target > *band ? TLS_FLOWLET_DEMOTE : TLS_FLOWLET_PROMOTE;

	if (*band == target) {
		*pending_ns = 0;
		return TLS_FLOWLET_SAME;
	}
	if (*band == TLS_BAND_NONE || gap_ns == 0 || drained) {
		*band = target;
		*pending_ns = 0;
		return v;
	}
	if (*pending_ns == 0)
		*pending_ns = now ? now : 1;
	if (now >= *pending_ns && now - *pending_ns >= hold_ns) {
		*band = target;
		*pending_ns = 0;
		return v;
	}
	return TLS_FLOWLET_HOLD;
}

#endif /* TLS_FLOWLET_H */

/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Policy `bursts`: the one decision the classifier makes per packet of a job
 * under it. Pure, so the same code runs in the BPF program (under the order's
 * spin lock) and in the unit tests.
 *
 * The principle (MLTCP's, at the end host): a broadcast that has started is
 * not preempted by one that started later. A job's packet while it is not in
 * the order starts its burst: it joins at the end. The leader's burst ends
 * once it has sent nothing for gap_ns: only the leader's, since a job behind
 * it may be silent because the leader starves it, not because it is done;
 * the next job leads from then on and has gap_ns from that moment. A job
 * that has led for longer than limit_ns (one that never goes idle) yields:
 * it goes to the end as if its burst had just started. Order position i is
 * band i; positions past the last band share it, and a job that finds the
 * order full takes the last band too.
 */
#ifndef TLS_BURST_H
#define TLS_BURST_H

#ifndef TLS_INLINE
#define TLS_INLINE static inline __attribute__((always_inline))
#endif

/* Drop the order's first entry. The new leader's idle time and its limit
 * count from now: until now it may have been starved. */
TLS_INLINE void tls_burst_pop(struct tls_burst *o, __u32 n, __u64 now)
{
	__u32 i;

	for (i = 0; i + 1 < TLS_BURST_SLOTS; i++) {
		if (i + 1 >= n)
			break;
		o->job[i] = o->job[i + 1];
		o->start_ns[i] = o->start_ns[i + 1];
		o->last_ns[i] = o->last_ns[i + 1];
	}
	if (n > 1) {
		o->start_ns[0] = now;
		o->last_ns[0] = now;
	}
}

/* The band of `job` for its packet at `now`; updates the order. Only a
 * packet with payload (`data`) starts or continues a burst: a pure ACK (the
 * PS acknowledging its workers' gradients) is no broadcast. */
TLS_INLINE __u32 tls_burst_step(struct tls_burst *o, __u32 job, __u64 now, int data)
{
	__u32 n = o->n, i, idx = TLS_BURST_SLOTS, last_band;

	if (n > TLS_BURST_SLOTS)
		n = TLS_BURST_SLOTS;
	last_band = o->nbands ? o->nbands - 1 : 0;
	if (last_band >= TLS_MAX_BANDS)
		last_band = TLS_MAX_BANDS - 1;
	/* The leader: done (idle gap_ns), or over its limit (yields). The
	 * clock may run behind an entry another CPU stamped: not idle. */
	if (n > 0 && now > o->last_ns[0] && now - o->last_ns[0] > o->gap_ns) {
		tls_burst_pop(o, n, now);
		n--;
	} else if (n > 1 && o->limit_ns && now > o->start_ns[0] &&
		   now - o->start_ns[0] > o->limit_ns) {
		__u32 j = o->job[0];

		tls_burst_pop(o, n, now);
		if (n - 1 < TLS_BURST_SLOTS) {
			o->job[n - 1] = j;
			o->start_ns[n - 1] = now;
			o->last_ns[n - 1] = now;
		}
	}
	for (i = 0; i < TLS_BURST_SLOTS; i++) {
		if (i >= n)
			break;
		if (o->job[i] == job) {
			idx = i;
			break;
		}
	}
	if (idx == TLS_BURST_SLOTS) {
		if (!data || n >= TLS_BURST_SLOTS) {
			o->n = n;
			return last_band;
		}
		idx = n++;
		o->job[idx] = job;
		o->start_ns[idx] = now;
	}
	if (data)
		o->last_ns[idx] = now;
	o->n = n;
	return idx < last_band ? idx : last_band;
}

#endif /* TLS_BURST_H */

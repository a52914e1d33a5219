/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Policy `bursts`: the one decision the classifier makes per packet of a job
 * under it. Pure, so the same code runs in the BPF program (under the order's
 * spin lock) and in the unit tests.
 *
 * The principle: the broadcast that would finish first if the link were
 * shared fairly among the bursts goes first (the Fair Sojourn Protocol of
 * Friedman and Henderson: no burst finishes later than under the fair
 * share, and the mean is near shortest-remaining-first's). A virtual clock
 * counts the bytes per unit of weight each burst in the order would have
 * had by now at a weighted share of the link (vtime: it runs at rate / W
 * for the bursts' weights summing to W); a burst's virtual finish is the
 * clock when it started plus its size over its weight. A job's weight is
 * the square root of its flows to workers (tlsd writes it in tls_weight;
 * tls_policy_burst_weight): FIFO shares the link by flow, an equal share
 * by job. By job, the job with the most workers of a mix ended as late as
 * under FIFO with no margin; by flow, the other jobs paid on the means of
 * all three benchmark mixes; the square root keeps the first under FIFO
 * for little of the mean (tests/bench/RESULTS.md). Its
 * size is estimated from the job's own history: a deep-learning job
 * broadcasts the same model every iteration, so its last bursts' size.
 * Bursts that start together go shortest first, each size over its weight
 * (a small job's broadcast ahead of a big one's); a big burst that has
 * waited goes ahead of a small one that starts once the clock has passed
 * the big one's start by the difference in their sizes over their
 * weights, so it is not starved by a stream of small
 * ones (shortest-first alone made the biggest job of a mix 6% slower than
 * under FIFO). For jobs of one size, the earlier start goes first and a
 * started broadcast is never preempted by a later one (MLTCP's rule). A
 * job's first burst (no history) is taken as large as the largest that
 * ended lately (tls_burst_guess). Without the link's rate the order is by
 * bytes left (the last bursts' size less what this one has sent).
 *
 * Ends: a burst ends when its job has sent no payload for gap_ns while it
 * leads (a job behind the leader may be silent because it is starved); for
 * a full queue's drain if it is short of its estimate (held up behind a
 * passed job's queue, not done: tls_burst_held_ns), fresh or not; else for
 * grace_ns if it has sent nothing since it took the lead and had not sent
 * its estimate before (its flows may be recovering from a long wait; the
 * link is work-conserving, so the bands behind use the time). A job behind
 * the leader whose burst reached its estimate and went idle for gap_ns ends
 * it too, at its next packet. A leader ended after its gap within the last
 * eighth of its estimate whose packets come back within a queue's drain
 * resumes that burst, with its key (tls_burst_resume: the last worker's
 * share of a broadcast may come tens of ms after the rest). A job that has
 * led for limit_ns while others wait (one that never goes idle) yields
 * at its next packet: it goes to the end, behind everyone there,
 * whatever its weight (tls_burst_set_behind), and takes its weight as
 * it is then. Bands follow the order but are kept where they can be
 * (tls_burst_place): a job keeps its band while its burst lasts unless a
 * burst passes it with no free band above its own (then it moves down
 * one) or the bands run out (then all are renumbered by place). Entries
 * past the last band share it, and a job that finds the order full takes
 * the last band too.
 */
#ifndef TLS_BURST_H
#define TLS_BURST_H

#ifndef TLS_INLINE
#define TLS_INLINE static inline __attribute__((always_inline))
#endif

#define TLS_BURST_BEHIND	 (1ULL << 40) /* bytes: a terabyte, far past any turn */
#define TLS_BURST_BEHIND_MAX (1ULL << 62)

/*
 * An index into the order's arrays, masked: every caller has checked it
 * against TLS_BURST_SLOTS already, but the compiler may test one copy of
 * it and index with another (n - 1 against n - 2), which older verifiers
 * (6.1) cannot follow ("unbounded memory access"). The empty asm keeps the
 * compiler from dropping the mask as redundant.
 */
#if TLS_BURST_SLOTS & (TLS_BURST_SLOTS - 1)
#error "TLS_BURST_SLOTS must be a power of 2"
#endif
TLS_INLINE __u32 tls_burst_slot(__u32 i)
{
	asm volatile("" : "+r"(i));
	return i & (TLS_BURST_SLOTS - 1);
}

/*
 * v, passed through memory: the same value, but one the verifier no longer
 * knows. Where a loop's outcome is a constant per path (the position a job
 * was found at, the order's length after an expiry, the band), older
 * verifiers (6.1) carried each constant through the rest of the program
 * as a state of its own and gave up at a million instructions; unknown,
 * the paths merge.
 */
TLS_INLINE __u32 tls_burst_opaque(struct tls_burst *o, __u32 v)
{
	*(volatile __u32 *)&o->scratch = v;
	return *(volatile __u32 *)&o->scratch;
}

/* What entry i has left to send: the key of the order. */
TLS_INLINE __u64 tls_burst_left(const struct tls_burst *o, __u32 i)
{
	if (i >= TLS_BURST_SLOTS)
		return 0;
	return o->est[tls_burst_slot(i)] > o->sent[tls_burst_slot(i)] ? o->est[tls_burst_slot(i)] - o->sent[tls_burst_slot(i)] : 0;
}

/* A weight as the share takes it: 0 (unset: a seeded order's entries) as
 * TLS_BURST_W1. Arithmetic, not a branch (branches on loaded values
 * multiply the verifier's paths); every writer keeps weights within
 * TLS_BURST_W1..TLS_BURST_W_MAX or 0. */
TLS_INLINE __u64 tls_burst_w(__u64 w)
{
	return w + ((w - 1) >> 63) * TLS_BURST_W1;
}

/* Entry i's weight. */
TLS_INLINE __u64 tls_burst_weight(const struct tls_burst *o, __u32 i)
{
	return tls_burst_w(o->w[tls_burst_slot(i)]);
}

/* A burst's size is capped for its virtual finish: a yielded job's
 * (TLS_BURST_BEHIND more) then stays far from overflow. */
#define TLS_BURST_KEY_LEFT_MAX (1ULL << 41)

TLS_INLINE __u64 tls_burst_key_size(__u64 size)
{
	return size < TLS_BURST_KEY_LEFT_MAX ? size : TLS_BURST_KEY_LEFT_MAX;
}

/* Entry i's place in the order, smallest first: its virtual finish, or
 * without the link's rate, what it has left. */
TLS_INLINE __u64 tls_burst_key(const struct tls_burst *o, __u32 i)
{
	if (!o->ns_per_kib || i >= TLS_BURST_SLOTS)
		return tls_burst_left(o, i);
	return o->vfinish[tls_burst_slot(i)];
}

/* The virtual clock until now, with the bursts in the order sharing the
 * link by their weights: the bytes the link sent since, per unit of the
 * weights' sum (wsum; with equal weights, over n). The sum is kept as
 * entries come and go, not summed here: a loop over the slots in every
 * packet's path cost the verifier 326,783 instructions against 199,811
 * before the weights (a branch on n in it, 504,098); kept, 246,783. */
TLS_INLINE void tls_burst_tick(struct tls_burst *o, __u64 now)
{
	if (now <= o->vtime_ns)
		return; /* another CPU's later stamp */
	if (o->ns_per_kib && o->wsum)
		o->vtime += (now - o->vtime_ns) * 1024 / o->ns_per_kib * TLS_BURST_W1 / o->wsum;
	o->vtime_ns = now;
}

/* Entry i starts a burst of `size` bytes now: it ends when the clock has
 * run its size over its weight. */
TLS_INLINE void tls_burst_set_finish(struct tls_burst *o, __u32 i, __u64 size)
{
	if (i >= TLS_BURST_SLOTS)
		return;
	o->vfinish[tls_burst_slot(i)] =
		o->vtime + tls_burst_key_size(size) * TLS_BURST_W1 / tls_burst_weight(o, i);
}

/* Entry i yielded: its key is past any burst's, whatever its weight (over
 * a weight, a heavy job's would come back ahead of a light one that had
 * yielded before it, at every packet: the two would not take turns). */
TLS_INLINE void tls_burst_set_behind(struct tls_burst *o, __u32 i, __u64 size)
{
	if (i >= TLS_BURST_SLOTS)
		return;
	o->vfinish[tls_burst_slot(i)] = o->vtime + tls_burst_key_size(size);
}

/* The estimate kept for `job` while it is out of the order; 0: none. */
TLS_INLINE __u64 tls_burst_recall(const struct tls_burst *o, __u32 job)
{
	__u32 m = job & (TLS_BURST_MEMORY - 1);

	return o->mem_job[m] == job ? o->mem_est[m] : 0;
}

/*
 * The expected size of `job`'s burst that starts now: its own history, or
 * without one (its first burst) the largest burst any job has had lately:
 * taken as large, a job of unknown size does not pass the known small
 * ones (a first burst taken as 0 went ahead of everyone: a 24 MB one held
 * the link for a second while 2 MB bursts waited). Until any burst has
 * ended, 0: first bursts go in the order they started.
 */
TLS_INLINE __u64 tls_burst_guess(const struct tls_burst *o, __u32 job)
{
	__u64 est = tls_burst_recall(o, job);

	return est ? est : o->mem_most;
}

/* The largest of the recent bursts: `old` less 1/8, or `bytes` if more. */
TLS_INLINE __u64 tls_burst_decayed_max(__u64 old, __u64 bytes)
{
	old -= old / 8;
	return bytes > old ? bytes : old;
}

/* A burst of `bytes` ended: the estimate follows the largest of the recent
 * ones, decaying by 1/8 per burst. A burst cut short (split by a pause,
 * or ended while its job was starved) then does not shrink it at once.
 * The largest of any job's (mem_most) decays the same way. */
TLS_INLINE void tls_burst_remember(struct tls_burst *o, __u32 job, __u64 bytes)
{
	__u32 m = job & (TLS_BURST_MEMORY - 1);

	o->mem_est[m] = tls_burst_decayed_max(o->mem_job[m] == job ? o->mem_est[m] : 0, bytes);
	o->mem_job[m] = job;
	o->mem_most = tls_burst_decayed_max(o->mem_most, bytes);
}

TLS_INLINE void tls_burst_copy(struct tls_burst *o, __u32 to, __u32 from)
{
	if (to >= TLS_BURST_SLOTS || from >= TLS_BURST_SLOTS)
		return;
	o->job[tls_burst_slot(to)] = o->job[tls_burst_slot(from)];
	o->vfinish[tls_burst_slot(to)] = o->vfinish[tls_burst_slot(from)];
	o->last_ns[tls_burst_slot(to)] = o->last_ns[tls_burst_slot(from)];
	o->sent[tls_burst_slot(to)] = o->sent[tls_burst_slot(from)];
	o->est[tls_burst_slot(to)] = o->est[tls_burst_slot(from)];
	o->band[tls_burst_slot(to)] = o->band[tls_burst_slot(from)];
	o->w[tls_burst_slot(to)] = o->w[tls_burst_slot(from)];
}

/* The last band there is: bands past it are shared. */
TLS_INLINE __u32 tls_burst_last_band(const struct tls_burst *o)
{
	__u32 last = o->nbands ? o->nbands - 1 : 0;

	return last < TLS_MAX_BANDS ? last : TLS_MAX_BANDS - 1;
}

/*
 * Entry i, the last of the order (new, or a leader that yielded), takes
 * the band after the one ahead of it. Bands are kept, not recomputed from
 * the places: a flow whose band rises while its packets wait in the old
 * one sends its new packets past them, and TCP takes the reordering for
 * loss (tests/bench/RESULTS.md). Strict priority needs only the bands'
 * order: when the leader ends, the next one is served in the band it has.
 * Only when the last band is taken are the bands renumbered by place (a
 * compaction: every entry moves up as far as it can, which makes the most
 * room for the next ones); entries past the last band share it.
 *
 * The renumbering compares the loop's own index, a constant to the
 * verifier, not the bands: branches on the bands in this loop took the
 * classifier past the verifier's limit on kernels without sk_iter.
 */
TLS_INLINE void tls_burst_place(struct tls_burst *o, __u32 i)
{
	__u32 last = tls_burst_last_band(o), k, b;

	if (i >= TLS_BURST_SLOTS)
		return;
	b = i ? o->band[tls_burst_slot(i - 1)] + 1 : 0;
	if (b > last) {
		/* The leader's packets queued so far stay in the band it had
		 * (no qdisc moves a queued packet), and its flows send nothing
		 * new until those leave; renumbered to band 0 with the others
		 * above its old band, it would wait behind every job after it
		 * (measured on the mix: a 25 MB leader silent 0.4 s with 11 MB
		 * to send). The others are kept at or below that band for the
		 * rest of its burst (priority inheritance, tls_burst_step). */
		o->lead_floor = o->band[0];
		o->lead_floor_job = o->job[0];
		for (k = 0; k < TLS_BURST_SLOTS; k++) {
			if (k >= i)
				break;
			o->band[tls_burst_slot(k)] = k < last ? k : last;
		}
		o->compactions++;
		b = i;
	}
	o->band[tls_burst_slot(i)] = b < last ? b : last;
}

/* Take entry `at` out of an order of n; a new leader starts fresh. */
TLS_INLINE void tls_burst_remove(struct tls_burst *o, __u32 at, __u32 n, __u64 now)
{
	__u32 i;

	o->wsum -= tls_burst_weight(o, at);
	for (i = 0; i + 1 < TLS_BURST_SLOTS; i++) {
		if (i + 1 >= n)
			break;
		if (i >= at)
			tls_burst_copy(o, i, i + 1);
	}
	if (at == 0)
		o->lead_floor = 0; /* the leader's burst is over */
	if (at == 0 && n > 1) {
		o->lead_ns = now;
		o->last_ns[0] = now;
		o->fresh = 1;
	}
}

/*
 * 1 if the band just above `band` (place p's) is free: no place ahead of p
 * has it; else 0. Arithmetic, not a branch on the bands: such branches in
 * the rise loop take the classifier past the verifier's limit.
 */
TLS_INLINE __u32 tls_burst_free_above(struct tls_burst *o, __u32 p, __u32 band)
{
	__u64 ahead = ((__u64)0 - (__u64)p) >> 63; /* p >= 1: a place ahead of p */
	__u64 lo = ahead * ((__u64)o->band[tls_burst_slot(p - 1)] + 1);

	return tls_burst_opaque(o, (__u32)((lo - (__u64)band) >> 63));
}

/* Entry `idx` sent: move it ahead of every entry with a larger key (its
 * key only shrinks as it sends; the others' do not change). Ties keep
 * their order (the earlier start first). Returns its new position. */
TLS_INLINE __u32 tls_burst_rise(struct tls_burst *o, __u32 idx, __u64 now)
{
	__u32 i, tj, tw, b_ahead, b_behind, free;
	__u64 tst, tl, ts, te;

	for (i = 0; i < TLS_BURST_SLOTS; i++) {
		if (idx == 0 || idx >= TLS_BURST_SLOTS)
			break;
		if (tls_burst_key(o, idx) >= tls_burst_key(o, idx - 1))
			break;
		b_ahead = o->band[tls_burst_slot(idx - 1)];
		b_behind = o->band[tls_burst_slot(idx)];
		tj = o->job[tls_burst_slot(idx - 1)];
		tst = o->vfinish[tls_burst_slot(idx - 1)];
		tl = o->last_ns[tls_burst_slot(idx - 1)];
		ts = o->sent[tls_burst_slot(idx - 1)];
		te = o->est[tls_burst_slot(idx - 1)];
		tw = o->w[tls_burst_slot(idx - 1)];
		tls_burst_copy(o, idx - 1, idx);
		o->job[tls_burst_slot(idx)] = tj;
		o->vfinish[tls_burst_slot(idx)] = tst;
		o->last_ns[tls_burst_slot(idx)] = tl;
		o->sent[tls_burst_slot(idx)] = ts;
		o->est[tls_burst_slot(idx)] = te;
		o->w[tls_burst_slot(idx)] = tw;
		/* A free band between the passed one's and the band ahead of
		 * it: the riser takes it and the passed one keeps its own.
		 * Otherwise the bands stay with the places: the riser takes
		 * the band of the place it takes, the one it passed moves
		 * down a place (a demotion, which reorders nothing), and the
		 * riser's packets wait behind the passed one's queue there. */
		free = tls_burst_free_above(o, idx - 1, b_ahead);
		o->band[tls_burst_slot(idx - 1)] = b_ahead - free;
		o->band[tls_burst_slot(idx)] = b_behind + free * (b_ahead - b_behind);
		idx--;
		if (idx == 0) {
			o->lead_ns = now;
			o->fresh = 0;
		}
	}
	return idx;
}

/* A queue's worth of packets (1000 full frames, the interface's usual
 * txqueuelen) in KiB, and the time it takes to drain at the link's rate:
 * how long a held-up leader may be silent (tls_burst_expire). */
#define TLS_BURST_QUEUE_KIB 1480

TLS_INLINE __u64 tls_burst_held_ns(const struct tls_burst *o)
{
	__u64 t = o->ns_per_kib ? TLS_BURST_QUEUE_KIB * o->ns_per_kib : o->grace_ns;

	if (t > o->grace_ns)
		t = o->grace_ns;
	return t > o->gap_ns ? t : o->gap_ns;
}

/*
 * The leader's burst ends, silent. Within the last eighth of its estimate,
 * not fresh, it was ended after its gap (tls_burst_expire): a cut, kept
 * for tls_burst_resume (the last one only), as of when its gap ran out
 * (the end is noticed at the next packet of any job, maybe its own after
 * a compute gap). Further short, it had a queue's drain of silence
 * already, and a fresh one its grace: their next packets are a new burst.
 * Were they resumed, a job whose estimate two joined bursts had doubled
 * would join every next pair (each short by half) and never shrink it
 * back. A burst of the job kept that ends otherwise leaves nothing to
 * resume.
 */
TLS_INLINE void tls_burst_cut(struct tls_burst *o)
{
	if (!o->fresh && o->est[0] && o->sent[0] < o->est[0] &&
	    o->sent[0] >= o->est[0] - o->est[0] / 8) {
		o->cut_job = o->job[0];
		o->cut_ns = o->last_ns[0] + o->gap_ns;
		o->cut_sent = o->sent[0];
		o->cut_est = o->est[0];
		o->cut_vfinish = o->vfinish[0];
		o->cut_w = o->w[0];
	} else if (o->cut_job == o->job[0]) {
		o->cut_job = TLS_JOB_NONE;
	}
}

/*
 * Does `job`'s new burst continue the one cut short at cut_ns? A leader
 * silent for its gap with most of its estimate sent has ended (tls_burst_
 * expire), but in a broadcast to several workers the last one's request
 * may come tens of ms after the rest are served: in a traced run of the
 * mix the 25 MB job's last 3 MB came 55 ms after a cut at 22.2 MB, and
 * went to the back of the order as a new burst (its iteration 4.4 s
 * against 3.2 s under FIFO). Its packets within a queue's drain of the
 * cut (tls_burst_held_ns: how long a short leader may be held up) resume
 * it: what it had sent, its estimate and its key (it comes in at the back
 * and rises to where that key places it). A new burst comes after
 * a compute gap, and a whole burst (sent its estimate) is never resumed:
 * that joined two iterations and doubled an estimate (6.3 to 12.5 MB).
 */
TLS_INLINE bool tls_burst_resume(struct tls_burst *o, __u32 i, __u32 job, __u64 now)
{
	if (i >= TLS_BURST_SLOTS || job == TLS_JOB_NONE || o->cut_job != job)
		return false;
	o->cut_job = TLS_JOB_NONE;
	if (now > o->cut_ns && now - o->cut_ns > tls_burst_held_ns(o))
		return false;
	o->sent[tls_burst_slot(i)] = o->cut_sent;
	o->est[tls_burst_slot(i)] = o->cut_est;
	o->vfinish[tls_burst_slot(i)] = o->cut_vfinish;
	/* the key's weight, as its burst's (u64: the difference wraps back) */
	o->wsum += tls_burst_w(o->cut_w) - tls_burst_weight(o, i);
	o->w[tls_burst_slot(i)] = o->cut_w;
	o->resumes++;
	return true;
}

/* The leader's end (idle) or yield (over its limit, at a packet of its own:
 * `job` of weight w is the packet's); n after it. */
TLS_INLINE __u32 tls_burst_expire(struct tls_burst *o, __u32 n, __u64 now, __u32 job, __u32 w)
{
	__u64 idle = o->fresh ? o->grace_ns : o->gap_ns, most = 0, left;
	__u32 i, j;

	if (n == 0)
		return 0;
	/* A leader silent short of its expected burst (less 1/8, the
	 * estimate's decay per burst) is more likely held up than done: its
	 * packets may wait behind the queue of the job it passed, which
	 * stays in the band it took (tls_burst_rise). Ending it there splits
	 * the burst and shrinks the estimate by an eighth each time
	 * (measured: 2.1 MB to 0.9 MB in 0.3 s), and the job loses its place.
	 * It waits as long as a full queue takes to drain, within the gap
	 * and the grace: longer would join a short compute gap's next burst
	 * to this one. */
	if (o->est[0] && o->sent[0] < o->est[0] - o->est[0] / 8)
		idle = tls_burst_held_ns(o);
	/* A new leader that had sent its whole expected burst while behind
	 * (its packets queued below) is done, not recovering: no grace, or
	 * its next iteration's broadcast joins this burst and doubles the
	 * estimate (measured: 6.3 MB to 12.5 MB). */
	if (o->est[0] && o->sent[0] >= o->est[0])
		idle = o->gap_ns;
	/* The clock may run behind an entry another CPU stamped: not idle. */
	if (now > o->last_ns[0] && now - o->last_ns[0] > idle) {
		tls_burst_cut(o);
		tls_burst_remember(o, o->job[0], o->sent[0]);
		tls_burst_remove(o, 0, n, now);
		return n - 1;
	}
	/* A yield waits for the leader's own packet (its idle limit above
	 * ends it if none comes), so that it takes the job's weight as it is
	 * now: a job that never goes idle has no burst start to take it at,
	 * and the weight of its first burst would otherwise stay with it
	 * across every yield while its flows came and went. */
	if (n < 2 || !o->limit_ns || job != o->job[0] || now <= o->lead_ns ||
	    now - o->lead_ns <= o->limit_ns)
		return n;
	/* Yield: to the end, with more left than anyone there by far more
	 * than it can send in a turn (TLS_BURST_BEHIND), so that it does not
	 * climb back over the next leader before that one's turn is over
	 * (everyone else's remainder only shrinks). Saturates at 2^62: after
	 * 2^22 yields with no burst ending (months), ties are broken by what
	 * was sent. */
	j = o->job[0];
	tls_burst_remember(o, j, o->sent[0]);
	for (i = 1; i < TLS_BURST_SLOTS; i++) {
		if (i >= n)
			break;
		left = tls_burst_left(o, i);
		if (left > most)
			most = left;
	}
	tls_burst_remove(o, 0, n, now);
	if (n - 1 < TLS_BURST_SLOTS) {
		o->job[tls_burst_slot(n - 1)] = j;
		o->w[tls_burst_slot(n - 1)] = w;
		o->wsum += tls_burst_w(w);
		o->last_ns[tls_burst_slot(n - 1)] = now;
		o->sent[tls_burst_slot(n - 1)] = 0;
		left = tls_burst_recall(o, j);
		if (left < most)
			left = most;
		o->est[tls_burst_slot(n - 1)] = left < TLS_BURST_BEHIND_MAX - TLS_BURST_BEHIND ?
					left + TLS_BURST_BEHIND :
					TLS_BURST_BEHIND_MAX;
		tls_burst_set_behind(o, n - 1, o->est[tls_burst_slot(n - 1)]);
		tls_burst_place(o, n - 1);
	}
	return n;
}

/* A band behind the leader, no higher than the band the leader's queued
 * packets were left in by a compaction (lead_floor), while that leader
 * leads. */
TLS_INLINE __u32 tls_burst_floored(const struct tls_burst *o, __u32 band)
{
	__u32 floor = o->lead_floor_job == o->job[0] ? o->lead_floor : 0;

	return band > floor ? band : floor;
}

/* The band of `job` (of weight w, TLS_BURST_W1 units; 0 for 1) for its
 * packet of `bytes` payload-carrying bytes (0: a pure ACK, which neither
 * starts nor continues a burst: the PS acknowledging its workers'
 * gradients is no broadcast) at `now`; updates the order. The weight is
 * taken when the job's burst starts, or its leader yields, and kept with
 * it in between. */
TLS_INLINE __u32 tls_burst_step_w(struct tls_burst *o, __u32 job, __u64 now, __u64 bytes, __u32 w)
{
	__u32 n = o->n, i, idx = TLS_BURST_SLOTS, last_band, band;

	if (n > TLS_BURST_SLOTS)
		n = TLS_BURST_SLOTS;
	last_band = tls_burst_last_band(o);
	tls_burst_tick(o, now);
	n = tls_burst_opaque(o, tls_burst_expire(o, n, now, job, w));
	for (i = 0; i < TLS_BURST_SLOTS; i++) {
		if (i >= n)
			break;
		if (o->job[tls_burst_slot(i)] == job) {
			idx = i;
			break;
		}
	}
	idx = tls_burst_opaque(o, idx);
	/* Behind the leader, done with the burst it was expected to send and
	 * idle since: this packet starts its next burst. */
	if (bytes && idx > 0 && idx < TLS_BURST_SLOTS && o->est[tls_burst_slot(idx)] &&
	    o->sent[tls_burst_slot(idx)] >= o->est[tls_burst_slot(idx)] && now > o->last_ns[tls_burst_slot(idx)] &&
	    now - o->last_ns[tls_burst_slot(idx)] > o->gap_ns) {
		tls_burst_remember(o, job, o->sent[tls_burst_slot(idx)]);
		tls_burst_remove(o, idx, n, now);
		n--;
		idx = TLS_BURST_SLOTS;
	}
	if (idx >= TLS_BURST_SLOTS) {
		if (!bytes || n >= TLS_BURST_SLOTS) {
			o->n = n;
			return tls_burst_opaque(o, last_band);
		}
		idx = n++;
		o->job[tls_burst_slot(idx)] = job;
		o->w[tls_burst_slot(idx)] = w;
		o->wsum += tls_burst_w(w);
		if (!tls_burst_resume(o, idx, job, now)) {
			o->sent[tls_burst_slot(idx)] = 0;
			o->est[tls_burst_slot(idx)] = tls_burst_guess(o, job);
			tls_burst_set_finish(o, idx, o->est[tls_burst_slot(idx)]);
		}
		tls_burst_place(o, idx);
		if (idx == 0) {
			o->lead_ns = now;
			o->fresh = 0;
		}
	}
	if (bytes) {
		o->last_ns[tls_burst_slot(idx)] = now;
		o->sent[tls_burst_slot(idx)] += bytes;
		if (idx == 0)
			o->fresh = 0;
		idx = tls_burst_rise(o, idx, now);
	}
	o->n = n;
	band = idx < TLS_BURST_SLOTS ? o->band[tls_burst_slot(idx)] : last_band;
	band = band < last_band ? band : last_band;
	return tls_burst_opaque(o, idx ? tls_burst_floored(o, band) : band);
}

/* The same for a job of weight 1 (an equal share). */
TLS_INLINE __u32 tls_burst_step(struct tls_burst *o, __u32 job, __u64 now, __u64 bytes)
{
	return tls_burst_step_w(o, job, now, bytes, TLS_BURST_W1);
}

#endif /* TLS_BURST_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Policy bursts's order when it is set up: carried over whole from the
 * program replaced (a takeover, or a reload that swapped the classifier),
 * or seeded with the jobs sending now (the policy set, the bands or the
 * rate changed). Started empty, the order sees a job only at its next
 * packet, and a job whose packets wait below a leader that never pauses
 * sends nothing new until they leave at its band's floor: it entered the
 * order 0.1-3.3 s late (tests/bench/RESULTS.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"

#include "tlsd.h"

/* Some job of the order is flagged for it in the job map: the previous
 * instance ran policy bursts (its order under another policy is stale). */
static bool order_in_use(const struct tls_maps *m, const struct tls_burst *o)
{
	__u32 flags;

	for (unsigned int k = 0; k < o->n && k < TLS_BURST_SLOTS; k++)
		if (!tls_get_job_flags(m, o->job[k], &flags) && (flags & TLS_JOB_F_BURST))
			return true;
	return false;
}

void tlsd_keep_burst_prev(struct tlsd *d)
{
	struct tls_burst o;

	free(d->burst_prev);
	d->burst_prev = NULL;
	if (tls_cls_prev_burst(d->cls, &o) || !order_in_use(d->m, &o))
		return;
	d->burst_prev = malloc(sizeof(o));
	if (d->burst_prev)
		*d->burst_prev = o;
}

/* The order replaced fits the one to set up as it is: the same bands,
 * rate and times, and only jobs tlsd has now (one that left would lead,
 * idle, for its grace). */
static bool carry_fits(const struct tlsd *d, const struct tls_burst *o)
{
	if (o->nbands != d->cfg.bands || o->ns_per_kib != tls_burst_ns_per_kib(d->rate_bps) ||
	    o->gap_ns != TLS_BURST_GAP_NS || o->grace_ns != TLS_BURST_GRACE_NS ||
	    o->limit_ns != TLS_BURST_LIMIT_NS || o->n > TLS_BURST_SLOTS)
		return false;
	for (unsigned int k = 0; k < o->n; k++)
		if (tls_jobs_find_id(&d->jobs, o->job[k]) < 0)
			return false;
	return true;
}

/*
 * The jobs sending now, in s (tls_policy_burst_seed() says why), ranked
 * by their place in the order being replaced (old, if any), then by the
 * band they have; their bands kept where the order allows
 * (tls_policy_burst_seed_bands). Who sends: a job whose counter grew in a
 * statistics period within the last burst limit (2 s). Not only the last
 * period: a job starved at its band's floor sends a packet every 60-120 ms
 * at 100-200 Mbit/s, so some periods miss it, and it is the job the seed
 * is for. A job that went idle within the window is seeded too; at the
 * front it leads for its grace (250 ms) and ends. With statistics off
 * nobody is known to send: the order starts empty.
 */
static void burst_seed(struct tlsd *d, const struct tls_burst *old, __u32 *ids, __u32 *bands,
		       struct tls_burst_seed *s)
{
	unsigned int rank[TLS_MAX_JOBS], cur[TLS_MAX_JOBS], idx[TLS_BURST_SLOTS];
	unsigned int i, k, n, b[TLS_BURST_SLOTS], floor;
	bool active[TLS_MAX_JOBS];
	uint64_t now = tls_now_ns();

	s->n = 0;
	if (!d->stats || !d->jobs.n)
		return;
	for (i = 0; i < d->jobs.n; i++) {
		const struct tls_job_entry *j = &d->jobs.job[i];
		struct tls_stats_job_info ji;

		active[i] = !tls_stats_job(d->stats, j->id, &ji) && ji.grew_ns &&
			    now - ji.grew_ns <= TLS_BURST_LIMIT_NS;
		cur[i] = j->band < TLS_MAX_BANDS ? j->band : TLS_MAX_BANDS;
		rank[i] = TLS_BURST_SLOTS + cur[i];
		for (k = 0; old && k < old->n && k < TLS_BURST_SLOTS; k++)
			if (old->job[k] == j->id) {
				rank[i] = k;
				cur[i] = old->band[k];
				break;
			}
	}
	/* Without an order read and with every sending job in one band (a
	 * classifier reloaded under bursts, whose order could not be read;
	 * or fifo), there is no order to keep: seeded by arrival, the first
	 * job would pass a leader that never pauses and reorder its flows.
	 * Empty, the first job to send leads, as before. */
	if (!old) {
		unsigned int band = TLS_BAND_NONE;
		bool differ = false;

		for (i = 0; i < d->jobs.n; i++)
			if (active[i]) {
				if (band != TLS_BAND_NONE && band != d->jobs.job[i].band)
					differ = true;
				band = d->jobs.job[i].band;
			}
		if (!differ)
			return;
	}
	n = tls_policy_burst_seed(d->jobs.n, rank, active, TLS_BURST_SLOTS, idx);
	for (i = 0; i < n; i++) {
		ids[i] = d->jobs.job[idx[i]].id;
		b[i] = cur[idx[i]];
	}
	tls_policy_burst_seed_bands(n, b, d->cfg.bands, b, &floor);
	for (i = 0; i < n; i++)
		bands[i] = b[i];
	s->job = ids;
	s->band = bands;
	s->n = n;
	s->lead_floor = floor;
}

int tlsd_burst_setup(struct tlsd *d)
{
	__u32 ids[TLS_BURST_SLOTS], bands[TLS_BURST_SLOTS];
	struct tls_burst_seed s = { 0 };
	const struct tls_burst *old = d->burst_prev;
	struct tls_burst cur;
	uint64_t now = tls_now_ns();
	int err;

	if (now < d->burst_retry_ns)
		return -EAGAIN;
	if (old && carry_fits(d, old)) {
		err = tls_write_burst_order(d->m, old);
		if (!err)
			pr_info("policy bursts: the order carried over from the program replaced "
				"(%u job%s)\n",
				old->n, old->n == 1 ? "" : "s");
	} else {
		/* the order this program has, if it is set up (the bands or
		 * the rate changed) */
		if (!old && d->burst_bands && !tls_read_burst_order(d->m, &cur))
			old = &cur;
		burst_seed(d, old, ids, bands, &s);
		s.memory = old;
		err = tls_set_burst_order(d->m, d->cfg.bands, TLS_BURST_GAP_NS, TLS_BURST_GRACE_NS,
					  TLS_BURST_LIMIT_NS, d->rate_bps, &s);
		if (!err && s.n)
			pr_info("policy bursts: the order starts with the %u job%s sending now\n",
				s.n, s.n == 1 ? "" : "s");
	}
	if (err) {
		/* tried again in a second, not at every step */
		d->burst_retry_ns = now + 1000000000ULL;
		pr_warn("policy bursts: cannot set up the burst order (%s): the jobs share the "
			"last band\n",
			strerror(-err));
		return err;
	}
	d->burst_retry_ns = 0;
	free(d->burst_prev);
	d->burst_prev = NULL;
	d->burst_bands = d->cfg.bands;
	d->burst_rate = d->rate_bps;
	return 0;
}

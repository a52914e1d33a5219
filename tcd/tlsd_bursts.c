// SPDX-License-Identifier: GPL-2.0-only
/*
 * Policy bursts's order when it is set up: carried over from the program
 * replaced (a takeover, or a reload that swapped the classifier: the load
 * copied it, tls_cls_burst_carried()), or seeded with the jobs sending now
 * (the policy set, the bands or the rate changed). Started empty, the
 * order sees a job only at its next packet, and a job whose packets wait
 * below a leader that never pauses sends nothing new until they leave at
 * its band's floor: it entered the order 0.1-3.3 s late
 * (tests/bench/RESULTS.md).
 */
#include <errno.h>
#include <string.h>

#include "clock.h"
#include "kernel_features.h"
#include "log.h"

#include "tlsd.h"

#include "tls_burst.h"

/* A failed set-up is tried again at the first rotation tick this long after. */
#define RETRY_NS 1000000000ULL

/* The carried order o is this set-up's: the same bands, rate and times. */
static bool carry_fits(const struct tlsd *d, const struct tls_burst *o)
{
	return o->nbands == d->cfg.bands && o->ns_per_kib == tls_burst_ns_per_kib(d->rate_bps) &&
	       o->gap_ns == TLS_BURST_GAP_NS && o->grace_ns == TLS_BURST_GRACE_NS &&
	       o->limit_ns == TLS_BURST_LIMIT_NS && o->n <= TLS_BURST_SLOTS;
}

/* Entries of jobs tlsd no longer has taken out of o (one that left would
 * lead, idle, for its grace); how many. */
static unsigned int drop_gone(const struct tlsd *d, struct tls_burst *o)
{
	unsigned int k = 0, gone = 0;
	uint64_t now = tls_now_ns();

	while (k < o->n && k < TLS_BURST_SLOTS) {
		if (tls_jobs_find_id(&d->jobs, o->job[k]) >= 0) {
			k++;
			continue;
		}
		tls_burst_remove(o, k, o->n, now);
		o->n--;
		gone++;
	}
	return gone;
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
	unsigned int i, k, n, b[TLS_BURST_SLOTS], out[TLS_BURST_SLOTS], floor;
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
	/* Without an order read and with every sending job in one band (as
	 * under fifo), there is no order to keep: seeded by arrival, the
	 * first job would pass a leader that never pauses and reorder its
	 * flows. Empty, the first job to send leads, as before. */
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
	tls_policy_burst_seed_bands(n, b, d->cfg.bands, out, &floor);
	for (i = 0; i < n; i++)
		bands[i] = out[i];
	s->job = ids;
	s->band = bands;
	s->n = n;
	s->lead_floor = floor;
}

/* The carried order kept (said), less the jobs that left: 0; else -errno,
 * and the order is seeded from it. */
static int keep_carried(struct tlsd *d, struct tls_burst *o)
{
	unsigned int gone;
	int err = tls_read_burst_order(d->m, o);

	if (err)
		return err;
	if (!carry_fits(d, o))
		return -ESTALE;
	gone = drop_gone(d, o);
	/* (the program's steps since the read are lost: a few packets' bytes) */
	if (gone && (err = tls_write_burst_order(d->m, o)))
		return err;
	pr_info("policy bursts: the order carried over from the program replaced (%u job%s%s)\n",
		o->n, o->n == 1 ? "" : "s", gone ? ", less those that left" : "");
	return 0;
}

void tlsd_burst_note_carried(struct tlsd *d)
{
	struct tls_burst o;

	/* a new program's weights start equal: written again at the next
	 * sample */
	for (unsigned int i = 0; i < d->jobs.n; i++)
		d->jobs.job[i].weight = 0;

	d->burst_carried = tls_cls_burst_carried(d->cls);
	if (!d->burst_carried || !d->prev_names)
		return;
	/* A takeover: an id the previous run's record does not name may be
	 * handed to another job now (only named ones are kept by name). */
	if (tls_read_burst_order(d->m, &o)) {
		d->burst_carried = false;
		return;
	}
	for (unsigned int k = 0; k < o.n && k < TLS_BURST_SLOTS; k++)
		if (o.job[k] >= TLS_MAX_JOBS || !d->prev_names[o.job[k]][0])
			d->burst_carried = false;
}

/*
 * Written for every job, whatever the policy (a switch to bursts then finds
 * them there), from the flows of its PS the statistics track (until idle
 * for a minute): a flow counts through the job's compute gaps and while it
 * is starved behind other jobs. Not the flows active within the job's
 * window (n by flow): a job starved longer than that lost weight exactly
 * when it was behind (measured: the mix's mean 0.924 of FIFO against
 * 0.903-0.917, tests/bench/RESULTS.md). A job with none (not sampled yet)
 * keeps its weight. A write that fails is tried again at the next sample;
 * without the weights' map there is nothing to write.
 */
void tlsd_burst_weights(struct tlsd *d)
{
	if (!d->stats || !d->m || d->m->weight < 0)
		return;
	for (unsigned int i = 0; i < d->jobs.n; i++) {
		struct tls_job_entry *j = &d->jobs.job[i];
		unsigned int w, n;

		/* n alone: every job's estimates at every sample would cost
		 * what the metrics' cache saves */
		if (tls_stats_job_flows(d->stats, j->id, &n) || !n)
			continue; /* as it was */
		w = tls_policy_burst_weight(n);
		if (w != j->weight && !tls_set_job_weight(d->m, j->id, w))
			j->weight = w;
	}
}

bool tlsd_burst_setup_due(const struct tlsd *d)
{
	return d->cfg.policy == TLS_POLICY_BURSTS && !d->cfg.observe &&
	       tls_features()[TLS_FEAT_BURSTS].state != TLS_FEAT_MISSING &&
	       (d->burst_bands != d->cfg.bands || d->burst_rate != d->rate_bps) &&
	       tls_now_ns() >= d->burst_retry_ns;
}

int tlsd_burst_setup(struct tlsd *d)
{
	__u32 ids[TLS_BURST_SLOTS], bands[TLS_BURST_SLOTS];
	struct tls_burst_seed s = { 0 };
	const struct tls_burst *old = NULL;
	struct tls_burst cur;
	uint64_t now = tls_now_ns();
	bool carried = d->burst_carried;
	int err = -ESTALE;

	if (now < d->burst_retry_ns)
		return -EAGAIN;
	d->burst_carried = false;
	if (carried)
		err = keep_carried(d, &cur);
	if (err) {
		/* the order this program has, if it is set up (the bands or
		 * the rate changed) or carried but not fitting */
		if ((carried || d->burst_bands) && !tls_read_burst_order(d->m, &cur))
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
		d->burst_retry_ns = now + RETRY_NS;
		pr_warn("policy bursts: cannot set up the burst order (%s): the jobs share the "
			"last band; tried again in a second\n",
			strerror(-err));
		return err;
	}
	d->burst_retry_ns = 0;
	d->burst_bands = d->cfg.bands;
	d->burst_rate = d->rate_bps;
	return 0;
}

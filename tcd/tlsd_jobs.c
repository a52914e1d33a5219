// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon's jobs: static jobs from the configuration and discovered ones,
 * their ids (kept across a takeover), endpoints, bands by policy.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "kernel_features.h"
#include "log.h"
#include "units.h"

#include "tlsd.h"

/* A job's port, on any local address of both families, claimed or let go
 * by the configuration (membership.h: a PS of the job that holds the port
 * too keeps it; a port another job took meanwhile stays that job's). */
static int port_endpoints(struct tlsd *d, uint16_t port, uint32_t id, bool add)
{
	struct tls_endpoint_key k = { .proto = IPPROTO_TCP, .port = htons(port) };
	int f, err;

	for (f = 0; f < 2; f++) {
		k.family = f ? AF_INET6 : AF_INET;
		if (!add) {
			tls_members_del_endpoint(d->members, TLS_HOLDER_CONFIG, id, &k);
			continue;
		}
		err = tls_members_add_endpoint(d->members, TLS_HOLDER_CONFIG, id, &k, NULL);
		if (err < 0)
			return err;
	}
	return 0;
}

static int endpoints(struct tlsd *d, const struct tls_job_entry *j, bool add)
{
	unsigned int p;
	int err;

	for (p = 0; p < j->nports; p++) {
		err = port_endpoints(d, j->ports[p], j->id, add);
		if (err)
			return err;
	}
	return 0;
}

static bool has_port(const uint16_t *ports, unsigned int n, uint16_t port)
{
	while (n--)
		if (ports[n] == port)
			return true;
	return false;
}

/* A job whose ports changed keeps its id, its counters and its place in the
 * order: only the endpoints change. */
static int change_ports(struct tlsd *d, struct tls_job_entry *j, const struct tls_job_conf *jc)
{
	unsigned int p;

	for (p = 0; p < j->nports; p++)
		if (!has_port(jc->ports, jc->nports, j->ports[p]))
			port_endpoints(d, j->ports[p], j->id, false);
	memcpy(j->ports, jc->ports, jc->nports * sizeof(j->ports[0]));
	j->nports = jc->nports;
	pr_info("job %s (id %u): ports changed\n", j->name, j->id);
	return endpoints(d, j, true);
}

static uint32_t prev_id(const struct tlsd *d, const char *name)
{
	uint32_t id;

	if (!d->prev_names)
		return 0;
	for (id = 1; id < TLS_MAX_JOBS; id++)
		if (!strcmp(d->prev_names[id], name))
			return id;
	return 0;
}

/* During a takeover: an id neither in use nor held by a previous run's job
 * that may still come back in this sync. */
static uint32_t fresh_id(struct tlsd *d)
{
	uint32_t id, tries;

	for (tries = 0; tries < TLS_MAX_JOBS - 1; tries++) {
		unsigned int i;

		id = d->jobs.next_id;
		d->jobs.next_id = d->jobs.next_id % (TLS_MAX_JOBS - 1) + 1;
		if (d->prev_names[id][0])
			continue;
		for (i = 0; i < d->jobs.n && d->jobs.job[i].id != id; i++)
			;
		if (i == d->jobs.n)
			return id;
	}
	return 0; /* all taken: tls_jobs_add will say so */
}

/* The job of id, or NULL. */
static const struct tls_job_entry *job_by_id(const struct tlsd *d, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < d->jobs.n; i++)
		if (d->jobs.job[i].id == id)
			return &d->jobs.job[i];
	return NULL;
}

/* After a takeover, once the static jobs and discovery have claimed what
 * they hold now: the ids of the crashed run's jobs that are gone are
 * freed, and the membership it left that no job holds now goes
 * (tls_members_reconcile: each map's keys read once). */
void tlsd_purge_leftovers(struct tlsd *d)
{
	uint32_t id;

	for (id = 1; id < TLS_MAX_JOBS; id++)
		if (d->prev_names[id][0] && !job_by_id(d, id))
			tls_free_job_id(d->m, id);
	tls_members_reconcile(d->members);
}

/* Take a job out of the list; roundrobin's leader stays the same job (or,
 * if it is the one leaving, the next one in the order takes the rest of
 * its turn). */
static void remove_job(struct tlsd *d, const char *name, uint32_t *id)
{
	int i = tls_jobs_find(&d->jobs, name);

	if (i < 0)
		return;
	tlsd_rr_advance(d, tls_now_ns()); /* the leader of now */
	d->lead = tls_policy_lead_after_leave(d->lead, d->jobs.n, (unsigned int)i);
	tls_jobs_remove(&d->jobs, name, id);
}

/* Append a job: a job the crashed run had keeps its id and counts on; any
 * other gets a fresh id whose counters start from zero. */
static int add_job(struct tlsd *d, const char *name, const uint16_t *ports, unsigned int nports,
		   uint32_t *out)
{
	uint32_t id = prev_id(d, name);
	int err;

	/* the leader of now, among the jobs as they were: an arrival keeps
	 * it (counted with one more job, the steps since the last reading
	 * would hand the lead to another) */
	tlsd_rr_advance(d, tls_now_ns());
	if (!id && d->prev_names)
		id = fresh_id(d);
	err = id ? tls_jobs_add_id(&d->jobs, name, ports, nports, id) :
		   tls_jobs_add(&d->jobs, name, ports, nports, &id);
	if (err) {
		pr_warn("cannot add job %s: %s\n", name, strerror(-err));
		return err;
	}
	if (!prev_id(d, name)) {
		tls_reset_job_stats(d->m, id);
		tls_ingress_reset_job(d->m, id);
		/* a new job on a used id: nothing of the old one */
		tlsd_stats_forget_job(d, id);
	}
	*out = id;
	return 0;
}

/* Make the job table match the configuration's static jobs. */
int tlsd_sync_jobs(struct tlsd *d, const struct tls_config *c)
{
	unsigned int i;
	uint32_t id;
	int err;

	for (i = 0; i < d->jobs.n;) {
		struct tls_job_entry *j = &d->jobs.job[i];
		unsigned int k;

		if (j->discovered) {
			i++;
			continue;
		}
		for (k = 0; k < c->njobs && strcmp(c->jobs[k].name, j->name); k++)
			;
		if (k < c->njobs) {
			if (c->jobs[k].nports != j->nports ||
			    memcmp(c->jobs[k].ports, j->ports, j->nports * sizeof(j->ports[0]))) {
				err = change_ports(d, j, &c->jobs[k]);
				if (err)
					return err;
			}
			i++;
			continue;
		}
		/* gone from the configuration: a job discovery follows too
		 * stays, as discovered */
		if (d->disc) {
			struct tls_discover_job info;

			if (!tls_discover_job_info(d->disc, j->name, &info)) {
				endpoints(d, j, false);
				j->nports = 0;
				j->discovered = true;
				pr_info("job %s (id %u): no longer in the file, kept as discovered\n",
					j->name, j->id);
				i++;
				continue;
			}
		}
		endpoints(d, j, false);
		tls_free_job_id(d->m, j->id);
		pr_info("job %s (id %u) removed\n", j->name, j->id);
		remove_job(d, j->name, &id);
		tlsd_stats_forget_job(d, id);
	}
	for (i = 0; i < c->njobs; i++) {
		const struct tls_job_conf *jc = &c->jobs[i];

		int k = tls_jobs_find(&d->jobs, jc->name);

		if (k >= 0) {
			struct tls_job_entry *j = &d->jobs.job[k];

			if (!j->discovered)
				continue;
			/* a discovered job the file now names: the file's, with
			 * the file's ports */
			j->discovered = false;
			memcpy(j->ports, jc->ports, jc->nports * sizeof(j->ports[0]));
			j->nports = jc->nports;
			err = endpoints(d, j, true);
			if (err)
				return err;
			continue;
		}
		err = add_job(d, jc->name, jc->ports, jc->nports, &id);
		if (err)
			return err;
		err = endpoints(d, &d->jobs.job[d->jobs.n - 1], true);
		if (err)
			return err;
		pr_info("job %s (id %u) added\n", jc->name, id);
	}
	return 0;
}

/* The top band's headroom follows the policy and the number of jobs
 * (policy.h: tls_policy_lead_headroom). A failure leaves the old ceiling:
 * the jobs are scheduled all the same, so it is only reported. */
void tlsd_apply_lead_headroom(struct tlsd *d)
{
	uint64_t ppm = tls_policy_lead_headroom(d->cfg.policy, d->jobs.n, d->cfg.bands,
						d->cfg.lead_headroom_ppm);
	char r[32];
	int err;

	if (!d->shaper)
		return;
	err = tls_shaper_set_lead_headroom(d->shaper, ppm);
	if (!err)
		return; /* unchanged: at every rotation, so nothing formatted */
	/* the ceiling asked for (on failure the shaper keeps the old one) */
	tls_format_rate(tls_rate_less_ppm(d->rate_bps, ppm), r, sizeof(r));
	if (err < 0)
		pr_warn("cannot set the top band's ceiling to %s: %s\n", r, strerror(-err));
	else if (err > 0)
		pr_info("top band's ceiling: %s (lead_headroom %g%%, policy %s, %u jobs)\n", r,
			ppm / 1e4, tls_policy_name(d->cfg.policy), d->jobs.n);
}

void tlsd_rr_advance(struct tlsd *d, uint64_t now_ns)
{
	uint64_t k;
	unsigned int i, n = d->jobs.n, kmod, lead;

	if (d->cfg.policy != TLS_POLICY_RR || !d->rr_clocked || !d->cfg.interval_ns ||
	    now_ns <= d->rr_epoch_ns)
		return;
	k = (now_ns - d->rr_epoch_ns) / d->cfg.interval_ns;
	if (!k)
		return;
	d->rr_epoch_ns += k * d->cfg.interval_ns;
	d->step += k;
	if (!n)
		return;
	kmod = (unsigned int)(k % n);
	lead = d->lead % n;
	/* each job's band changes over the k steps, counted without
	 * stepping through them (an hour at 10 ms is 360,000 steps) */
	for (i = 0; i < n && !d->cfg.observe; i++) {
		struct tls_job_entry *j = &d->jobs.job[i];
		unsigned int pos = i >= lead ? i - lead : i + n - lead;
		unsigned int now = pos >= kmod ? pos - kmod : pos + n - kmod;

		if (j->band != TLS_BAND_NONE)
			j->band_changes += tls_policy_rr_band_changes(n, d->cfg.bands, pos, k);
		j->band = tls_policy_band_of_position(now, n, d->cfg.bands);
	}
	d->lead = lead + kmod < n ? lead + kmod : lead + kmod - n;
}

/* Roundrobin: the order from the clock, written once for the jobs as they
 * are. The timer stops while the classifier has it (tlsd_set_timer). */
static int assign_rr(struct tlsd *d, const __u32 *ids, const __u32 *bands, uint64_t now)
{
	struct tls_rr order;
	bool was = d->rr_clocked;
	int err;

	/* the timer's steps (none yet, or a fallback) leave no start: the
	 * turn in progress begins now */
	if (!was)
		d->rr_epoch_ns = now;
	order = (struct tls_rr){
		.epoch_ns = d->rr_epoch_ns,
		.interval_ns = d->cfg.interval_ns,
		.lead = d->jobs.n ? d->lead % d->jobs.n : 0,
		.n = d->jobs.n,
		.nbands = d->cfg.bands,
	};
	err = tls_set_job_rr(d->m, ids, bands, d->jobs.n, &order);

	d->rr_clocked = !err;
	if (err && was)
		pr_warn("cannot write roundrobin's order (%s): rotating by the timer\n",
			strerror(-err));
	if (d->rr_clocked != was)
		tlsd_set_timer(d);
	return err;
}

/* Write every job's band for the current policy and step. */
int tlsd_assign_bands(struct tlsd *d)
{
	unsigned int bands[TLS_MAX_JOBS], i;
	__u32 ids[TLS_MAX_JOBS], b[TLS_MAX_JOBS];
	uint64_t t0 = tls_now_ns();
	int err;

	/* Policy bursts: the classifier orders the jobs itself. Its order is
	 * set up when the policy starts or the bands or the rate change,
	 * before the jobs are flagged (tlsd_bursts.c); an order left by an
	 * earlier policy would be stale, and so would one carried from the
	 * program replaced. */
	if (d->cfg.policy != TLS_POLICY_BURSTS || d->cfg.observe) {
		d->burst_bands = 0;
		d->burst_carried = false;
	} else if (tls_features()[TLS_FEAT_BURSTS].state == TLS_FEAT_MISSING) {
		static bool said;

		if (!said)
			pr_warn("policy bursts is not available on this kernel (its verifier "
				"refused the code; see tlsd --probe): the jobs share the last "
				"band, as under fifo\n");
		said = true;
	} else if (d->burst_bands != d->cfg.bands || d->burst_rate != d->rate_bps) {
		tlsd_burst_setup(d); /* said; on failure the jobs share the last band */
	}
	if (d->cfg.policy != TLS_POLICY_RR)
		d->rr_clocked = false;
	tlsd_rr_advance(d, t0);
	tls_policy_assign(d->cfg.policy, d->jobs.n, d->cfg.bands, d->lead, bands);
	for (i = 0; i < d->jobs.n; i++) {
		ids[i] = d->jobs.job[i].id;
		/* observe: counted, in no band (the classifier would not
		 * steer them anyway; status shows no band either) */
		b[i] = d->cfg.observe ? TLS_BAND_NONE : bands[i];
	}
	if (d->cfg.policy == TLS_POLICY_RR && !d->cfg.observe && d->jobs.n)
		err = assign_rr(d, ids, b, t0);
	else
		err = -1;
	if (err)
		err = tls_set_job_bands(d->m, ids, b, d->jobs.n,
					d->burst_bands ? TLS_JOB_F_BURST : 0);
	if (!err && !d->cfg.observe)
		tls_jobs_note_bands(&d->jobs, bands);
	if (d->jobs.n)
		pr_debug("step %llu: %s leads, applied in %.1f us\n", (unsigned long long)d->step,
			 d->jobs.job[d->cfg.policy == TLS_POLICY_RR ? d->lead % d->jobs.n : 0].name,
			 (tls_now_ns() - t0) / 1e3);
	if (err)
		pr_warn("cannot write the jobs' bands: %s\n", strerror(-err));
	tlsd_apply_lead_headroom(d);
	return err;
}

/* Discovery's hooks: a job found gets a band under the current policy at
 * once (after start: at start the bands are written once, for all). */
static uint32_t disc_job_up(void *ctx, const char *name, const char *rule, uid_t uid)
{
	struct tlsd *d = ctx;
	int i = tls_jobs_find(&d->jobs, name);
	uint32_t id;

	/* The file's job is root's: a user's process may not join it (its
	 * traffic would take the job's band). */
	if (i >= 0 && !d->jobs.job[i].discovered && uid) {
		pr_warn("a PS of uid %u matches job %s of the configuration file: not "
			"scheduled (only root's processes join the file's jobs)\n",
			(unsigned int)uid, name);
		return 0;
	}
	if (i >= 0)
		return d->jobs.job[i].id; /* another PS of the job, or a static job */
	if (add_job(d, name, NULL, 0, &id))
		return 0;
	d->jobs.job[d->jobs.n - 1].discovered = true;
	pr_info("job %s (id %u) added: discovered by rule %s\n", name, id, rule);
	if (d->started)
		tlsd_assign_bands(d);
	return id;
}

static void disc_job_down(void *ctx, const char *name, uint32_t id)
{
	struct tlsd *d = ctx;
	int i = tls_jobs_find(&d->jobs, name);

	if (i < 0 || !d->jobs.job[i].discovered)
		return; /* the file's job stays */
	remove_job(d, name, &id);
	tls_free_job_id(d->m, id);
	pr_info("job %s (id %u) removed: its last PS is gone\n", name, id);
	tlsd_stats_forget_job(d, id);
	if (d->started)
		tlsd_assign_bands(d);
}

static const struct tls_discover_hooks disc_hooks = {
	.job_up = disc_job_up,
	.job_down = disc_job_down,
};

/* Discovery on, off or with new rules, as the configuration says. */
int tlsd_sync_discovery(struct tlsd *d, const struct tls_config *c)
{
	int err;

	if (!c->discovery.enabled) {
		if (d->disc)
			pr_info("discovery off: forgetting the discovered jobs\n");
		tls_discover_free(d->disc); /* its fd leaves the epoll as it closes */
		tls_loop_forget(&d->src_disc);
		d->disc = NULL;
		return 0;
	}
	if (d->disc)
		return tls_discover_set_conf(d->disc, &c->discovery);
	err = tls_discover_new(&c->discovery, d->members, &disc_hooks, d, &d->disc);
	if (err)
		return err;
	if (d->epfd >= 0) {
		err = tls_loop_watch(d->epfd, &d->src_disc, tls_discover_fd(d->disc));
		if (err) {
			tls_discover_free(d->disc);
			tls_loop_forget(&d->src_disc);
			d->disc = NULL;
			return err;
		}
	}
	tls_discover_rescan(d->disc);
	return 0;
}

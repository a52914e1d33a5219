// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics engines' lifecycle and their tick (the samplers read the
 * maps, lib/model/stats.c computes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

#include "tlsd.h"

/* --- The statistics (lib/model/stats.c), sampled every stats_period --- */

int tlsd_arm_stats_timer(struct tlsd *d, uint64_t period_ns)
{
	struct itimerspec its = {};

	its.it_interval.tv_sec = period_ns / 1000000000ULL;
	its.it_interval.tv_nsec = period_ns % 1000000000ULL;
	its.it_value = its.it_interval;
	if (timerfd_settime(d->stfd, 0, &its, NULL)) {
		pr_warn("cannot arm the statistics timer: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

void tlsd_close_stats(struct tlsd *d)
{
	tls_sampler_free(d->sampler);
	tls_stats_free(d->stats);
	tls_ingress_sampler_free(d->isampler);
	tls_stats_free(d->stats_in);
	d->isampler = NULL;
	d->stats_in = NULL;
	tlsd_mx_cache_clear(&d->mx_cache); /* built from that engine */
	if (d->stfd >= 0)
		close(d->stfd);
	d->sampler = NULL;
	d->stats = NULL;
	d->stfd = -1;
}

/* The push direction's engine, with the same configuration: only if the
 * ingress counter is loaded; without it tlsctl says push is not measured. */
static void open_stats_in(struct tlsd *d, const struct tls_stats_conf *sc)
{
	int err;

	if (tls_cls_maps(d->cls)->job_in < 0)
		return;
	err = tls_stats_new(sc, &d->stats_in);
	if (!err)
		err = tls_ingress_sampler_new(d->stats_in, &d->isampler);
	if (err) {
		pr_warn("statistics of the ingress (push) off: %s\n", strerror(-err));
		tls_stats_free(d->stats_in);
		d->stats_in = NULL;
	}
}

/* Not fatal: without statistics tlsd schedules as before, and tlsctl stats
 * says they are not available. */
void tlsd_open_stats(struct tlsd *d)
{
	struct tls_stats_conf sc;
	int err;

	tls_stats_conf_defaults(&sc);
	sc.link_bps = d->rate_bps;
	sc.clock_slack_ns = tls_sampler_clock_slack_ns();
	sc.window_ns = d->cfg.stats_window_ns;
	sc.n_flows = d->cfg.stats_n_flows;
	err = tls_stats_new(&sc, &d->stats);
	if (!err)
		err = tls_sampler_new(d->stats, &d->sampler);
	if (!err) {
		d->stfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		err = d->stfd < 0 ? -errno : tlsd_arm_stats_timer(d, d->cfg.stats_period_ns);
	}
	if (err) {
		pr_warn("statistics off: %s\n", strerror(-err));
		tlsd_close_stats(d);
		return;
	}
	open_stats_in(d, &sc);
}

static void ingress_tick(struct tlsd *d, uint64_t now, bool flows)
{
	uint32_t ids[TLS_MAX_JOBS];
	unsigned int n = 0;

	for (unsigned int i = 0; i < d->jobs.n && n < TLS_MAX_JOBS; i++)
		ids[n++] = d->jobs.job[i].id;
	tls_ingress_tick(d->isampler, d->m, ids, n, now, flows);
}

/* One sample, then the followers of `tlsctl stats --follow` get it. */
void tlsd_stats_tick(struct tlsd *d)
{
	struct tls_sampler_info before, after;
	uint64_t expirations, now;

	if (read(d->stfd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	now = tls_now_ns();
	tls_sampler_info(d->sampler, &before);
	tls_sampler_tick_jobs(d->sampler, d->m, &d->jobs, now);
	tls_sampler_info(d->sampler, &after);
	tlsd_burst_weights(d);
	/* the push's flows with the pull's (stats_ingress.h) */
	if (d->isampler)
		ingress_tick(d, now, after.flow_reads != before.flow_reads);
	if (d->ctl)
		tls_ctl_publish(d->ctl);
}

/* Both directions' engines (pull: egress, push: ingress) alike. */
void tlsd_stats_forget_job(struct tlsd *d, uint32_t id)
{
	if (d->stats)
		tls_stats_forget_job(d->stats, id);
	if (d->stats_in)
		tls_stats_forget_job(d->stats_in, id);
}

void tlsd_stats_set_link_rate(struct tlsd *d, uint64_t rate)
{
	if (d->stats)
		tls_stats_set_link_rate(d->stats, rate);
	if (d->stats_in)
		tls_stats_set_link_rate(d->stats_in, rate);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loop's sources and their handlers (lib/util/loop.h), the signals.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "log.h"

#include "tlsd.h"

/* The signals the loop takes through its signalfd (blocked otherwise). */
void tlsd_loop_signals(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGHUP);
}

/*
 * After daemon(): the signalfd made before the fork wakes its epoll only for
 * the signals of the process that made it (its wait queue is that process's
 * signal handler's), so the detached child would never see SIGTERM in its
 * loop. A new one, made by the child, takes its place.
 */
int tlsd_renew_signalfd(struct tlsd *d)
{
	sigset_t mask;
	int fd, err;

	tlsd_loop_signals(&mask);
	fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (fd < 0) {
		pr_warn("cannot make a signalfd after detaching: %s\n", strerror(errno));
		return -errno;
	}
	tls_loop_unwatch(d->epfd, &d->src_signal);
	err = tls_loop_watch(d->epfd, &d->src_signal, fd);
	if (err) {
		pr_warn("cannot watch the signalfd after detaching: %s\n", strerror(-err));
		close(fd);
		return err;
	}
	close(d->sfd);
	d->sfd = fd;
	return 0;
}

/* --- The loop's handlers (lib/util/loop.h): one per source --- */

static int on_ctl(struct tls_source *s)
{
	struct tlsd *d = tls_container_of(s, struct tlsd, src_ctl);

	if (d->ctl)
		tls_ctl_dispatch(d->ctl);
	return 0;
}

static int on_metrics(struct tls_source *s)
{
	struct tlsd *d = tls_container_of(s, struct tlsd, src_metrics);

	if (d->metrics)
		tls_http_dispatch(d->metrics);
	return 0;
}

static int on_stats(struct tls_source *s)
{
	struct tlsd *d = tls_container_of(s, struct tlsd, src_stats);

	if (d->stfd >= 0)
		tlsd_stats_tick(d);
	return 0;
}

static int on_disc(struct tls_source *s)
{
	struct tlsd *d = tls_container_of(s, struct tlsd, src_disc);

	if (d->disc)
		tls_discover_run(d->disc);
	tlsd_state_save(d, false); /* a job found or gone */
	return 0;
}

static int on_watch(struct tls_source *s)
{
	struct tlsd *d = tls_container_of(s, struct tlsd, src_watch);

	if (d->tw)
		tlsd_watch_event(d);
	return 0;
}

static int on_heal(struct tls_source *s)
{
	struct tlsd *d = tls_container_of(s, struct tlsd, src_heal);
	uint64_t expirations;

	if (read(d->htfd, &expirations, sizeof(expirations)) == sizeof(expirations))
		tlsd_tree_check(d, false);
	return 0;
}

static int on_timer(struct tls_source *s)
{
	struct tlsd *d = tls_container_of(s, struct tlsd, src_timer);
	uint64_t expirations;

	if (read(d->tfd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return 0;
	/* One step per wakeup, however late: every job gets its turn, if a
	 * little later, rather than being skipped. */
	if (d->cfg.policy == TLS_POLICY_RR && !d->rr_clocked) {
		d->step++;
		d->lead = d->jobs.n ? (d->lead + 1) % d->jobs.n : 0;
		tlsd_assign_bands(d);
	} else if (tlsd_burst_setup_due(d)) {
		tlsd_assign_bands(d); /* a failed set-up of the burst order, again */
	}
	return 0;
}

static int on_signal(struct tls_source *s)
{
	struct tlsd *d = tls_container_of(s, struct tlsd, src_signal);
	struct signalfd_siginfo si;

	if (read(d->sfd, &si, sizeof(si)) != sizeof(si))
		return 0;
	if (si.ssi_signo == SIGHUP) {
		tlsd_reload(d);
		tlsd_state_save(d, false);
		return 0;
	}
	pr_info("signal %u: restoring %s and exiting\n", si.ssi_signo, d->cfg.ifname);
	return TLS_LOOP_STOP;
}

/* The sources' handlers, before anything can be watched (sync_discovery and
 * tlsd_metrics_sync watch theirs as they open them, once the loop is). */
void tlsd_init_sources(struct tlsd *d)
{
	tls_source_init(&d->src_signal, on_signal);
	tls_source_init(&d->src_timer, on_timer);
	tls_source_init(&d->src_heal, on_heal);
	tls_source_init(&d->src_watch, on_watch);
	tls_source_init(&d->src_disc, on_disc);
	tls_source_init(&d->src_ctl, on_ctl);
	tls_source_init(&d->src_stats, on_stats);
	tls_source_init(&d->src_metrics, on_metrics);
}

/* The loop's own fds, then every source there is now (those opened later,
 * by a reload, watch themselves). */
int tlsd_setup_loop(struct tlsd *d)
{
	sigset_t mask;
	int err;

	tlsd_loop_signals(&mask);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	d->htfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sfd < 0 || d->tfd < 0 || d->htfd < 0 || d->epfd < 0)
		return -errno;
	{
		const struct {
			struct tls_source *src;
			int fd;
		} w[] = {
			{ &d->src_heal, d->htfd },
			{ &d->src_watch, d->tw ? tls_tw_fd(d->tw) : -1 },
			{ &d->src_signal, d->sfd },
			{ &d->src_timer, d->tfd },
			{ &d->src_disc, d->disc ? tls_discover_fd(d->disc) : -1 },
			{ &d->src_ctl, d->ctl ? tls_ctl_fd(d->ctl) : -1 },
			{ &d->src_stats, d->stfd },
			{ &d->src_metrics, d->metrics ? tls_http_fd(d->metrics) : -1 },
		};

		for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
			if (w[i].fd >= 0 && (err = tls_loop_watch(d->epfd, w[i].src, w[i].fd)))
				return err;
	}
	return tlsd_set_timer(d);
}

int tlsd_run(struct tlsd *d)
{
	return tls_loop_run(d->epfd);
}

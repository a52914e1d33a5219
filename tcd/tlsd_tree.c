// SPDX-License-Identifier: GPL-2.0-only
/*
 * The self-healing tree: rtnetlink news, the check, repairs, yielding to
 * another tool, an interface that goes and comes back, the link's speed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>

#include "kernel_features.h"
#include "clock.h"
#include "log.h"
#include "units.h"

#include "tlsd.h"

/* --- The self-healing tree (tcd/tree_watch.c, tc_state.c, tree_heal.c) --- */

/* A burst of notifications (one `tc qdisc replace` sends several, and so
 * does tlsd's own rebuild) settles this long before the state is read. */
#define HEAL_SETTLE_NS (5ULL * 1000 * 1000)
/* After a repair that failed, or a state that could not be read. */
#define HEAL_RETRY_NS (1000ULL * 1000 * 1000)

bool tlsd_tree_held(const struct tlsd *d)
{
	return d->heal.state == TLS_TREE_INTACT;
}

static void tree_target(const struct tlsd *d, struct tls_tree_target *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->ifname, sizeof(t->ifname), "%s", d->cfg.ifname);
	t->ifindex = d->ifindex;
	t->root_handle = d->shaper ? TLS_CLASSID(0) : 0; /* observe: no tree of tlsd's */
	tls_cls_tc_ids(d->cls, &t->filter_handle, &t->filter_prio, &t->prog_id);
	t->in_prog_id = tls_cls_in_prog_id(d->cls);
	t->bands = d->cfg.bands;
	t->own_portid = d->tcs ? tls_tc_state_portid(d->tcs) : 0;
}

static void arm_check(struct tlsd *d, uint64_t delay_ns)
{
	struct itimerspec its = {};

	its.it_value.tv_sec = delay_ns / 1000000000ULL;
	its.it_value.tv_nsec = delay_ns % 1000000000ULL;
	if (timerfd_settime(d->htfd, 0, &its, NULL))
		pr_warn("cannot arm the tree check's timer: %s\n", strerror(errno));
	else
		d->check_armed = true;
}

/* The notification socket is readable: what it says only arms the check. */
void tlsd_watch_event(struct tlsd *d)
{
	struct tls_tree_target t;
	unsigned int ev;
	char what[160];

	tree_target(d, &t);
	ev = tls_tw_read(d->tw, &t);
	if (!ev || d->heal.state == TLS_TREE_YIELDED)
		return;
	pr_debug("%s: notified: %s\n", d->cfg.ifname, tls_tw_describe(ev, what, sizeof(what)));
	d->pending |= ev;
	if (!d->check_armed)
		arm_check(d, HEAL_SETTLE_NS);
}

static double ms_since(uint64_t t0)
{
	return (tls_now_ns() - t0) / 1e6;
}

/* Rebuild what vanished, then the jobs' bands and classes through the same
 * paths as a reload. The record of the root qdisc from before tlsd (what
 * exit puts back) is not touched. */
static int tree_repair(struct tlsd *d, unsigned int repairs, const char *why, uint64_t t0,
		       bool count)
{
	char w[32];
	int err = 0;

	if (d->shaper && (repairs & TLS_REPAIR_ROOT))
		tls_shaper_lost(d->shaper);
	if (d->shaper && (repairs & (TLS_REPAIR_ROOT | TLS_REPAIR_CLASSES)))
		err = tls_shaper_build(d->shaper, d->rate_bps, d->cfg.bands);
	if (!err && (repairs & TLS_REPAIR_FILTER))
		err = tls_cls_reattach(d->cls);
	if (!err)
		err = tlsd_set_bands_classes(d);
	if (!err)
		err = tlsd_assign_bands(d);
	if (err) {
		d->heal.failed++;
		pr_warn("%s: %s: cannot rebuild it (%s); trying again in 1 s\n", d->cfg.ifname, why,
			strerror(-err));
		arm_check(d, HEAL_RETRY_NS);
		return err;
	}
	if (!count)
		return 0;
	d->heal.heals++;
	snprintf(d->heal.last_reason, sizeof(d->heal.last_reason), "%s", why);
	d->heal.last_ns = tls_now_ns();
	d->heal.last_took_ns = d->heal.last_ns - t0;
	tls_format_duration(d->heal.window_ns, w, sizeof(w));
	pr_warn("%s: %s: rebuilt in %.1f ms (heal %llu; %u of %u allowed within %s)\n",
		d->cfg.ifname, why, ms_since(t0), (unsigned long long)d->heal.heals,
		tls_heal_recent(&d->heal, d->heal.last_ns), d->heal.limit, w);
	return 0;
}

/* link_rate auto: the tree follows the driver's speed. A link that is down
 * reports none: its rate stays. build: the tree is there to be rebuilt at
 * the new rate (else only the rate is taken, for the build to come). */
static void follow_speed(struct tlsd *d, bool build)
{
	uint64_t bps = 0, rate;
	char a[32], b[32];
	int err = d->cfg.rate_bps ? 0 : tls_link_speed(d->cfg.ifname, &bps);

	rate = tls_heal_new_rate(d->cfg.rate_bps, d->rate_bps, err, bps);
	if (!rate)
		return;
	tls_format_rate(rate, a, sizeof(a));
	tls_format_rate(d->rate_bps, b, sizeof(b));
	err = build && tlsd_tree_held(d) && d->shaper ?
		      tls_shaper_build(d->shaper, rate, d->cfg.bands) :
		      0;
	if (err) {
		pr_warn("%s: link speed now %s: cannot rebuild the HTB tree at it (%s); it stays "
			"at %s\n",
			d->cfg.ifname, a, strerror(-err), b);
		return;
	}
	d->rate_bps = rate;
	d->heal.rate_changes++;
	tlsd_stats_set_link_rate(d, rate);
	pr_warn("%s: link speed now %s (was %s)%s\n", d->cfg.ifname, a, b,
		d->shaper ? ": the HTB tree follows (link_rate auto)" : "");
}

/* The interface is gone: its qdiscs and filters went with it. tlsd keeps
 * its jobs (the maps live on) and waits for the name to come back. */
static void tree_absent(struct tlsd *d)
{
	if (d->heal.state == TLS_TREE_ABSENT)
		return;
	d->heal.state = TLS_TREE_ABSENT;
	d->heal.since_ns = tls_now_ns();
	d->ifindex = 0;
	if (d->shaper)
		tls_shaper_lost(d->shaper);
	tls_cls_lost(d->cls);
	pr_warn("%s is gone: tlsd keeps its jobs and their bands, and schedules %s again when "
		"an interface of that name comes back\n",
		d->cfg.ifname, d->cfg.ifname);
}

/* An interface of tlsd's name at another index: the old one was deleted
 * and this one created (maybe faster than the check). */
static void tree_back(struct tlsd *d, int ifindex, uint64_t t0)
{
	char a[32];

	d->ifindex = ifindex;
	if (d->shaper)
		tls_shaper_set_ifindex(d->shaper, ifindex);
	tls_cls_lost(d->cls);
	d->heal.state = TLS_TREE_INTACT;
	d->heal.returns++;
	follow_speed(d, false); /* a new device: perhaps another speed */
	if (tree_repair(d, TLS_REPAIR_ROOT | TLS_REPAIR_FILTER, "interface re-created", t0, false))
		return;
	tls_format_rate(d->rate_bps, a, sizeof(a));
	pr_warn("%s is back (index %d): scheduling it again at %s, tree and filter rebuilt in "
		"%.1f ms\n",
		d->cfg.ifname, ifindex, a, ms_since(t0));
}

/* Another tool keeps undoing the tree: it wins. What is still tlsd's goes,
 * what is the other tool's stays; said once, with the way back. */
static void tree_yield(struct tlsd *d, const char *why)
{
	unsigned int n = tls_heal_recent(&d->heal, tls_now_ns());
	char w[32];

	tls_format_duration(d->heal.window_ns, w, sizeof(w));
	snprintf(d->heal.yield_reason, sizeof(d->heal.yield_reason),
		 "%.200s, after %u heal%s within %s", why, n, n == 1 ? "" : "s", w);
	d->heal.state = TLS_TREE_YIELDED;
	d->heal.since_ns = tls_now_ns();
	d->heal.yields++;
	pr_warn("%s: %s again after %u heal%s within %s: another tool is changing tlsd's tree "
		"on purpose. tlsd stops scheduling %s: it leaves that tool's qdiscs and filters "
		"as they are and removes what is left of its own. SIGHUP (or a restart) takes %s "
		"back\n",
		d->cfg.ifname, why, n, n == 1 ? "" : "s", w, d->cfg.ifname, d->cfg.ifname);
	tls_cls_detach_tc(d->cls);
	if (d->shaper)
		tls_shaper_yield(d->shaper);
}

/* What the interface holds now decides, never the notifications: tlsd's own
 * rebuild announces itself too, and finds everything in place here.
 * resume: SIGHUP took the interface back, a rebuild that is not a heal. */
void tlsd_tree_check(struct tlsd *d, bool resume)
{
	struct tls_tree_target t;
	struct tls_tree_facts f;
	unsigned int ev = d->pending, repairs;
	uint64_t t0 = tls_now_ns();
	char why[256];
	int err;

	d->pending = 0;
	d->check_armed = false;
	if (d->heal.state == TLS_TREE_YIELDED || !d->tcs)
		return;
	tree_target(d, &t);
	err = tls_tc_state_read(d->tcs, &t, &f);
	if (err) {
		if (!d->check_failing) /* once, not every second */
			pr_warn("%s: cannot read its qdiscs and filters (%s): checking again "
				"every second\n",
				d->cfg.ifname, strerror(-err));
		d->check_failing = true;
		d->pending = ev;
		arm_check(d, HEAL_RETRY_NS);
		return;
	}
	d->check_failing = false;
	if (!f.ifindex) {
		tree_absent(d);
		return;
	}
	if (f.ifindex != d->ifindex) {
		tree_back(d, f.ifindex, t0);
		return;
	}
	repairs = tls_tree_judge(&f, &t, why, sizeof(why));
	if (repairs && !resume && !tls_heal_admit(&d->heal, t0)) {
		tree_yield(d, why);
		return;
	}
	if (repairs && tree_repair(d, repairs, resume ? "taken back" : why, t0, !resume))
		return;
	if (ev & (TLS_TW_LINK_CHANGED | TLS_TW_OVERRUN))
		follow_speed(d, true);
}

/* SIGHUP: the count of heals starts again, and a yielded interface is taken
 * back; with or without notifications, what vanished is rebuilt. */
void tlsd_tree_resume(struct tlsd *d)
{
	tls_heal_set_limit(&d->heal, d->cfg.heal_limit, d->cfg.heal_window_ns);
	tls_heal_forget(&d->heal);
	if (d->heal.state == TLS_TREE_YIELDED) {
		d->heal.state = TLS_TREE_INTACT;
		d->heal.yield_reason[0] = '\0';
		pr_warn("%s: taking the interface back (SIGHUP)\n", d->cfg.ifname);
	}
	tlsd_tree_check(d, true);
}

/* Not fatal: without notifications tlsd schedules as before (one line says
 * what is lost); without the kernel's answers nothing could be judged. */
void tlsd_open_watch(struct tlsd *d)
{
	int err = tls_tc_state_open(&d->tcs);

	if (err) {
		tls_feature_fail(TLS_FEAT_RTNL_WATCH, "query socket", err);
		return;
	}
	if (tls_tw_open(&d->tw))
		return; /* recorded: tls_features_log_degraded() says it */
	tls_feature_set(TLS_FEAT_RTNL_WATCH, TLS_FEAT_IN_USE);
	d->heal.watched = true;
}

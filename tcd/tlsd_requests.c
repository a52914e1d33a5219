// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control socket and the metrics endpoint wired to the daemon: requests
 * answered from a view of its state (tlsd_ctl.c builds the replies).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "units.h"

#include "tlsd.h"
#include "tlsd_ctl.h"
#include "tlsd_metrics.h"

/* --- The control socket (tcd/ctl.c; the replies in tcd/tlsd_ctl.c) --- */

/*
 * tlsctl's policy and interval win over the file and the command line, also
 * across reloads (a SIGHUP for new jobs must not undo an operator's switch),
 * until `tlsctl policy reset`. Called by a reload on the new configuration.
 */
void tlsd_keep_live_policy(struct tlsd *d, struct tls_config *c)
{
	d->conf_policy = c->policy;
	d->conf_interval_ns = c->interval_ns;
	if (d->live.policy_set)
		c->policy = d->live.policy;
	if (d->live.interval_set)
		c->interval_ns = d->live.interval_ns;
	if ((d->live.policy_set && c->policy != d->conf_policy) ||
	    (d->live.interval_set && c->interval_ns != d->conf_interval_ns))
		pr_info("reload: keeping the policy set by tlsctl (%s); the configuration says %s "
			"(tlsctl policy reset applies it)\n",
			tls_policy_name(c->policy), tls_policy_name(d->conf_policy));
}

/* `tlsctl policy ...`: what a reload does for a new policy or interval, at
 * once: the bands of the new assignment (the next packet sees them) and the
 * timer restarted. */
static int ctl_set_policy(struct tlsd *d, const struct tls_ctl_req *r,
			  const struct tls_ctl_peer *peer, bool *changed)
{
	enum tls_policy p;
	uint64_t ival;
	char buf[32];
	int err, e;

	if (r->reset)
		d->live.policy_set = d->live.interval_set = false;
	if (r->has_policy) {
		d->live.policy_set = true;
		d->live.policy = r->policy;
	}
	if (r->has_interval) {
		d->live.interval_set = true;
		d->live.interval_ns = r->interval_ns;
	}
	p = d->live.policy_set ? d->live.policy : d->conf_policy;
	ival = d->live.interval_set ? d->live.interval_ns : d->conf_interval_ns;
	*changed = p != d->cfg.policy || ival != d->cfg.interval_ns;
	if (!*changed)
		return 0;
	tlsd_rr_advance(d, tls_now_ns()); /* the steps so far, at the old interval */
	d->cfg.policy = p;
	d->cfg.interval_ns = ival;
	d->rr_epoch_ns = tls_now_ns(); /* a turn begins, as the timer's restart began one */
	err = tlsd_assign_bands(d);
	e = tlsd_set_timer(d); /* also if the bands failed: it follows the policy */
	err = err ? err : e;
	tls_format_duration(ival, buf, sizeof(buf));
	pr_info("policy %s, interval %s: %s by tlsctl (uid %u, pid %d)\n", tls_policy_name(p), buf,
		r->reset ? "back to the configuration's" : "set", peer->uid, peer->pid);
	return err;
}

/* The daemon's state as the control replies and the metrics read it. */
static struct tlsd_view view(struct tlsd *d)
{
	tlsd_rr_advance(d, tls_now_ns()); /* the step and the bands of now */
	return (struct tlsd_view){
		.version = TLS_VERSION,
		.cfg = &d->cfg,
		.jobs = &d->jobs,
		.m = d->m,
		.rate_bps = d->rate_bps,
		.step = d->step,
		.uptime_ns = tls_now_ns() - d->started_ns,
		.conf_policy = d->conf_policy,
		.conf_interval_ns = d->conf_interval_ns,
		.stats = d->stats,
		.stats_in = d->stats_in,
		.isampler = d->isampler,
		.stats_period_ns = d->cfg.stats_period_ns,
		.disc = d->disc,
		.heal = &d->heal,
		.now_ns = tls_now_ns(),
		.policy_live = d->live.policy_set || d->live.interval_set,
		.tcs = d->tcs,
		.ifindex = d->ifindex,
		.reloads = d->reloads,
		.reload_failures = d->reload_failures,
		.http = d->metrics,
		.mx_cache = &d->mx_cache,
	};
}

/* A scrape of the metrics endpoint (tcd/http.c) */
int tlsd_metrics_body_of(void *ctx, bool openmetrics, struct tls_http_body *body,
			 const char **ctype)
{
	struct tlsd_view v = view(ctx);
	enum tls_mx_format f = openmetrics ? TLS_MX_OPENMETRICS : TLS_MX_PROMETHEUS;

	*ctype = tls_mx_content_type(f);
	return tlsd_metrics_body(&v, f, body);
}

static int ctl_handle(void *ctx, const struct tls_ctl_req *req, const struct tls_ctl_peer *peer,
		      struct json_object *reply, char *msg, size_t msglen)
{
	struct tlsd *d = ctx;
	struct tlsd_view v = view(d);
	int err;

	if (req->cmd == TLS_CTL_POLICY && (req->has_policy || req->has_interval || req->reset) &&
	    d->cfg.observe) {
		snprintf(msg, msglen,
			 "tlsd runs in observe mode: no HTB tree, no policy to set; restart it "
			 "with mode = \"schedule\"; (and without --observe) to schedule");
		return TLS_CTL_E_UNAVAILABLE;
	}
	if (req->cmd == TLS_CTL_POLICY && (req->has_policy || req->has_interval || req->reset)) {
		err = ctl_set_policy(d, req, peer, &v.changed);
		if (err) {
			snprintf(msg, msglen, "the policy is set but not fully applied: %s",
				 strerror(-err));
			return TLS_CTL_E_INTERNAL;
		}
	}
	v.policy_live = d->live.policy_set || d->live.interval_set;
	return tlsd_ctl_reply(&v, req, reply, msg, msglen);
}

int tlsd_open_ctl(struct tlsd *d, const struct tls_config *c, struct tls_ctl **out)
{
	struct tls_ctl_opts o = {
		.path = c->ctl_path,
		.group = c->ctl_group,
		.gid = c->ctl_gid,
		.handler = ctl_handle,
		.ctx = d,
		.idle_ns = c->ctl_idle_ns,
	};

	return tls_ctl_open(&o, out);
}

/* A reload keeps the control socket and its clients; a new path opens the
 * new socket before the old one goes (if it cannot, the old one stays). */
void tlsd_reload_ctl(struct tlsd *d, struct tls_config *c)
{
	struct tls_ctl *n;
	int err;

	if (strcmp(c->ctl_path, d->cfg.ctl_path)) {
		if (tlsd_open_ctl(d, c, &n)) {
			pr_warn("reload: keeping the control socket %s\n", d->cfg.ctl_path);
			memcpy(c->ctl_path, d->cfg.ctl_path, sizeof(c->ctl_path));
		} else {
			err = tls_loop_watch(d->epfd, &d->src_ctl, tls_ctl_fd(n));
			if (err) {
				pr_warn("reload: cannot watch the control socket %s: %s\n",
					c->ctl_path, strerror(-err));
				tls_ctl_close(n);
				memcpy(c->ctl_path, d->cfg.ctl_path, sizeof(c->ctl_path));
			} else {
				tls_ctl_close(d->ctl); /* its fds leave the epoll as they close */
				d->ctl = n;
				return;
			}
		}
	}
	if (strcmp(c->ctl_group, d->cfg.ctl_group) || c->ctl_gid != d->cfg.ctl_gid)
		tls_ctl_set_group(d->ctl, c->ctl_group, c->ctl_gid);
	if (c->ctl_idle_ns != d->cfg.ctl_idle_ns)
		tls_ctl_set_idle(d->ctl, c->ctl_idle_ns);
}

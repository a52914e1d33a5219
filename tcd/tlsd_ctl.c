// SPDX-License-Identifier: GPL-2.0-only
/* tlsd's control replies: see tlsd_ctl.h and, for the schema, ctl_proto.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "kernel_features.h"
#include "stats_cmdare.h"
#include "stats_export.h"
#include "tlsd_ctl.h"
#include "tlsd_metrics.h"

#include "tls_burst.h"

static void add(struct json_object *o, const char *k, struct json_object *v)
{
	json_object_object_add(o, k, v);
}

static struct json_object *str(const char *s)
{
	return json_object_new_string(s);
}

static struct json_object *u64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static const char *policy_source(const struct tlsd_view *v)
{
	return v->policy_live ? "tlsctl" : "config";
}

/* The kernel features (kernel_features.h): each one's state, and for a missing
 * one the errno the kernel gave and what took over. */
static struct json_object *features_array(void)
{
	struct json_object *a = json_object_new_array();

	for (int i = 0; i < TLS_FEAT__COUNT; i++) {
		const struct tls_feat_desc *fd = tls_feat_desc(i);
		const struct tls_feature *f = &tls_features()[i];
		struct json_object *o = json_object_new_object();

		add(o, "name", str(fd->name));
		add(o, "required", json_object_new_boolean(fd->required));
		add(o, "state", str(tls_feat_state_name(f->state)));
		if (f->state == TLS_FEAT_MISSING) {
			add(o, "stage", str(f->stage));
			add(o, "errno", json_object_new_int(-f->err));
			add(o, "error", str(strerror(-f->err)));
			if (!fd->required)
				add(o, "fallback", str(fd->fallback));
		}
		json_object_array_add(a, o);
	}
	return a;
}

static uint64_t ago(const struct tlsd_view *v, uint64_t t)
{
	return v->now_ns > t ? v->now_ns - t : 0;
}

/* The self-healing tree (tree_heal.h): its state, the heals, the yield. */
static struct json_object *tree_object(const struct tlsd_view *v)
{
	const struct tls_heal *h = v->heal;
	struct json_object *o = json_object_new_object(), *last = NULL;

	add(o, "state", str(tls_tree_state_name(h->state)));
	add(o, "watched", json_object_new_boolean(h->watched));
	add(o, "heals", u64(h->heals));
	add(o, "heals_recent", json_object_new_int((int)tls_heal_recent(h, v->now_ns)));
	add(o, "heal_limit", json_object_new_int((int)h->limit));
	add(o, "heal_window_ns", u64(h->window_ns));
	if (h->last_ns) {
		last = json_object_new_object();
		add(last, "reason", str(h->last_reason));
		add(last, "ago_ns", u64(ago(v, h->last_ns)));
		add(last, "took_ns", u64(h->last_took_ns));
	}
	add(o, "last_heal", last);
	add(o, "failed_heals", u64(h->failed));
	add(o, "since_ns", h->state != TLS_TREE_INTACT ? u64(ago(v, h->since_ns)) : NULL);
	add(o, "yield_reason", h->state == TLS_TREE_YIELDED ? str(h->yield_reason) : NULL);
	add(o, "interface_returns", u64(h->returns));
	add(o, "rate_changes", u64(h->rate_changes));
	return o;
}

static const char *job_name(const struct tlsd_view *v, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < v->jobs->n; i++)
		if (v->jobs->job[i].id == id)
			return v->jobs->job[i].name;
	return NULL;
}

/* Policy bursts's order as the classifier has it now: its jobs in order
 * (name, band, bytes of the current burst, its expected size, its weight
 * in the fair share) and its
 * counts since the order was last reset (a policy switch, a reload, a
 * start). NULL unless the policy is bursts and the order can be read. */
static struct json_object *bursts_object(const struct tlsd_view *v)
{
	struct json_object *o, *a;
	struct tls_burst b;
	__u32 n;

	if (v->cfg->policy != TLS_POLICY_BURSTS || tls_read_burst_order(v->m, &b))
		return NULL;
	o = json_object_new_object();
	a = json_object_new_array();
	n = b.n < TLS_BURST_SLOTS ? b.n : TLS_BURST_SLOTS;
	for (__u32 i = 0; i < n; i++) {
		struct json_object *e = json_object_new_object();
		const char *name = job_name(v, b.job[i]);

		add(e, "job", name ? str(name) : NULL);
		add(e, "id", u64(b.job[i]));
		add(e, "band", u64(b.band[i]));
		add(e, "sent_bytes", u64(b.sent[i]));
		/* a yielded job's is a terabyte more than anyone's: not a size */
		add(e, "estimate_bytes", u64(b.est[i]));
		/* its share's weight (1: an equal share; tls_burst.h) */
		add(e, "weight",
		    json_object_new_double(tls_burst_weight(&b, i) / (double)TLS_BURST_W1));
		json_object_array_add(a, e);
	}
	add(o, "order", a);
	add(o, "compactions", u64(b.compactions));
	add(o, "resumes", u64(b.resumes));
	return o;
}

static int reply_status(const struct tlsd_view *v, struct json_object *r)
{
	add(r, "tlsd_version", str(v->version));
	add(r, "pid", json_object_new_int(getpid()));
	add(r, "interface", str(v->cfg->ifname));
	add(r, "link_rate_bps", u64(v->rate_bps));
	add(r, "mode", str(v->cfg->observe ? "observe" : "schedule"));
	add(r, "policy", str(tls_policy_name(v->cfg->policy)));
	add(r, "policy_source", str(policy_source(v)));
	add(r, "interval_ns", u64(v->cfg->interval_ns));
	add(r, "bands", json_object_new_int((int)v->cfg->bands));
	add(r, "jobs", json_object_new_int((int)v->jobs->n));
	add(r, "uptime_ns", u64(v->uptime_ns));
	add(r, "step", u64(v->step));
	add(r, "control_group", v->cfg->ctl_group[0] ? str(v->cfg->ctl_group) : NULL);
	/* null: no statistics engine running */
	add(r, "stats_period_ns", v->stats ? u64(v->stats_period_ns) : NULL);
	add(r, "tree", v->heal ? tree_object(v) : NULL);
	add(r, "bursts", bursts_object(v));
	add(r, "features", features_array());
	return TLS_CTL_OK;
}

static struct json_object *job_object(const struct tlsd_view *v, const struct tls_job_entry *j)
{
	struct json_object *o = json_object_new_object(), *ports = json_object_new_array(), *pids;
	struct tls_discover_job di;
	struct tls_job_stats st = {};
	__u32 band = TLS_BAND_NONE;
	unsigned int p;

	add(o, "id", json_object_new_int((int)j->id));
	add(o, "name", str(j->name));
	/* What the classifier has, not what tlsd meant to write. */
	if (tls_get_job_band(v->m, j->id, &band))
		band = TLS_BAND_NONE;
	add(o, "band", band == TLS_BAND_NONE ? NULL : json_object_new_int((int)band));
	add(o, "origin", str(j->discovered ? "discovered" : "static"));
	pids = json_object_new_array();
	if (j->discovered && v->disc && !tls_discover_job_info(v->disc, j->name, &di)) {
		/* what its processes listen on, as sock_diag last saw it */
		for (p = 0; p < di.nports; p++)
			json_object_array_add(ports, json_object_new_int(di.ports[p]));
		for (p = 0; p < di.npids; p++)
			json_object_array_add(pids, json_object_new_int(di.pids[p]));
		add(o, "rule", str(di.rule));
	} else {
		for (p = 0; p < j->nports; p++)
			json_object_array_add(ports, json_object_new_int(j->ports[p]));
	}
	add(o, "ports", ports);
	add(o, "pids", pids);
	tls_read_job_stats(v->m, j->id, &st);
	add(o, "bytes", u64(st.bytes));
	add(o, "packets", u64(st.packets));
	add(o, "segs", u64(st.segs));
	return o;
}

static int reply_jobs(const struct tlsd_view *v, struct json_object *r)
{
	struct json_object *a = json_object_new_array_ext((int)v->jobs->n);
	unsigned int i;

	for (i = 0; i < v->jobs->n; i++)
		json_object_array_add(a, job_object(v, &v->jobs->job[i]));
	add(r, "jobs", a);
	return TLS_CTL_OK;
}

static int reply_policy(const struct tlsd_view *v, struct json_object *r)
{
	add(r, "mode", str(v->cfg->observe ? "observe" : "schedule"));
	add(r, "policy", str(tls_policy_name(v->cfg->policy)));
	add(r, "interval_ns", u64(v->cfg->interval_ns));
	add(r, "policy_source", str(policy_source(v)));
	add(r, "config_policy", str(tls_policy_name(v->conf_policy)));
	add(r, "config_interval_ns", u64(v->conf_interval_ns));
	add(r, "changed", json_object_new_boolean(v->changed));
	return TLS_CTL_OK;
}

/* The job a request names, as an id the statistics know: by name among the
 * daemon's jobs, or any id 1..TLS_MAX_JOBS-1. */
static int job_filter(const struct tlsd_view *v, const struct tls_ctl_req *req, uint32_t *job,
		      char *msg, size_t msglen)
{
	int i;

	*job = TLS_STATS_ALL_JOBS;
	if (!req->has_job)
		return TLS_CTL_OK;
	if (!req->job_name[0]) {
		*job = req->job_id;
		return TLS_CTL_OK;
	}
	i = tls_jobs_find(v->jobs, req->job_name);
	if (i < 0) {
		snprintf(msg, msglen, "job: no job named '%s' (tlsctl jobs lists them)",
			 req->job_name);
		return TLS_CTL_E_NOT_FOUND;
	}
	*job = v->jobs->job[i].id;
	return TLS_CTL_OK;
}

static int out_of_memory(char *msg, size_t msglen)
{
	snprintf(msg, msglen, "out of memory");
	return TLS_CTL_E_INTERNAL;
}

/* The engine of the direction asked for: pull (the PS's egress) or push
 * (its ingress); NULL, and why in msg, if that one is not measured. */
static const struct tls_stats *engine_of(const struct tlsd_view *v, const struct tls_ctl_req *req,
					 struct json_object *r, char *msg, size_t msglen)
{
	if (!req->push) {
		add(r, TLS_CTL_F_DIRECTION, str("pull"));
		return v->stats;
	}
	if (!v->stats_in)
		snprintf(msg, msglen,
			 "push (ingress) not measured: this tlsd has no ingress counter (see "
			 "its log)");
	else
		add(r, TLS_CTL_F_DIRECTION, str("push"));
	return v->stats_in;
}

/* S_param, the bytes a worker sends per iteration: the mean of the ingress
 * bursts (pushes) of the job's flows, or of every job's. */
static void add_sparam(const struct tlsd_view *v, uint32_t job, struct json_object *r)
{
	struct tls_sparam sp = {}, one;

	if (!v->isampler) {
		add(r, "s_param_bytes", NULL);
		return;
	}
	for (uint32_t j = 1; j < TLS_MAX_JOBS; j++) {
		if (job != TLS_STATS_ALL_JOBS && j != job)
			continue;
		tls_ingress_sparam(v->isampler, j, &one);
		sp.bursts += one.bursts;
		sp.bytes += one.bytes;
		sp.flows += one.flows;
	}
	add(r, "s_param_bytes", sp.bursts ? json_object_new_double(tls_sparam_bytes(&sp)) : NULL);
	add(r, "s_param_bursts", json_object_new_int64((int64_t)sp.bursts));
	add(r, "s_param_flows", json_object_new_int64(sp.flows));
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC now, s: the statistics' monotonic
 * stamps in wall-clock time (a step of the wall clock moves it) */
static double utc_offset_s(void)
{
	struct timespec rt, mt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	return (rt.tv_sec - mt.tv_sec) + (rt.tv_nsec - mt.tv_nsec) / 1e9;
}

/* The straggler verdicts of every flow (flows ordered by job) and job. */
static void straggler_flags(const struct tls_stats_link_info *link,
			    const struct tls_stats_job_info *jobs, size_t n,
			    const struct tls_stats_flow_info *flows, size_t nf,
			    enum tls_straggler *ff, enum tls_straggler *jf)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t b;

		while (k < nf && flows[k].job < jobs[i].job)
			ff[k++] = TLS_STRAG_NONE;
		for (b = k; k < nf && flows[k].job == jobs[i].job; k++)
			;
		jf[i] = tls_straggler_flags(link, &jobs[i], flows + b, k - b, ff + b);
	}
	while (k < nf)
		ff[k++] = TLS_STRAG_NONE;
}

static int reply_stats(const struct tlsd_view *v, const struct tls_ctl_req *req,
		       struct json_object *r, char *msg, size_t msglen)
{
	struct tls_stats_job_info *jobs = NULL;
	struct tls_stats_flow_info *flows = NULL;
	struct json_object *ja = NULL, *fa = NULL, *o;
	struct tls_stats_link_info link;
	const struct tls_stats *st;
	enum tls_straggler *ff, *jf;
	double off = utc_offset_s();
	size_t n, nf, i;
	uint32_t job;
	int err;

	err = job_filter(v, req, &job, msg, msglen);
	if (err)
		return err;
	st = engine_of(v, req, r, msg, msglen);
	if (!st)
		return TLS_CTL_E_UNAVAILABLE;
	tls_stats_link(st, &link);
	add(r, "period_s", json_object_new_double(v->stats_period_ns / 1e9));
	/* to the microsecond: "%.9g" would round it to tens of seconds */
	add(r, "utc_offset_s", tls_json_seconds_us(off));
	o = tls_stats_link_json(&link);
	if (o && tls_cmdare_link_json(o, &link, off)) {
		json_object_put(o);
		o = NULL;
	}
	add(r, "link", o);
	jobs = malloc(TLS_MAX_JOBS * sizeof(*jobs));
	n = jobs ? tls_stats_jobs(st, jobs, TLS_MAX_JOBS) : 0;
	flows = tls_stats_flows_all(st, job, &nf);
	ff = calloc(nf + 1, sizeof(*ff));
	jf = calloc(n + 1, sizeof(*jf));
	if (jobs && flows && ff && jf)
		straggler_flags(&link, jobs, n < TLS_MAX_JOBS ? n : TLS_MAX_JOBS, flows, nf, ff,
				jf);
	ja = json_object_new_array();
	for (i = 0; ja && jf && i < n && i < TLS_MAX_JOBS; i++) {
		const char *name = job_name(v, jobs[i].job);

		if (job != TLS_STATS_ALL_JOBS && jobs[i].job != job)
			continue;
		o = tls_stats_job_json(&jobs[i]);
		if (!o || tls_cmdare_job_json(o, &jobs[i], jf[i])) {
			json_object_put(o);
			break;
		}
		/* job 0 is everything in the default class */
		add(o, "name", name ? str(name) : jobs[i].job ? NULL : str("(default class)"));
		json_object_array_add(ja, o);
	}
	fa = json_object_new_array();
	for (i = 0; fa && ff && i < nf; i++) {
		o = tls_stats_flow_json(&flows[i]);
		if (!o || tls_cmdare_flow_json(o, &flows[i], link.last_ns, off, ff[i])) {
			json_object_put(o);
			break;
		}
		json_object_array_add(fa, o);
	}
	free(jobs);
	free(flows);
	free(ff);
	free(jf);
	if (!jobs || !flows || !ja || !fa || !ff || !jf) {
		json_object_put(ja);
		json_object_put(fa);
		return out_of_memory(msg, msglen);
	}
	add(r, "jobs", ja);
	add(r, "flows", fa);
	add_sparam(v, job, r);
	return TLS_CTL_OK;
}

static int reply_calibrate(const struct tlsd_view *v, const struct tls_ctl_req *req,
			   struct json_object *r, char *msg, size_t msglen)
{
	enum tls_fit_source src = req->source_direct ? TLS_FIT_DIRECT : TLS_FIT_SOLVED;
	struct tls_stats_obs *obs;
	struct tls_stats_calib c;
	const struct tls_stats *st;
	struct json_object *o;
	size_t n;
	uint32_t job;
	int err;

	err = job_filter(v, req, &job, msg, msglen);
	if (err)
		return err;
	st = engine_of(v, req, r, msg, msglen);
	if (!st)
		return TLS_CTL_E_UNAVAILABLE;
	tls_stats_calibrate(st, job, src, &c);
	n = tls_stats_observations(st, job, src, NULL, 0);
	obs = malloc((n ? n : 1) * sizeof(*obs));
	if (!obs)
		return out_of_memory(msg, msglen);
	n = tls_stats_observations(st, job, src, obs, n);
	o = tls_stats_calib_json(&c, obs, n);
	free(obs);
	if (!o)
		return out_of_memory(msg, msglen);
	json_object_object_foreach(o, k, val)
	{
		add(r, k, json_object_get(val));
	}
	json_object_put(o);
	add_sparam(v, job, r);
	return TLS_CTL_OK;
}

/* The text the HTTP endpoint serves, for `tlsctl metrics` (and node_exporter's
 * textfile collector). */
static int reply_metrics(const struct tlsd_view *v, const struct tls_ctl_req *req,
			 struct json_object *r, char *msg, size_t msglen)
{
	enum tls_mx_format f = req->openmetrics ? TLS_MX_OPENMETRICS : TLS_MX_PROMETHEUS;
	size_t len;
	char *text;
	int err = tlsd_metrics_text(v, f, &text, &len);

	if (err) {
		snprintf(msg, msglen, "cannot build the metrics: %s", strerror(-err));
		return TLS_CTL_E_INTERNAL;
	}
	add(r, "text", json_object_new_string_len(text, (int)len));
	add(r, "content_type", str(tls_mx_content_type(f)));
	free(text);
	return TLS_CTL_OK;
}

int tlsd_ctl_reply(const struct tlsd_view *v, const struct tls_ctl_req *req, struct json_object *r,
		   char *msg, size_t msglen)
{
	switch (req->cmd) {
	case TLS_CTL_STATUS:
		return reply_status(v, r);
	case TLS_CTL_JOBS:
		return reply_jobs(v, r);
	case TLS_CTL_POLICY:
		return reply_policy(v, r);
	case TLS_CTL_METRICS:
		return reply_metrics(v, req, r, msg, msglen);
	case TLS_CTL_STATS:
	case TLS_CTL_CALIBRATE:
		if (!v->stats) {
			snprintf(msg, msglen,
				 "statistics not available (this tlsd runs no "
				 "statistics engine)");
			return TLS_CTL_E_UNAVAILABLE;
		}
		return req->cmd == TLS_CTL_STATS ? reply_stats(v, req, r, msg, msglen) :
						   reply_calibrate(v, req, r, msg, msglen);
	case TLS_CTL_NCMDS:
		break;
	}
	snprintf(msg, msglen, "command not handled");
	return TLS_CTL_E_INTERNAL;
}

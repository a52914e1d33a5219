// SPDX-License-Identifier: GPL-2.0-only
/* tlsd's metrics from the daemon's state: tlsd_metrics.h. */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "kernel_features.h"
#include "log.h"
#include "shaper.h"
#include "stats_export.h"
#include "tlsd_metrics.h"

/* tlsd's tree has a root class, 7 bands at most and the default class. */
#define MAX_CLASSES 16

static const char *name_of(const struct tlsd_view *v, uint32_t id)
{
	for (unsigned int i = 0; i < v->jobs->n; i++)
		if (v->jobs->job[i].id == id)
			return v->jobs->job[i].name;
	return NULL;
}

/* One direction's statistics of job id (st: that direction's engine). */
static void fill_job_stats(const struct tls_stats *st, uint32_t id, struct tls_mx_job *x)
{
	struct tls_stats_job_info si;

	x->has_stats = st && !tls_stats_job(st, id, &si);
	if (!x->has_stats)
		return;
	x->workers = si.n;
	x->b_wk = si.est.b_wk;
	x->b_req = si.est.b_req;
	x->p_direct = si.est.p_direct;
	x->p_solved = si.est.p_solved;
}

static void fill_jobs(const struct tlsd_view *v, struct tls_mx_job *out)
{
	for (unsigned int i = 0; i < v->jobs->n; i++) {
		const struct tls_job_entry *j = &v->jobs->job[i];
		struct tls_mx_job *x = &out[i];
		struct tls_job_stats st = { 0 };
		__u32 band = TLS_BAND_NONE;

		x->name = j->name;
		tls_read_job_stats(v->m, j->id, &st);
		x->bytes = st.bytes;
		x->packets = st.packets;
		x->segs = st.segs;
		x->demotions = st.demotions;
		x->promotions = st.promotions;
		x->held = st.held;
		x->rotations = j->band_changes;
		/* what the classifier has, as `tlsctl jobs` says */
		if (tls_get_job_band(v->m, j->id, &band))
			band = TLS_BAND_NONE;
		x->band = band == TLS_BAND_NONE ? TLS_MX_BAND_DEFAULT : (int)band;
		fill_job_stats(v->stats, j->id, x);
	}
}

/* The push direction's statistics per job, in the order of jobs. */
static void fill_jobs_push(const struct tlsd_view *v, struct tls_mx_job *out)
{
	for (unsigned int i = 0; i < v->jobs->n; i++) {
		out[i].name = v->jobs->job[i].name;
		fill_job_stats(v->stats_in, v->jobs->job[i].id, &out[i]);
	}
}

/* A worker's endpoint; a flow that is not TCP says its protocol, so that
 * a UDP flow between the same endpoints is a series of its own. */
static void worker_label(const struct tls_flow_key *k, char *buf, size_t len)
{
	char ep[INET6_ADDRSTRLEN + 8]; /* "[v6 address]:port" */

	tls_flow_endpoint_str(k, true, ep, sizeof(ep));
	if (k->proto == IPPROTO_TCP)
		snprintf(buf, len, "%s", ep);
	else if (k->proto == IPPROTO_UDP)
		snprintf(buf, len, "udp:%s", ep);
	else
		snprintf(buf, len, "%u:%s", k->proto, ep);
}

/* The worker flows of the jobs tlsd has (a flow of an id no job holds is
 * left out: its job is gone). *out is malloc'ed. */
static size_t fill_workers(const struct tlsd_view *v, const struct tls_stats *st,
			   struct tls_mx_worker **out)
{
	size_t nf, i, n = 0;
	struct tls_stats_flow_info *flows = tls_stats_flows_all(st, TLS_STATS_ALL_JOBS, &nf);
	struct tls_mx_worker *w = calloc(nf ? nf : 1, sizeof(*w));

	for (i = 0; w && i < nf; i++) {
		const char *job = name_of(v, flows[i].job);

		if (!job)
			continue;
		w[n].job = job;
		worker_label(&flows[i].key, w[n].worker, sizeof(w[n].worker));
		tls_flow_endpoint_str(&flows[i].key, false, w[n].ps, sizeof(w[n].ps));
		w[n].bytes = flows[i].acc.bytes;
		w[n].b_wk = flows[i].est.b_wk;
		w[n].b_req = flows[i].est.b_req;
		w[n].p_direct = flows[i].est.p_direct;
		w[n].p_solved = flows[i].est.p_solved;
		n++;
	}
	free(flows);
	*out = w;
	return w ? n : 0;
}

static void fill_stats(const struct tlsd_view *v, struct tls_mx *m)
{
	struct tls_stats_calib c;

	/* the fit over every job, as `tlsctl calibrate` gives spotDNN */
	tls_stats_calibrate(v->stats, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &c);
	m->stats = true;
	m->b_ps = c.link.b_ps;
	m->b_ps_measured = c.link.b_ps_measured;
	m->saturated = c.link.saturated;
	m->sat_s = c.link.sat_ns / 1e9;
	m->fit_ok = !c.fit_err;
	m->fit_a = c.fit.a;
	m->fit_b = c.fit.b;
	m->fit_obs = c.fit_err ? 0 : c.fit.nobs;
}

/* The band of a class of tlsd's tree by its minor; false: not one of its. */
static bool class_band(uint32_t minor, unsigned int bands, int *band)
{
	if (minor == 1)
		*band = TLS_MX_BAND_ROOT;
	else if (minor == TLS_HTB_DEFAULT_MINOR)
		*band = TLS_MX_BAND_DEFAULT;
	else if (minor >= TLS_HTB_BAND_MINOR(0) && minor < TLS_HTB_BAND_MINOR(bands))
		*band = (int)(minor - TLS_HTB_BAND_MINOR(0));
	else
		return false;
	return true;
}

/* HTB's own counters, asked of the kernel at each scrape: only while the
 * tree is tlsd's (not while the interface is gone or yielded). */
static size_t fill_classes(const struct tlsd_view *v, struct tls_mx_class *out, bool *read)
{
	struct tls_tc_class_stats cs[MAX_CLASSES];
	size_t n = 0, k = 0;

	*read = false;
	if (!v->tcs || !v->ifindex || (v->heal && v->heal->state != TLS_TREE_INTACT))
		return 0;
	if (tls_tc_state_classes(v->tcs, v->ifindex, TLS_CLASSID(0), cs, MAX_CLASSES, &n))
		return 0;
	*read = true;
	for (size_t i = 0; i < n && i < MAX_CLASSES; i++) {
		int band;

		if ((cs[i].handle >> 16) != TLS_HTB_MAJOR ||
		    !class_band(cs[i].handle & 0xffff, v->cfg->bands, &band))
			continue;
		out[k] = (struct tls_mx_class){
			.handle = cs[i].handle,
			.band = band,
			.bytes = cs[i].bytes,
			.packets = cs[i].packets,
			.drops = cs[i].drops,
			.overlimits = cs[i].overlimits,
			.qlen = cs[i].qlen,
			.backlog = cs[i].backlog,
		};
		k++;
	}
	return k;
}

static void fill_tree(const struct tlsd_view *v, struct tls_mx *m)
{
	const struct tls_heal *h = v->heal;

	m->has_tree = true;
	m->tree_state = tls_tree_state_name(h->state);
	m->watched = h->watched;
	m->heals = h->heals;
	m->failed_heals = h->failed;
	m->yields = h->yields;
	m->returns = h->returns;
	m->rate_changes = h->rate_changes;
	m->heals_recent = tls_heal_recent(h, v->now_ns);
	m->heal_limit = h->limit;
	m->last_heal_s = h->last_ns ? h->last_took_ns / 1e9 : NAN;
}

static double start_time(const struct tlsd_view *v)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9 - v->uptime_ns / 1e9;
}

int tlsd_metrics_text(const struct tlsd_view *v, enum tls_mx_format f, char **text, size_t *len)
{
	struct tls_mx_feature feats[TLS_FEAT__COUNT];
	struct tls_mx_class classes[MAX_CLASSES];
	struct tls_mx_http http[16];
	unsigned int codes[16];
	uint64_t counts[16];
	struct tls_mx_worker *workers = NULL, *workers_push = NULL;
	struct tls_mx_job *jobs, *jobs_push = NULL;
	struct tls_job_stats other = { 0 };
	struct tls_mx m = {
		.version = v->version,
		.ifname = v->cfg->ifname,
		.policy = tls_policy_name(v->cfg->policy),
		.mode = v->cfg->observe ? "observe" : "schedule",
		.start_time_s = start_time(v),
		.rate_bps = v->rate_bps,
		.bands = v->cfg->bands,
		.interval_ns = v->cfg->interval_ns,
		.rotations = v->step,
		.reloads = v->reloads,
		.reload_failures = v->reload_failures,
		.njobs = v->jobs->n,
		.nfeatures = TLS_FEAT__COUNT,
		.features = feats,
		.classes = classes,
		.http = http,
	};
	FILE *out;
	int err;

	*text = NULL;
	*len = 0;
	jobs = calloc(v->jobs->n ? v->jobs->n : 1, sizeof(*jobs));
	if (!jobs)
		return -ENOMEM;
	fill_jobs(v, jobs);
	m.jobs = jobs;
	tls_read_job_stats(v->m, 0, &other); /* job 0: traffic of no job */
	m.other_bytes = other.bytes;
	m.other_packets = other.packets;
	if (v->heal)
		fill_tree(v, &m);
	if (v->stats) {
		fill_stats(v, &m);
		m.nworkers = fill_workers(v, v->stats, &workers);
		m.workers = workers;
	}
	if (v->stats && v->stats_in) {
		jobs_push = calloc(v->jobs->n ? v->jobs->n : 1, sizeof(*jobs_push));
		if (jobs_push) {
			fill_jobs_push(v, jobs_push);
			m.jobs_push = jobs_push;
		}
		m.nworkers_push = fill_workers(v, v->stats_in, &workers_push);
		m.workers_push = workers_push;
	}
	m.nclasses = fill_classes(v, classes, &m.htb_read);
	for (int i = 0; i < TLS_FEAT__COUNT; i++) {
		feats[i].name = tls_feat_desc(i)->name;
		feats[i].in_use = tls_features()[i].state == TLS_FEAT_IN_USE;
		feats[i].missing = tls_features()[i].state == TLS_FEAT_MISSING;
	}
	if (v->http) {
		size_t n = tls_http_counts(v->http, codes, counts, 16);

		for (size_t i = 0; i < n && i < 16; i++)
			http[m.nhttp++] = (struct tls_mx_http){ codes[i], counts[i] };
	}
	out = open_memstream(text, len);
	err = out ? tls_mx_render(out, &m, f) : -ENOMEM;
	if (out && fclose(out) && !err)
		err = -EIO;
	if (err) {
		free(*text);
		*text = NULL;
		*len = 0;
	}
	free(workers);
	free(workers_push);
	free(jobs_push);
	free(jobs);
	return err;
}

int tlsd_metrics_sync(struct tls_http **h, const char *listen, int epfd, tls_http_handler handler,
		      void *ctx)
{
	struct epoll_event ev = { .events = EPOLLIN };
	char old[64] = "";
	struct tls_http *n = NULL;
	int err = 0;

	if (*h && !strcmp(tls_http_addr(*h), listen))
		return 0;
	if (*h) {
		/* first, so that the new address may be the old port on
		 * another address */
		snprintf(old, sizeof(old), "%s", tls_http_addr(*h));
		tls_http_close(*h); /* its fd leaves the epoll as it closes */
		*h = NULL;
		if (!listen[0])
			pr_info("metrics endpoint %s closed\n", old);
	}
	if (listen[0])
		err = tls_http_open(listen, handler, ctx, &n);
	if (err && old[0] && !tls_http_open(old, handler, ctx, &n))
		pr_warn("metrics: keeping the endpoint on %s\n", old);
	if (n && epfd >= 0) {
		ev.data.fd = tls_http_fd(n);
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
			pr_warn("metrics: cannot watch the endpoint: %s\n", strerror(errno));
			err = err ? err : -errno;
			tls_http_close(n);
			n = NULL;
		}
	}
	*h = n;
	return err;
}

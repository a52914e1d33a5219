// SPDX-License-Identifier: GPL-2.0-only
/* tlsd's metrics from the daemon's state: tlsd_metrics.h. */
#define _GNU_SOURCE /* open_memstream, fopencookie */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The jobs, their counters from cnt (by id); their statistics too unless
 * the cached blocks have them. */
static void fill_jobs(const struct tlsd_view *v, struct tls_mx_job *out,
		      const struct tls_job_stats *cnt, bool stats)
{
	for (unsigned int i = 0; i < v->jobs->n; i++) {
		const struct tls_job_entry *j = &v->jobs->job[i];
		struct tls_mx_job *x = &out[i];
		const struct tls_job_stats st = cnt[j->id];
		__u32 band = TLS_BAND_NONE;

		x->name = j->name;
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
		if (stats)
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

/* order of the statistics' flows: by job, then key */
static int name_cmp(const struct tlsd_mx_name *n, const struct tls_stats_flow_info *f)
{
	if (n->job != f->job)
		return n->job < f->job ? -1 : 1;
	return memcmp(&n->key, &f->key, sizeof(n->key));
}

static void names_free(struct tlsd_mx_name *e, size_t n)
{
	for (size_t i = 0; e && i < n; i++)
		free(e[i].set);
	free(e);
}

/* w's label set, kept in name (NULL if there is no memory: then made at
 * the render) */
static void name_set(struct tlsd_mx_name *name, const struct tls_mx_worker *w, bool push)
{
	size_t len = tls_mx_worker_set(w, push, NULL, 0) + 1;

	name->set = malloc(len);
	if (name->set)
		tls_mx_worker_set(w, push, name->set, len);
}

/* The worker flows of the jobs tlsd has (a flow of an id no job holds is
 * left out: its job is gone) in direction push. *out is malloc'ed. Their
 * endpoints and label sets from names where the last reading had the flow
 * (both lists are in the same order: one pass over the two; the sets only
 * if the jobs are as they were, jk), which then holds this reading's;
 * names NULL: all made anew. */
static size_t fill_workers(const struct tlsd_view *v, const struct tls_stats *st, bool push,
			   struct tlsd_mx_names *names, uint64_t jk, struct tls_mx_worker **out)
{
	size_t nf, i, n = 0, k = 0;
	struct tls_stats_flow_info *flows = tls_stats_flows_all(st, TLS_STATS_ALL_JOBS, &nf);
	struct tls_mx_worker *w = calloc(nf ? nf : 1, sizeof(*w));
	struct tlsd_mx_name *fresh = names ? calloc(nf ? nf : 1, sizeof(*fresh)) : NULL;
	struct tlsd_mx_name *old = names ? names->e : NULL;
	size_t nold = names ? names->n : 0;

	for (i = 0; w && i < nf; i++) {
		const char *job = name_of(v, flows[i].job);
		struct tlsd_mx_name *was = NULL;

		if (!job)
			continue;
		w[n].job = job;
		while (k < nold && name_cmp(&old[k], &flows[i]) < 0)
			k++;
		if (k < nold && !name_cmp(&old[k], &flows[i]))
			was = &old[k];
		if (was) {
			memcpy(w[n].worker, was->worker, sizeof(w[n].worker));
			memcpy(w[n].ps, was->ps, sizeof(w[n].ps));
		} else {
			worker_label(&flows[i].key, w[n].worker, sizeof(w[n].worker));
			tls_flow_endpoint_str(&flows[i].key, false, w[n].ps, sizeof(w[n].ps));
		}
		if (fresh) {
			fresh[n].job = flows[i].job;
			fresh[n].key = flows[i].key;
			memcpy(fresh[n].worker, w[n].worker, sizeof(fresh[n].worker));
			memcpy(fresh[n].ps, w[n].ps, sizeof(fresh[n].ps));
			if (was && was->set && names->jobs == jk) {
				fresh[n].set = was->set; /* moved */
				was->set = NULL;
			} else {
				name_set(&fresh[n], &w[n], push);
			}
			w[n].set = fresh[n].set;
		}
		w[n].bytes = flows[i].acc.bytes;
		w[n].b_wk = flows[i].est.b_wk;
		w[n].b_req = flows[i].est.b_req;
		w[n].p_direct = flows[i].est.p_direct;
		w[n].p_solved = flows[i].est.p_solved;
		n++;
	}
	free(flows);
	if (names) {
		names_free(old, nold);
		names->e = fresh;
		names->n = fresh ? n : 0;
		names->jobs = jk;
	}
	*out = w;
	return w ? n : 0;
}

/* The link now; the fit over every job, as `tlsctl calibrate` gives
 * spotDNN, from fit (kept with the blocks: the observations change with
 * the flow readings, and the fit scans them all for each) or anew. */
static void fill_stats(const struct tlsd_view *v, struct tls_mx *m, struct tlsd_mx_fit *fit)
{
	struct tls_stats_link_info l;
	struct tls_stats_fit f;

	tls_stats_link(v->stats, &l);
	m->stats = true;
	m->b_ps = l.b_ps;
	m->b_ps_measured = l.b_ps_measured;
	m->saturated = l.saturated;
	m->sat_s = l.sat_ns / 1e9;
	if (!fit->valid) {
		fit->ok = !tls_stats_fit(v->stats, TLS_STATS_ALL_JOBS, TLS_FIT_SOLVED, &f);
		fit->a = f.a;
		fit->b = f.b;
		fit->nobs = fit->ok ? f.nobs : 0;
	}
	m->fit_ok = fit->ok;
	m->fit_a = fit->a;
	m->fit_b = fit->b;
	m->fit_obs = fit->nobs;
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

/* HTB's own counters, asked of the kernel for each answer: only while the
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

static void kept_unref(void *ref)
{
	struct tlsd_mx_kept *k = ref;

	if (!k || --k->refs)
		return;
	for (size_t b = 0; b < TLS_MX__BLOCKS; b++)
		free(k->text[b]);
	free(k);
}

static void answer_unref(void *ref)
{
	struct tlsd_mx_answer *a = ref;

	if (!a || --a->refs)
		return;
	kept_unref(a->kept);
	free(a->text);
	free(a);
}

void tlsd_mx_cache_clear(struct tlsd_mx_cache *c)
{
	for (size_t f = 0; f < 2; f++) {
		answer_unref(c->answer[f]); /* as the blocks */
		c->answer[f] = NULL;
	}
	for (size_t f = 0; f < 2; f++) {
		kept_unref(c->fmt[f].kept); /* the scrapes still sending it keep theirs */
		memset(&c->fmt[f], 0, sizeof(c->fmt[f]));
	}
	for (size_t d = 0; d < 2; d++) {
		names_free(c->names[d].e, c->names[d].n);
		c->names[d] = (struct tlsd_mx_names){ 0 };
	}
	memset(c->last_len, 0, sizeof(c->last_len));
}

/* The jobs' ids and names (FNV-1a): a job renamed, gone or come between
 * two flow readings changes the blocks too. */
static uint64_t jobs_key(const struct tls_jobs *t)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (unsigned int i = 0; i < t->n; i++) {
		const unsigned char *p = (const unsigned char *)t->job[i].name;

		h = (h ^ t->job[i].id) * 0x100000001b3ULL;
		do
			h = (h ^ *p) * 0x100000001b3ULL; /* its NUL too: "ab","c" is not "a","bc" */
		while (*p++);
	}
	return h;
}

/* Render m's blocks into c (as new blocks: its old ones stay with the
 * scrapes still sending them); false: c stays empty. */
static bool cache_blocks(struct tlsd_mx_blocks *c, const struct tls_mx *m, enum tls_mx_format f)
{
	struct tlsd_mx_kept *k = calloc(1, sizeof(*k));
	bool ok = k;

	kept_unref(c->kept);
	c->kept = NULL;
	for (size_t b = 0; ok && b < TLS_MX__BLOCKS; b++) {
		FILE *out = open_memstream(&k->text[b], &k->len[b]);

		ok = out && !tls_mx_render_block(out, m, f, (enum tls_mx_block)b);
		if (out && fclose(out))
			ok = false;
	}
	if (k) {
		k->refs = 1;
		if (ok)
			c->kept = k;
		else
			kept_unref(k);
	}
	return ok;
}

/*
 * The text's buffer, sized from the last text of the format: with
 * open_memstream, which grows by doubling, the half-megabyte blocks of a
 * scrape of 1024 flows were copied about twice more (perf: memmove).
 */
struct text {
	char *buf;
	size_t len, cap; /* cap > len: room for the NUL */
};

static ssize_t text_write(void *cookie, const char *p, size_t n)
{
	struct text *t = cookie;

	if (t->len + n >= t->cap) {
		size_t cap = t->cap;
		char *b;

		while (cap <= t->len + n)
			cap *= 2;
		b = realloc(t->buf, cap);
		if (!b)
			return 0; /* fopencookie's error */
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
	return (ssize_t)n;
}

static FILE *text_open(struct text *t, size_t hint)
{
	FILE *f;

	t->len = 0;
	t->cap = hint + hint / 8 + 16384;
	t->buf = malloc(t->cap);
	if (!t->buf)
		return NULL;
	f = fopencookie(t, "w", (cookie_io_functions_t){ .write = text_write });
	if (!f) {
		free(t->buf);
		t->buf = NULL;
	}
	return f;
}

static double start_time(const struct tlsd_view *v)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9 - v->uptime_ns / 1e9;
}

/* Where the blocks cut out of a text go (struct tls_mx's cut): an HTTP
 * body of text, block, text, block, text. */
_Static_assert(2 * TLS_MX__BLOCKS + 1 <= TLS_HTTP_MAX_PIECES, "a body's pieces");

struct cuts {
	const struct text *g;
	size_t n;
	enum tls_mx_block block[TLS_MX__BLOCKS];
	size_t at[TLS_MX__BLOCKS]; /* the text's length there */
};

static void cut_at(void *ctx, enum tls_mx_block b)
{
	struct cuts *c = ctx;

	if (c->n < TLS_MX__BLOCKS) {
		c->block[c->n] = b;
		c->at[c->n++] = c->g->len; /* the FILE is flushed */
	}
}

/*
 * The text of format f into *g (its buffer NUL-terminated), with the kept
 * blocks cut out of it if cuts is set and there are kept blocks (then
 * *kept is a new reference to them, and cuts says where each goes), else
 * written in (*kept NULL).
 */
static int build(const struct tlsd_view *v, enum tls_mx_format f, struct cuts *cuts,
		 struct text *gout, struct tlsd_mx_kept **kept)
{
	struct tls_mx_feature feats[TLS_FEAT__COUNT];
	struct tls_mx_class classes[MAX_CLASSES];
	struct tls_mx_http http[16];
	unsigned int codes[16];
	uint64_t counts[16];
	struct tls_mx_worker *workers = NULL, *workers_push = NULL;
	struct tls_mx_job *jobs, *jobs_push = NULL;
	struct tls_job_stats *cnt;
	__u32 last = 0;
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
		.workers_on = v->cfg->metrics_workers,
		.features = feats,
		.classes = classes,
		.http = http,
	};
	struct text g = { 0 };
	struct tlsd_mx_blocks *c = v->mx_cache && v->stats ? &v->mx_cache->fmt[f] : NULL;
	uint64_t gen = v->stats ? tls_stats_flow_gen(v->stats) : 0;
	uint64_t gen_in = v->stats && v->stats_in ? tls_stats_flow_gen(v->stats_in) : 0;
	uint64_t jk = jobs_key(v->jobs);
	bool cached = c && c->kept && c->gen == gen && c->gen_in == gen_in && c->jobs == jk &&
		      c->workers == v->cfg->metrics_workers;
	struct tlsd_mx_names *names = v->mx_cache ? v->mx_cache->names : NULL;
	FILE *out;
	int err;

	*gout = (struct text){ 0 };
	*kept = NULL;
	jobs = calloc(v->jobs->n ? v->jobs->n : 1, sizeof(*jobs));
	if (!jobs)
		return -ENOMEM;
	/* every job's counters in a syscall or two, not two each */
	for (unsigned int i = 0; i < v->jobs->n; i++)
		if (v->jobs->job[i].id > last)
			last = v->jobs->job[i].id;
	cnt = calloc((size_t)last + 1, sizeof(*cnt));
	if (!cnt) {
		free(jobs);
		return -ENOMEM;
	}
	if (tls_read_jobs_stats(v->m, last, cnt))
		memset(cnt, 0, ((size_t)last + 1) * sizeof(*cnt)); /* as a failed read before */
	fill_jobs(v, jobs, cnt, !cached);
	m.jobs = jobs;
	m.other_bytes = cnt[0].bytes; /* job 0: traffic of no job */
	m.other_packets = cnt[0].packets;
	free(cnt);
	if (v->heal)
		fill_tree(v, &m);
	if (v->stats) {
		struct tlsd_mx_fit fresh = { 0 };

		fill_stats(v, &m, cached ? &c->fit : &fresh);
		if (c && !cached) {
			c->fit = fresh;
			c->fit.valid = true;
		}
		if (!cached && m.workers_on) {
			m.nworkers = fill_workers(v, v->stats, false, names ? &names[0] : NULL, jk,
						  &workers);
			m.workers = workers;
		}
	}
	if (v->stats && v->stats_in && !cached) {
		jobs_push = calloc(v->jobs->n ? v->jobs->n : 1, sizeof(*jobs_push));
		if (jobs_push) {
			fill_jobs_push(v, jobs_push);
			m.jobs_push = jobs_push;
		}
		if (m.workers_on) {
			m.nworkers_push = fill_workers(v, v->stats_in, true,
						       names ? &names[1] : NULL, jk, &workers_push);
			m.workers_push = workers_push;
		}
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
	if (c && !cached && cache_blocks(c, &m, f)) {
		c->gen = gen;
		c->gen_in = gen_in;
		c->jobs = jk;
		c->workers = v->cfg->metrics_workers;
	}
	for (size_t b = 0; c && c->kept && b < TLS_MX__BLOCKS; b++)
		m.blocks[b] = (struct tls_mx_text){ c->kept->text[b], c->kept->len[b] };
	if (cuts && c && c->kept) {
		*cuts = (struct cuts){ .g = &g };
		m.cut = cut_at;
		m.cut_ctx = cuts;
		*kept = c->kept;
	}
	out = text_open(&g, v->mx_cache ? v->mx_cache->last_len[f][!!*kept] : 0);
	err = out ? tls_mx_render(out, &m, f) : -ENOMEM;
	if (out && fclose(out) && !err)
		err = -EIO;
	if (err || !g.buf) {
		free(g.buf);
		err = err ? err : -ENOMEM;
		*kept = NULL;
	} else {
		g.buf[g.len] = '\0';
		*gout = g;
		if (v->mx_cache)
			v->mx_cache->last_len[f][!!*kept] = g.len;
		if (*kept) /* the caller's, until its answer is out */
			(*kept)->refs++;
	}
	free(workers);
	free(workers_push);
	free(jobs_push);
	free(jobs);
	return err;
}

int tlsd_metrics_text(const struct tlsd_view *v, enum tls_mx_format f, char **text, size_t *len)
{
	struct tlsd_mx_kept *kept;
	struct text g;
	int err = build(v, f, NULL, &g, &kept);

	*text = err ? NULL : g.buf;
	*len = err ? 0 : g.len;
	return err;
}

/* What an answer is of, but for the counters and the statistics: a
 * reload, a new policy, jobs come, gone or renamed, the tree healed,
 * yielded or back, the link's rate changed, and the next scrape is
 * answered anew (FNV-1a over them). */
static uint64_t answer_key(const struct tlsd_view *v)
{
	uint64_t f[] = {
		jobs_key(v->jobs),
		v->reloads,
		v->reload_failures,
		v->cfg->policy,
		v->cfg->bands,
		v->cfg->interval_ns,
		v->cfg->metrics_workers,
		v->policy_live,
		v->stats != NULL,
		v->heal ? v->heal->state : 0,
		v->heal ? v->heal->heals + v->heal->failed + v->heal->yields : 0,
		v->heal ? v->heal->returns + v->heal->rate_changes : 0,
		v->heal ? v->heal->watched : 0,
		v->ifindex,
		v->rate_bps,
	};
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		h = (h ^ f[i]) * 0x100000001b3ULL;
	return h;
}

/* The answer's body from a (a new reference) */
static void body_of(struct tlsd_mx_answer *a, struct tls_http_body *b)
{
	a->refs++;
	b->release = answer_unref;
	b->ref = a;
	memcpy(b->piece, a->piece, a->npieces * sizeof(a->piece[0]));
	b->npieces = a->npieces;
}

int tlsd_metrics_body(const struct tlsd_view *v, enum tls_mx_format f, struct tls_http_body *b)
{
	struct tlsd_mx_answer *a = v->mx_cache ? v->mx_cache->answer[f] : NULL;
	struct tlsd_mx_kept *kept;
	struct cuts cuts;
	struct text g;
	size_t from = 0;
	int err;

	uint64_t key = answer_key(v);

	/* a scrape within a statistics period of the last answer gets it (a
	 * second at most, whatever the period: the counters are not older) */
	if (a && a->key == key && v->now_ns - a->built_ns < v->stats_period_ns &&
	    v->now_ns - a->built_ns < TLSD_MX_ANSWER_MAX_NS) {
		body_of(a, b);
		return 0;
	}
	err = build(v, f, &cuts, &g, &kept);
	if (err)
		return err;
	a = calloc(1, sizeof(*a));
	if (!a) {
		free(g.buf);
		kept_unref(kept);
		return -ENOMEM;
	}
	a->refs = 1;
	a->built_ns = v->now_ns;
	a->key = key;
	a->text = g.buf;
	a->kept = kept;
	/* the blocks go out from the kept memory, which the answer keeps while
	 * it is going out, if the cache moves on meanwhile */
	for (size_t k = 0; kept && k < cuts.n; k++) {
		a->piece[a->npieces++] = (struct tls_piece){ g.buf + from, cuts.at[k] - from };
		a->piece[a->npieces++] =
			(struct tls_piece){ kept->text[cuts.block[k]], kept->len[cuts.block[k]] };
		from = cuts.at[k];
	}
	a->piece[a->npieces++] = (struct tls_piece){ g.buf + from, g.len - from };
	body_of(a, b);
	if (v->mx_cache) {
		answer_unref(v->mx_cache->answer[f]);
		v->mx_cache->answer[f] = a;
	} else {
		answer_unref(a);
	}
	return 0;
}

int tlsd_metrics_sync(struct tls_http **h, const char *listen, int epfd, struct tls_source *src,
		      tls_http_handler handler, void *ctx)
{
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
		tls_loop_forget(src);
		*h = NULL;
		if (!listen[0])
			pr_info("metrics endpoint %s closed\n", old);
	}
	if (listen[0])
		err = tls_http_open(listen, handler, ctx, &n);
	if (err && old[0] && !tls_http_open(old, handler, ctx, &n))
		pr_warn("metrics: keeping the endpoint on %s\n", old);
	if (n && epfd >= 0) {
		int e = tls_loop_watch(epfd, src, tls_http_fd(n));

		if (e) {
			pr_warn("metrics: cannot watch the endpoint: %s\n", strerror(-e));
			err = err ? err : e;
			tls_http_close(n);
			tls_loop_forget(src);
			n = NULL;
		}
	}
	*h = n;
	return err;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * tlsd: schedules the model-update traffic of colocated parameter servers.
 * Builds the HTB tree (shaper.c), attaches the classifier (classifier.c),
 * gives each job a band by policy (policy.c) and rotates the bands on a
 * timer, all from one epoll loop: signals through a signalfd, the rotation
 * through a timerfd.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <getopt.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include <bpf/bpf.h>

#include "classifier.h"
#include "bpffs.h"
#include "config.h"
#include "ctl.h"
#include "discover.h"
#include "kernel_features.h"
#include "proc_conn.h"
#include "jobs.h"
#include "log.h"
#include "pin_layout.h"
#include "policy.h"
#include "shaper.h"
#include "stats.h"
#include "stats_ingress.h"
#include "stats_sampler.h"
#include "tc_state.h"
#include "tlsd_ctl.h"
#include "tlsd_metrics.h"
#include "tree_heal.h"
#include "tree_watch.h"
#include "units.h"

/* What the command line set: it wins over the file, also after a reload. */
struct overrides {
	const char *ifname, *policy, *interval, *rate;
	const char *ctl_path; /* -s: tlsd@IF.service gives each instance its own */
	bool replace_qdisc;   /* --replace-qdisc */
	bool observe;	      /* --observe */
};

struct tlsd {
	const char *conf_path;
	bool conf_required; /* -c given: a missing file is an error */
	struct overrides ov;
	struct tls_config cfg; /* in force */
	uint64_t rate_bps;
	struct tls_shaper *shaper;
	struct tls_cls *cls;
	const struct tls_maps *m;
	struct tls_jobs jobs;
	uint64_t step;
	unsigned int burst_bands; /* policy bursts: the order set for so many bands; 0 */
	uint64_t burst_rate;	  /* and for this link rate (bit/s) */
	int sfd, tfd, epfd;
	/* After a takeover, until the first sync: the previous run's job
	 * names by id, so that each job keeps its id (and its counters). */
	char (*prev_names)[TLS_JOB_NAME_LEN];
	int lock_fd;
	struct tls_ctl *ctl;	 /* the control socket */
	struct tls_stats *stats; /* NULL: statistics off */
	struct tls_sampler *sampler;
	/* the same for what the PS receives (push); NULL: no ingress counter */
	struct tls_stats *stats_in;
	struct tls_ingress_sampler *isampler;
	int stfd; /* the statistics' timer */
	uint64_t started_ns;
	/* tlsctl's policy and interval, kept across reloads (see
	 * keep_live_policy); the configuration's, for status and reset */
	struct {
		bool policy_set, interval_set;
		enum tls_policy policy;
		uint64_t interval_ns;
	} live;
	enum tls_policy conf_policy;
	uint64_t conf_interval_ns;
	struct tls_discover *disc; /* NULL: discovery off */
	bool started;		   /* jobs' bands written: a new job rewrites them */
	/* The self-healing tree: notifications (NULL: the kernel refused
	 * them), the kernel's answers about the interface, the check's timer
	 * (a burst of notifications settles first), what the burst said. */
	struct tls_tw *tw;
	struct tls_tc_state *tcs;
	int htfd;
	bool check_armed, check_failing;
	unsigned int pending;
	int ifindex; /* of the interface scheduled; 0 while it is absent */
	struct tls_heal heal;
	struct tls_http *metrics; /* the metrics endpoint (metrics_listen); NULL: off */
	struct tlsd_mx_cache mx_cache; /* the metrics' blocks of the last flow reading */
	uint64_t reloads, reload_failures;
};

static const char usage_text[] =
	"Usage: tlsd [OPTIONS]\n"
	"Schedules the model-update traffic of the parameter servers on this host:\n"
	"one HTB band per job on the egress interface, priorities rotated by policy.\n"
	"\n"
	"  -c, --config FILE     configuration file (default " TLS_CONF_DEFAULT ")\n"
	"  -i, --interface IF    egress interface (overrides the file)\n"
	"  -p, --policy P        fifo, one, roundrobin or bursts (overrides the file)\n"
	"  -t, --interval T      rotation interval, e.g. 20s, 500ms (at least 10ms)\n"
	"  -r, --rate R          link rate, e.g. 10gbit, at least 8kbit; auto: the driver's\n"
	"                        (the default)\n"
	"  -s, --control-socket PATH\n"
	"                        the control socket (overrides control_socket)\n"
	"      --replace-qdisc   replace a root qdisc on the interface that is not the\n"
	"                        kernel's default (put back at exit); without it (or\n"
	"                        replace_qdisc = true; in the file) start refuses\n"
	"      --observe         observe only (mode = \"observe\"; in the file): classify\n"
	"                        and count, never touch the root qdisc, build no HTB\n"
	"                        tree, steer or mark no packet\n"
	"  -f, --foreground      stay in the foreground, log to stderr\n"
	"  -v, --verbose         more messages (twice: debug)\n"
	"  -N, --netns NAME      work on an interface in network namespace NAME (or a path\n"
	"                        such as /proc/PID/ns/net), like ip -n\n"
	"      --cleanup         remove what a tlsd that died left, on every interface (none\n"
	"                        a running tlsd holds), and exit\n"
	"      --probe           list the kernel features tlsd uses (available, or missing\n"
	"                        and why) and exit; 1 if a required one is missing\n"
	"      --summary         with --probe: one line (found; missing: name(errno))\n"
	"      --check-config    check the configuration (-c; -i -p -t -r -s --observe\n"
	"                        --replace-qdisc) as a start\n"
	"                        or reload would, print a summary and exit: 0 if good,\n"
	"                        1 if not (the reason on stderr); needs no root and\n"
	"                        changes nothing\n"
	"  -V, --version         print the version\n"
	"  -h, --help            this text\n"
	"\n"
	"Signals: SIGHUP reloads the configuration (a bad one is refused and the\n"
	"running one kept) and takes back an interface tlsd yielded to another tool,\n"
	"SIGTERM/SIGINT restore the interface and exit.\n"
	"\n"
	"tlsd rebuilds its HTB tree, its filter and clsact when they vanish or are\n"
	"replaced, and an interface that is deleted and created again; after more than\n"
	"heal_limit heals within heal_window (5 in 60s) it yields the interface.\n";

static int apply_overrides(const struct overrides *ov, struct tls_config *c, char *err,
			   size_t errlen)
{
	c->replace_qdisc |= ov->replace_qdisc;
	c->observe |= ov->observe;
	if (ov->ifname) {
		if (strlen(ov->ifname) >= sizeof(c->ifname)) {
			snprintf(err, errlen, "-i: interface name '%s' too long", ov->ifname);
			return -EINVAL;
		}
		snprintf(c->ifname, sizeof(c->ifname), "%s", ov->ifname);
	}
	if (ov->ctl_path) {
		if (ov->ctl_path[0] != '/' || strlen(ov->ctl_path) >= sizeof(c->ctl_path)) {
			snprintf(err, errlen,
				 "-s: control socket '%s' must be an absolute path of at most %zu "
				 "characters",
				 ov->ctl_path, sizeof(c->ctl_path) - 1);
			return -EINVAL;
		}
		snprintf(c->ctl_path, sizeof(c->ctl_path), "%s", ov->ctl_path);
	}
	if (ov->policy && tls_policy_parse(ov->policy, &c->policy)) {
		snprintf(err, errlen, "-p: '%s' is not one of " TLS_POLICY_NAMES, ov->policy);
		return -EINVAL;
	}
	if (ov->interval && tls_parse_duration(ov->interval, &c->interval_ns)) {
		snprintf(err, errlen, "-t: '%s' is not a duration (example: 20s, 500ms)",
			 ov->interval);
		return -EINVAL;
	}
	if (ov->rate && !strcmp(ov->rate, "auto")) {
		c->rate_bps = 0;
	} else if (ov->rate && tls_parse_rate(ov->rate, &c->rate_bps)) {
		snprintf(err, errlen, "-r: '%s' is not a rate (example: 10gbit, or auto)",
			 ov->rate);
		return -EINVAL;
	} else if (ov->rate && c->rate_bps < TLS_LINK_RATE_MIN_BPS) {
		snprintf(err, errlen,
			 "-r: %s is below the least HTB can pace (8kbit); auto takes the "
			 "interface's speed",
			 ov->rate);
		return -EINVAL;
	}
	return 0;
}

/* The file, then the command line, then the checks; *out only on success. */
static int read_config(struct tlsd *d, struct tls_config *out)
{
	struct tls_config *c = malloc(sizeof(*c));
	char err[512] = "";
	int ret = 0;

	if (!c)
		return -ENOMEM;
	tls_config_defaults(c);
	if (access(d->conf_path, F_OK) == 0 || d->conf_required)
		ret = tls_config_load_file(d->conf_path, c, err, sizeof(err));
	if (!ret)
		ret = apply_overrides(&d->ov, c, err, sizeof(err));
	if (!ret)
		ret = tls_config_validate(c, err, sizeof(err));
	if (ret)
		pr_err("configuration: %s\n", err);
	else
		*out = *c;
	free(c);
	return ret;
}

/* --check-config: read_config and nothing else, so that what it accepts a
 * start or a reload accepts too. No root needed: nothing is locked or
 * changed, and the file is read with the caller's rights. */
static int check_config(struct tlsd *d)
{
	char rate[32] = "auto", ival[32];

	if (read_config(d, &d->cfg))
		return 1;
	if (d->cfg.rate_bps)
		tls_format_rate(d->cfg.rate_bps, rate, sizeof(rate));
	tls_format_duration(d->cfg.interval_ns, ival, sizeof(ival));
	printf("configuration OK: %u jobs, policy %s, interval %s, interface %s, link rate %s, "
	       "%u bands, discovery %s, control socket %s, mode %s\n",
	       d->cfg.njobs, tls_policy_name(d->cfg.policy), ival, d->cfg.ifname, rate,
	       d->cfg.bands, d->cfg.discovery.enabled ? "on" : "off", d->cfg.ctl_path,
	       d->cfg.observe ? "observe" : "schedule");
	return 0;
}

/* A job's port, on any local address of both families. */
static int port_endpoints(struct tlsd *d, uint16_t port, uint32_t id, bool add)
{
	struct tls_endpoint_key k = { .proto = IPPROTO_TCP, .port = htons(port) };
	int f, err;

	for (f = 0; f < 2; f++) {
		k.family = f ? AF_INET6 : AF_INET;
		if (!add) {
			tls_del_endpoint(d->m, &k);
			continue;
		}
		err = tls_add_endpoint(d->m, &k, id);
		if (err)
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

/* A crashed run's endpoint stays if a PS discovery follows holds it, or it
 * is a port of the static job its id has now. */
static bool endpoint_kept(const struct tlsd *d, const struct tls_endpoint_key *k,
			  const struct tls_job_entry *const *by_id)
{
	const struct tls_job_entry *j;
	uint32_t job = 0;
	unsigned int p;

	if (tls_discover_holds_endpoint(d->disc, k))
		return true;
	if (bpf_map_lookup_elem(d->m->endpoints, k, &job) || job >= TLS_MAX_JOBS)
		return false;
	j = by_id[job];
	for (p = 0; j && p < j->nports; p++)
		if (j->ports[p] == ntohs(k->port))
			return true;
	return false;
}

/* After a takeover: what the crashed run left for jobs that are gone, or
 * for ports a job no longer has, goes. Each map's keys are read once and
 * then judged (deleting during a walk would restart it at every delete:
 * quadratic in the endpoints). */
static void purge_leftovers(struct tlsd *d)
{
	const struct tls_job_entry **by_id = calloc(TLS_MAX_JOBS, sizeof(*by_id));
	struct tls_endpoint_key *eps = NULL;
	__u32 *pids = NULL;
	size_t n, i;
	uint32_t id;

	if (!by_id) {
		pr_warn("takeover: out of memory: the crashed run's leftovers stay\n");
		return;
	}
	for (id = 1; id < TLS_MAX_JOBS; id++) {
		by_id[id] = job_by_id(d, id);
		if (d->prev_names[id][0] && !by_id[id])
			tls_free_job_id(d->m, id);
	}
	n = tls_map_keys(d->m->endpoints, sizeof(*eps), TLS_MAX_ENDPOINTS, (void **)&eps);
	for (i = 0; i < n; i++)
		if (!endpoint_kept(d, &eps[i], by_id))
			tls_del_endpoint(d->m, &eps[i]);
	/* Processes the crashed run had joined that discovery does not
	 * follow now (exited, or no PS by the new rules): their pid entry and
	 * socket tags would give a reused pid or id the wrong job. */
	n = tls_map_keys(d->m->pids, sizeof(*pids), TLS_MAX_PIDS, (void **)&pids);
	for (i = 0; i < n; i++)
		if (!tls_discover_holds_pid(d->disc, (pid_t)pids[i]))
			tls_del_process(d->m, (pid_t)pids[i]);
	free(pids);
	free(eps);
	free(by_id);
}

/* Both directions' engines (pull: egress, push: ingress) alike. */
static void stats_forget_job(struct tlsd *d, uint32_t id)
{
	if (d->stats)
		tls_stats_forget_job(d->stats, id);
	if (d->stats_in)
		tls_stats_forget_job(d->stats_in, id);
}

static void stats_set_link_rate(struct tlsd *d, uint64_t rate)
{
	if (d->stats)
		tls_stats_set_link_rate(d->stats, rate);
	if (d->stats_in)
		tls_stats_set_link_rate(d->stats_in, rate);
}

/* Append a job: a job the crashed run had keeps its id and counts on; any
 * other gets a fresh id whose counters start from zero. */
static int add_job(struct tlsd *d, const char *name, const uint16_t *ports, unsigned int nports,
		   uint32_t *out)
{
	uint32_t id = prev_id(d, name);
	int err;

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
		stats_forget_job(d, id);
	}
	tls_set_job_name(d->m, id, name);
	*out = id;
	return 0;
}

/* Make the job table match the configuration's static jobs. */
static int sync_jobs(struct tlsd *d, const struct tls_config *c)
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
		tls_jobs_remove(&d->jobs, j->name, &id);
		stats_forget_job(d, id);
	}
	for (i = 0; i < c->njobs; i++) {
		const struct tls_job_conf *jc = &c->jobs[i];

		int k = tls_jobs_find(&d->jobs, jc->name);

		if (k >= 0) {
			/* a discovered job the file now names: the file's */
			d->jobs.job[k].discovered = false;
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
static void apply_lead_headroom(struct tlsd *d)
{
	uint64_t ppm = tls_policy_lead_headroom(d->cfg.policy, d->jobs.n, d->cfg.bands,
						d->cfg.lead_headroom_ppm);
	char r[32];
	int err;

	if (!d->shaper)
		return;
	err = tls_shaper_set_lead_headroom(d->shaper, ppm);
	/* the ceiling asked for (on failure the shaper keeps the old one) */
	tls_format_rate(tls_rate_less_ppm(d->rate_bps, ppm), r, sizeof(r));
	if (err < 0)
		pr_warn("cannot set the top band's ceiling to %s: %s\n", r, strerror(-err));
	else if (err > 0)
		pr_info("top band's ceiling: %s (lead_headroom %g%%, policy %s, %u jobs)\n", r,
			ppm / 1e4, tls_policy_name(d->cfg.policy), d->jobs.n);
}

/* Write every job's band for the current policy and step. */
static int assign_bands(struct tlsd *d)
{
	unsigned int bands[TLS_MAX_JOBS], i;
	__u32 ids[TLS_MAX_JOBS], b[TLS_MAX_JOBS];
	struct timespec t0, t1;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Policy bursts: the classifier orders the jobs itself. Its order is
	 * emptied when the policy starts or the bands change, before the
	 * jobs are flagged; an order left by an earlier policy would be stale. */
	if (d->cfg.policy != TLS_POLICY_BURSTS || d->cfg.observe) {
		d->burst_bands = 0;
	} else if (tls_features()[TLS_FEAT_BURSTS].state == TLS_FEAT_MISSING) {
		static bool said;

		if (!said)
			pr_warn("policy bursts is not available on this kernel (its verifier "
				"refused the code; see tlsd --probe): the jobs share the last "
				"band, as under fifo\n");
		said = true;
	} else if (d->burst_bands != d->cfg.bands || d->burst_rate != d->rate_bps) {
		err = tls_set_burst_order(d->m, d->cfg.bands, TLS_BURST_GAP_NS, TLS_BURST_GRACE_NS,
					  TLS_BURST_LIMIT_NS, d->rate_bps);
		if (err)
			pr_warn("policy bursts: cannot set up the burst order (%s): the jobs share "
				"the last band\n",
				strerror(-err));
		else {
			d->burst_bands = d->cfg.bands;
			d->burst_rate = d->rate_bps;
		}
	}
	tls_policy_assign(d->cfg.policy, d->jobs.n, d->cfg.bands, d->step, bands);
	for (i = 0; i < d->jobs.n; i++) {
		ids[i] = d->jobs.job[i].id;
		/* observe: counted, in no band (the classifier would not
		 * steer them anyway; status shows no band either) */
		b[i] = d->cfg.observe ? TLS_BAND_NONE : bands[i];
	}
	err = tls_set_job_bands(d->m, ids, b, d->jobs.n, d->burst_bands ? TLS_JOB_F_BURST : 0);
	if (!err && !d->cfg.observe)
		tls_jobs_note_bands(&d->jobs, bands);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (d->jobs.n)
		pr_debug("step %llu: %s leads, applied in %.1f us\n", (unsigned long long)d->step,
			 d->jobs.job[d->cfg.policy == TLS_POLICY_RR ? d->step % d->jobs.n : 0].name,
			 (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
	if (err)
		pr_warn("cannot write the jobs' bands: %s\n", strerror(-err));
	apply_lead_headroom(d);
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
		assign_bands(d);
	return id;
}

static void disc_job_down(void *ctx, const char *name, uint32_t id)
{
	struct tlsd *d = ctx;
	int i = tls_jobs_find(&d->jobs, name);

	if (i < 0 || !d->jobs.job[i].discovered)
		return; /* the file's job stays */
	tls_jobs_remove(&d->jobs, name, &id);
	tls_free_job_id(d->m, id);
	pr_info("job %s (id %u) removed: its last PS is gone\n", name, id);
	stats_forget_job(d, id);
	if (d->started)
		assign_bands(d);
}

static const struct tls_discover_hooks disc_hooks = {
	.job_up = disc_job_up,
	.job_down = disc_job_down,
};

/* Discovery on, off or with new rules, as the configuration says. */
static int sync_discovery(struct tlsd *d, const struct tls_config *c)
{
	int err;

	if (!c->discovery.enabled) {
		if (d->disc)
			pr_info("discovery off: forgetting the discovered jobs\n");
		tls_discover_free(d->disc);
		d->disc = NULL;
		return 0;
	}
	if (d->disc)
		return tls_discover_set_conf(d->disc, &c->discovery);
	err = tls_discover_new(&c->discovery, d->m, &disc_hooks, d, &d->disc);
	if (err)
		return err;
	if (d->epfd >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = tls_discover_fd(d->disc) };

		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
			err = -errno;
			tls_discover_free(d->disc);
			d->disc = NULL;
			return err;
		}
	}
	tls_discover_rescan(d->disc);
	return 0;
}

static int set_bands_classes(struct tlsd *d)
{
	/* DSCP by band, when marking is on: AF41, AF31, AF21, AF11, then CS1. */
	static const __u8 dscp[TLS_MAX_BANDS] = { 34, 26, 18, 10, 8, 8, 8 };
	unsigned int b;
	int err = 0;

	for (b = 0; b < TLS_MAX_BANDS && !err; b++) {
		unsigned int band = b < d->cfg.bands ? b : d->cfg.bands - 1;

		/* observe: no class to name (a takeover's maps may hold one) */
		err = tls_set_band(d->m, b,
				   d->cfg.observe ? 0 : TLS_CLASSID(TLS_HTB_BAND_MINOR(band)),
				   d->cfg.dscp && !d->cfg.observe ? dscp[band] : TLS_DSCP_NONE);
	}
	return err;
}

static int arm_timer(struct tlsd *d)
{
	struct itimerspec its = {};

	its.it_interval.tv_sec = d->cfg.interval_ns / 1000000000ULL;
	its.it_interval.tv_nsec = d->cfg.interval_ns % 1000000000ULL;
	its.it_value = its.it_interval;
	if (timerfd_settime(d->tfd, 0, &its, NULL)) {
		pr_warn("cannot arm the rotation timer: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static int resolve_rate(const struct tls_config *c, uint64_t *bps)
{
	if (c->rate_bps) {
		*bps = c->rate_bps;
		return 0;
	}
	return tls_link_rate(c->ifname, bps);
}

static int load_classifier(const struct tls_config *c, struct tls_cls **out)
{
	char pin_dir[4096];
	struct tls_cls_opts o = {
		.ifname = c->ifname,
		.pin_dir = pin_dir,
		.flowlet_gap_ns = c->flowlet_gap_ns,
		.flowlet_hold_ns = c->flowlet_hold_ns,
		.dscp = c->dscp,
		.observe = c->observe,
	};
	int err;

	err = tls_pin_dir_for(c->ifname, pin_dir, sizeof(pin_dir));
	if (!err)
		err = tls_cls_load(&o, out);
	if (!err) {
		err = tls_cls_attach(*out);
		if (err) {
			tls_cls_close(*out);
			*out = NULL;
		}
	}
	return err;
}

/* The qdisc to restore at exit lives in a pinned map, so that it survives
 * a crash: a fresh start records it, a takeover reads it back. */
static int keep_saved_qdisc(struct tlsd *d)
{
	size_t len = TLS_SAVED_QDISC_MAX;
	char *buf = malloc(len);
	int err;

	if (!buf)
		return -ENOMEM;
	if (!d->shaper) { /* observe: nothing replaced, nothing to put back */
		err = tls_set_saved_qdisc(d->m, buf, 0);
	} else if (tls_shaper_took_over(d->shaper)) {
		err = tls_get_saved_qdisc(d->m, buf, &len);
		if (!err)
			tls_shaper_set_saved_request(d->shaper, buf, len);
		/* Our tree with fresh maps: the pins (and the record in them)
		 * were removed while the tree stayed. Say what exit will do. */
		if (!err && len == 0)
			pr_warn("took over the HTB tree of a previous tlsd on %s, but its record of "
				"the root qdisc before it is gone (pins removed?): at exit the "
				"kernel's default root qdisc comes back\n",
				d->cfg.ifname);
	} else {
		err = tls_shaper_saved_request(d->shaper, buf, &len);
		if (!err)
			err = tls_set_saved_qdisc(d->m, buf, len);
	}
	if (err)
		pr_warn("cannot keep the previous root qdisc of %s: %s\n", d->cfg.ifname,
			strerror(-err));
	free(buf);
	return 0; /* not fatal: at worst the kernel's default comes back */
}

#define TLS_RUN_DIR "/run/tlsd"

/* One tlsd per interface: a second would "take over" a live one and the two
 * would undo each other. The lock is the file's flock, held for the
 * process's life (and dropped by the kernel if it dies). */
/* /run/tlsd/IFNAME@NETNS.lock: one per interface and network namespace. */
static int lock_path(const char *ifname, char *path, size_t len)
{
	char name[IF_NAMESIZE + 32];
	int err = tls_instance_name(ifname, name, sizeof(name));

	if (err)
		return err;
	return (size_t)snprintf(path, len, "%s/%s.lock", TLS_RUN_DIR, name) >= len ?
		       -ENAMETOOLONG :
		       0;
}

static int lock_interface(const char *ifname)
{
	char path[sizeof(TLS_RUN_DIR) + IF_NAMESIZE + 48], pid[32];
	struct stat st;
	ssize_t n;
	int fd;

	fd = lock_path(ifname, path, sizeof(path));
	if (fd)
		return fd;
	if (tls_mkdir_p(TLS_RUN_DIR))
		return -EIO;
	/* Not through a link: root would write its pid into whatever file
	 * one named (and truncate it). Only a plain file of root's, one name. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0) {
		int err = errno;

		pr_err("cannot open the lock %s: %s\n", path,
		       err == ELOOP ? "it is a symbolic link (remove it)" : strerror(err));
		return -err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != 0) {
		pr_err("the lock %s is not a plain file of root's with one name: remove it\n",
		       path);
		close(fd);
		return -EPERM;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		n = read(fd, pid, sizeof(pid) - 1);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		pr_err("another tlsd is already running on %s (pid %s, lock %s)\n", ifname,
		       pid[0] ? pid : "?", path);
		close(fd);
		return -EBUSY;
	}
	if (ftruncate(fd, 0) == 0)
		dprintf(fd, "%d\n", getpid());
	return fd; /* kept open: the lock lasts as long as this process */
}

/* The previous run's job names, read before anything changes them. */
static int read_prev_names(struct tlsd *d)
{
	uint32_t id;

	d->prev_names = calloc(TLS_MAX_JOBS, sizeof(*d->prev_names));
	if (!d->prev_names)
		return -ENOMEM;
	for (id = 1; id < TLS_MAX_JOBS; id++)
		if (tls_get_job_name(d->m, id, d->prev_names[id], sizeof(d->prev_names[id])))
			d->prev_names[id][0] = '\0';
	return 0;
}

/* --- The control socket (tcd/ctl.c; the replies in tcd/tlsd_ctl.c) --- */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/*
 * tlsctl's policy and interval win over the file and the command line, also
 * across reloads (a SIGHUP for new jobs must not undo an operator's switch),
 * until `tlsctl policy reset`. Called by a reload on the new configuration.
 */
static void keep_live_policy(struct tlsd *d, struct tls_config *c)
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
	int err;

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
	d->cfg.policy = p;
	d->cfg.interval_ns = ival;
	err = assign_bands(d);
	if (!err)
		err = arm_timer(d);
	tls_format_duration(ival, buf, sizeof(buf));
	pr_info("policy %s, interval %s: %s by tlsctl (uid %u, pid %d)\n", tls_policy_name(p), buf,
		r->reset ? "back to the configuration's" : "set", peer->uid, peer->pid);
	return err;
}

/* The daemon's state as the control replies and the metrics read it. */
static struct tlsd_view view(struct tlsd *d)
{
	return (struct tlsd_view){
		.version = TLS_VERSION,
		.cfg = &d->cfg,
		.jobs = &d->jobs,
		.m = d->m,
		.rate_bps = d->rate_bps,
		.step = d->step,
		.uptime_ns = now_ns() - d->started_ns,
		.conf_policy = d->conf_policy,
		.conf_interval_ns = d->conf_interval_ns,
		.stats = d->stats,
		.stats_in = d->stats_in,
		.isampler = d->isampler,
		.stats_period_ns = d->cfg.stats_period_ns,
		.disc = d->disc,
		.heal = &d->heal,
		.now_ns = now_ns(),
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
static int metrics_body(void *ctx, bool openmetrics, struct tls_http_body *body, const char **ctype)
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

static int open_ctl(struct tlsd *d, const struct tls_config *c, struct tls_ctl **out)
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
static void reload_ctl(struct tlsd *d, struct tls_config *c)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct tls_ctl *n;

	if (strcmp(c->ctl_path, d->cfg.ctl_path)) {
		if (open_ctl(d, c, &n)) {
			pr_warn("reload: keeping the control socket %s\n", d->cfg.ctl_path);
			memcpy(c->ctl_path, d->cfg.ctl_path, sizeof(c->ctl_path));
		} else {
			ev.data.fd = tls_ctl_fd(n);
			if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
				pr_warn("reload: cannot watch the control socket %s: %s\n",
					c->ctl_path, strerror(errno));
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

/* --- The statistics (tcd/stats.c), sampled every stats_period --- */

static int arm_stats_timer(struct tlsd *d, uint64_t period_ns)
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

static void close_stats(struct tlsd *d)
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
static void open_stats(struct tlsd *d)
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
		err = d->stfd < 0 ? -errno : arm_stats_timer(d, d->cfg.stats_period_ns);
	}
	if (err) {
		pr_warn("statistics off: %s\n", strerror(-err));
		close_stats(d);
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
static void stats_tick(struct tlsd *d)
{
	struct tls_sampler_info before, after;
	uint64_t expirations, now;

	if (read(d->stfd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	now = now_ns();
	tls_sampler_info(d->sampler, &before);
	tls_sampler_tick_jobs(d->sampler, d->m, &d->jobs, now);
	tls_sampler_info(d->sampler, &after);
	/* the push's flows with the pull's (stats_ingress.h) */
	if (d->isampler)
		ingress_tick(d, now, after.flow_reads != before.flow_reads);
	if (d->ctl)
		tls_ctl_publish(d->ctl);
}

/* --- The self-healing tree (tcd/tree_watch.c, tc_state.c, tree_heal.c) --- */

/* A burst of notifications (one `tc qdisc replace` sends several, and so
 * does tlsd's own rebuild) settles this long before the state is read. */
#define HEAL_SETTLE_NS (5ULL * 1000 * 1000)
/* After a repair that failed, or a state that could not be read. */
#define HEAL_RETRY_NS (1000ULL * 1000 * 1000)

static bool tree_held(const struct tlsd *d)
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
static void watch_event(struct tlsd *d)
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
	return (now_ns() - t0) / 1e6;
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
		err = set_bands_classes(d);
	if (!err)
		err = assign_bands(d);
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
	d->heal.last_ns = now_ns();
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
	err = build && tree_held(d) && d->shaper ? tls_shaper_build(d->shaper, rate, d->cfg.bands) :
						   0;
	if (err) {
		pr_warn("%s: link speed now %s: cannot rebuild the HTB tree at it (%s); it stays "
			"at %s\n",
			d->cfg.ifname, a, strerror(-err), b);
		return;
	}
	d->rate_bps = rate;
	d->heal.rate_changes++;
	stats_set_link_rate(d, rate);
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
	d->heal.since_ns = now_ns();
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
	unsigned int n = tls_heal_recent(&d->heal, now_ns());
	char w[32];

	tls_format_duration(d->heal.window_ns, w, sizeof(w));
	snprintf(d->heal.yield_reason, sizeof(d->heal.yield_reason),
		 "%.200s, after %u heal%s within %s", why, n, n == 1 ? "" : "s", w);
	d->heal.state = TLS_TREE_YIELDED;
	d->heal.since_ns = now_ns();
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
static void tree_check(struct tlsd *d, bool resume)
{
	struct tls_tree_target t;
	struct tls_tree_facts f;
	unsigned int ev = d->pending, repairs;
	uint64_t t0 = now_ns();
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
static void tree_resume(struct tlsd *d)
{
	tls_heal_set_limit(&d->heal, d->cfg.heal_limit, d->cfg.heal_window_ns);
	tls_heal_forget(&d->heal);
	if (d->heal.state == TLS_TREE_YIELDED) {
		d->heal.state = TLS_TREE_INTACT;
		d->heal.yield_reason[0] = '\0';
		pr_warn("%s: taking the interface back (SIGHUP)\n", d->cfg.ifname);
	}
	tree_check(d, true);
}

/* Not fatal: without notifications tlsd schedules as before (one line says
 * what is lost); without the kernel's answers nothing could be judged. */
static void open_watch(struct tlsd *d)
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

static int replace_other_layout(const char *ifname);
static int remove_instance(const char *ifname, const char *pin_dir);

/* Observe mode over the HTB tree of a tlsd that scheduled the interface and
 * died: observing must not keep its scheduling, so the interface is put
 * back as that tlsd would have at exit (its pins go too), then observed
 * afresh. */
static int leave_scheduling(const char *ifname)
{
	struct tls_shaper *s;
	char pin_dir[4096];
	bool tree;
	int err = tls_shaper_open(ifname, &s);

	if (err)
		return err;
	tree = tls_shaper_took_over(s);
	tls_shaper_close(s);
	if (!tree)
		return 0;
	err = tls_pin_dir_for(ifname, pin_dir, sizeof(pin_dir));
	if (err)
		return err;
	pr_warn("%s holds the HTB tree of a tlsd that scheduled it: observe mode restores %s as "
		"that tlsd would at exit, then observes it afresh\n",
		ifname, ifname);
	if (remove_instance(ifname, pin_dir))
		pr_warn("%s: the earlier tlsd's state was not wholly removed (see above)\n",
			ifname);
	return 0;
}

/* A root qdisc someone set up on purpose (a shaper, fq with pacing...) is
 * not replaced unasked: tlsd would put it back at exit, but meanwhile its
 * behaviour is gone. The kernel's default and a crashed run's tree are
 * replaced or taken over as before. Checked before anything is touched. */
static int check_root_qdisc(const struct tls_config *c)
{
	char desc[64];
	int ret;

	if (c->replace_qdisc)
		return 0;
	ret = tls_root_qdisc_foreign(c->ifname, desc, sizeof(desc));
	if (ret <= 0)
		return ret;
	pr_warn("%s has a qdisc that is not the kernel's default (%s): tlsd would replace it "
		"until it exits; set replace_qdisc = true; in the configuration or pass "
		"--replace-qdisc to allow that\n",
		c->ifname, desc);
	return -EEXIST;
}

static int start(struct tlsd *d)
{
	char rate[32];
	int err;

	if (!if_nametoindex(d->cfg.ifname)) {
		pr_err("interface %s not found\n", d->cfg.ifname);
		return -ENODEV;
	}
	err = resolve_rate(&d->cfg, &d->rate_bps);
	if (!err && !d->cfg.observe) /* observe never replaces the root qdisc */
		err = check_root_qdisc(&d->cfg);
	if (err)
		return err;
	d->lock_fd = lock_interface(d->cfg.ifname);
	if (d->lock_fd < 0)
		return d->lock_fd;
	/* The control socket before any change: a second tlsd on the same
	 * socket is refused while nothing is touched yet. */
	d->started_ns = now_ns();
	d->conf_policy = d->cfg.policy;
	d->conf_interval_ns = d->cfg.interval_ns;
	err = open_ctl(d, &d->cfg, &d->ctl);
	if (err)
		return err;
	/* not fatal: scheduling matters more than watching it (said) */
	tlsd_metrics_sync(&d->metrics, d->cfg.metrics_listen, d->epfd, metrics_body, d);
	/* pins named by the interface alone (before network namespaces had
	 * their own): this interface's move to its instance's name */
	tls_pin_adopt_legacy(d->cfg.ifname);
	err = replace_other_layout(d->cfg.ifname);
	if (!err && d->cfg.observe)
		err = leave_scheduling(d->cfg.ifname);
	if (err)
		return err;
	/* Notifications before the tree: nothing done to it after the build
	 * goes unseen. */
	tls_heal_init(&d->heal, d->cfg.heal_limit, d->cfg.heal_window_ns);
	open_watch(d);
	/* observe: no shaper at all (d->shaper NULL), the root qdisc is the
	 * user's from start to exit */
	err = d->cfg.observe ? 0 : tls_shaper_open(d->cfg.ifname, &d->shaper);
	if (err)
		return err;
	d->ifindex = (int)if_nametoindex(d->cfg.ifname);
	/* The classifier (and its pinned maps) first: the previous root qdisc
	 * is on record, or a crashed run's record read back, before the tree
	 * replaces anything. */
	err = load_classifier(&d->cfg, &d->cls);
	if (err)
		return err;
	d->m = tls_cls_maps(d->cls);
	keep_saved_qdisc(d);
	/* The maps of a crashed run are taken over also where no tree tells
	 * of it (an observing run's, or a tree deleted while tlsd was dead):
	 * its jobs keep their ids and counters, its leftovers are purged. */
	if (tls_cls_took_over(d->cls) || (d->shaper && tls_shaper_took_over(d->shaper))) {
		err = read_prev_names(d);
		if (err)
			return err;
	}
	/* Jobs and bands before the tree: from its first packet on, HTB sees
	 * every PS packet already in its band. The other way round, a PS's
	 * packets would sit in the default class, starved by the others,
	 * stalling that PS's TCP for seconds. */
	tls_jobs_init(&d->jobs);
	err = set_bands_classes(d);
	if (!err)
		err = sync_jobs(d, &d->cfg);
	/* The PSes already running, before the leftovers are judged: a
	 * discovered job of the crashed run keeps its id. */
	if (!err)
		err = sync_discovery(d, &d->cfg);
	if (!err && d->prev_names)
		purge_leftovers(d);
	free(d->prev_names);
	d->prev_names = NULL;
	if (!err)
		err = assign_bands(d);
	if (!err && d->shaper)
		err = tls_shaper_build(d->shaper, d->rate_bps, d->cfg.bands);
	if (err)
		return err;
	if (d->shaper)
		tls_feature_set(TLS_FEAT_HTB, TLS_FEAT_IN_USE);
	d->started = true;
	/* one line per optional feature the kernel refused, and what takes over */
	tls_features_log_degraded();
	open_stats(d);
	tls_format_rate(d->rate_bps, rate, sizeof(rate));
	if (d->cfg.observe)
		pr_info("observing %s at %s: %u jobs counted, root qdisc untouched, no packet "
			"steered; started in %.1f ms\n",
			d->cfg.ifname, rate, d->jobs.n, (double)(now_ns() - d->started_ns) / 1e6);
	else
		pr_info("scheduling on %s at %s: policy %s, %u bands, %u jobs%s; started in %.1f "
			"ms\n",
			d->cfg.ifname, rate, tls_policy_name(d->cfg.policy), d->cfg.bands,
			d->jobs.n,
			tls_shaper_took_over(d->shaper) ? " (took over a previous run's tree)" : "",
			(double)(now_ns() - d->started_ns) / 1e6);
	return 0;
}

/* failed: start did not complete. A failed takeover leaves the kernel state
 * as it found it (the crashed run's scheduling goes on); anything else is
 * undone. */
static void stop(struct tlsd *d, bool failed)
{
	if (d->lock_fd < 0) /* another tlsd owns the interface: hands off */
		return;
	tls_ctl_close(d->ctl);
	d->ctl = NULL;
	tls_http_close(d->metrics);
	d->metrics = NULL;
	close_stats(d);
	/* Discovery lets go without map writes: the maps go with the
	 * classifier, or stay as they are for the next run after a failed
	 * takeover. */
	d->started = false;
	tls_discover_release(d->disc);
	d->disc = NULL;
	if (failed && d->shaper && tls_shaper_took_over(d->shaper)) {
		pr_warn("leaving the previous run's state on %s as it was\n", d->cfg.ifname);
		tls_cls_release(d->cls);
		tls_shaper_close(d->shaper);
	} else {
		tls_cls_close(d->cls);
		if (d->heal.state == TLS_TREE_YIELDED) /* the other tool's now */
			tls_shaper_close(d->shaper);
		else if (tls_shaper_restore(d->shaper))
			pr_warn("could not restore the root qdisc of %s\n", d->cfg.ifname);
	}
	d->cls = NULL;
	d->shaper = NULL;
	tls_tw_close(d->tw);
	d->tw = NULL;
	tls_tc_state_close(d->tcs);
	d->tcs = NULL;
	free(d->prev_names);
	d->prev_names = NULL;
}

/* SIGHUP: a new configuration, or the running one if the new one is bad. */
static void reload(struct tlsd *d)
{
	struct tls_config *c = malloc(sizeof(*c));
	uint64_t rate, t0 = now_ns();
	bool retime, done = false, listener_failed = false;
	int err;

	sd_notify(0, "RELOADING=1");
	d->reloads++;
	if (!c || read_config(d, c)) {
		pr_err("reload refused: keeping the running configuration\n");
		goto out;
	}
	if (strcmp(c->ifname, d->cfg.ifname)) {
		pr_err("reload refused: the interface cannot change (%s -> %s); restart tlsd\n",
		       d->cfg.ifname, c->ifname);
		goto out;
	}
	/* Into or out of observe mode is a restart: the root qdisc is
	 * replaced or put back, the classifier loaded anew; a reload that did
	 * it half-way would leave the interface in neither mode. */
	if (c->observe != d->cfg.observe) {
		pr_err("reload refused: the mode cannot change (%s -> %s); restart tlsd\n",
		       d->cfg.observe ? "observe" : "schedule",
		       c->observe ? "observe" : "schedule");
		goto out;
	}
	if (!c->rate_bps && d->heal.state == TLS_TREE_ABSENT) {
		rate = d->rate_bps; /* no driver to ask: the speed it had */
	} else if (resolve_rate(c, &rate)) {
		pr_err("reload refused: keeping the running configuration\n");
		goto out;
	}
	if (rate != d->rate_bps || c->bands != d->cfg.bands) {
		/* a tree that is not there is built at this rate when it is
		 * rebuilt */
		err = tree_held(d) && d->shaper ? tls_shaper_build(d->shaper, rate, c->bands) : 0;
		if (err) {
			pr_warn("reload: cannot rebuild the HTB tree; keeping the running one\n");
			goto out;
		}
		d->rate_bps = rate;
		stats_set_link_rate(d, rate);
	}
	if (c->flowlet_gap_ns != d->cfg.flowlet_gap_ns ||
	    c->flowlet_hold_ns != d->cfg.flowlet_hold_ns || c->dscp != d->cfg.dscp) {
		struct tls_cls *n;

		/* A new program over the same maps, swapped in place. */
		if (load_classifier(c, &n)) {
			pr_warn("reload: cannot reload the classifier; keeping the running one\n");
			/* what runs is the old program: say so, so that the
			 * next reload tries again */
			c->flowlet_gap_ns = d->cfg.flowlet_gap_ns;
			c->flowlet_hold_ns = d->cfg.flowlet_hold_ns;
			c->dscp = d->cfg.dscp;
		} else {
			tls_cls_close(d->cls); /* sees the new pins: leaves them */
			d->cls = n;
			d->m = tls_cls_maps(n);
			d->burst_bands = 0; /* the new program's order is unset */
			if (d->disc)
				tls_discover_set_maps(d->disc, d->m);
		}
	}
	keep_live_policy(d, c);
	reload_ctl(d, c);
	/* a listener that cannot be opened leaves the old one (said) */
	if (tlsd_metrics_sync(&d->metrics, c->metrics_listen, d->epfd, metrics_body, d)) {
		snprintf(c->metrics_listen, sizeof(c->metrics_listen), "%s",
			 d->metrics ? tls_http_addr(d->metrics) : "");
		listener_failed = true;
	}
	if (d->stats && c->stats_period_ns != d->cfg.stats_period_ns)
		arm_stats_timer(d, c->stats_period_ns);
	/* the observations are keyed by n as it was counted: a new way to
	 * count would mix two kinds of n in one fit */
	if (c->stats_window_ns != d->cfg.stats_window_ns ||
	    c->stats_n_flows != d->cfg.stats_n_flows) {
		pr_warn("stats_window and stats_n apply at the next start; kept as they were\n");
		c->stats_window_ns = d->cfg.stats_window_ns;
		c->stats_n_flows = d->cfg.stats_n_flows;
	}
	retime = c->interval_ns != d->cfg.interval_ns || c->policy != d->cfg.policy;
	d->cfg = *c;
	apply_lead_headroom(d); /* a new headroom holds even if what follows fails */
	err = set_bands_classes(d);
	if (!err)
		err = sync_jobs(d, c);
	if (!err)
		err = sync_discovery(d, c);
	if (!err)
		err = assign_bands(d); /* a policy change takes effect at once */
	/* The timer restarts only for a new interval or policy: frequent
	 * reloads must not keep postponing the rotation. */
	if (!err && retime)
		err = arm_timer(d);
	if (err)
		pr_warn("reload: applied only in part (%s); send SIGHUP again to retry\n",
			strerror(-err));
	else
		pr_info("configuration reloaded in %.1f ms: policy %s, %u bands, %u jobs\n",
			(double)(now_ns() - t0) / 1e6, tls_policy_name(d->cfg.policy),
			d->cfg.bands, d->jobs.n);
	done = !err && !listener_failed;
	tls_features_log_degraded(); /* a feature the new program lost */
out:
	d->reload_failures += !done;
	/* also after a refused reload: the operator takes the interface back */
	tree_resume(d);
	free(c);
	sd_notify(0, "READY=1");
}

/* The signals the loop takes through its signalfd (blocked otherwise). */
static void loop_signals(sigset_t *mask)
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
static int renew_signalfd(struct tlsd *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;
	int fd;

	loop_signals(&mask);
	fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (fd < 0) {
		pr_warn("cannot make a signalfd after detaching: %s\n", strerror(errno));
		return -errno;
	}
	ev.data.fd = fd;
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->sfd, NULL);
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		int err = -errno;

		pr_warn("cannot watch the signalfd after detaching: %s\n", strerror(-err));
		close(fd);
		return err;
	}
	close(d->sfd);
	d->sfd = fd;
	return 0;
}

static int setup_loop(struct tlsd *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	loop_signals(&mask);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	d->htfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->sfd < 0 || d->tfd < 0 || d->htfd < 0 || d->epfd < 0)
		return -errno;
	ev.data.fd = d->htfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->htfd, &ev))
		return -errno;
	if (d->tw) {
		ev.data.fd = tls_tw_fd(d->tw);
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	ev.data.fd = d->sfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->sfd, &ev))
		return -errno;
	ev.data.fd = d->tfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev))
		return -errno;
	if (d->disc) {
		ev.data.fd = tls_discover_fd(d->disc);
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	if (d->ctl) {
		ev.data.fd = tls_ctl_fd(d->ctl);
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	if (d->stfd >= 0) {
		ev.data.fd = d->stfd;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	if (d->metrics) {
		ev.data.fd = tls_http_fd(d->metrics);
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
			return -errno;
	}
	return arm_timer(d);
}

static int run(struct tlsd *d)
{
	for (;;) {
		struct epoll_event ev;
		int n = epoll_wait(d->epfd, &ev, 1, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (d->ctl && ev.data.fd == tls_ctl_fd(d->ctl)) {
			tls_ctl_dispatch(d->ctl);
		} else if (d->metrics && ev.data.fd == tls_http_fd(d->metrics)) {
			tls_http_dispatch(d->metrics);
		} else if (d->stfd >= 0 && ev.data.fd == d->stfd) {
			stats_tick(d);
		} else if (d->disc && ev.data.fd == tls_discover_fd(d->disc)) {
			tls_discover_run(d->disc);
		} else if (d->tw && ev.data.fd == tls_tw_fd(d->tw)) {
			watch_event(d);
		} else if (ev.data.fd == d->htfd) {
			uint64_t expirations;

			if (read(d->htfd, &expirations, sizeof(expirations)) == sizeof(expirations))
				tree_check(d, false);
		} else if (ev.data.fd == d->tfd) {
			uint64_t expirations;

			if (read(d->tfd, &expirations, sizeof(expirations)) != sizeof(expirations))
				continue;
			/* One step per wakeup, however late: every job gets its
			 * turn, if a little later, rather than being skipped. */
			if (d->cfg.policy == TLS_POLICY_RR) {
				d->step++;
				assign_bands(d);
			}
		} else if (ev.data.fd == d->sfd) {
			struct signalfd_siginfo si;

			if (read(d->sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGHUP) {
				reload(d);
				continue;
			}
			pr_info("signal %u: restoring %s and exiting\n", si.ssi_signo,
				d->cfg.ifname);
			return 0;
		}
	}
}

/* The instance pinned at pin_dir for ifname: its HTB tree (the root qdisc
 * it saved put back, or the kernel's default if its record is unreadable),
 * then its classifier and pins. 0, or 1 if something could not be removed. */
static int remove_instance(const char *ifname, const char *pin_dir)
{
	static char saved[TLS_SAVED_QDISC_MAX];
	size_t len = sizeof(saved);
	int failed = 0;
	__u32 layout;
	char why[160];

	if (!tls_pin_layout_read(pin_dir, &layout) &&
	    tls_pin_layout_judge(layout, TLS_PIN_LAYOUT, TLS_PIN_LAYOUT_COMPAT, why, sizeof(why)) ==
		    TLS_LAYOUT_NEWER) {
		pr_warn("%s: made by a newer tlsd (%s): left untouched; its own tlsd --cleanup "
			"removes it\n",
			pin_dir, why);
		return 1;
	}
	/* The HTB tree first, while the pins still say what to put back. */
	if (tls_read_pinned_saved_qdisc(pin_dir, saved, &len))
		len = 0;
	if (if_nametoindex(ifname) && tls_shaper_remove(ifname, len ? saved : NULL, len))
		failed = 1;
	if (tls_cls_remove_pinned(pin_dir))
		failed = 1;
	return failed;
}

/* --cleanup on one interface: its lock, so that no tlsd starts there
 * meanwhile; -EBUSY (said) if a running tlsd holds it: --cleanup is for
 * what a dead one left, a live one restores its interface when it stops.
 * `may_create`: false where no lock file means no tlsd ever ran there (the
 * sweep over every interface makes none). */
static int cleanup_lock(const char *ifname, bool may_create)
{
	char path[sizeof(TLS_RUN_DIR) + IF_NAMESIZE + 48];
	int fd;

	fd = lock_path(ifname, path, sizeof(path));
	if (fd)
		return fd;
	if (!may_create && access(path, F_OK))
		return -ENOENT;
	fd = lock_interface(ifname);
	if (fd == -EBUSY)
		pr_warn("--cleanup leaves %s alone: stop that tlsd instead (it restores the "
			"interface when it exits)\n",
			ifname);
	return fd;
}

/* Every pin directory under TLS_PIN_ROOT: its classifier, and the HTB tree
 * on the interface it recorded; never those of a running tlsd. */
/* Pins of this namespace's instance on ifname are still there (a newer
 * tlsd's, left on purpose, or what could not be removed): its tree is not
 * a tree without pins. */
static bool pins_left(const char *ifname)
{
	char path[4096];

	return !tls_pin_dir_for(ifname, path, sizeof(path)) && access(path, F_OK) == 0;
}

static int cleanup_all(const char *only_if)
{
	DIR *dir = opendir(TLS_PIN_ROOT);
	struct dirent *de;
	char path[4096];
	int failed = 0, fd;

	while (dir && (de = readdir(dir))) {
		char ifname[IF_NAMESIZE], mine[IF_NAMESIZE + 32];
		size_t n = strcspn(de->d_name, "@");

		if (de->d_name[0] == '.' || n >= sizeof(ifname))
			continue;
		memcpy(ifname, de->d_name, n);
		ifname[n] = '\0';
		if (only_if && strcmp(only_if, ifname))
			continue;
		/* This namespace's instances only (another's eth0 is not
		 * ours); pins of the earlier naming, if this interface runs
		 * their program, move to this namespace's name first. */
		if (!de->d_name[n] && tls_pin_adopt_legacy(ifname) <= 0) {
			pr_warn("%s/%s: an earlier tlsd's pins, not of this namespace's %s: left "
				"alone\n",
				TLS_PIN_ROOT, de->d_name, ifname);
			continue;
		}
		if (tls_instance_name(ifname, mine, sizeof(mine)) ||
		    (de->d_name[n] && strcmp(mine, de->d_name)))
			continue;
		if (tls_pin_dir_for(ifname, path, sizeof(path))) {
			failed = 1;
			continue;
		}
		fd = cleanup_lock(ifname, true);
		if (fd < 0) {
			failed = 1;
			continue;
		}
		if (remove_instance(ifname, path))
			failed = 1;
		else
			printf("removed tlsd from %s\n", ifname);
		close(fd);
	}
	if (dir)
		closedir(dir);
	rmdir(TLS_PIN_ROOT);
	/* Trees without pins (removed by hand): the kernel's default back. */
	if (only_if) {
		if (if_nametoindex(only_if)) {
			fd = cleanup_lock(only_if, false);
			if (fd == -EBUSY || (fd < 0 && fd != -ENOENT) ||
			    (!pins_left(only_if) && tls_shaper_remove(only_if, NULL, 0)))
				failed = 1;
			if (fd >= 0)
				close(fd);
		}
	} else {
		struct if_nameindex *ifs = if_nameindex(), *i;

		for (i = ifs; i && i->if_index; i++) {
			fd = cleanup_lock(i->if_name, false);
			if (fd == -EBUSY || (fd < 0 && fd != -ENOENT)) {
				failed = 1;
				continue;
			}
			if (!pins_left(i->if_name))
				tls_shaper_remove(i->if_name, NULL, 0);
			if (fd >= 0)
				close(fd);
		}
		if (ifs)
			if_freenameindex(ifs);
	}
	return failed;
}

/*
 * An upgrade: the pins of a tlsd whose map layout differs (an older or newer
 * version, or one that ran on a kernel with other features). Its maps cannot
 * be taken over, so its interface is restored as that tlsd would have left
 * it, and this one starts afresh: never a start that fails again and again
 * under Restart=on-failure. The interface lock is held: it is not running.
 */
static int replace_other_layout(const char *ifname)
{
	char pin_dir[4096], why[256] = "";
	int err;

	err = tls_pin_dir_for(ifname, pin_dir, sizeof(pin_dir));
	if (!err)
		err = tls_cls_check_pinned(pin_dir, why, sizeof(why));
	if (err == -EOPNOTSUPP) /* a required feature missing: said */
		return err;
	if (err == -EPROTO) {
		/* a downgrade: this tlsd cannot know what the newer one's maps
		 * mean, nor how to put its interface back */
		pr_err("%s holds the classifier of a newer tlsd (%s): left untouched, not "
		       "started; stop that tlsd (it restores the interface), or remove what it "
		       "left with its own tlsd --cleanup\n",
		       pin_dir, why);
		return err;
	}
	if (err != -ESTALE)
		return 0; /* nothing pinned, or the load will say what is wrong */
	pr_warn("%s holds the classifier of a tlsd with another map layout (%s): restoring %s "
		"as that tlsd would at exit, then starting afresh\n",
		pin_dir, why, ifname);
	if (remove_instance(ifname, pin_dir))
		pr_warn("%s: the earlier tlsd's state was not wholly removed (see above)\n",
			ifname);
	return 0;
}

/* tlsd --probe: the features, probed for real; no daemon. */
static int probe_features(bool summary)
{
	char line[1024];
	int missing_required = 0;

	tls_features_probe_bpf();
	tls_features_probe_tc();
	tls_features_probe_proc_cn();
	tls_features_probe_rtnl();
	/* Whether the verifier takes policy bursts's code is known only by
	 * loading the classifier (not attached, not pinned); what that load
	 * marks in use of the rest is not this listing's business. */
	if (tls_features_required_missing(NULL, 0) == TLS_FEAT__COUNT) {
		const struct tls_cls_opts o = { 0 };
		struct tls_feature saved[TLS_FEAT__COUNT];
		struct tls_cls *c = NULL;

		int err_fd = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		memcpy(saved, tls_features(), sizeof(saved));
		/* its messages (the verifier's log) are not the listing's */
		if (err_fd >= 0 && null >= 0)
			dup2(null, STDERR_FILENO);
		if (tls_cls_load(&o, &c) == 0)
			tls_cls_close(c);
		if (err_fd >= 0) {
			dup2(err_fd, STDERR_FILENO);
			close(err_fd);
		}
		if (null >= 0)
			close(null);
		saved[TLS_FEAT_BURSTS] = tls_features()[TLS_FEAT_BURSTS];
		if (saved[TLS_FEAT_BURSTS].state == TLS_FEAT_IN_USE)
			saved[TLS_FEAT_BURSTS].state = TLS_FEAT_AVAILABLE;
		memcpy(tls_features(), saved, sizeof(saved));
	}
	for (int i = 0; i < TLS_FEAT__COUNT; i++)
		missing_required +=
			tls_feat_desc(i)->required && tls_features()[i].state == TLS_FEAT_MISSING;
	if (summary) {
		tls_features_summary(line, sizeof(line));
		printf("%s\n", line);
		return missing_required ? 1 : 0;
	}
	printf("%-15s %-9s %-11s %s\n", "FEATURE", "KIND", "STATE", "DETAIL");
	for (int i = 0; i < TLS_FEAT__COUNT; i++) {
		const struct tls_feat_desc *fd = tls_feat_desc(i);
		const struct tls_feature *f = &tls_features()[i];

		printf("%-15s %-9s %-11s ", fd->name, fd->required ? "required" : "optional",
		       tls_feat_state_name(f->state));
		if (f->state != TLS_FEAT_MISSING)
			printf("%s\n", fd->what);
		else if (fd->required)
			printf("%s: %s; check %s\n", f->stage, strerror(-f->err), fd->hint);
		else
			printf("%s: %s; %s; instead: %s\n", f->stage, strerror(-f->err), fd->lost,
			       fd->fallback);
	}
	return missing_required ? 1 : 0;
}

/* -N: into the interface's namespace for good; the proc connector is opened
 * first, here, because the kernel sends process events only to the initial
 * namespace. */
static int enter_netns(const char *name)
{
	char path[4096];
	int fd;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	if (tls_pconn_preopen())
		pr_warn("-N: no process events; discovery relies on its rescan\n");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		pr_err("-N: cannot enter network namespace %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "interface", required_argument, NULL, 'i' },
		{ "policy", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "control-socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "cleanup", no_argument, NULL, 'C' },
		{ "netns", required_argument, NULL, 'N' },
		{ "probe", no_argument, NULL, 'P' },
		{ "summary", no_argument, NULL, 'S' },
		{ "check-config", no_argument, NULL, 'K' },
		{ "replace-qdisc", no_argument, NULL, 'Q' },
		{ "observe", no_argument, NULL, 'O' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct tlsd *d = calloc(1, sizeof(*d));
	bool foreground = false, cleanup = false, started = false, probe = false, summary = false;
	bool check = false;
	const char *netns = NULL;
	int opt, verbose = 0, ret = 1;
	sigset_t mask;

	if (!d)
		return 1;
	d->conf_path = TLS_CONF_DEFAULT;
	d->sfd = d->tfd = d->epfd = d->lock_fd = d->htfd = -1;
	d->stfd = -1;
	while ((opt = getopt_long(argc, argv, "c:i:p:t:r:s:N:fvVh", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			d->conf_path = optarg;
			d->conf_required = true;
			break;
		case 'i':
			d->ov.ifname = optarg;
			break;
		case 'p':
			d->ov.policy = optarg;
			break;
		case 't':
			d->ov.interval = optarg;
			break;
		case 'r':
			d->ov.rate = optarg;
			break;
		case 's':
			d->ov.ctl_path = optarg;
			break;
		case 'f':
			foreground = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'C':
			cleanup = true;
			break;
		case 'N':
			netns = optarg;
			break;
		case 'P':
			probe = true;
			break;
		case 'S':
			summary = true;
			break;
		case 'K':
			check = true;
			break;
		case 'Q':
			d->ov.replace_qdisc = true;
			break;
		case 'O':
			d->ov.observe = true;
			break;
		case 'V':
			printf("tlsd %s\n", TLS_VERSION);
			free(d);
			return 0;
		case 'h':
			fputs(usage_text, stdout);
			free(d);
			return 0;
		default:
			fputs(usage_text, stderr);
			free(d);
			return 2;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s' (try --help)\n", argv[optind]);
		free(d);
		return 2;
	}
	tls_log_set_level(verbose > 1 ? TLS_LOG_DEBUG : verbose ? TLS_LOG_INFO : TLS_LOG_WARN);
	tls_log_libbpf();
	if (summary && !probe) {
		pr_err("--summary goes with --probe\n");
		free(d);
		return 2;
	}
	if (check && (probe || cleanup || netns)) {
		pr_err("--check-config goes alone (with -c and the overrides -i -p -t -r -s "
		       "--observe --replace-qdisc)\n");
		free(d);
		return 2;
	}
	if (check) {
		/* before the root check: a reload's dry run needs no rights */
		ret = check_config(d);
		free(d);
		return ret;
	}
	if (geteuid() != 0) {
		pr_err("tlsd must run as root: it loads BPF programs and changes the interface's "
		       "qdisc%s\n",
		       probe ? " (and --probe loads them to see what the kernel takes)" : "");
		free(d);
		return 1;
	}
	if (probe) {
		ret = probe_features(summary);
		free(d);
		return ret;
	}
	if (netns && enter_netns(netns)) {
		free(d);
		return 1;
	}
	if (cleanup) {
		ret = cleanup_all(d->ov.ifname);
		free(d);
		return ret;
	}
	/* Signals wait from the start: a SIGTERM while the tree is being
	 * built must still restore the interface, through the loop. */
	loop_signals(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* A closed log pipe or control client must not kill tlsd before it
	 * restores the interface: writes fail with EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	if (read_config(d, &d->cfg))
		goto out;
	if (start(d) || setup_loop(d))
		goto out;
	started = true;
	if (!foreground) {
		/* Detach only now, so that a failed start is seen by the caller. */
		if (daemon(0, 0)) {
			pr_err("cannot detach: %s\n", strerror(errno));
			goto out;
		}
		tls_log_to_syslog("tlsd");
		if (renew_signalfd(d))
			goto out;
	}
	sd_notifyf(0, "READY=1\nSTATUS=%s %u jobs on %s\nMAINPID=%d",
		   d->cfg.observe ? "observing" : "scheduling", d->jobs.n, d->cfg.ifname, getpid());
	pr_info("ready\n");
	ret = run(d) ? 1 : 0;
	sd_notify(0, "STOPPING=1");
out:
	stop(d, !started);
	if (d->sfd >= 0)
		close(d->sfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->htfd >= 0)
		close(d->htfd);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	free(d);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * tlsd: schedules the model-update traffic of colocated parameter servers.
 * This file is the wiring: the configuration (file and command line), the
 * instance's lock, start (probe, tree, classifier, jobs), stop, reload,
 * --probe, --check-config and main. The parts: tlsd_jobs.c (jobs, ids,
 * bands), tlsd_requests.c (control socket and metrics), tlsd_stats.c (the
 * statistics engines), tlsd_tree.c (the self-healing tree), tlsd_loop.c
 * (the loop's handlers), tlsd_cleanup.c (--cleanup, other layouts' pins);
 * their shared state is struct tlsd (tlsd.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>


#include "kernel_features.h"
#include "proc_conn.h"
#include "libbpf_log.h"
#include "fs.h"
#include "clock.h"
#include "log.h"
#include "units.h"
#include "tlsd.h"

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

int tlsd_set_bands_classes(struct tlsd *d)
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

int tlsd_set_timer(struct tlsd *d)
{
	struct itimerspec its = {};

	if (d->tfd < 0)
		return 0; /* at the start, before the loop: tlsd_setup_loop sets it */
	/* roundrobin from the clock needs no wakeup; the other policies'
	 * timer retries bursts's set-up, and rotates roundrobin without it */
	if (d->cfg.policy != TLS_POLICY_RR || !d->rr_clocked) {
		its.it_interval.tv_sec = d->cfg.interval_ns / 1000000000ULL;
		its.it_interval.tv_nsec = d->cfg.interval_ns % 1000000000ULL;
		its.it_value = its.it_interval;
	}
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

/* One tlsd per interface: a second would "take over" a live one and the two
 * would undo each other. The lock is the file's flock, held for the
 * process's life (and dropped by the kernel if it dies). */
/* /run/tlsd/IFNAME@NETNS.lock: one per interface and network namespace. */
int tlsd_lock_path(const char *ifname, char *path, size_t len)
{
	char name[IF_NAMESIZE + 32];
	int err = tls_instance_name(ifname, name, sizeof(name));

	if (err)
		return err;
	return (size_t)snprintf(path, len, "%s/%s.lock", TLS_RUN_DIR, name) >= len ? -ENAMETOOLONG :
										     0;
}

int tlsd_lock_interface(const char *ifname)
{
	char path[sizeof(TLS_RUN_DIR) + IF_NAMESIZE + 48], pid[32];
	struct stat st;
	ssize_t n;
	int fd;

	fd = tlsd_lock_path(ifname, path, sizeof(path));
	if (fd)
		return fd;
	if (tls_mkdir_p(TLS_RUN_DIR, 0700, NULL)) {
		pr_err("cannot create %s for the lock: %s\n", TLS_RUN_DIR, strerror(errno));
		return -EIO;
	}
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
	if (tlsd_remove_instance(ifname, pin_dir))
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
	d->lock_fd = tlsd_lock_interface(d->cfg.ifname);
	if (d->lock_fd < 0)
		return d->lock_fd;
	/* The control socket before any change: a second tlsd on the same
	 * socket is refused while nothing is touched yet. */
	d->started_ns = tls_now_ns();
	d->conf_policy = d->cfg.policy;
	d->conf_interval_ns = d->cfg.interval_ns;
	err = tlsd_open_ctl(d, &d->cfg, &d->ctl);
	if (err)
		return err;
	/* not fatal: scheduling matters more than watching it (said) */
	tlsd_metrics_sync(&d->metrics, d->cfg.metrics_listen, d->epfd, &d->src_metrics,
			  tlsd_metrics_body_of, d);
	/* pins named by the interface alone (before network namespaces had
	 * their own): this interface's move to its instance's name */
	tls_pin_adopt_legacy(d->cfg.ifname);
	err = tlsd_replace_other_layout(d->cfg.ifname);
	if (!err && d->cfg.observe)
		err = leave_scheduling(d->cfg.ifname);
	/* what an older tlsd kept in maps, into the state file */
	if (!err)
		err = tlsd_state_prepare(d->cfg.ifname);
	if (err)
		return err;
	/* Notifications before the tree: nothing done to it after the build
	 * goes unseen. */
	tls_heal_init(&d->heal, d->cfg.heal_limit, d->cfg.heal_window_ns);
	tlsd_open_watch(d);
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
	tlsd_state_unpin_legacy(d->cfg.ifname);
	/* The root qdisc to put back at exit, in the state file so that it
	 * survives a crash: a fresh start records it, a takeover reads it
	 * back. The maps of a crashed run are taken over also where no tree
	 * tells of it (an observing run's, or a tree deleted while tlsd was
	 * dead): its jobs keep their ids and counters, its leftovers are
	 * purged. */
	err = tlsd_state_start(d, tls_cls_took_over(d->cls) ||
					  (d->shaper && tls_shaper_took_over(d->shaper)));
	if (err)
		return err;
	tlsd_burst_note_carried(d);
	/* Jobs and bands before the tree: from its first packet on, HTB sees
	 * every PS packet already in its band. The other way round, a PS's
	 * packets would sit in the default class, starved by the others,
	 * stalling that PS's TCP for seconds. */
	tls_jobs_init(&d->jobs);
	err = tls_members_new(d->m, &d->members);
	if (!err && d->prev_names)
		tls_members_takeover(d->members);
	if (!err)
		err = tlsd_set_bands_classes(d);
	if (!err)
		err = tlsd_sync_jobs(d, &d->cfg);
	/* The PSes already running, before the leftovers are judged: a
	 * discovered job of the crashed run keeps its id. */
	if (!err)
		err = tlsd_sync_discovery(d, &d->cfg);
	if (!err && d->prev_names)
		tlsd_purge_leftovers(d);
	free(d->prev_names);
	d->prev_names = NULL;
	if (!err)
		err = tlsd_assign_bands(d);
	if (!err && d->shaper)
		err = tls_shaper_build(d->shaper, d->rate_bps, d->cfg.bands);
	if (err)
		return err;
	if (d->shaper)
		tls_feature_set(TLS_FEAT_HTB, TLS_FEAT_IN_USE);
	d->started = true;
	tlsd_state_save(d, true); /* the jobs' ids, the previous run's gone */
	/* one line per optional feature the kernel refused, and what takes over */
	tls_features_log_degraded();
	tlsd_open_stats(d);
	tls_format_rate(d->rate_bps, rate, sizeof(rate));
	if (d->cfg.observe)
		pr_info("observing %s at %s: %u jobs counted, root qdisc untouched, no packet "
			"steered; started in %.1f ms\n",
			d->cfg.ifname, rate, d->jobs.n,
			(double)(tls_now_ns() - d->started_ns) / 1e6);
	else
		pr_info("scheduling on %s at %s: policy %s, %u bands, %u jobs%s; started in %.1f "
			"ms\n",
			d->cfg.ifname, rate, tls_policy_name(d->cfg.policy), d->cfg.bands,
			d->jobs.n,
			tls_shaper_took_over(d->shaper) ? " (took over a previous run's tree)" : "",
			(double)(tls_now_ns() - d->started_ns) / 1e6);
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
	tlsd_close_stats(d);
	/* Discovery lets go without map writes: the maps go with the
	 * classifier, or stay as they are for the next run after a failed
	 * takeover. */
	d->started = false;
	tls_discover_release(d->disc);
	d->disc = NULL;
	tls_members_free(d->members); /* the maps stay as they are */
	d->members = NULL;
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
		tlsd_state_remove(d->cfg.ifname);
	}
	free(d->state);
	d->state = NULL;
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
void tlsd_reload(struct tlsd *d)
{
	struct tls_config *c = malloc(sizeof(*c));
	uint64_t rate, t0 = tls_now_ns();
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
		err = tlsd_tree_held(d) && d->shaper ? tls_shaper_build(d->shaper, rate, c->bands) :
						       0;
		if (err) {
			pr_warn("reload: cannot rebuild the HTB tree; keeping the running one\n");
			goto out;
		}
		d->rate_bps = rate;
		tlsd_stats_set_link_rate(d, rate);
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
			d->burst_bands = 0; /* set up again for the new program */
			tlsd_burst_note_carried(d);
			tls_members_set_maps(d->members, d->m);
			/* roundrobin's order is the program's (not pinned):
			 * the same order into the new one at once, before
			 * anything of the new configuration, which may fail */
			if (d->rr_clocked)
				tlsd_assign_bands(d);
		}
	}
	tlsd_keep_live_policy(d, c);
	tlsd_reload_ctl(d, c);
	/* a listener that cannot be opened leaves the old one (said) */
	if (tlsd_metrics_sync(&d->metrics, c->metrics_listen, d->epfd, &d->src_metrics,
			      tlsd_metrics_body_of, d)) {
		snprintf(c->metrics_listen, sizeof(c->metrics_listen), "%s",
			 d->metrics ? tls_http_addr(d->metrics) : "");
		listener_failed = true;
	}
	if (d->stats && c->stats_period_ns != d->cfg.stats_period_ns)
		tlsd_arm_stats_timer(d, c->stats_period_ns);
	/* the observations are keyed by n as it was counted: a new way to
	 * count would mix two kinds of n in one fit */
	if (c->stats_window_ns != d->cfg.stats_window_ns ||
	    c->stats_n_flows != d->cfg.stats_n_flows) {
		pr_warn("stats_window and stats_n apply at the next start; kept as they were\n");
		c->stats_window_ns = d->cfg.stats_window_ns;
		c->stats_n_flows = d->cfg.stats_n_flows;
	}
	retime = c->interval_ns != d->cfg.interval_ns || c->policy != d->cfg.policy;
	tlsd_rr_advance(d, tls_now_ns()); /* the steps so far, at the old interval */
	d->cfg = *c;
	/* a new policy or interval begins a turn (the leader's, whole), as
	 * the timer's restart did */
	if (retime)
		d->rr_epoch_ns = tls_now_ns();
	tlsd_apply_lead_headroom(d); /* a new headroom holds even if what follows fails */
	err = tlsd_set_bands_classes(d);
	if (!err)
		err = tlsd_sync_jobs(d, c);
	if (!err)
		err = tlsd_sync_discovery(d, c);
	if (!err)
		err = tlsd_assign_bands(d); /* a policy change takes effect at once */
	/* The timer restarts only for a new interval or policy (frequent
	 * reloads must not keep postponing bursts's retries), and also when
	 * the rest failed: it follows the policy now in force. */
	if (retime) {
		int e = tlsd_set_timer(d);

		err = err ? err : e;
	}
	if (err)
		pr_warn("reload: applied only in part (%s); send SIGHUP again to retry\n",
			strerror(-err));
	else
		pr_info("configuration reloaded in %.1f ms: policy %s, %u bands, %u jobs\n",
			(double)(tls_now_ns() - t0) / 1e6, tls_policy_name(d->cfg.policy),
			d->cfg.bands, d->jobs.n);
	done = !err && !listener_failed;
	tls_features_log_degraded(); /* a feature the new program lost */
out:
	d->reload_failures += !done;
	/* also after a refused reload: the operator takes the interface back */
	tlsd_tree_resume(d);
	free(c);
	sd_notify(0, "READY=1");
}

/* tlsd --probe: the features, probed for real; no daemon. */
static int probe_features(bool summary)
{
	char line[1024];
	int missing_required = 0;

	tls_features_probe_bpf();
	tls_features_probe_tc();
	tls_pconn_probe();
	tls_tw_probe();
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
	int opt, verbose = 0, ret = 1, err;
	sigset_t mask;

	if (!d)
		return 1;
	d->conf_path = TLS_CONF_DEFAULT;
	d->sfd = d->tfd = d->epfd = d->lock_fd = d->htfd = -1;
	d->stfd = -1;
	tlsd_init_sources(d);
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
		ret = tlsd_cleanup_all(d->ov.ifname);
		free(d);
		return ret;
	}
	/* Signals wait from the start: a SIGTERM while the tree is being
	 * built must still restore the interface, through the loop. */
	tlsd_loop_signals(&mask);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* A closed log pipe or control client must not kill tlsd before it
	 * restores the interface: writes fail with EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	if (read_config(d, &d->cfg))
		goto out;
	if (start(d))
		goto out;
	err = tlsd_setup_loop(d);
	if (err) {
		pr_err("cannot set up the event loop: %s\n", strerror(-err));
		goto out;
	}
	started = true;
	if (!foreground) {
		/* Detach only now, so that a failed start is seen by the caller. */
		if (daemon(0, 0)) {
			pr_err("cannot detach: %s\n", strerror(errno));
			goto out;
		}
		tls_log_to_syslog("tlsd");
		if (tlsd_renew_signalfd(d))
			goto out;
	}
	sd_notifyf(0, "READY=1\nSTATUS=%s %u jobs on %s\nMAINPID=%d",
		   d->cfg.observe ? "observing" : "scheduling", d->jobs.n, d->cfg.ifname, getpid());
	pr_info("ready\n");
	ret = tlsd_run(d) ? 1 : 0;
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

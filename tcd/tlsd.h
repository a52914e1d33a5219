/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's state and the functions its parts share: tlsd.c (start,
 * stop, reload, main) wires tlsd_jobs.c, tlsd_requests.c, tlsd_stats.c,
 * tlsd_tree.c, tlsd_loop.c and tlsd_cleanup.c together. Beside them, with
 * no access to struct tlsd: tlsd_ctl.c (the control replies, from a
 * struct tlsd_view) and tlsd_metrics.c (the metrics text, from the same).
 */
#ifndef TLSD_H
#define TLSD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* what struct tlsd holds */
#include "classifier.h"
#include "config.h"
#include "ctl.h"
#include "discover.h"
#include "http.h"
#include "jobs.h"
#include "loop.h"
#include "membership.h"
#include "shaper.h"
#include "stats.h"
#include "stats_ingress.h"
#include "stats_sampler.h"
#include "state_file.h"
#include "tc_state.h"
#include "tlsd_metrics.h"
#include "tree_heal.h"
#include "tree_watch.h"

/* The instances' locks and state files (and the control socket's default
 * directory). */
#define TLS_RUN_DIR "/run/tlsd"

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
	/* the one writer of the maps' endpoints, pids and PS sockets */
	struct tls_members *members;
	struct tls_jobs jobs;
	uint64_t step; /* rotations so far (tlsd_rotations) */
	/* roundrobin's leader: the job that arrived lead-th (< jobs.n, or 0);
	 * advanced by one each step, kept through a job's leaving
	 * (tls_policy_lead_after_leave) */
	unsigned int lead;
	/* roundrobin from the clock (bpf/tls_rr.h): when step began, and
	 * whether the classifier has the order (else the timer rotates) */
	uint64_t rr_epoch_ns;
	bool rr_clocked;
	unsigned int burst_bands; /* policy bursts: the order set for so many bands; 0 */
	uint64_t burst_rate;	  /* and for this link rate (bit/s) */
	/* the program's order is the one of the program it replaced (a
	 * takeover's, or a reload's swap), until the set-up keeps it */
	bool burst_carried;
	uint64_t burst_retry_ns; /* a failed set-up is tried again from then */
	int sfd, tfd, epfd;
	/* After a takeover, until the first sync: the previous run's job
	 * names by id, so that each job keeps its id (and its counters). */
	char (*prev_names)[TLS_JOB_NAME_LEN];
	/* The state file's content (tlsd_state.c): the root qdisc to put
	 * back, the jobs' ids as last written (jobs.changes then) */
	struct tls_state_file *state;
	unsigned long state_changes;
	bool state_failing; /* the last write failed (said once) */
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
	struct tls_http *metrics;      /* the metrics endpoint (metrics_listen); NULL: off */
	struct tlsd_mx_cache mx_cache; /* the metrics' blocks of the last flow reading */
	uint64_t reloads, reload_failures;
	/* The loop's sources (lib/util/loop.h), one handler each: signals, the
	 * rotation timer, the tree check's timer, rtnetlink, discovery, the
	 * control socket, the statistics' timer, the metrics endpoint. */
	struct tls_source src_signal, src_timer, src_heal, src_watch, src_disc, src_ctl, src_stats,
		src_metrics;
};

/* tlsd.c: start, stop, reload, the lock */
/* The timer as the policy needs it, restarted: off while roundrobin runs
 * from the clock, else every interval (bursts's retries; roundrobin by
 * the timer). Nothing before the loop has its fd. */
int tlsd_set_timer(struct tlsd *d);
int tlsd_lock_interface(const char *ifname);
int tlsd_lock_path(const char *ifname, char *path, size_t len);
void tlsd_reload(struct tlsd *d);
int tlsd_set_bands_classes(struct tlsd *d);

/* tlsd_jobs.c */
void tlsd_apply_lead_headroom(struct tlsd *d);
int tlsd_assign_bands(struct tlsd *d);
/* Roundrobin from the clock: step, lead and the jobs' bands (and their
 * counts of changes) brought up to now, as the classifier has them. */
void tlsd_rr_advance(struct tlsd *d, uint64_t now_ns);
/* tlsd_bursts.c: policy bursts's order. The new program d->cls carries
 * the order of the program it replaced (checked against the previous
 * run's job names at a takeover, before they are dropped); a set-up is
 * due (the policy is bursts and its order not set up for the bands and
 * rate, and no failure in the last second); the order set up: carried
 * over if it fits, else seeded with the jobs sending, said (-EAGAIN
 * within a second of a failure). */
void tlsd_burst_note_carried(struct tlsd *d);
bool tlsd_burst_setup_due(const struct tlsd *d);
int tlsd_burst_setup(struct tlsd *d);
/* Each job's weight in the order's fair share from its flows to workers
 * in the statistics, written where it changed (after a sample). */
void tlsd_burst_weights(struct tlsd *d);
void tlsd_purge_leftovers(struct tlsd *d);
int tlsd_sync_discovery(struct tlsd *d, const struct tls_config *c);
int tlsd_sync_jobs(struct tlsd *d, const struct tls_config *c);

/* tlsd_requests.c */
void tlsd_keep_live_policy(struct tlsd *d, struct tls_config *c);
int tlsd_metrics_body_of(void *ctx, bool openmetrics, struct tls_http_body *body,
			  const char **ctype);
int tlsd_open_ctl(struct tlsd *d, const struct tls_config *c, struct tls_ctl **out);
void tlsd_reload_ctl(struct tlsd *d, struct tls_config *c);

/* tlsd_stats.c */
/* both directions' engines (pull: egress, push: ingress) alike */
void tlsd_stats_forget_job(struct tlsd *d, uint32_t id);
void tlsd_stats_set_link_rate(struct tlsd *d, uint64_t rate);
int tlsd_arm_stats_timer(struct tlsd *d, uint64_t period_ns);
void tlsd_close_stats(struct tlsd *d);
void tlsd_open_stats(struct tlsd *d);
void tlsd_stats_tick(struct tlsd *d);

/* tlsd_tree.c */
void tlsd_open_watch(struct tlsd *d);
void tlsd_tree_check(struct tlsd *d, bool resume);
bool tlsd_tree_held(const struct tlsd *d);
void tlsd_tree_resume(struct tlsd *d);
void tlsd_watch_event(struct tlsd *d);

/* tlsd_loop.c */
void tlsd_init_sources(struct tlsd *d);
void tlsd_loop_signals(sigset_t *mask);
int tlsd_renew_signalfd(struct tlsd *d);
int tlsd_run(struct tlsd *d);
int tlsd_setup_loop(struct tlsd *d);

/* tlsd_state.c: the state file, /run/tlsd/IFNAME@NETNS.state */
int tlsd_state_path(const char *ifname, char *path, size_t len);
/* The previous run's state: from the maps of pin layouts 1 and 2 if they
 * are pinned in pin_dir, else the state file. 0, -ENOENT (none), -EPROTO (a
 * newer tlsd's file: left untouched, said), -EINVAL (a bad file: said,
 * naming the field, and moved aside as .bad), or another -errno (a file
 * that cannot be read: left, said; nothing is to be done over it). */
int tlsd_state_load(const char *ifname, const char *pin_dir, struct tls_state_file *s);
/* Before the classifier loads: the daemon's state in the maps of pins of
 * layouts 1 and 2 into the state file; -EPROTO if the file is a newer
 * tlsd's (start refused, said). */
int tlsd_state_prepare(const char *ifname);
/* After it loaded: those maps unpinned, once the file holds what they did. */
void tlsd_state_unpin_legacy(const char *ifname);
/* At start, the classifier loaded: the root qdisc to put back and the
 * previous run's job names (d->prev_names, took_over) read back, or this
 * run's root qdisc written at once. */
int tlsd_state_start(struct tlsd *d, bool took_over);
/* Write the state file if the jobs changed since it was written (always
 * with force); a failure is said once until a write succeeds. */
void tlsd_state_save(struct tlsd *d, bool force);
/* The state file goes with the pins: removed if they are gone. */
void tlsd_state_remove(const char *ifname);

/* tlsd_cleanup.c */
int tlsd_cleanup_all(const char *only_if);
int tlsd_remove_instance(const char *ifname, const char *pin_dir);
int tlsd_replace_other_layout(const char *ifname);

#endif

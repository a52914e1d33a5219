/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PS discovery: finds the parameter servers on the host by the rules
 * (rules.h), follows them and tells the daemon which jobs come and go.
 *
 * Events: exec from the proc connector (a new process is matched at once),
 * exit from a pidfd per PS (in the same epoll), and a rescan of /proc every
 * `rescan` as the safety net (events lost to an overflow, a tlsd restart).
 *
 * A PS found joins its job in the classifier as a process, through the
 * membership table (membership.h, the one writer of the maps' membership:
 * the sockets it has, and through the sock_create hook every socket it
 * opens later, listening or connecting, are tagged with the job), so its
 * traffic is classified from the first packet of each new connection. Its
 * TCP sockets from sock_diag, joined to its socket inodes inside its own
 * network namespace, give its ports (logs, tlsctl) and the endpoint
 * fallback: a listener's (address, port), and, for a PS in another network
 * namespace (a container, whose packets reach the host interface without
 * their socket), the local endpoint of each of its connections.
 *
 * Socket polls per PS: at once, 10 ms, 50 ms, 200 ms and 1 s after it was
 * found, then every rescan; every 100 ms for a PS in another namespace (its
 * new connections are classified by endpoint only once a poll saw them) and
 * while a PS has a TCP socket neither listening nor connected yet. A poll
 * lists the PS's socket fds; only when a TCP socket came, went or began
 * listening or connecting does it ask sock_diag (one dump per namespace).
 *
 * A trusted process's command line and environment are read through its
 * memory, which can stall (proc_reader.h): by a reader thread, the loop
 * waiting at most 100 ms a read and 100 ms a tick. A process whose read was
 * late or refused is judged again later (100 ms, doubling up to the
 * rescan's period); four stuck reads pause the judging of every process
 * until one returns.
 *
 * Everything else runs from one fd (an epoll of its own) in the daemon's
 * loop.
 */
#ifndef TLS_DISCOVER_H
#define TLS_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "membership.h"
#include "rules.h"

struct tls_discover_hooks {
	/* A job has its first PS (of real uid uid): add it (or find it) and
	 * return its id, 0 if it cannot be added or may not be joined. */
	uint32_t (*job_up)(void *ctx, const char *job, const char *rule, uid_t uid);
	/* Its last PS is gone. */
	void (*job_down)(void *ctx, const char *job, uint32_t id);
};

struct tls_discover;

int tls_discover_new(const struct tls_discovery_conf *conf, struct tls_members *mb,
		     const struct tls_discover_hooks *hooks, void *ctx, struct tls_discover **out);
/* Forget every PS (their jobs go down) and free. */
void tls_discover_free(struct tls_discover *d);
/* Free without touching the membership or the daemon's jobs: the maps are
 * going away, or stay as they are for a later run. */
void tls_discover_release(struct tls_discover *d);
/* The fd for the daemon's epoll (readable: call tls_discover_run). */
int tls_discover_fd(const struct tls_discover *d);
/* Handle what is pending: events, exits, due polls and rescans. */
void tls_discover_run(struct tls_discover *d);
/* Scan /proc now (at start: the PSes already running). */
void tls_discover_rescan(struct tls_discover *d);
/* New rules (a reload): every process is judged again by them. */
int tls_discover_set_conf(struct tls_discover *d, const struct tls_discovery_conf *conf);

/* What the daemon shows of a job: its PS pids and listening ports. */
struct tls_discover_job {
	unsigned int npids;
	pid_t pids[16];
	unsigned int nports;
	uint16_t ports[16];
	char rule[TLS_RULE_NAME_MAX];
};
int tls_discover_job_info(const struct tls_discover *d, const char *job,
			  struct tls_discover_job *info);

#endif /* TLS_DISCOVER_H */

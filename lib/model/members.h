/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The membership table, its pure part: for each endpoint key and each pid,
 * which job it belongs to and who holds it. No I/O: tcd/members.c applies
 * what a change here says to the classifier's maps, and is the daemon's one
 * writer of them.
 *
 * Holders: the configuration (one holder: the file's static jobs, by port)
 * and discovery (each discovered PS one holder, counted: two PSes of a job
 * listening on one port hold its endpoint twice). A key leaves the map when
 * its last holder lets go.
 *
 * The conflict rule, when two holders claim one key for different jobs:
 *  - the configuration wins over discovery: the file is root's, and a
 *    user's process must not take a port of the file's job (its traffic
 *    would take that job's band). A PS's claim on a key the file holds for
 *    another job is kept, shadowed (TLS_MEMBER_SHADOWED): it takes effect
 *    if the file lets the key go (a reload drops the port);
 *    The file's claim on a port on every address (its jobs' keys are all
 *    such) shadows discovered exact endpoints of other jobs on that port
 *    the same way: the classifier prefers exact keys, so one would take
 *    the file's job's traffic to its address;
 *  - the configuration's later claim wins over its earlier one (a reload
 *    moves a port from one job to another, in whatever order the jobs are
 *    synced); the earlier job's release then changes nothing;
 *  - between discovered PSes the first holder wins: a PS of another job is
 *    refused (-EBUSY) and not recorded (its claim is not counted, and it
 *    asks again when the key is free: tls_members_release says so).
 *
 * Bounds (the input is untrusted: any local user can open sockets a PS
 * holds): so many keys of each kind as the map has room for (TLS_MAX_*),
 * and of endpoints, discovery's at most half: the file's jobs (at most
 * TLS_MAX_JOBS x 16 ports x 2 families, the other half) never lack room
 * for a user's PSes. Each PS's share and each user's are bounded by
 * discovery (MAX_PS_EPS, discovery.limits).
 */
#ifndef TLS_MEMBERS_H
#define TLS_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "tls_common.h"

enum tls_member_kind {
	TLS_MEMBER_ENDPOINT,
	TLS_MEMBER_PID,
	TLS_MEMBER_KINDS,
};

enum tls_member_holder {
	TLS_HOLDER_CONFIG,    /* the file's static jobs */
	TLS_HOLDER_DISCOVERY, /* one discovered PS */
};

/* Compared as bytes: made by tls_member_ep() or tls_member_pid() only. */
struct tls_member_key {
	__u32 kind;
	__u32 pid;
	struct tls_endpoint_key ep;
};

/* One key's holders. A job is never 0; 0 says "none". */
struct tls_member {
	struct tls_member_key key;
	__u32 config_job; /* the configuration's claim, or 0 */
	__u32 disc_job;	  /* discovery's (every PS of it claims this job) */
	__u32 disc_refs;  /* how many PSes hold it */
	bool used;
};

/* What a change did to the job in force (0: the key is in no job). */
struct tls_member_change {
	__u32 before, after;
};

#define TLS_MEMBER_SHADOWED 1

/* The caps: keys of each kind, and discovery's share of the endpoints. */
#define TLS_MEMBERS_MAX_ENDPOINTS      TLS_MAX_ENDPOINTS
#define TLS_MEMBERS_MAX_DISC_ENDPOINTS (TLS_MAX_ENDPOINTS / 2)
#define TLS_MEMBERS_MAX_PIDS	       TLS_MAX_PIDS

struct tls_members_table;

struct tls_member_key tls_member_ep(const struct tls_endpoint_key *k);
struct tls_member_key tls_member_pid(__u32 pid);

/* An empty table; NULL when out of memory. */
struct tls_members_table *tls_members_table_new(void);
void tls_members_table_free(struct tls_members_table *t);

/* The job in force of k (0: none), what it is held by, NULL if nobody. */
__u32 tls_members_job(const struct tls_members_table *t, const struct tls_member_key *k);
const struct tls_member *tls_members_find(const struct tls_members_table *t,
					  const struct tls_member_key *k);
size_t tls_members_count(const struct tls_members_table *t, enum tls_member_kind kind);

/*
 * holder claims k for job (not 0). 0: held, job is in force;
 * TLS_MEMBER_SHADOWED: recorded, the configuration's job stays in force;
 * -EBUSY: another discovered job holds k (not recorded); -ENOSPC: no room
 * (a bound above); -EINVAL: job 0 or a bad kind; -ENOMEM. The
 * configuration claims once whatever it is asked (it is one holder); a PS
 * once per call. *was, if not NULL, is the entry before, for
 * tls_members_restore (a map write that failed).
 */
int tls_members_acquire(struct tls_members_table *t, const struct tls_member_key *k,
			enum tls_member_holder h, __u32 job, struct tls_member_change *ch,
			struct tls_member *was);
/* holder lets go of its claim of k for job: 0, or -ENOENT if it held none
 * (the configuration's claim moved to another job meanwhile: nothing
 * changes). */
int tls_members_release(struct tls_members_table *t, const struct tls_member_key *k,
			enum tls_member_holder h, __u32 job, struct tls_member_change *ch);
/* Put back an entry as tls_members_acquire's *was had it. */
void tls_members_restore(struct tls_members_table *t, const struct tls_member *was);

/*
 * The exact endpoints (an address) discovery holds on the port of `any`
 * (an endpoint key on every address): those a claim or release of `any` by
 * the configuration shadows or brings back. Up to max into out; returns
 * how many there are (0 if `any` is not such a key).
 */
size_t tls_members_exact_on(const struct tls_members_table *t, const struct tls_member_key *any,
			    struct tls_member_key *out, size_t max);

/*
 * The reconciliation of a takeover, as a diff: of the n keys the maps had
 * (kind's), those the table does not hold are moved to the front of keys,
 * in their order; returns how many. What the table holds is written by the
 * claims themselves (a write of the job a key has already changes nothing).
 */
size_t tls_members_stale(const struct tls_members_table *t, struct tls_member_key *keys, size_t n);

#endif /* TLS_MEMBERS_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Membership: the one writer of the classifier's endpoints, pids and PS
 * sockets in the daemon. Static jobs (tlsd_jobs.c) and discovery
 * (discover.c) claim and let go here, each as a holder; the table
 * (lib/model/members.h: reference counts, the conflict rule, the bounds)
 * decides which job a key is in, and only a change of that is written to
 * the maps. Nothing reads the membership maps back to decide anything but
 * tls_members_reconcile(), once, at a takeover.
 */
#ifndef TLS_MEMBERSHIP_H
#define TLS_MEMBERSHIP_H

#include <stdbool.h>
#include <sys/types.h>

#include "classifier.h"
#include "members.h"

struct tls_members;

int tls_members_new(const struct tls_maps *m, struct tls_members **out);
/* Free the table; the maps stay as they are. */
void tls_members_free(struct tls_members *mb);
/* The classifier's maps moved (a reload swapped the program). */
void tls_members_set_maps(struct tls_members *mb, const struct tls_maps *m);

/*
 * holder claims endpoint k for job: 0 (in force), TLS_MEMBER_SHADOWED (the
 * file's job keeps it for now), -EBUSY (another discovered job's), or
 * -errno (no room, the map refused: nothing recorded). *other, if not
 * NULL: the job that has k instead (the file's, or the discovered one's),
 * else 0.
 */
int tls_members_add_endpoint(struct tls_members *mb, enum tls_member_holder h, __u32 job,
			     const struct tls_endpoint_key *k, __u32 *other);
/* holder lets go: 1 if no discovered PS holds k any more (one refused it
 * may claim it now), 0 if one still does, -ENOENT if holder did not hold it
 * for job. */
int tls_members_del_endpoint(struct tls_members *mb, enum tls_member_holder h, __u32 job,
			     const struct tls_endpoint_key *k);
/* The job k is in (0: none), as the table says. */
__u32 tls_members_endpoint_job(const struct tls_members *mb, const struct tls_endpoint_key *k);
/* The file's claim on k (its job), or 0. */
__u32 tls_members_endpoint_config_job(const struct tls_members *mb,
				      const struct tls_endpoint_key *k);

/* A PS joins job as a process (its pid and its sockets,
 * tls_add_process): how many sockets were tagged, or -errno (nothing
 * recorded). */
int tls_members_add_process(struct tls_members *mb, enum tls_member_holder h, __u32 job, pid_t pid);
int tls_members_del_process(struct tls_members *mb, enum tls_member_holder h, __u32 job, pid_t pid);
/* Tag a socket (an fd of this process, fetched from pid) with the job pid
 * is in: -ENOENT if pid is in none. */
int tls_members_tag_socket(const struct tls_members *mb, pid_t pid, int fd);

/* A takeover: the maps hold a crashed run's entries until the
 * reconciliation; a claim a map full of them refuses runs it early. */
void tls_members_takeover(struct tls_members *mb);
/* After a takeover, once every holder has claimed what it holds now: the
 * maps' endpoints and pids the table does not hold (a previous run's) are
 * deleted, after one read of each map's keys. */
void tls_members_reconcile(struct tls_members *mb);

#endif /* TLS_MEMBERSHIP_H */

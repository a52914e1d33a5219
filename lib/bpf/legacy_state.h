/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's state as pin layouts 1 and 2 kept it: two maps pinned beside
 * the classifier's that no program read, tls_saved_qdisc (the root qdisc
 * to put back, a netlink request) and tls_job_names (each job id's name).
 * Layout 3 keeps them in the daemon's state file (tcd/state_file.h); these
 * read the old maps once, for the daemon to write that file, and unpin
 * them. Each map's format is checked before it is read.
 */
#ifndef TLS_LEGACY_STATE_H
#define TLS_LEGACY_STATE_H

#include <stddef.h>
#include <linux/types.h>

/* The maps' names and formats, as layouts 1 and 2 pinned them. */
#define TLS_LEGACY_QDISC_MAP "tls_saved_qdisc"
#define TLS_LEGACY_NAMES_MAP "tls_job_names"
#define TLS_LEGACY_QDISC_MAX 2048 /* the request's bound */
#define TLS_LEGACY_NAME_LEN  64	  /* a name with its NUL */

/* Either map is pinned in pin_dir: 1, else 0. */
int tls_legacy_state_pinned(const char *pin_dir);
/* The saved request into msg (*len: its room, then its length; 0: the
 * kernel's default): 0, -ENOENT if the map is not pinned, -ESTALE if it is
 * not of the old format, -E2BIG, or -errno. */
int tls_legacy_read_saved_qdisc(const char *pin_dir, void *msg, size_t *len);
/* Each job id with a name: cb(id, name, ctx) (a non-zero return stops and
 * is returned). 0, -ENOENT if the map is not pinned, -ESTALE, or -errno. */
typedef int (*tls_legacy_name_cb)(__u32 id, const char *name, void *ctx);
int tls_legacy_read_job_names(const char *pin_dir, tls_legacy_name_cb cb, void *ctx);
/* Unpin both (what they held is in the state file now): 0 or -errno. */
int tls_legacy_state_unpin(const char *pin_dir);

#endif /* TLS_LEGACY_STATE_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon's state file (state_file.h) in tlsd's life: read back by a
 * takeover and by --cleanup, moved out of the maps of pin layouts 1 and 2
 * (legacy_state.h) before tlsd takes those pins over, written at start and
 * whenever the jobs change, removed with the pins.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "legacy_state.h"
#include "log.h"
#include "pin_layout.h"
#include "state_file.h"

#include "tlsd.h"

int tlsd_state_path(const char *ifname, char *path, size_t len)
{
	char name[IF_NAMESIZE + 32];
	int err = tls_instance_name(ifname, name, sizeof(name));

	if (err)
		return err;
	return (size_t)snprintf(path, len, "%s/%s.state", TLS_RUN_DIR, name) >= len ?
		       -ENAMETOOLONG :
		       0;
}

static int add_legacy_name(__u32 id, const char *name, void *ctx)
{
	/* a name the state file cannot hold (a clash) is one job less kept */
	tls_state_file_add_job(ctx, id, name);
	return 0;
}

/* The daemon's state from the maps of pin layouts 1 and 2 in pin_dir: 0,
 * -ENOENT if none is pinned, or -errno (said). */
static int read_legacy(const char *ifname, const char *pin_dir, struct tls_state_file *s)
{
	static uint8_t req[TLS_LEGACY_QDISC_MAX];
	char name[IF_NAMESIZE + 32], why[160];
	size_t len = sizeof(req);
	int err;

	if (!tls_legacy_state_pinned(pin_dir))
		return -ENOENT;
	err = tls_instance_name(ifname, name, sizeof(name));
	if (err)
		return err;
	tls_state_file_init(s, name);
	err = tls_legacy_read_saved_qdisc(pin_dir, req, &len);
	if (!err)
		err = tls_state_file_set_qdisc(s, req, len, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", strerror(-err));
	if (err && err != -ENOENT) {
		pr_warn("%s/" TLS_LEGACY_QDISC_MAP
			": %s: the root qdisc before tlsd is not known\n",
			pin_dir, why);
		return err;
	}
	err = tls_legacy_read_job_names(pin_dir, add_legacy_name, s);
	if (err && err != -ENOENT)
		pr_warn("%s/" TLS_LEGACY_NAMES_MAP ": %s: jobs get new ids\n", pin_dir,
			strerror(-err));
	return 0;
}

/* A downgrade: a newer tlsd's file is not this one's to read, nor to
 * replace. */
static int say_newer(const char *why)
{
	/* why: "PATH: version: N, this tlsd reads M" */
	pr_err("%s: a newer tlsd's state file, left untouched; stop that tlsd (it restores the "
	       "interface), or remove what it left with its own tlsd --cleanup\n",
	       why);
	return -EPROTO;
}

/* The state file of ifname's instance (its path into path, 4096 bytes):
 * tls_state_file_read()'s return, why in why. */
static int read_file(const char *ifname, char *path, struct tls_state_file *s, char *why,
		     size_t len)
{
	char name[IF_NAMESIZE + 32];
	int err = tlsd_state_path(ifname, path, 4096);

	if (!err)
		err = tls_instance_name(ifname, name, sizeof(name));
	if (err) {
		snprintf(why, len, "%s", strerror(-err));
		return err;
	}
	return tls_state_file_read(path, name, s, why, len);
}

int tlsd_state_load(const char *ifname, const char *pin_dir, struct tls_state_file *s)
{
	char path[4096], bad[4096 + 8], why[512], kept[64] = "";
	int err;

	err = read_legacy(ifname, pin_dir, s);
	if (err != -ENOENT)
		return err;
	err = read_file(ifname, path, s, why, sizeof(why));
	if (!err || err == -ENOENT)
		return err;
	if (err == -EPROTO)
		return say_newer(why);
	/* One that cannot be read (EACCES, EIO...) may be good: it holds the
	 * only record of the root qdisc to put back, so nothing is done over
	 * it (the caller leaves the interface, the pins and the file). */
	if (err != -EINVAL) {
		pr_err("state file %s: cannot be read; tlsd leaves it, the pins and %s as they "
		       "are (the root qdisc to put back is on record in it): fix the cause, or "
		       "move the file away to go on without that record, and start again\n",
		       why, ifname);
		return err;
	}
	/* Never a guess: what a bad file says is not used at all. It is kept
	 * aside for the operator (the root qdisc's request is in it, in
	 * hex). */
	snprintf(bad, sizeof(bad), "%s.bad", path);
	if (rename(path, bad))
		snprintf(kept, sizeof(kept), " (not moved: %s)", strerror(errno));
	pr_warn("state file %s; not used%s%s%s. The root qdisc %s had before tlsd is not known: "
		"the kernel's default comes back when tlsd's tree goes; if it had one of its own, "
		"put it back by hand (tc qdisc replace dev %s root ...). Jobs get new ids.\n",
		why, !kept[0] ? ", kept as " : "", !kept[0] ? bad : "", kept, ifname, ifname);
	return err;
}

/* Pins of layouts 1 and 2 keep the daemon's state in two maps that this
 * tlsd's object no longer has: read once into the state file, before the
 * pins are taken over (and marked this layout). The maps are unpinned
 * only after the classifier loaded over the pins (tlsd_state_unpin_legacy):
 * until then an older tlsd still finds its pins as it left them. */
int tlsd_state_prepare(const char *ifname)
{
	struct tls_state_file *s = NULL;
	char pin_dir[4096], path[4096], why[512];
	int err;

	err = tls_pin_dir_for(ifname, pin_dir, sizeof(pin_dir));
	if (!err)
		err = tlsd_state_path(ifname, path, sizeof(path));
	if (err)
		return err;
	if (access(pin_dir, F_OK))
		return 0; /* nothing to take over: a fresh start writes its own */
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = read_legacy(ifname, pin_dir, s);
	if (err == -ENOENT) {
		/* only a newer tlsd's file stops the start here; a bad one is
		 * the takeover's to set aside and say */
		err = read_file(ifname, path, s, why, sizeof(why)) == -EPROTO ? say_newer(why) : 0;
		goto out;
	}
	if (err) {
		err = 0; /* said: the maps stay pinned, --cleanup reads them */
		goto out;
	}
	err = tls_state_file_write(path, s, why, sizeof(why));
	if (err)
		pr_warn("%s: keeping the earlier tlsd's maps pinned: %s\n", pin_dir, why);
	else
		pr_info("%s: what an earlier tlsd kept in pinned maps (the root qdisc before it, "
			"%u job names) is in %s now\n",
			pin_dir, s->njobs, path);
	err = 0;
out:
	free(s);
	return err;
}

void tlsd_state_unpin_legacy(const char *ifname)
{
	char pin_dir[4096], path[4096];

	/* only once the state file holds what they did */
	if (tls_pin_dir_for(ifname, pin_dir, sizeof(pin_dir)) ||
	    tlsd_state_path(ifname, path, sizeof(path)) || access(path, F_OK) ||
	    !tls_legacy_state_pinned(pin_dir))
		return;
	tls_legacy_state_unpin(pin_dir);
}

/* Every id the previous run may have used and the record does not name
 * (all of them without a record: prev_names is empty), since the crashed
 * run may have used one after its last write of the file (a job added,
 * then a crash): no band, a new generation, so that a fresh id handed out
 * now is not one whose sockets still count. */
static void free_unnamed_ids(struct tlsd *d)
{
	for (uint32_t id = 1; id < TLS_MAX_JOBS; id++)
		if (!d->prev_names[id][0])
			tls_free_job_id(d->m, id);
}

/* d->state to the file as it is; a failure said once until a write
 * succeeds. */
static int write_state(struct tlsd *d)
{
	char path[4096], why[512];
	int err = tlsd_state_path(d->cfg.ifname, path, sizeof(path));

	if (err)
		snprintf(why, sizeof(why), "%s", strerror(-err));
	else
		err = tls_state_file_write(path, d->state, why, sizeof(why));
	if (err) {
		if (!d->state_failing)
			pr_warn("cannot keep tlsd's state (%s): a start after a crash will not know "
				"the jobs' ids, nor --cleanup the root qdisc to put back\n",
				why);
		d->state_failing = true;
		return err;
	}
	if (d->state_failing)
		pr_info("%s written again\n", path);
	d->state_failing = false;
	return 0;
}

int tlsd_state_start(struct tlsd *d, bool took_over)
{
	char name[IF_NAMESIZE + 32], pin_dir[4096], why[256];
	struct tls_state_file *prev = NULL;
	int err, loaded = -ENOENT;

	err = tls_instance_name(d->cfg.ifname, name, sizeof(name));
	if (!err)
		err = tls_pin_dir_for(d->cfg.ifname, pin_dir, sizeof(pin_dir));
	if (err)
		return err;
	free(d->state);
	d->state = malloc(sizeof(*d->state));
	if (!d->state)
		return -ENOMEM;
	tls_state_file_init(d->state, name);
	if (took_over) {
		prev = malloc(sizeof(*prev));
		d->prev_names = calloc(TLS_MAX_JOBS, sizeof(*d->prev_names));
		if (!prev || !d->prev_names) {
			free(prev);
			return -ENOMEM;
		}
		loaded = tlsd_state_load(d->cfg.ifname, pin_dir, prev);
		/* a newer tlsd's file, or one that cannot be read: never
		 * written over; the failed start leaves the takeover's state
		 * as it was (said) */
		if (loaded && loaded != -ENOENT && loaded != -EINVAL) {
			free(prev);
			free(d->prev_names);
			d->prev_names = NULL;
			return loaded;
		}
		for (unsigned int i = 0; !loaded && i < prev->njobs; i++) {
			snprintf(d->prev_names[prev->jobs[i].id], sizeof(d->prev_names[0]), "%s",
				 prev->jobs[i].name);
			/* kept on record until the jobs are sorted out */
			tls_state_file_add_job(d->state, prev->jobs[i].id, prev->jobs[i].name);
		}
		if (tls_cls_took_over(d->cls))
			free_unnamed_ids(d);
	}
	if (!d->shaper) {
		/* observe: nothing replaced, nothing to put back */
	} else if (tls_shaper_took_over(d->shaper)) {
		if (!loaded) {
			tls_shaper_set_saved_request(d->shaper, prev->qdisc, prev->qdisc_len);
			tls_state_file_set_qdisc(d->state, prev->qdisc, prev->qdisc_len, NULL, 0);
		} else if (loaded == -ENOENT) {
			/* Our tree without its record: the pins and the
			 * state file were removed while the tree stayed. */
			pr_warn("took over the HTB tree of a previous tlsd on %s, but its record of "
				"the root qdisc before it is gone (state file and pins removed?): "
				"at exit the kernel's default root qdisc comes back\n",
				d->cfg.ifname);
		}
		/* a bad record: said by tlsd_state_load */
	} else {
		size_t len = TLS_SAVED_QDISC_MAX;
		uint8_t *req = malloc(len);

		err = req ? tls_shaper_saved_request(d->shaper, req, &len) : -ENOMEM;
		if (!err)
			err = tls_state_file_set_qdisc(d->state, req, len, why, sizeof(why));
		else
			snprintf(why, sizeof(why), "%s", strerror(-err));
		free(req);
		if (err)
			pr_warn("cannot keep a record of the previous root qdisc of %s (%s): tlsd "
				"puts it back at exit, but after a crash the kernel's default would "
				"come back\n",
				d->cfg.ifname, why);
	}
	free(prev);
	/* On disk before the tree replaces the root qdisc: the record of it,
	 * and a crashed run's jobs until this start has sorted them out. */
	write_state(d);
	return 0;
}

void tlsd_state_save(struct tlsd *d, bool force)
{
	unsigned int i;

	if (!d->state || (!force && d->jobs.changes == d->state_changes))
		return;
	d->state->njobs = 0;
	for (i = 0; i < d->jobs.n; i++)
		tls_state_file_add_job(d->state, d->jobs.job[i].id, d->jobs.job[i].name);
	if (!write_state(d))
		d->state_changes = d->jobs.changes;
}

void tlsd_state_remove(const char *ifname)
{
	char pin_dir[4096], path[4096];

	/* with the pins only: while they are there, so is what restores them */
	if (tls_pin_dir_for(ifname, pin_dir, sizeof(pin_dir)) || !access(pin_dir, F_OK) ||
	    tlsd_state_path(ifname, path, sizeof(path)))
		return;
	if (unlink(path) && errno != ENOENT)
		pr_warn("cannot remove %s: %s\n", path, strerror(errno));
}

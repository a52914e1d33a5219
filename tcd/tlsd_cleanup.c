// SPDX-License-Identifier: GPL-2.0-only
/*
 * What a tlsd leaves and --cleanup removes: an instance's tree and pins,
 * another map layout's pins replaced, every interface swept.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "pin_layout.h"

#include "tlsd.h"

/* tlsd's tree on ifname (if there is one) replaced by the root qdisc its
 * record says (the state file, or the maps of pins of layouts 1 and 2 in
 * pin_dir), or the kernel's default if there is no record or a bad one: 0
 * or -errno. *untouched: nothing was done, as a newer tlsd's state file
 * (-EPROTO) or one that could not be read (EACCES, EIO...) ask: the tree,
 * the pins and the file stay for a later --cleanup (said). */
static int restore_root(const char *ifname, const char *pin_dir, bool *untouched)
{
	struct tls_state_file *s = malloc(sizeof(*s));
	int err;

	*untouched = false;
	if (!s)
		return -ENOMEM;
	err = tlsd_state_load(ifname, pin_dir, s);
	if (err && err != -ENOENT && err != -EINVAL) {
		free(s);
		*untouched = true;
		return err;
	}
	if (err)
		s->qdisc_len = 0;
	err = if_nametoindex(ifname) ?
		      tls_shaper_remove(ifname, s->qdisc_len ? s->qdisc : NULL, s->qdisc_len) :
		      0;
	free(s);
	return err;
}

/* The instance pinned at pin_dir for ifname: its HTB tree (restore_root),
 * then its classifier and pins, and with them the state file. 0, or 1 if
 * something could not be removed or was left to a newer tlsd. */
int tlsd_remove_instance(const char *ifname, const char *pin_dir)
{
	int failed = 0, err;
	bool untouched;
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
	/* The HTB tree first, while the record still says what to put back. */
	err = restore_root(ifname, pin_dir, &untouched);
	if (untouched)
		return 1;
	if (err)
		failed = 1;
	if (tls_cls_remove_pinned(pin_dir))
		failed = 1;
	/* the record stays while the tree it tells of does: a later
	 * --cleanup (a tree without pins) puts its root qdisc back */
	if (!err)
		tlsd_state_remove(ifname);
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

	fd = tlsd_lock_path(ifname, path, sizeof(path));
	if (fd)
		return fd;
	if (!may_create && access(path, F_OK))
		return -ENOENT;
	fd = tlsd_lock_interface(ifname);
	if (fd == -EBUSY)
		pr_warn("--cleanup leaves %s alone: stop that tlsd instead (it restores the "
			"interface when it exits)\n",
			ifname);
	return fd;
}

/* A tree without pins (removed by hand): the root qdisc its state file
 * recorded back, else the kernel's default; the state file goes once the
 * tree has. A newer tlsd's state file, or one that cannot be read: left,
 * with the tree (said). */
static int remove_tree(const char *ifname)
{
	char pin_dir[4096];
	bool untouched;
	int err = tls_pin_dir_for(ifname, pin_dir, sizeof(pin_dir));

	if (!err)
		err = restore_root(ifname, pin_dir, &untouched);
	if (!err)
		tlsd_state_remove(ifname);
	return err;
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

int tlsd_cleanup_all(const char *only_if)
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
		if (tlsd_remove_instance(ifname, path))
			failed = 1;
		else
			printf("removed tlsd from %s\n", ifname);
		close(fd);
	}
	if (dir)
		closedir(dir);
	rmdir(TLS_PIN_ROOT);
	/* Trees without pins (removed by hand): the root qdisc before them
	 * back, if a state file says which, else the kernel's default. */
	if (only_if) {
		if (if_nametoindex(only_if)) {
			fd = cleanup_lock(only_if, false);
			if (fd == -EBUSY || (fd < 0 && fd != -ENOENT) ||
			    (!pins_left(only_if) && remove_tree(only_if)))
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
				remove_tree(i->if_name);
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
int tlsd_replace_other_layout(const char *ifname)
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
	if (tlsd_remove_instance(ifname, pin_dir))
		pr_warn("%s: the earlier tlsd's state was not wholly removed (see above)\n",
			ifname);
	return 0;
}

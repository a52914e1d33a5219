// SPDX-License-Identifier: GPL-2.0-only
/* Loading, attaching and removing the classifier. Map operations: cls_maps.c */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpffs.h"
#include "classifier.h"
#include "log.h"
#include "tls_classifier.skel.h"

#define PROG_PIN "tls_classify"
#define LINK_PIN "tls_sock_create_link"

struct tls_cls {
	struct tls_classifier *skel;
	struct tls_maps maps;
	struct bpf_link *cg_link;
	char *ifname;
	char *pin_dir;
	char *cgroup;
	__u32 tc_handle, tc_prio;
	int ifindex;
	bool tc_attached;
	bool created_clsact;
	bool prog_pinned;
	bool link_pinned;
};

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int tls_pin_dir_for(const char *ifname, char *buf, size_t len)
{
	return pin_path(buf, len, TLS_PIN_ROOT, ifname);
}

static void fill_maps(struct tls_cls *c)
{
	struct tls_classifier *s = c->skel;

	c->maps.sk_jobs = bpf_map__fd(s->maps.tls_sk_jobs);
	c->maps.pids = bpf_map__fd(s->maps.tls_pids);
	c->maps.endpoints = bpf_map__fd(s->maps.tls_endpoints);
	c->maps.ports = bpf_map__fd(s->maps.tls_ports);
	c->maps.gen = bpf_map__fd(s->maps.tls_gen);
	c->maps.jobs = bpf_map__fd(s->maps.tls_jobs);
	c->maps.bands = bpf_map__fd(s->maps.tls_bands);
	c->maps.job_stats = bpf_map__fd(s->maps.tls_job_stats);
	c->maps.flows = bpf_map__fd(s->maps.tls_flows);
	c->maps.state = bpf_map__fd(s->maps.tls_state);
}

static int pin_maps(struct tls_cls *c)
{
	struct bpf_map *map;
	char path[4096];
	int err;

	bpf_object__for_each_map (map, c->skel->obj) {
		if (bpf_map__is_internal(map))
			continue; /* .rodata belongs to one program load */
		err = pin_path(path, sizeof(path), c->pin_dir, bpf_map__name(map));
		if (!err)
			err = bpf_map__set_pin_path(map, path);
		if (err)
			return err;
	}
	return 0;
}

int tls_cls_load(const struct tls_cls_opts *o, struct tls_cls **out)
{
	struct tls_cls *c;
	char path[4096];
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->tc_handle = o->tc_handle ? o->tc_handle : TLS_TC_HANDLE_DEFAULT;
	c->tc_prio = o->tc_prio ? o->tc_prio : TLS_TC_PRIO_DEFAULT;
	if ((o->ifname && !(c->ifname = strdup(o->ifname))) ||
	    (o->pin_dir && !(c->pin_dir = strdup(o->pin_dir))) ||
	    (o->cgroup && !(c->cgroup = strdup(o->cgroup)))) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (c->pin_dir) {
		err = tls_bpffs_ensure();
		if (!err)
			err = tls_mkdir_p(c->pin_dir);
		if (err)
			goto cleanup;
	}

	c->skel = tls_classifier__open();
	if (!c->skel) {
		err = -errno;
		pr_warn("cannot open the BPF classifier object: %s\n", strerror(-err));
		goto cleanup;
	}
	c->skel->rodata->flowlet_gap_ns = o->flowlet_gap_ns;
	c->skel->rodata->flowlet_hold_ns = o->flowlet_hold_ns;
	c->skel->rodata->dscp_enabled = o->dscp;
	if (c->pin_dir) {
		err = pin_maps(c);
		if (err)
			goto cleanup;
	}
	err = tls_classifier__load(c->skel);
	if (err) {
		pr_warn("cannot load the BPF classifier: %s%s\n", strerror(-err),
			c->pin_dir ?
				" (maps pinned by an older tlsd may not match: remove them with"
				" `tlsd --cleanup`)" :
				"");
		goto cleanup;
	}
	fill_maps(c);
	if (c->pin_dir) {
		err = pin_path(path, sizeof(path), c->pin_dir, PROG_PIN);
		if (err)
			goto cleanup;
		unlink(path); /* a previous instance's program: the new one replaces it */
		err = bpf_program__pin(c->skel->progs.tls_classify, path);
		if (err) {
			pr_warn("cannot pin the program at %s: %s\n", path, strerror(-err));
			goto cleanup;
		}
		c->prog_pinned = true;
	}
	*out = c;
	return 0;
cleanup:
	tls_cls_close(c);
	return err;
}

static int read_state(int fd, struct tls_state *st)
{
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	return bpf_map_lookup_elem(fd, &zero, st) ? -errno : 0;
}

static int attach_tc(struct tls_cls *c)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = c->tc_handle, .priority = c->tc_prio,
			    .flags = BPF_TC_F_REPLACE);
	struct tls_state st;
	__u32 zero = 0;
	int err;

	c->ifindex = if_nametoindex(c->ifname);
	if (!c->ifindex) {
		pr_warn("interface %s not found: %s\n", c->ifname, strerror(errno));
		return -ENODEV;
	}
	hook.ifindex = c->ifindex;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		pr_warn("cannot create a clsact qdisc on %s: %s%s\n", c->ifname, strerror(-err),
			err == -EOPNOTSUPP || err == -ENOENT ?
				" (kernel without sch_ingress/clsact?)" :
				"");
		return err;
	}
	c->created_clsact = err == 0;
	/* A previous instance that created the clsact leaves that duty to us. */
	if (read_state(c->maps.state, &st) == 0 && st.ifindex == (__u32)c->ifindex &&
	    !strncmp(st.ifname, c->ifname, sizeof(st.ifname)) && st.created_clsact)
		c->created_clsact = true;

	opts.prog_fd = bpf_program__fd(c->skel->progs.tls_classify);
	/* REPLACE: taking over a crashed instance's filter swaps the program
	 * in place, so traffic is never unclassified. */
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		pr_warn("cannot attach the classifier to %s egress: %s%s\n", c->ifname,
			strerror(-err),
			err == -EOPNOTSUPP || err == -ENOENT ? " (kernel without cls_bpf?)" : "");
		if (c->created_clsact) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
			c->created_clsact = false;
		}
		return err;
	}
	c->tc_attached = true;

	memset(&st, 0, sizeof(st));
	snprintf(st.ifname, sizeof(st.ifname), "%s", c->ifname);
	st.ifindex = c->ifindex;
	st.tc_handle = c->tc_handle;
	st.tc_prio = c->tc_prio;
	st.created_clsact = c->created_clsact;
	if (bpf_map_update_elem(c->maps.state, &zero, &st, BPF_ANY))
		pr_warn("cannot record the attachment state: %s\n", strerror(errno));
	return 0;
}

static int attach_cgroup(struct tls_cls *c)
{
	char root[4096], path[4096];
	const char *cg = c->cgroup;
	int fd, err;

	if (cg && !cg[0])
		return 0;
	if (!cg) {
		err = tls_cgroup2_root(root, sizeof(root));
		if (err)
			return err;
		cg = root;
	}
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("cannot open cgroup %s: %s\n", cg, strerror(-err));
		return err;
	}
	c->cg_link = bpf_program__attach_cgroup(c->skel->progs.tls_sock_create, fd);
	err = c->cg_link ? 0 : -errno;
	close(fd);
	if (err) {
		c->cg_link = NULL;
		pr_warn("cannot attach the sock_create hook to cgroup %s: %s\n", cg,
			strerror(-err));
		return err;
	}
	if (!c->pin_dir)
		return 0;
	err = pin_path(path, sizeof(path), c->pin_dir, LINK_PIN);
	if (err)
		return err;
	/* A crashed instance's hook is released only now that ours is in. */
	unlink(path);
	err = bpf_link__pin(c->cg_link, path);
	if (err) {
		pr_warn("cannot pin the cgroup link at %s: %s\n", path, strerror(-err));
		return err;
	}
	c->link_pinned = true;
	return 0;
}

int tls_cls_attach(struct tls_cls *c)
{
	int err;

	/* No interface: the cgroup hook alone (tests of socket membership). */
	err = c->ifname ? attach_tc(c) : 0;
	if (!err)
		err = attach_cgroup(c);
	return err;
}

const struct tls_maps *tls_cls_maps(const struct tls_cls *c)
{
	return &c->maps;
}

int tls_cls_prog_fd(const struct tls_cls *c)
{
	return bpf_program__fd(c->skel->progs.tls_classify);
}

static void free_cls(struct tls_cls *c)
{
	tls_classifier__destroy(c->skel);
	free(c->ifname);
	free(c->pin_dir);
	free(c->cgroup);
	free(c);
}

void tls_cls_release(struct tls_cls *c)
{
	if (!c)
		return;
	if (c->cg_link) {
		if (c->link_pinned)
			bpf_link__disconnect(c->cg_link);
		bpf_link__destroy(c->cg_link);
	}
	free_cls(c);
}

static void unpin_dir(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char path[4096];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (!pin_path(path, sizeof(path), dir, de->d_name) && unlink(path))
			pr_warn("cannot remove pin %s: %s\n", path, strerror(errno));
	}
	closedir(d);
	if (rmdir(dir) && errno != ENOENT)
		pr_warn("cannot remove %s: %s\n", dir, strerror(errno));
}

void tls_cls_close(struct tls_cls *c)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts);
	int err;

	if (!c)
		return;
	if (c->cg_link) {
		bpf_link__destroy(c->cg_link); /* detaches: the pin goes below */
		c->cg_link = NULL;
	}
	hook.ifindex = c->ifindex;
	if (c->tc_attached) {
		opts.handle = c->tc_handle;
		opts.priority = c->tc_prio;
		err = bpf_tc_detach(&hook, &opts);
		if (err && err != -ENOENT && err != -ENODEV)
			pr_warn("cannot detach the classifier from %s: %s\n", c->ifname,
				strerror(-err));
	}
	if (c->created_clsact) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		err = bpf_tc_hook_destroy(&hook);
		if (err && err != -ENOENT && err != -ENODEV && err != -EINVAL)
			pr_warn("cannot remove the clsact qdisc from %s: %s\n", c->ifname,
				strerror(-err));
	}
	if (c->pin_dir)
		unpin_dir(c->pin_dir);
	free_cls(c);
}

/* Detach the tc filter recorded in st if it still runs the program pinned
 * at prog_path; delete the clsact qdisc if the recorded instance created it. */
static void remove_tc(const struct tls_state *st, const char *prog_path)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts);
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	char name[IF_NAMESIZE + 1] = "";
	int fd, err;

	/* ifindexes are reused: act only if the name still matches. */
	if (!st->ifindex || !if_indextoname(st->ifindex, name) ||
	    strncmp(name, st->ifname, sizeof(st->ifname)))
		return;
	hook.ifindex = st->ifindex;
	opts.handle = st->tc_handle;
	opts.priority = st->tc_prio;
	err = bpf_tc_query(&hook, &opts);
	if (!err) {
		fd = bpf_obj_get(prog_path);
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &info_len) &&
		    info.id != opts.prog_id) {
			pr_warn("%s egress filter %#x:%#x runs another program: left in place\n",
				name, st->tc_handle, st->tc_prio);
		} else {
			opts.prog_id = 0;
			opts.prog_fd = 0;
			opts.flags = 0;
			err = bpf_tc_detach(&hook, &opts);
			if (err)
				pr_warn("cannot detach the classifier from %s: %s\n", name,
					strerror(-err));
		}
		if (fd >= 0)
			close(fd);
	}
	if (st->created_clsact) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
}

int tls_cls_remove_pinned(const char *pin_dir)
{
	char path[4096], prog_path[4096];
	struct tls_state st;
	int fd, err;

	err = pin_path(path, sizeof(path), pin_dir, "tls_state");
	if (!err)
		err = pin_path(prog_path, sizeof(prog_path), pin_dir, PROG_PIN);
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		if (read_state(fd, &st) == 0)
			remove_tc(&st, prog_path);
		close(fd);
	} else if (errno != ENOENT) {
		pr_warn("cannot open %s: %s\n", path, strerror(errno));
	}
	/* Unpinning the link detaches the cgroup hook: no process holds it. */
	unpin_dir(pin_dir);
	return 0;
}

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

#define PROG_PIN   "tls_classify"
#define LINK_PIN   "tls_sock_create_link"
#define ITER_PIN   "tls_dump_sk_flows"
#define REL_PIN	   "tls_sock_release_link"
#define NEW_SUFFIX "_new" /* bpffs refuses names with a dot */

struct tls_cls {
	struct tls_classifier *skel;
	struct tls_maps maps;
	struct bpf_link *cg_link[2]; /* sock_create, sock_release */
	char *ifname;
	char *pin_dir;
	char *cgroup;
	__u32 tc_handle, tc_prio;
	int ifindex;
	__u32 prog_id;
	bool tc_attached;
	bool created_clsact;
	bool pinned; /* the pins in pin_dir are this instance's */
	bool fresh;  /* pin_dir held no instance before this one */
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
	c->maps.flow_slots = bpf_map__fd(s->maps.tls_flow_slots);
	c->maps.flows = bpf_map__fd(s->maps.tls_flows);
	c->maps.state = bpf_map__fd(s->maps.tls_state);
	c->maps.saved_qdisc = bpf_map__fd(s->maps.tls_saved_qdisc);
	c->maps.job_names = bpf_map__fd(s->maps.tls_job_names);
	c->maps.sk_iter = bpf_program__fd(s->progs.tls_dump_sk_flows);
	c->maps.jobs_mem = NULL;
	tls_maps_map_jobs(&c->maps);
}

static void free_cls(struct tls_cls *c);

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

static __u32 prog_id_of_fd(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* The id of the program pinned at dir/PROG_PIN, 0 if none. */
static __u32 pinned_prog_id(const char *dir)
{
	char path[4096];
	__u32 id = 0;
	int fd;

	if (pin_path(path, sizeof(path), dir, PROG_PIN))
		return 0;
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		id = prog_id_of_fd(fd);
		close(fd);
	}
	return id;
}

int tls_cls_load(const struct tls_cls_opts *o, struct tls_cls **out)
{
	struct tls_cls *c;
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
		goto fail;
	}
	if (c->pin_dir) {
		char state[4096];

		err = tls_bpffs_ensure();
		if (!err)
			err = tls_mkdir_p(c->pin_dir);
		if (!err)
			err = pin_path(state, sizeof(state), c->pin_dir, "tls_state");
		if (err)
			goto fail;
		c->fresh = access(state, F_OK) != 0;
	}

	c->skel = tls_classifier__open();
	if (!c->skel) {
		err = -errno;
		pr_warn("cannot open the BPF classifier object: %s\n", strerror(-err));
		goto fail;
	}
	c->skel->rodata->flowlet_gap_ns = o->flowlet_gap_ns;
	c->skel->rodata->flowlet_hold_ns = o->flowlet_hold_ns;
	c->skel->rodata->dscp_enabled = o->dscp;
	if (c->pin_dir) {
		err = pin_maps(c);
		if (err)
			goto fail;
	}
	/* Maps pinned in pin_dir are reused; a failed load unpins only the
	 * maps it created, so a running instance is never harmed. */
	err = tls_classifier__load(c->skel);
	if (err) {
		pr_warn("cannot load the BPF classifier: %s\n", strerror(-err));
		if (c->pin_dir)
			pr_warn("maps pinned in %s by another version may not match: remove that "
				"instance first (tls-classifier -P %s detach)\n",
				c->pin_dir, c->pin_dir);
		goto fail;
	}
	fill_maps(c);
	c->prog_id = prog_id_of_fd(bpf_program__fd(c->skel->progs.tls_classify));
	if (c->pin_dir) {
		err = tls_rebuild_port_counts(&c->maps);
		if (err)
			goto fail;
	}
	*out = c;
	return 0;
fail:
	free_cls(c);
	return err;
}

static int read_state(int fd, struct tls_state *st)
{
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	return bpf_map_lookup_elem(fd, &zero, st) ? -errno : 0;
}

/* A tlsd filter recorded in st, if it still runs the program with id
 * prog_id (any tlsd program when prog_id is 0): detach it. */
static int detach_recorded(int ifindex, __u32 handle, __u32 prio, __u32 prog_id, const char *ifname)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = handle, .priority = prio);
	int err;

	err = bpf_tc_query(&hook, &opts);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (prog_id && opts.prog_id != prog_id) {
		pr_warn("%s egress filter %#x:%#x runs another program (id %u): left in place\n",
			ifname, handle, prio, opts.prog_id);
		return -EBUSY;
	}
	opts.prog_id = 0;
	opts.prog_fd = 0;
	opts.flags = 0;
	err = bpf_tc_detach(&hook, &opts);
	if (err && err != -ENOENT)
		pr_warn("cannot detach the classifier from %s: %s\n", ifname, strerror(-err));
	return err == -ENOENT ? 0 : err;
}

static int attach_tc(struct tls_cls *c, const struct tls_state *old)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = c->tc_handle, .priority = c->tc_prio,
			    .flags = BPF_TC_F_REPLACE);
	bool same_if;
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
	same_if = old->ifindex == (__u32)c->ifindex &&
		  !strncmp(old->ifname, c->ifname, sizeof(old->ifname));

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
	if (same_if) {
		/* A previous instance that created the clsact leaves that duty
		 * to us; a filter of its at another handle or priority goes. */
		c->created_clsact |= old->created_clsact;
		if (old->tc_handle != c->tc_handle || old->tc_prio != c->tc_prio)
			detach_recorded(c->ifindex, old->tc_handle, old->tc_prio, 0, c->ifname);
	}
	return 0;
}

/* Destroying a link detaches it unless it is pinned (or disconnected). */
static void destroy_links(struct tls_cls *c)
{
	for (size_t i = 0; i < 2; i++) {
		bpf_link__destroy(c->cg_link[i]);
		c->cg_link[i] = NULL;
	}
}

static int attach_cgroup(struct tls_cls *c)
{
	const char *cg = c->cgroup;
	char root[4096];
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
	c->cg_link[0] = bpf_program__attach_cgroup(c->skel->progs.tls_sock_create, fd);
	err = c->cg_link[0] ? 0 : -errno;
	if (!err) {
		c->cg_link[1] = bpf_program__attach_cgroup(c->skel->progs.tls_sock_release, fd);
		err = c->cg_link[1] ? 0 : -errno;
	}
	close(fd);
	if (err) {
		pr_warn("cannot attach the socket hooks to cgroup %s: %s\n", cg, strerror(-err));
		destroy_links(c);
	}
	return err;
}

/* Pin under a temporary name, then rename over the old pin: a reader sees
 * the old object or the new one, and the old one is released only now. */
static int pin_replace(const char *dir, const char *name, struct bpf_program *prog,
		       struct bpf_link *link)
{
	char path[4096], tmp[4096];
	int err;

	err = pin_path(path, sizeof(path), dir, name);
	if (!err && (size_t)snprintf(tmp, sizeof(tmp), "%s%s", path, NEW_SUFFIX) >= sizeof(tmp))
		err = -ENAMETOOLONG;
	if (err)
		return err;
	unlink(tmp);
	err = prog ? bpf_program__pin(prog, tmp) : bpf_link__pin(link, tmp);
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		pr_warn("cannot pin %s: %s\n", path, strerror(-err));
		unlink(tmp);
	}
	return err;
}

static int record_state(struct tls_cls *c)
{
	struct tls_state st = {};
	__u32 zero = 0;

	snprintf(st.ifname, sizeof(st.ifname), "%s", c->ifname ? c->ifname : "");
	st.ifindex = c->ifindex;
	st.tc_handle = c->tc_handle;
	st.tc_prio = c->tc_prio;
	st.created_clsact = c->created_clsact;
	if (bpf_map_update_elem(c->maps.state, &zero, &st, BPF_ANY)) {
		pr_warn("cannot record the attachment state: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

int tls_cls_attach(struct tls_cls *c)
{
	struct tls_state old;
	char path[4096];
	int err;

	read_state(c->maps.state, &old);
	/* The hook first: if it fails, the interface has not been touched.
	 * No interface: the hook alone (tests of socket membership). */
	err = attach_cgroup(c);
	if (!err && c->ifname)
		err = attach_tc(c, &old);
	if (err)
		goto fail;
	if (!c->pin_dir)
		return 0;
	err = pin_replace(c->pin_dir, PROG_PIN, c->skel->progs.tls_classify, NULL);
	if (!err)
		err = pin_replace(c->pin_dir, ITER_PIN, c->skel->progs.tls_dump_sk_flows, NULL);
	if (!err && c->cg_link[0])
		err = pin_replace(c->pin_dir, LINK_PIN, NULL, c->cg_link[0]);
	if (!err && c->cg_link[1])
		err = pin_replace(c->pin_dir, REL_PIN, NULL, c->cg_link[1]);
	if (!err && !c->cg_link[0]) {
		/* a previous instance's hooks: this one runs without */
		if (!pin_path(path, sizeof(path), c->pin_dir, LINK_PIN))
			unlink(path);
		if (!pin_path(path, sizeof(path), c->pin_dir, REL_PIN))
			unlink(path);
	}
	if (!err)
		err = record_state(c);
	c->pinned = true;
	return err;
fail:
	destroy_links(c); /* never pinned: this detaches them */
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
	if (!c)
		return;
	tls_maps_unmap_jobs(&c->maps);
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
	for (size_t i = 0; i < 2; i++) {
		if (c->cg_link[i] && c->pinned)
			bpf_link__disconnect(c->cg_link[i]); /* the pin keeps it */
	}
	destroy_links(c);
	free_cls(c);
}

/* Unpin what tlsd pins in dir, nothing else, and remove dir if empty. */
static void unpin_dir(const char *dir)
{
	static const char *const others[] = {
		PROG_PIN,
		LINK_PIN,
		REL_PIN,
		ITER_PIN,
		PROG_PIN NEW_SUFFIX,
		LINK_PIN NEW_SUFFIX,
		REL_PIN NEW_SUFFIX,
		ITER_PIN NEW_SUFFIX,
	};
	size_t i, n = tls_map_pin_count();
	char path[4096];

	for (i = 0; i < n + sizeof(others) / sizeof(others[0]); i++) {
		const char *name = i < n ? tls_map_pin_name(i) : others[i - n];

		if (pin_path(path, sizeof(path), dir, name))
			continue;
		if (unlink(path) && errno != ENOENT)
			pr_warn("cannot remove pin %s: %s\n", path, strerror(errno));
	}
	if (rmdir(dir) && errno != ENOENT)
		pr_warn("cannot remove %s: %s\n", dir, strerror(errno));
}

void tls_cls_close(struct tls_cls *c)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	bool ours = true;

	if (!c)
		return;
	/* Another instance took over (its program is pinned now): leave the
	 * interface and the pins to it, and take away only our own hook. */
	if (c->pinned && pinned_prog_id(c->pin_dir) != c->prog_id)
		ours = false;
	destroy_links(c);
	if (ours && c->tc_attached &&
	    !detach_recorded(c->ifindex, c->tc_handle, c->tc_prio, c->prog_id, c->ifname) &&
	    c->created_clsact) {
		hook.ifindex = c->ifindex;
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	/* A failed attach removes the maps it pinned, unless they were a
	 * running instance's, which must keep them. */
	if (ours && c->pin_dir && (c->pinned || c->fresh))
		unpin_dir(c->pin_dir);
	free_cls(c);
}

int tls_cls_remove_pinned(const char *pin_dir)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	char path[4096], name[IF_NAMESIZE + 1] = "";
	struct tls_state st;
	int fd, err = 0;

	if (pin_path(path, sizeof(path), pin_dir, "tls_state"))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		if (errno != ENOENT) {
			pr_warn("cannot open %s: %s\n", path, strerror(errno));
			return -errno;
		}
	} else {
		if (read_state(fd, &st) == 0 && st.ifindex) {
			/* ifindexes are reused: act only if the name still matches. */
			if (!if_indextoname(st.ifindex, name) ||
			    strncmp(name, st.ifname, sizeof(st.ifname))) {
				pr_warn("interface %.16s (index %u) is not in this network namespace: "
					"its filter, if it still exists, was not removed\n",
					st.ifname, st.ifindex);
			} else {
				err = detach_recorded(st.ifindex, st.tc_handle, st.tc_prio,
						      pinned_prog_id(pin_dir), name);
				if (!err && st.created_clsact) {
					hook.ifindex = st.ifindex;
					hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
					bpf_tc_hook_destroy(&hook);
				}
			}
		}
		close(fd);
	}
	/* Unpinning the link detaches the cgroup hook: no process holds it. */
	unpin_dir(pin_dir);
	return err;
}

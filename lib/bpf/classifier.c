// SPDX-License-Identifier: GPL-2.0-only
/* Loading, attaching and removing the classifier. Map operations: cls_maps.c */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpffs.h"
#include "burst_prev.h"
#include "classifier.h"
#include "clock.h"
#include "kernel_features.h"
#include "legacy_state.h"
#include "log.h"
#include "pin_layout.h"
#include "tc_filters.h"
#include "tls_classifier.skel.h"

#define PROG_PIN   "tls_classify"
#define LINK_PIN   "tls_sock_create_link"
#define ITER_PIN   "tls_dump_sk_flows"
#define REL_PIN	   "tls_sock_release_link"
#define IN_PIN	   "tls_ingress"
/* policy bursts's tail-call slot: pinned so that a crashed tlsd's classifier
 * goes on ordering bursts (an unpinned slot empties with its last
 * descriptor); swapped at each attach like the programs, not reused */
#define TAIL_PIN "tls_tail"
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
	__u32 in_prog_id; /* the ingress counter's; 0: not attached */
	bool tc_attached;
	bool created_clsact;
	bool pinned; /* the pins in pin_dir are this instance's */
	bool fresh;  /* pin_dir held no instance before this one */
	bool iter;   /* the socket-storage iterator is loaded */
	bool bursts; /* policy bursts's program is loaded, in its slot */
	bool hooks;  /* the cgroup socket hooks are loaded */
	bool in_warned; /* the ingress counter's failure was told */
	/* the previous program's burst order is this one's (burst_prev.h) */
	bool burst_carried;
};

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	if ((size_t)snprintf(buf, len, "%s/%s", dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int tls_instance_name(const char *ifname, char *buf, size_t len)
{
	struct stat st;

	/* the network namespace's inode: an eth0 in each namespace is its
	 * own instance, with its own pins and lock */
	if (stat("/proc/thread-self/ns/net", &st))
		return -errno;
	if ((size_t)snprintf(buf, len, "%s@%llu", ifname, (unsigned long long)st.st_ino) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int tls_pin_dir_for(const char *ifname, char *buf, size_t len)
{
	char name[IF_NAMESIZE + 32];
	int err = tls_instance_name(ifname, name, sizeof(name));

	return err ? err : pin_path(buf, len, TLS_PIN_ROOT, name);
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
	c->maps.job_gens = bpf_map__fd(s->maps.tls_job_gens);
	c->maps.bands = bpf_map__fd(s->maps.tls_bands);
	c->maps.job_stats = bpf_map__fd(s->maps.tls_job_stats);
	c->maps.flow_slots = bpf_map__fd(s->maps.tls_flow_slots);
	c->maps.slots_used = bpf_map__fd(s->maps.tls_slots_used);
	c->maps.flows = bpf_map__fd(s->maps.tls_flows);
	c->maps.state = bpf_map__fd(s->maps.tls_state);
	c->maps.layout = bpf_map__fd(s->maps.tls_layout);
	c->maps.sk_iter = c->iter ? bpf_program__fd(s->progs.tls_dump_sk_flows) : -1;
	c->maps.burst = bpf_map__fd(s->maps.tls_burst);
	c->maps.weight = bpf_map__fd(s->maps.tls_weight);
	c->maps.tail = bpf_map__fd(s->maps.tls_tail);
	c->maps.tail_ctx = bpf_map__fd(s->maps.tls_tail_ctx);
	c->maps.job_in = bpf_map__fd(s->maps.tls_job_in);
	c->maps.flows_in = bpf_map__fd(s->maps.tls_flows_in);
	c->maps.in_slots = bpf_map__fd(s->maps.tls_in_slots);
	c->maps.in_used = bpf_map__fd(s->maps.tls_in_used);
	c->maps.rr = bpf_map__fd(s->maps.tls_rr);
	c->maps.jobs_mem = NULL;
	tls_maps_map_jobs(&c->maps);
	if (tls_feature_has(TLS_FEAT_MMAPABLE))
		tls_feature_set(TLS_FEAT_MMAPABLE,
				c->maps.jobs_mem ? TLS_FEAT_IN_USE : TLS_FEAT_AVAILABLE);
}

static void free_cls(struct tls_cls *c);

/* Maps that are never pinned: .rodata and the like belong to one program
 * load, and policy bursts' order and its weights are each program's (the
 * order's layout may change between versions: a new program is given the
 * old one's only if it is this build's, carry_burst()). The ingress counters
 * feed only the running tlsd's statistics, which a takeover starts afresh:
 * unpinned, they leave the pin layout as it was (an older tlsd can still
 * take over from this one, and this one from it). */
static bool not_pinned(const struct bpf_map *map)
{
	static const char *const mine[] = { "tls_burst",    "tls_weight",   "tls_job_in",
					    "tls_flows_in", "tls_in_slots", "tls_in_used",
					    "tls_tail",	    "tls_tail_ctx", "tls_slots_used",
					    "tls_rr" };

	if (bpf_map__is_internal(map))
		return true;
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++)
		if (!strcmp(bpf_map__name(map), mine[i]))
			return true;
	return false;
}

static int pin_maps(struct tls_cls *c)
{
	struct bpf_map *map;
	char path[4096];
	int err;

	bpf_object__for_each_map (map, c->skel->obj) {
		if (not_pinned(map))
			continue;
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

/* The id of the program pinned at dir/name, 0 if none. */
static __u32 pinned_prog_id_of(const char *dir, const char *name)
{
	char path[4096];
	__u32 id = 0;
	int fd;

	if (pin_path(path, sizeof(path), dir, name))
		return 0;
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		id = prog_id_of_fd(fd);
		close(fd);
	}
	return id;
}

static __u32 pinned_prog_id(const char *dir)
{
	return pinned_prog_id_of(dir, PROG_PIN);
}

/*
 * CONFIG_HZ for the classifier's __kconfig extern, from the coarse clock's
 * resolution (one tick) rather than /boot/config-*, which containers,
 * minimal images and guests often lack (libbpf then refuses the object).
 */
static void kconfig_hz(char *buf, size_t len)
{
	uint64_t tick = tls_coarse_tick_ns();
	long hz = tick ? (long)((1000000000ULL + tick / 2) / tick) : 0;

	if (hz < 24 || hz > 10000)
		hz = 0; /* unknown: the classifier assumes the slowest tick */
	snprintf(buf, len, "CONFIG_HZ=%ld\n", hz);
}

/* What this kernel lets the object use: gates, programs, map flags. */
static void fit_to_kernel(struct tls_classifier *skel, bool iter, bool hooks)
{
	struct bpf_map *mmapable[] = { skel->maps.tls_jobs,	  skel->maps.tls_rr,
				       skel->maps.tls_flow_slots, skel->maps.tls_slots_used,
				       skel->maps.tls_in_slots,	  skel->maps.tls_in_used };

	skel->rodata->have_tcp_sock = tls_feature_has(TLS_FEAT_TCP_SOCK);
	skel->rodata->have_coarse_clock = tls_feature_has(TLS_FEAT_COARSE_CLOCK);
	/* Without the iterator, or without the release hook that files a
	 * closed socket's flow, the flows of PS sockets go to the slots. */
	skel->rodata->sk_flow_mirror = !iter || !hooks;
	skel->rodata->ingress_gap_ns = TLS_INGRESS_GAP_NS;
	bpf_program__set_autoload(skel->progs.tls_dump_sk_flows, iter && hooks);
	bpf_program__set_autoload(skel->progs.tls_sock_create, hooks);
	bpf_program__set_autoload(skel->progs.tls_sock_release, hooks);
	if (!tls_feature_has(TLS_FEAT_MMAPABLE))
		for (size_t i = 0; i < sizeof(mmapable) / sizeof(mmapable[0]); i++)
			bpf_map__set_map_flags(mmapable[i],
					       bpf_map__map_flags(mmapable[i]) & ~BPF_F_MMAPABLE);
}

static struct tls_classifier *open_skel(void)
{
	char kconfig[32];
	LIBBPF_OPTS(bpf_object_open_opts, oo, .kconfig = kconfig);

	kconfig_hz(kconfig, sizeof(kconfig));
	return tls_classifier__open_opts(&oo);
}

/* An attribute of a pinned map that differs from what this object needs. */
static int map_mismatch(const struct bpf_map *map, int fd, char *why, size_t len)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	static const char *const names[] = { "type", "key size", "value size", "max entries",
					     "flags" };
	__u32 have[5], want[5];

	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		return -errno;
	have[0] = info.type, want[0] = bpf_map__type(map);
	have[1] = info.key_size, want[1] = bpf_map__key_size(map);
	have[2] = info.value_size, want[2] = bpf_map__value_size(map);
	have[3] = info.max_entries, want[3] = bpf_map__max_entries(map);
	have[4] = info.map_flags, want[4] = bpf_map__map_flags(map);
	for (int i = 0; i < 5; i++) {
		if (have[i] == want[i])
			continue;
		snprintf(why, len,
			 i == 4 ? "map %s: %s %#x, this tlsd's %#x" :
				  "map %s: %s %u, this tlsd's %u",
			 bpf_map__name(map), names[i], have[i], want[i]);
		return -ESTALE;
	}
	return 0;
}

/* Every map pinned in pin_dir against skel's: -ESTALE and why on the first
 * difference, 0 if all match or none is pinned. */
static int check_pins(struct tls_classifier *skel, const char *pin_dir, char *why, size_t len)
{
	struct bpf_map *map;
	char path[4096];
	int err = 0;

	bpf_object__for_each_map (map, skel->obj) {
		int fd;

		if (not_pinned(map))
			continue;
		if (pin_path(path, sizeof(path), pin_dir, bpf_map__name(map)))
			return -ENAMETOOLONG;
		fd = bpf_obj_get(path);
		if (fd < 0) {
			if (errno == ENOENT)
				continue;
			snprintf(why, len, "map %s: %s", bpf_map__name(map), strerror(errno));
			return -errno;
		}
		err = map_mismatch(map, fd, why, len);
		close(fd);
		if (err)
			break;
	}
	return err;
}

/* The features the object's layout depends on, probed; a required one
 * missing is the error. */
static int probe(void)
{
	char msg[512];

	tls_features_probe_bpf();
	if (tls_features_required_missing(msg, sizeof(msg)) != TLS_FEAT__COUNT) {
		pr_warn("%s\n", msg);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The pins' layout version: -EPROTO for a newer tlsd's (never touched),
 * -ESTALE for one too old to take over; why says which. */
static int judge_layout(const char *pin_dir, char *why, size_t len)
{
	__u32 layout;
	int err = tls_pin_layout_read(pin_dir, &layout);

	if (err) {
		snprintf(why, len, "map tls_layout: %s", strerror(-err));
		return err;
	}
	switch (tls_pin_layout_judge(layout, TLS_PIN_LAYOUT, TLS_PIN_LAYOUT_COMPAT, why, len)) {
	case TLS_LAYOUT_NEWER:
		return -EPROTO;
	case TLS_LAYOUT_OLDER:
		return -ESTALE;
	default:
		return 0;
	}
}

/* Before anything is loaded or pinned: pins of a newer tlsd are left as
 * they are (this tlsd cannot know what its maps mean, nor how it would
 * restore the interface); an older one's are for tlsd's start to replace. */
static int check_layout(const char *pin_dir)
{
	char why[160];
	int err = judge_layout(pin_dir, why, sizeof(why));

	if (err == -EPROTO)
		pr_err("the maps pinned in %s were made by a newer tlsd (%s): left untouched; "
		       "stop that tlsd (it restores the interface), or remove what it left with "
		       "its own tlsd --cleanup, then start this one\n",
		       pin_dir, why);
	else if (err == -ESTALE)
		pr_warn("the maps pinned in %s were made by an older tlsd (%s): restore that "
			"instance first (tlsd --cleanup -i IF, or tls-classifier -P %s detach)\n",
			pin_dir, why, pin_dir);
	else if (err)
		pr_warn("cannot read the layout of the maps pinned in %s (%s)\n", pin_dir, why);
	return err;
}

int tls_cls_check_pinned(const char *pin_dir, char *why, size_t len)
{
	struct tls_classifier *skel;
	int err;

	err = judge_layout(pin_dir, why, len);
	if (err)
		return err;
	err = probe();
	if (err)
		return err;
	skel = open_skel();
	if (!skel)
		return -errno;
	fit_to_kernel(skel, tls_feature_has(TLS_FEAT_SK_ITER),
		      tls_feature_has(TLS_FEAT_CGROUP_SOCK));
	err = check_pins(skel, pin_dir, why, len);
	tls_classifier__destroy(skel);
	return err;
}

/* Policy bursts's half of the classifier into the slot tls_classify calls
 * (pinned at the attach, TAIL_PIN). */
static int fill_tail(struct tls_classifier *skel)
{
	int fd = bpf_program__fd(skel->progs.tls_classify_bursts);
	__u32 zero = 0;

	/* said by the caller, which loads the classifier without it then */
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.tls_tail), &zero, &fd, BPF_ANY)) {
		int err = -errno;

		pr_debug("cannot put policy bursts's program in the classifier's tail-call "
			 "slot: %s\n",
			 strerror(-err));
		return err;
	}
	return 0;
}

/* Open, fit, pin and load, with the optional programs iter and hooks. */
static int load_skel(struct tls_cls *c, const struct tls_cls_opts *o, bool iter, bool hooks,
		     bool bursts)
{
	char why[256];
	int err;

	tls_classifier__destroy(c->skel);
	c->skel = open_skel();
	if (!c->skel) {
		err = -errno;
		pr_warn("cannot open the BPF classifier object: %s\n", strerror(-err));
		return err;
	}
	c->skel->rodata->flowlet_gap_ns = o->flowlet_gap_ns;
	c->skel->rodata->flowlet_hold_ns = o->flowlet_hold_ns;
	/*
	 * Observe mode: nothing steered or marked. Without HTB a class id in
	 * skb->priority is not harmless (pfifo_fast and prio map its low bits
	 * to a band, a VLAN device to an 802.1p priority). The marking and
	 * bursts's band choice are gated off here; the class ids are left out
	 * of tls_bands by tlsd, which the program checks before it writes
	 * one. A test of the mode in the program itself, even one branch,
	 * took bursts's code past the verifier's million instructions.
	 */
	c->skel->rodata->dscp_enabled = o->dscp && !o->observe;
	bursts = bursts && !o->observe;
	c->skel->rodata->have_bursts = bursts;
	fit_to_kernel(c->skel, iter, hooks);
	c->iter = iter && hooks;
	c->hooks = hooks;
	if (c->pin_dir) {
		err = pin_maps(c);
		if (err)
			return err;
		/* libbpf would refuse an incompatible pin too, but without
		 * saying which map or why */
		err = check_pins(c->skel, c->pin_dir, why, sizeof(why));
		if (err) {
			pr_warn("the maps pinned in %s were made by a tlsd with another layout "
				"(%s): restore that instance first (tlsd --cleanup -i IF, or "
				"tls-classifier -P %s detach)\n",
				c->pin_dir, why, c->pin_dir);
			return err;
		}
	}
	bpf_program__set_autoload(c->skel->progs.tls_classify_bursts, bursts);
	/* Maps pinned in pin_dir are reused; a failed load unpins only the
	 * maps it created, so a running instance is never harmed. */
	err = tls_classifier__load(c->skel);
	if (!err && bursts) { /* (rodata: not mapped after the load on every kernel) */
		err = fill_tail(c->skel);
		/* the maps this load pinned afresh go again: the load without
		 * bursts pins its own, and a start that fails leaves none (a
		 * takeover's maps were reused: they stay) */
		if (err && c->fresh)
			bpf_object__unpin_maps(c->skel->obj, NULL);
	}
	return err;
}

/* Some job of the order is flagged for policy bursts in the job map (the
 * pinned one, the previous instance's): that instance ran bursts. Its
 * order under another policy is stale. */
static bool order_in_use(const struct tls_maps *m, const struct tls_burst *o)
{
	__u32 flags;

	for (unsigned int k = 0; k < o->n && k < TLS_BURST_SLOTS; k++)
		if (!tls_get_job_flags(m, o->job[k], &flags) && (flags & TLS_JOB_F_BURST))
			return true;
	return false;
}

/*
 * Over a previous instance's pins (a takeover, or tlsd's own reload that
 * swaps the program): that program's burst order, copied into this one's
 * before the attach, so that the new program goes on with it from its
 * first packet (copied later, the new program would run meanwhile with an
 * empty order, its jobs flagged for bursts). Only an order in use and laid
 * out as this build's; another version's is said and the order starts
 * anew. tlsd decides at its set-up whether it fits (tlsd_bursts.c).
 */
static void carry_burst(struct tls_cls *c)
{
	struct tls_burst o;
	char path[4096];
	__u32 zero = 0;
	int fd;

	if (pin_path(path, sizeof(path), c->pin_dir, TAIL_PIN))
		return;
	fd = tls_burst_prev_open(path, bpf_object__btf(c->skel->obj),
				 bpf_map__btf_value_type_id(c->skel->maps.tls_burst));
	if (fd < 0) {
		if (fd != -ENOENT)
			pr_info("the previous program's burst order is not read (%s): it starts "
				"anew\n",
				fd == -ESTALE ? "another version's layout" : strerror(-fd));
		return;
	}
	if (!bpf_map_lookup_elem_flags(fd, &zero, &o, BPF_F_LOCK) && order_in_use(&c->maps, &o) &&
	    !tls_write_burst_order(&c->maps, &o))
		c->burst_carried = true;
	close(fd);
}

int tls_cls_load(const struct tls_cls_opts *o, struct tls_cls **out)
{
	struct tls_cls *c;
	bool iter, hooks, bursts;
	int err;

	err = probe();
	if (err)
		return err;
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
			err = tls_pin_mkdir(c->pin_dir);
		if (!err)
			err = pin_path(state, sizeof(state), c->pin_dir, "tls_state");
		if (err)
			goto fail;
		c->fresh = access(state, F_OK) != 0;
		err = check_layout(c->pin_dir);
		if (err)
			goto fail;
	}

	iter = tls_feature_has(TLS_FEAT_SK_ITER);
	hooks = tls_feature_has(TLS_FEAT_CGROUP_SOCK);
	bursts = tls_features()[TLS_FEAT_BURSTS].state != TLS_FEAT_MISSING;
	err = load_skel(c, o, iter, hooks, bursts);
	/* A verifier that gives up on policy bursts's program (6.1 did, at a
	 * million instructions, before it was a program of its own), or a
	 * tail-call slot that cannot be filled: without it, the rest loads. */
	if (err && err != -ESTALE && bursts) {
		pr_warn("the BPF classifier did not load with policy bursts's code (%s): trying "
			"without\n",
			strerror(-err));
		if (!load_skel(c, o, iter, hooks, false)) {
			tls_feature_fail(TLS_FEAT_BURSTS, "classifier load", err);
			bursts = false;
			err = 0;
		}
	}
	/* A probe that passed while the real program is refused (an LSM that
	 * judges more than the type): the optional programs go, one by one,
	 * the iterator first, then the hooks. */
	for (int step = 0; step < 2 && err && err != -ESTALE; step++) {
		enum tls_feat f = step ? TLS_FEAT_CGROUP_SOCK : TLS_FEAT_SK_ITER;

		if (!hooks || (!step && !iter))
			continue;
		pr_warn("the BPF classifier did not load with its %s (%s): trying without\n",
			step ? "socket hooks" : "flow iterator", strerror(-err));
		if (!load_skel(c, o, false, !step, bursts)) {
			tls_feature_fail(f, "classifier load", err);
			hooks = !step;
			err = 0;
		}
	}
	if (err) {
		if (err != -ESTALE)
			pr_warn("cannot load the BPF classifier: %s (the kernel's verifier log, "
				"if any, is above)\n",
				strerror(-err));
		goto fail;
	}
	fill_maps(c);
	c->prog_id = prog_id_of_fd(bpf_program__fd(c->skel->progs.tls_classify));
	if (c->pin_dir) {
		/* taken over or fresh: the pins are this layout's from now on */
		err = tls_pin_layout_write(c->maps.layout);
		if (!err)
			err = tls_rebuild_port_counts(&c->maps);
		if (err)
			goto fail;
	}
	tls_feature_set(TLS_FEAT_BTF, TLS_FEAT_IN_USE);
	tls_feature_set(TLS_FEAT_SK_STORAGE, TLS_FEAT_IN_USE);
	tls_feature_set(TLS_FEAT_SCHED_CLS, TLS_FEAT_IN_USE);
	if (c->iter)
		tls_feature_set(TLS_FEAT_SK_ITER, TLS_FEAT_IN_USE);
	if (tls_feature_has(TLS_FEAT_TCP_SOCK))
		tls_feature_set(TLS_FEAT_TCP_SOCK, TLS_FEAT_IN_USE);
	if (tls_feature_has(TLS_FEAT_COARSE_CLOCK))
		tls_feature_set(TLS_FEAT_COARSE_CLOCK, TLS_FEAT_IN_USE);
	c->bursts = bursts && !o->observe;
	if (c->bursts)
		tls_feature_set(TLS_FEAT_BURSTS, TLS_FEAT_IN_USE);
	if (c->bursts && !c->fresh)
		carry_burst(c);
	*out = c;
	return 0;
fail:
	free_cls(c);
	return err;
}

static int read_state(int fd, struct tls_state *st)
{
	struct bpf_map_info info = {};
	__u32 zero = 0, len = sizeof(info);

	memset(st, 0, sizeof(*st));
	/* pinned by another version: its record may not fit ours */
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.value_size != sizeof(*st))
		return -ESTALE;
	return bpf_map_lookup_elem(fd, &zero, st) ? -errno : 0;
}

/* tlsd's filter at (handle, prio) on one hook, if it still runs prog_id
 * (any program when 0): detach it. -EBUSY: another program runs there. */
static int detach_at(int ifindex, enum bpf_tc_attach_point hook_at, __u32 handle, __u32 prio,
		     __u32 prog_id, const char *ifname)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = hook_at);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = handle, .priority = prio);
	const char *dir = hook_at == BPF_TC_INGRESS ? "ingress" : "egress";
	int err;

	err = bpf_tc_query(&hook, &opts);
	if (err)
		return err == -ENOENT ? 0 : err;
	if (prog_id && opts.prog_id != prog_id) {
		pr_warn("%s %s filter %#x:%#x runs another program (id %u): left in place\n",
			ifname, dir, handle, prio, opts.prog_id);
		return -EBUSY;
	}
	opts.prog_id = 0;
	opts.prog_fd = 0;
	opts.flags = 0;
	err = bpf_tc_detach(&hook, &opts);
	if (err && err != -ENOENT)
		pr_warn("cannot detach tlsd's %s filter from %s: %s\n", dir, ifname,
			strerror(-err));
	return err == -ENOENT ? 0 : err;
}

/* A tlsd filter recorded in st, if it still runs the program with id
 * prog_id (any tlsd program when 0): detach it. */
static int detach_recorded(int ifindex, __u32 handle, __u32 prio, __u32 prog_id, const char *ifname)
{
	return detach_at(ifindex, BPF_TC_EGRESS, handle, prio, prog_id, ifname);
}

/* Both of an instance's filters: the ingress counter, then the classifier
 * (whose result the caller acts on, as before the counter existed). The
 * counter only if its program is known (in_prog_id): an older tlsd's
 * instance pinned none, and nothing at that place is then known to be
 * tlsd's. */
static int detach_both(int ifindex, __u32 handle, __u32 prio, __u32 prog_id, __u32 in_prog_id,
		       const char *ifname)
{
	if (in_prog_id)
		detach_at(ifindex, BPF_TC_INGRESS, handle, prio, in_prog_id, ifname);
	return detach_recorded(ifindex, handle, prio, prog_id, ifname);
}

/* The clsact qdisc tlsd made, once its own filter is gone: deleting it
 * would delete every filter on it, so it goes only if none is left (another
 * tool may have added one since). */
static void destroy_clsact(int ifindex, const char *ifname)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
			    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
	int n = tls_clsact_filters(ifindex);

	if (n > 0) {
		pr_info("%s: the clsact qdisc tlsd made stays: %d filter%s of other tools on it\n",
			ifname, n, n == 1 ? "" : "s");
		return;
	}
	if (n < 0) {
		pr_warn("%s: cannot list the clsact qdisc's filters (%s): it stays\n", ifname,
			strerror(-n));
		return;
	}
	bpf_tc_hook_destroy(&hook);
}

/* The ingress counter, at the classifier's handle and priority on clsact
 * ingress. Optional: without it, tlsd measures the egress (pull) alone,
 * and says so in one line. */
static void attach_ingress(struct tls_cls *c)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = c->ifindex,
			    .attach_point = BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = c->tc_handle, .priority = c->tc_prio,
			    .flags = BPF_TC_F_REPLACE);
	int err;

	opts.prog_fd = bpf_program__fd(c->skel->progs.tls_ingress);
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		if (c->in_prog_id || !c->in_warned)
			pr_warn("%s: no ingress counting (push not measured): cannot attach to "
				"clsact ingress: %s\n",
				c->ifname, strerror(-err));
		c->in_warned = true;
		c->in_prog_id = 0;
		return;
	}
	c->in_prog_id = opts.prog_id;
}

/* Attach at start (old: what the pins recorded), or again (old NULL) after
 * the filter, the clsact qdisc or the interface itself vanished: a heal,
 * whose failure is the heal's, not a kernel feature found missing. */
static int attach_tc(struct tls_cls *c, const struct tls_state *old)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = c->tc_handle, .priority = c->tc_prio,
			    .flags = BPF_TC_F_REPLACE);
	int prev_ifindex = c->ifindex, err;
	bool same_if, created;

	c->ifindex = if_nametoindex(c->ifname);
	if (!c->ifindex) {
		pr_warn("interface %s not found: %s\n", c->ifname, strerror(errno));
		return -ENODEV;
	}
	hook.ifindex = c->ifindex;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		if (old)
			tls_feature_fail(TLS_FEAT_CLSACT, "qdisc create", err);
		pr_warn("cannot create a clsact qdisc on %s: %s%s\n", c->ifname, strerror(-err),
			err == -EOPNOTSUPP || err == -ENOENT ?
				" (kernel without sch_ingress/clsact?)" :
				"");
		return err;
	}
	created = err == 0;
	/* Again on the same interface, a clsact that was there before is
	 * still the one tlsd made, or not. */
	if (old || prev_ifindex != c->ifindex)
		c->created_clsact = created;
	else
		c->created_clsact |= created;
	if (old)
		tls_feature_set(TLS_FEAT_CLSACT, TLS_FEAT_IN_USE);
	same_if = old && old->ifindex == (__u32)c->ifindex &&
		  !strncmp(old->ifname, c->ifname, sizeof(old->ifname));

	opts.prog_fd = bpf_program__fd(c->skel->progs.tls_classify);
	/* REPLACE: taking over a crashed instance's filter swaps the program
	 * in place, so traffic is never unclassified. */
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		if (old)
			tls_feature_fail(TLS_FEAT_SCHED_CLS, "tc attach", err);
		pr_warn("cannot attach the classifier to %s egress: %s%s\n", c->ifname,
			strerror(-err),
			err == -EOPNOTSUPP || err == -ENOENT ? " (kernel without cls_bpf?)" : "");
		if (created) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
			c->created_clsact = false;
		}
		return err;
	}
	c->tc_attached = true;
	attach_ingress(c);
	if (same_if) {
		/* A previous instance that created the clsact leaves that duty
		 * to us; a filter of its at another handle or priority goes. */
		c->created_clsact |= old->created_clsact;
		if (old->tc_handle != c->tc_handle || old->tc_prio != c->tc_prio)
			detach_both(c->ifindex, old->tc_handle, old->tc_prio, 0,
				    c->pin_dir ? pinned_prog_id_of(c->pin_dir, IN_PIN) : 0,
				    c->ifname);
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

	if ((cg && !cg[0]) || !c->hooks)
		return 0;
	if (!cg) {
		err = tls_cgroup2_root(root, sizeof(root));
		if (err) {
			tls_feature_fail(TLS_FEAT_CGROUP_SOCK, "cgroup2 mount", err);
			return 0;
		}
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
		/* Optional: sockets then join by adoption and by endpoint. */
		tls_feature_fail(TLS_FEAT_CGROUP_SOCK, "cgroup attach", err);
		destroy_links(c);
		return 0;
	}
	tls_feature_set(TLS_FEAT_CGROUP_SOCK, TLS_FEAT_IN_USE);
	return 0;
}

/* Pin under a temporary name, then rename over the old pin: a reader sees
 * the old object or the new one, and the old one is released only now. */
static int pin_replace(const char *dir, const char *name, int fd)
{
	char path[4096], tmp[4096];
	int err;

	err = pin_path(path, sizeof(path), dir, name);
	if (!err && (size_t)snprintf(tmp, sizeof(tmp), "%s%s", path, NEW_SUFFIX) >= sizeof(tmp))
		err = -ENAMETOOLONG;
	if (err)
		return err;
	unlink(tmp);
	err = bpf_obj_pin(fd, tmp) ? -errno : 0;
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
	err = pin_replace(c->pin_dir, PROG_PIN, bpf_program__fd(c->skel->progs.tls_classify));
	/* for --cleanup after a crash: which ingress filter is tlsd's */
	if (!err)
		err = pin_replace(c->pin_dir, IN_PIN, bpf_program__fd(c->skel->progs.tls_ingress));
	if (!err && c->iter)
		err = pin_replace(c->pin_dir, ITER_PIN,
				  bpf_program__fd(c->skel->progs.tls_dump_sk_flows));
	if (!err && !c->iter && !pin_path(path, sizeof(path), c->pin_dir, ITER_PIN))
		unlink(path); /* a previous instance's: this one mirrors into the slots */
	if (!err && c->bursts)
		err = pin_replace(c->pin_dir, TAIL_PIN, bpf_map__fd(c->skel->maps.tls_tail));
	if (!err && !c->bursts && !pin_path(path, sizeof(path), c->pin_dir, TAIL_PIN))
		unlink(path); /* a previous instance's: this one runs without */
	if (!err && c->cg_link[0])
		err = pin_replace(c->pin_dir, LINK_PIN, bpf_link__fd(c->cg_link[0]));
	if (!err && c->cg_link[1])
		err = pin_replace(c->pin_dir, REL_PIN, bpf_link__fd(c->cg_link[1]));
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

int tls_cls_reattach(struct tls_cls *c)
{
	int err;

	if (!c->ifname)
		return -EINVAL;
	err = attach_tc(c, NULL);
	/* the pins say where the filter is now, for --cleanup after a crash */
	if (!err && c->pinned)
		err = record_state(c);
	return err;
}

void tls_cls_detach_tc(struct tls_cls *c)
{
	if (c->tc_attached &&
	    !detach_both(c->ifindex, c->tc_handle, c->tc_prio, c->prog_id, c->in_prog_id,
			 c->ifname) &&
	    c->created_clsact)
		destroy_clsact(c->ifindex, c->ifname);
	c->tc_attached = false;
	c->created_clsact = false;
}

void tls_cls_lost(struct tls_cls *c)
{
	c->tc_attached = false;
	c->created_clsact = false;
	c->ifindex = 0;
}

bool tls_cls_burst_carried(const struct tls_cls *c)
{
	return c->burst_carried;
}

bool tls_cls_took_over(const struct tls_cls *c)
{
	return c->pin_dir && !c->fresh;
}

void tls_cls_tc_ids(const struct tls_cls *c, __u32 *handle, __u32 *prio, __u32 *prog_id)
{
	*handle = c->tc_handle;
	*prio = c->tc_prio;
	*prog_id = c->prog_id;
}

__u32 tls_cls_in_prog_id(const struct tls_cls *c)
{
	return c->tc_attached ? c->in_prog_id : 0;
}

const struct tls_maps *tls_cls_maps(const struct tls_cls *c)
{
	return &c->maps;
}

int tls_cls_prog_fd(const struct tls_cls *c)
{
	return bpf_program__fd(c->skel->progs.tls_classify);
}

int tls_cls_in_prog_fd(const struct tls_cls *c)
{
	return bpf_program__fd(c->skel->progs.tls_ingress);
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
		IN_PIN,
		TAIL_PIN,
		PROG_PIN NEW_SUFFIX,
		IN_PIN NEW_SUFFIX,
		TAIL_PIN NEW_SUFFIX,
		LINK_PIN NEW_SUFFIX,
		REL_PIN NEW_SUFFIX,
		ITER_PIN NEW_SUFFIX,
		/* pin layouts 1 and 2: the daemon's state, in maps then */
		TLS_LEGACY_QDISC_MAP,
		TLS_LEGACY_NAMES_MAP,
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
	bool ours = true;

	if (!c)
		return;
	/* Another instance took over (its program is pinned now): leave the
	 * interface and the pins to it, and take away only our own hook. */
	if (c->pinned && pinned_prog_id(c->pin_dir) != c->prog_id)
		ours = false;
	destroy_links(c);
	if (ours && c->tc_attached &&
	    !detach_both(c->ifindex, c->tc_handle, c->tc_prio, c->prog_id, c->in_prog_id,
			 c->ifname) &&
	    c->created_clsact)
		destroy_clsact(c->ifindex, c->ifname);
	/* A failed attach removes the maps it pinned, unless they were a
	 * running instance's, which must keep them. */
	if (ours && c->pin_dir && (c->pinned || c->fresh))
		unpin_dir(c->pin_dir);
	free_cls(c);
}

int tls_pin_adopt_legacy(const char *ifname)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = TLS_TC_HANDLE_DEFAULT,
			    .priority = TLS_TC_PRIO_DEFAULT);
	char legacy[4096], dir[4096], path[4096];
	struct tls_state st;
	struct stat sb;
	__u32 prog_id;
	int fd, err;

	if (pin_path(legacy, sizeof(legacy), TLS_PIN_ROOT, ifname) ||
	    tls_pin_dir_for(ifname, dir, sizeof(dir)))
		return -ENAMETOOLONG;
	if (stat(legacy, &sb) || !S_ISDIR(sb.st_mode) || !stat(dir, &sb))
		return 0; /* nothing of the old naming, or ours already */
	/* The old naming says nothing of the namespace: the pins are this
	 * interface's only if the filter on it runs the program pinned there. */
	prog_id = pinned_prog_id(legacy);
	hook.ifindex = (int)if_nametoindex(ifname);
	if (!prog_id || !hook.ifindex)
		return 0;
	if (!pin_path(path, sizeof(path), legacy, "tls_state") && (fd = bpf_obj_get(path)) >= 0) {
		if (!read_state(fd, &st) && st.ifindex == (__u32)hook.ifindex) {
			opts.handle = st.tc_handle;
			opts.priority = st.tc_prio;
		}
		close(fd);
	}
	if (bpf_tc_query(&hook, &opts) || opts.prog_id != prog_id)
		return 0; /* another namespace's interface of that name */
	if (rename(legacy, dir)) {
		err = -errno;
		pr_warn("cannot move the pins of an earlier tlsd from %s to %s: %s\n", legacy, dir,
			strerror(-err));
		return err;
	}
	pr_info("the pins of an earlier tlsd on %s moved from %s to %s (one directory per "
		"network namespace and interface)\n",
		ifname, legacy, dir);
	return 1;
}

int tls_cls_remove_pinned(const char *pin_dir)
{
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
		err = read_state(fd, &st);
		if (err == -ESTALE) {
			/* Another version's record: its filter is looked for
			 * where tlsd puts it, on the interface the directory
			 * is named after, and removed only if it still runs
			 * the program pinned here. */
			const char *base = strrchr(pin_dir, '/');

			memset(&st, 0, sizeof(st));
			snprintf(st.ifname, sizeof(st.ifname), "%.*s",
				 (int)strcspn(base ? base + 1 : pin_dir, "@"),
				 base ? base + 1 : pin_dir);
			st.ifindex = if_nametoindex(st.ifname);
			st.tc_handle = TLS_TC_HANDLE_DEFAULT;
			st.tc_prio = TLS_TC_PRIO_DEFAULT;
		}
		err = 0;
		if (st.ifindex) {
			/* ifindexes are reused: act only if the name still matches. */
			if (!if_indextoname(st.ifindex, name) ||
			    strncmp(name, st.ifname, sizeof(st.ifname))) {
				pr_warn("interface %.16s (index %u) is not in this network namespace: "
					"its filter, if it still exists, was not removed\n",
					st.ifname, st.ifindex);
			} else {
				err = detach_both(st.ifindex, st.tc_handle, st.tc_prio,
						  pinned_prog_id(pin_dir),
						  pinned_prog_id_of(pin_dir, IN_PIN), name);
				if (!err && st.created_clsact)
					destroy_clsact(st.ifindex, name);
			}
		}
		close(fd);
	}
	/* Unpinning the link detaches the cgroup hook: no process holds it. */
	unpin_dir(pin_dir);
	return err;
}

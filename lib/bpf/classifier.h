/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The classifier loader and its map API: the daemon's one way to the BPF side.
 *
 * Lifecycle: tls_cls_load() opens the object, sets its rodata, (re)uses the
 * pinned maps and loads; tls_cls_attach() puts the tc program on clsact egress
 * and the sock_create hook on a cgroup; tls_cls_close() detaches only what
 * this instance created. tls_cls_remove_pinned() removes an instance another
 * process left behind (crash, the CLI, `--cleanup`).
 *
 * Membership and counters are plain map operations on struct tls_maps, which
 * either a loaded instance or the pinned maps of a running one provide.
 *
 * Every function returns 0 or a negative errno and logs what failed.
 */
#ifndef TLS_CLASSIFIER_H
#define TLS_CLASSIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <sys/types.h>

#include "tls_common.h"

#define TLS_PIN_ROOT		    "/sys/fs/bpf/tlsd"
#define TLS_TC_HANDLE_DEFAULT	    TLS_TC_MAGIC
#define TLS_TC_PRIO_DEFAULT	    TLS_TC_MAGIC
#define TLS_FLOWLET_GAP_NS_DEFAULT  (4ULL * 1000 * 1000)   /* 4 ms */
#define TLS_FLOWLET_HOLD_NS_DEFAULT (100ULL * 1000 * 1000) /* 100 ms */
/* A flow idle this long between packets with payload ends its ingress burst
 * (one push): well over a stall of TCP inside one push (its minimum RTO is
 * 200 ms), well under the pull and compute between two pushes. */
#define TLS_INGRESS_GAP_NS (500ULL * 1000 * 1000)

struct tls_maps {
	int sk_jobs;
	int pids;
	int endpoints;
	int ports;
	int gen;
	int jobs;
	int job_gens; /* per job id, bumped when the id is freed */
	int bands;
	int job_stats;
	int flow_slots; /* flows known by endpoint (array of tls_flow_rec) */
	int slots_used; /* their map of sets ever used, a byte a set (not pinned: -1 from pins) */
	int flows;	/* flows that ended or left their slot (LRU hash) */
	int state;
	int layout; /* the pins' layout version (pin_layout.h) */
	int sk_iter; /* program: dumps the flows kept in socket storage */
	int burst;   /* policy bursts' order (not pinned: -1 from pins) */
	int weight;  /* its jobs' weights (not pinned: -1 from pins) */
	int tail;    /* its program's tail-call slot (-1 from pins) */
	int tail_ctx; /* what the classifier hands it, per CPU (-1 from pins) */
	int job_in;  /* ingress counters per job (not pinned: -1 from pins) */
	int flows_in; /* ingress flows pushed out of their slot (LRU hash; not pinned) */
	int in_slots; /* ingress flows (array of tls_flow_in_rec; not pinned) */
	int in_used;  /* its map of sets ever used, a byte a set (not pinned) */
	/* roundrobin's order, two entries (tls_common.h: struct tls_rr); from
	 * pins, the attached program's (or -1) */
	int rr;
	/* the job map's memory (it is mmapable), or NULL */
	struct tls_job *jobs_mem;
	/* the order's memory, read-only, or NULL */
	const volatile struct tls_rr *rr_mem;
	/* the flow slots' memory, read-only, or NULL */
	const volatile struct tls_flow_rec *slots_mem;
	/* that map's, read-write (tlsd marks what a takeover found), or NULL */
	volatile __u64 *slots_used_mem;
	/* the ingress slots' memory and their map of used sets, read-only, or NULL */
	const volatile struct tls_flow_in_rec *in_slots_mem;
	const volatile __u64 *in_used_mem;
};

struct tls_cls_opts {
	const char *ifname;  /* egress interface; NULL: no tc attachment (tests) */
	const char *pin_dir; /* NULL: nothing pinned */
	/* cgroup v2 directory for the sock_create hook; NULL: the root of the
	 * cgroup2 mount; "": no hook (sockets then join only by tlsd's
	 * adoption and by endpoint) */
	const char *cgroup;
	__u64 flowlet_gap_ns; /* 0: flowlet switching off */
	__u64 flowlet_hold_ns;
	bool dscp;
	bool observe; /* count only: never set skb->priority or DSCP */
	__u32 tc_handle; /* 0: TLS_TC_HANDLE_DEFAULT */
	__u32 tc_prio;	 /* 0: TLS_TC_PRIO_DEFAULT */
};

struct tls_cls;

/*
 * Probes the kernel's features first (kernel_features.h) and fits the object to
 * them: without the socket-storage iterator or the cgroup socket hooks the
 * classifier mirrors PS socket flows into the flow slots; the helpers it
 * lacks are gated off; maps are not mmapable where the kernel refuses it.
 * -EOPNOTSUPP with one message if a required feature is missing; -ESTALE if
 * maps pinned in pin_dir have another layout (see tls_cls_check_pinned),
 * -EPROTO if a newer tlsd's pin layout (pin_layout.h) is there: nothing of
 * it is touched. The pins are marked with this build's layout.
 */
int tls_cls_load(const struct tls_cls_opts *opts, struct tls_cls **out);
/* Whether the maps pinned in pin_dir fit this build on this kernel: 0 (also
 * when none is pinned), -EPROTO for a newer tlsd's pin layout, or -ESTALE
 * (an older layout, or maps that differ); in why the difference. */
int tls_cls_check_pinned(const char *pin_dir, char *why, size_t len);
int tls_cls_attach(struct tls_cls *c);
/* Detach what this instance attached, unpin what it pinned, free it. */
void tls_cls_close(struct tls_cls *c);
/* Free the instance but leave it attached and pinned (a CLI's `attach`). */
void tls_cls_release(struct tls_cls *c);
/* Attach the filter again, on the interface of the instance's name (its
 * index may be new), creating clsact if it is gone: the filter, clsact or
 * interface vanished. The pinned record follows. */
int tls_cls_reattach(struct tls_cls *c);
/* Detach the instance's filter if it is still there and still its program,
 * and the clsact qdisc it made if no other filter is on it (tlsd yields the
 * interface); tls_cls_reattach() undoes it. */
void tls_cls_detach_tc(struct tls_cls *c);
/* The interface is gone: nothing of the instance's is attached any more. */
void tls_cls_lost(struct tls_cls *c);
/* The pins held an instance before this one (a crashed run's, maybe of the
 * other mode): its maps were taken over. */
bool tls_cls_took_over(const struct tls_cls *c);
/* Loaded over a previous instance's pins (a takeover, or a reload's swap),
 * this program's burst order starts as the previous program's (it ran
 * policy bursts, and its order is laid out as this build's). */
bool tls_cls_burst_carried(const struct tls_cls *c);
/* The filter's handle and priority on clsact egress, and the program's id. */
void tls_cls_tc_ids(const struct tls_cls *c, __u32 *handle, __u32 *prio, __u32 *prog_id);
/* The ingress counter's program id while it is attached; 0: not attached. */
__u32 tls_cls_in_prog_id(const struct tls_cls *c);
const struct tls_maps *tls_cls_maps(const struct tls_cls *c);
int tls_cls_prog_fd(const struct tls_cls *c);
/* The ingress counter's program (tests run it on frames). */
int tls_cls_in_prog_fd(const struct tls_cls *c);

/* Remove an instance pinned at pin_dir: its tc filter (only if it is still
 * the pinned program), the clsact qdisc if it created it, the cgroup hook,
 * the pins and the directory. Missing parts are not an error. */
int tls_cls_remove_pinned(const char *pin_dir);

/* An instance is an interface in a network namespace: "IFNAME@NETNS_INODE"
 * (of the caller's namespace), which names its pin directory under
 * TLS_PIN_ROOT and its lock. */
int tls_instance_name(const char *ifname, char *buf, size_t len);
int tls_pin_dir_for(const char *ifname, char *buf, size_t len);
/* Pins of the earlier naming (TLS_PIN_ROOT/IFNAME) whose program runs on
 * this namespace's IFNAME move to its instance's directory: 1 if moved, 0
 * if there were none or they are not this interface's, -errno. */
int tls_pin_adopt_legacy(const char *ifname);

/* The names of the maps pinned in a pin directory: i < tls_map_pin_count(). */
size_t tls_map_pin_count(void);
const char *tls_map_pin_name(size_t i);
/* Recompute the per-port endpoint counts from the endpoint map (at load: the
 * counts map may be new while the endpoints were kept). */
int tls_rebuild_port_counts(const struct tls_maps *m);

/* Map the job map's memory (rotations then need no syscall) and the flow
 * slots', egress and ingress (read without syscalls); undone by tls_maps_unmap_jobs() or
 * tls_maps_close(). */
int tls_maps_map_jobs(struct tls_maps *m);
void tls_maps_unmap_jobs(struct tls_maps *m);
/* All fds -1: what tls_maps_close() expects of maps never opened. */
void tls_maps_init(struct tls_maps *m);
int tls_maps_open_pinned(const char *pin_dir, struct tls_maps *m);
void tls_maps_close(struct tls_maps *m);

int tls_set_band(const struct tls_maps *m, __u32 band, __u32 classid, __u8 dscp);
int tls_set_job_band(const struct tls_maps *m, __u32 job, __u32 band);
int tls_get_job_band(const struct tls_maps *m, __u32 job, __u32 *band);
int tls_add_pid(const struct tls_maps *m, pid_t pid, __u32 job);
int tls_del_pid(const struct tls_maps *m, pid_t pid);
/* The keys of the endpoint map, of the pid map, read in one walk into
 * *keys (malloc'd, the caller frees it, also when 0 is returned). Returns
 * how many. */
size_t tls_endpoint_keys(const struct tls_maps *m, struct tls_endpoint_key **keys);
size_t tls_pid_keys(const struct tls_maps *m, __u32 **pids);
/* The job an endpoint has in the map: 0, -ENOENT if none, or -errno. */
int tls_get_endpoint(const struct tls_maps *m, const struct tls_endpoint_key *k, __u32 *job);
int tls_add_endpoint(const struct tls_maps *m, const struct tls_endpoint_key *k, __u32 job);
int tls_del_endpoint(const struct tls_maps *m, const struct tls_endpoint_key *k);
/* Tag a socket this process holds an fd of. */
int tls_add_socket_fd(const struct tls_maps *m, int fd, __u32 job);
int tls_del_socket_fd(const struct tls_maps *m, int fd);
/*
 * Make a running process a member of a job: its future sockets (sock_create
 * hook, by tgid) and its existing TCP/UDP sockets (fetched with pidfd_getfd),
 * so that connections accepted later from its listeners inherit the job.
 * Returns the number of existing sockets tagged, or a negative errno.
 */
int tls_add_process(const struct tls_maps *m, pid_t pid, __u32 job);
/* Undo tls_add_process(): forget the pid, untag its sockets. Sockets accepted
 * from its listeners and handed to other processes keep their job until the
 * job's id is freed (tls_free_job_id). Returns the number of sockets
 * untagged. */
int tls_del_process(const struct tls_maps *m, pid_t pid);
/* The job that had this id is gone: no band, no weight, and a new
 * generation, so that sockets still tagged with the id stop counting as the
 * job that gets the id next. */
int tls_free_job_id(const struct tls_maps *m, __u32 job);
/* Write many jobs' bands at once (one syscall when the kernel can); flags
 * (TLS_JOB_F_BURST or 0) go with every band that is not TLS_BAND_NONE. */
int tls_set_job_bands(const struct tls_maps *m, const __u32 *jobs, const __u32 *bands,
		      unsigned int n, __u32 flags);
/* Policy roundrobin: write the order (n == order->n jobs, jobs[i] the one
 * that arrived i-th, bands[i] its band now) into the entry no job uses,
 * then every job's entry naming it: from then on the classifier computes
 * the bands from the clock (tls_rr.h). -EOPNOTSUPP without the order's
 * map. */
int tls_set_job_rr(const struct tls_maps *m, const __u32 *jobs, const __u32 *bands, unsigned int n,
		   const struct tls_rr *order);
/* The order in entry sel (0 or 1). */
int tls_get_rr_order(const struct tls_maps *m, __u32 sel, struct tls_rr *r);
/* What a reset of policy bursts's order starts with (tls_set_burst_order). */
struct tls_burst_seed {
	const __u32 *job;  /* n job ids, leader first (past the slots left out) */
	const __u32 *band; /* each one's band; NULL: by place */
	unsigned int n;
	__u32 lead_floor; /* the leader's queued packets' band, if raised */
	/* an order whose memory of the jobs' burst sizes is kept; NULL: none */
	const struct tls_burst *memory;
};
/* Policy bursts: empty the order; set its bands, gap, grace and limit (ns),
 * and the link's rate (bit/s; 0: unknown, the order is then by bytes left
 * alone). With a seed (NULL: none), the order starts with its jobs, as if
 * each had just started a burst of unknown size, in the bands given: the
 * leader fresh, so it leads for its grace, or until its limit if it sends
 * all along (tls_policy_burst_seed() says why); and with the seed's memory
 * of burst sizes, so that the first bursts after the reset are ordered by
 * them. -EINVAL for a bad or repeated id, or a band out of range. */
int tls_set_burst_order(const struct tls_maps *m, __u32 nbands, __u64 gap_ns, __u64 grace_ns,
			__u64 limit_ns, __u64 rate_bps, const struct tls_burst_seed *seed);
/* Policy bursts: an order written whole (one carried over from the program
 * replaced), under its lock. -EINVAL if it does not hold together (more
 * jobs than slots, a bad or repeated id, a band, floor or weight out of
 * range). */
int tls_write_burst_order(const struct tls_maps *m, const struct tls_burst *o);
/* The time per KiB at rate_bps as the order keeps it (0: rate unknown). */
__u64 tls_burst_ns_per_kib(__u64 rate_bps);
/* Policy bursts: job's weight in the order's fair share from its next
 * burst on (TLS_BURST_W1 units, TLS_BURST_W1 to TLS_BURST_W_MAX; 0: as
 * TLS_BURST_W1).
 * -ENOENT without the weights' map (one from pins), -EINVAL out of range. */
int tls_set_job_weight(const struct tls_maps *m, __u32 job, __u32 w);
/* The weight written for job (0: none), or -errno. */
int tls_get_job_weight(const struct tls_maps *m, __u32 job, __u32 *w);
/* A job's flags in the job map (TLS_JOB_F_*), 0 if it has none. */
int tls_get_job_flags(const struct tls_maps *m, __u32 job, __u32 *flags);
/* Policy bursts: the order as the classifier has it, read under its lock
 * (BPF_F_LOCK): 0, -ENOENT without the order's map, or -errno. */
int tls_read_burst_order(const struct tls_maps *m, struct tls_burst *o);
/* The ingress counter's maps are there (tls_cls_load()'s, not the pins'). */
bool tls_maps_have_ingress(const struct tls_maps *m);
/* Sum of a job's per-CPU counters (job_counters.c, where the samplers'
 * reader is). */
int tls_read_job_stats(const struct tls_maps *m, __u32 job, struct tls_job_stats *sum);
/* Jobs 0..last at once, into sum[0..last]: batch lookups of up to 64 ids
 * (one at a time on kernels without them). 0 or -errno. */
int tls_read_jobs_stats(const struct tls_maps *m, __u32 last, struct tls_job_stats *sum);
/* Zero a job's counters (a fresh job id must not inherit a previous job's). */
int tls_reset_job_stats(const struct tls_maps *m, __u32 job);

typedef int (*tls_flow_cb)(const struct tls_flow_key *k, const struct tls_flow *f, void *ctx);
/* Call cb for every flow: those of PS sockets (live sockets only), those
 * known by endpoint (their slots), then those that ended or left their slot
 * (the LRU map). A non-zero return from cb stops and is returned. */
int tls_for_each_flow(const struct tls_maps *m, tls_flow_cb cb, void *ctx);
/* Only the flows known by endpoint that hold a slot (flow_slots.c): from
 * the mapped memory, the sets marked used (all of them without that map),
 * else by syscalls. */
int tls_for_each_slot_flow(const struct tls_maps *m, tls_flow_cb cb, void *ctx);
/* The same with each flow's slot (its index in tls_flow_slots), a place a
 * reader can keep what it knows of the flow held there. */
typedef int (*tls_slot_flow_cb)(__u32 slot, const struct tls_flow_key *k, const struct tls_flow *f,
				void *ctx);
int tls_for_each_slot_flow_at(const struct tls_maps *m, tls_slot_flow_cb cb, void *ctx);
/* Mark used every set of the slots that holds a flow: the slots a
 * previous program took (a takeover's, a reload's) or that one took after
 * this program's maps were made, which it did not mark. A scan of the
 * slots' memory; nothing without the mapped map of used sets. Returns the
 * sets marked anew. */
unsigned int tls_slots_mark_all(const struct tls_maps *m);

typedef int (*tls_flow_in_cb)(__u32 slot, const struct tls_flow_key *k, const struct tls_flow_in *f,
			      void *ctx);
/* The ingress flows that hold a slot (slot: its index in tls_in_slots),
 * those whose seal holds (flow_slots.c):
 * from the mapped memory, the sets marked used, else by syscalls.
 * -EBADF without the ingress counter's maps. A non-zero return from cb
 * stops and is returned. */
int tls_for_each_in_slot_flow(const struct tls_maps *m, tls_flow_in_cb cb, void *ctx);

#endif /* TLS_CLASSIFIER_H */

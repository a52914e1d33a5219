// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading the classifier's flow slots (classifier.h): the egress flows known
 * by endpoint (tls_flow_slots) and the ingress counter's flows (tls_in_slots).
 * From the arrays' mapped memory where the kernel lets them be mapped, which
 * costs no syscall; else by batch lookups, else one lookup a slot.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "classifier.h"
#include "clock.h"
#include "map_batch.h"
#include "slot_ways.h"
#include "tls_flow_slot.h"

#define SLOT_BATCH 1024

/*
 * A copy of a slot the classifier may be writing, as a seqlock's reader
 * takes one: the seal (the __u32 at check_off) before, the record, the
 * seal again. The classifier zeroes the seal before it rewrites a slot's
 * key or job and writes it last, so a seal of 0 is a slot being written
 * (skipped), and a seal that changed meanwhile a copy to take again. The
 * seal is a hash of the key, job and generation (tls_flow_slot.h), and
 * the callers check the copy against it: so a copy made while the fields
 * were rewritten is refused even where the classifier's stores are seen
 * out of their order (BPF has no store barrier before 5.12 kernels' atomics;
 * x86 keeps the order). What such a CPU may still show for one reading is a
 * new flow with the counters of the one before it. false: no copy.
 */
static bool copy_slot(void *dst, const volatile void *src, size_t size, size_t check_off)
{
	const volatile __u32 *seal =
		(const volatile __u32 *)((const volatile char *)src + check_off);

	for (int tries = 0; tries < 3; tries++) {
		__u32 c = __atomic_load_n(seal, __ATOMIC_ACQUIRE), now;

		if (!c)
			return false;
		memcpy(dst, (const void *)src, size);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		now = __atomic_load_n(seal, __ATOMIC_RELAXED);
		if (now == c) {
			memcpy((char *)dst + check_off, &c, sizeof(c));
			return true;
		}
	}
	return false;
}

/* What a walk of the marked slots calls for each (the callers' cb and ctx,
 * of either kind). one() sets held when the slot holds a record that is
 * not idle (a packet since idle_before; 0: none is idle), idle when it
 * holds a flow's that is. skipped: for each way kw knows idle and the walk
 * does not read. */
struct slot_walk {
	const struct tls_maps *m;
	int (*one)(struct slot_walk *w, __u32 i);
	tls_slot_flow_cb cb;
	tls_flow_in_cb in_cb;
	tls_slot_skipped_cb skipped;
	void *ctx;
	__u64 idle_before;
	bool held, idle;
};

/* slot_ways.h: for each set (a byte a set, 8 to a word, as the maps of
 * used sets), its byte in the map of used sets at the last reading; 1 if
 * the next reading reads every way of it; a bit for each way seen holding
 * a flow not idle. */
struct tls_slot_ways {
	enum tls_flow_map which;
	bool known;		    /* from a reading, and not forgotten since */
	const volatile __u64 *used; /* the map of used sets it knows */
	unsigned int since_all;	    /* readings since every way was read */
	struct tls_slot_ways_info info;
	__u64 *seen, *again, *held, *idle; /* words each, in one block */
};

static __u32 ways_words(enum tls_flow_map which)
{
	return which == TLS_FLOW_MAP_IN ? TLS_IN_USED_WORDS : TLS_FLOW_USED_WORDS;
}

int tls_slot_ways_new(enum tls_flow_map which, struct tls_slot_ways **out)
{
	__u32 words = ways_words(which);
	struct tls_slot_ways *kw = calloc(1, sizeof(*kw) + 4 * words * sizeof(__u64));

	*out = kw;
	if (!kw)
		return -ENOMEM;
	kw->which = which;
	kw->seen = (__u64 *)(kw + 1);
	kw->again = kw->seen + words;
	kw->held = kw->again + words;
	kw->idle = kw->held + words;
	return 0;
}

void tls_slot_ways_free(struct tls_slot_ways *kw)
{
	free(kw);
}

void tls_slot_ways_forget(struct tls_slot_ways *kw)
{
	kw->known = false;
}

void tls_slot_ways_info(const struct tls_slot_ways *kw, struct tls_slot_ways_info *out)
{
	*out = kw->info;
}

/* Byte b of a word, as it lies in memory (the maps' bytes are sets). */
static __u8 byte_of(__u64 v, __u32 b)
{
	return ((const __u8 *)&v)[b];
}

static void set_byte(__u64 *v, __u32 b, __u8 x)
{
	((__u8 *)v)[b] = x;
}

/* The ways of set b of word w to visit (a bit each), by what kw knows:
 * all of them if its byte in the used map changed (a take or a resume),
 * or changed at the reading before (a resume's or a take's stores may
 * reach this CPU after the byte's, or land after a reading that saw the
 * byte: a reading later they are all there), or kw knows nothing; else
 * those seen holding a flow not idle. *changed: the byte changed, or kw
 * knew nothing. */
static __u8 ways_to_visit(const struct tls_slot_ways *kw, __u32 w, __u32 b, __u8 used, __u32 ways,
			  bool *changed)
{
	__u8 all = (__u8)((1u << ways) - 1);

	*changed = !kw->known || used != byte_of(kw->seen[w], b);
	if (*changed || byte_of(kw->again[w], b))
		return all;
	return byte_of(kw->held[w], b);
}

/* Before a walk with kw over used: does it still know these maps, and is
 * a reading of every way due? */
static void ways_begin(struct tls_slot_ways *kw, const volatile __u64 *used)
{
	if (kw->used != used) { /* another program's maps (a reload's) */
		kw->used = used;
		kw->known = false;
	}
	if (++kw->since_all >= TLS_SLOT_WAYS_ALL_EVERY)
		kw->known = false;
	if (!kw->known)
		kw->since_all = 0;
}

/*
 * one() for each slot of the sets marked used (a byte a set, 8 to a word:
 * used, the map's mapped memory, else read from used_fd; sets of `ways`
 * slots), in order, until it returns non-zero. Reading the records is most
 * of the cost (the classifier writes their counters from other CPUs: each
 * is a cache miss); fetching the next one or four ahead did not
 * measurably lower it (perf under bench-ctl). With kw (used mapped): the
 * ways ways_to_visit() says, and kw learns which hold a flow not idle.
 */
static int walk_marked(struct slot_walk *sw, const volatile __u64 *used, int used_fd, __u32 words,
		       __u32 ways, struct tls_slot_ways *kw)
{
	unsigned int visits = 0;
	int ret = 0;

	if (!used)
		kw = NULL;
	if (kw) {
		__u64 now = tls_now_ns(); /* the classifier's clock (clock.h) */

		ways_begin(kw, used);
		if (now > TLS_SLOT_IDLE_NS)
			sw->idle_before = now - TLS_SLOT_IDLE_NS;
	}
	for (__u32 w = 0; w < words && !ret; w++) {
		__u64 v, held = 0, again = 0, idle = 0;

		if (used)
			v = __atomic_load_n(&used[w], __ATOMIC_ACQUIRE);
		else if (bpf_map_lookup_elem(used_fd, &w, &v))
			return -errno;
		for (__u32 b = 0; v && b < 8 && !ret; b++) {
			__u32 first = (w * 8 + b) * ways;
			__u8 mask = (__u8)((1u << ways) - 1), h = 0, id = 0;
			bool changed;

			if (!byte_of(v, b))
				continue;
			if (kw) {
				mask = ways_to_visit(kw, w, b, byte_of(v, b), ways, &changed);
				set_byte(&again, b, changed);
			}
			for (__u32 j = 0; j < ways && !ret; j++) {
				if (!(mask & (1u << j))) {
					/* known idle, not read: as it was, unless
					 * the caller wants it read */
					if (!(byte_of(kw->idle[w], b) & (1u << j)))
						continue;
					ret = sw->skipped ? sw->skipped(first + j, sw->ctx) : 0;
					if (ret != TLS_SLOT_READ) {
						id |= (__u8)(1u << j);
						continue;
					}
				}
				sw->held = sw->idle = false;
				ret = sw->one(sw, first + j);
				visits++;
				if (sw->held)
					h |= (__u8)(1u << j);
				if (sw->idle)
					id |= (__u8)(1u << j);
			}
			set_byte(&held, b, h);
			set_byte(&idle, b, id);
		}
		if (kw) {
			kw->seen[w] = v;
			kw->again[w] = again;
			kw->held[w] = held;
			kw->idle[w] = idle;
		}
	}
	if (kw) {
		kw->info.last_visits = visits;
		/* cut short by cb: what it did not visit is not known */
		kw->known = !ret;
	}
	return ret;
}

/* An egress slot's record is a flow's if it has a packet and its seal
 * holds: the endpoint path's, or a PS socket's mirrored (TLS_FLOW_MIRROR). */
static bool rec_valid(const struct tls_flow_rec *r)
{
	__u32 c;

	if (!r->key.family || !r->flow.first_ns)
		return false;
	c = tls_flow_check(tls_flow_hash(&r->key), r->flow.job, r->flow.gen);
	return r->flow.check == c || r->flow.check == (c ^ TLS_FLOW_MIRROR);
}

/* Egress slot i from its mapped memory, to cb if it holds a flow. */
static int mem_slot(struct slot_walk *sw, __u32 i)
{
	const struct tls_maps *m = sw->m;
	struct tls_flow_rec r;

	/* a record being written (no copy) is held */
	sw->held = m->slots_mem[i].key.family != 0;
	if (!sw->held ||
	    !copy_slot(&r, &m->slots_mem[i], sizeof(r), offsetof(struct tls_flow_rec, flow.check)))
		return 0;
	if (!rec_valid(&r))
		return 0;
	if (r.flow.last_ns < sw->idle_before) {
		sw->held = false; /* its next packet counts a resume */
		sw->idle = true;
	}
	return sw->cb(i, &r.key, &r.flow, sw->ctx);
}

/* The egress slots from their mapped memory: those of the sets marked used
 * (all of them without that map; empty slots cost a load each). */
static int scan_slots(const struct tls_maps *m, struct tls_slot_ways *kw, tls_slot_flow_cb cb,
		      tls_slot_skipped_cb skipped, void *ctx)
{
	struct slot_walk sw = { .m = m, .one = mem_slot, .cb = cb, .skipped = skipped, .ctx = ctx };
	int ret = 0;

	if (m->slots_used_mem)
		return walk_marked(&sw, m->slots_used_mem, m->slots_used, TLS_FLOW_USED_WORDS,
				   TLS_FLOW_WAYS, kw);
	for (__u32 i = 0; i < TLS_FLOW_SLOTS && !ret; i++)
		ret = mem_slot(&sw, i);
	return ret;
}

unsigned int tls_slots_mark_all(const struct tls_maps *m)
{
	volatile __u8 *used = (volatile __u8 *)m->slots_used_mem;
	unsigned int marked = 0;

	if (!m->slots_mem || !used)
		return 0;
	for (__u32 set = 0; set < TLS_FLOW_SETS; set++) {
		bool held = false;

		for (__u32 j = 0; j < TLS_FLOW_WAYS; j++)
			held |= m->slots_mem[set * TLS_FLOW_WAYS + j].key.family != 0;
		/* a plain store of 1 over a 0, as the classifier's first
		 * count: a take counted meanwhile still changed the byte from
		 * the 0 a reader saw */
		if (held && !used[set]) {
			used[set] = 1;
			marked++;
		}
	}
	return marked;
}

/* The slots one lookup at a time: kernels without batch operations. */
static int slots_one_by_one(const struct tls_maps *m, tls_slot_flow_cb cb, void *ctx)
{
	struct tls_flow_rec r;
	int ret = 0;

	for (__u32 i = 0; i < TLS_FLOW_SLOTS && !ret; i++) {
		if (bpf_map_lookup_elem(m->flow_slots, &i, &r))
			return -errno;
		if (rec_valid(&r))
			ret = cb(i, &r.key, &r.flow, ctx);
	}
	return ret;
}

int tls_for_each_slot_flow_at(const struct tls_maps *m, tls_slot_flow_cb cb, void *ctx)
{
	return tls_for_each_slot_flow_ways(m, NULL, cb, NULL, ctx);
}

int tls_for_each_slot_flow_ways(const struct tls_maps *m, struct tls_slot_ways *kw,
				tls_slot_flow_cb cb, tls_slot_skipped_cb skipped, void *ctx)
{
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct tls_flow_rec *recs;
	__u32 *keys, token = 0;
	bool first = true;
	int ret = 0;

	if (kw && kw->which != TLS_FLOW_MAP_OUT)
		return -EINVAL;
	if (m->slots_mem)
		return scan_slots(m, kw, cb, skipped, ctx);
	if (m->flow_slots < 0)
		return 0; /* maps opened without them */
	recs = malloc(SLOT_BATCH * sizeof(*recs));
	keys = malloc(SLOT_BATCH * sizeof(*keys));

	if (!recs || !keys) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		__u32 count = SLOT_BATCH;
		int err = bpf_map_lookup_batch(m->flow_slots, first ? NULL : &token, &token, keys,
					       recs, &count, &opts);

		if (err < 0 && first && (errno == EINVAL || errno == EOPNOTSUPP)) {
			ret = slots_one_by_one(m, cb, ctx); /* no batch operations (5.6) */
			break;
		}
		if (err < 0 && errno != ENOENT) {
			ret = -errno;
			break;
		}
		for (__u32 i = 0; i < count && !ret; i++)
			if (rec_valid(&recs[i]))
				ret = cb(keys[i], &recs[i].key, &recs[i].flow, ctx);
		if (ret || err < 0)
			break; /* ENOENT: that was the last batch */
		first = false;
	}
cleanup:
	free(recs);
	free(keys);
	return ret;
}

struct without_slot {
	tls_flow_cb cb;
	void *ctx;
};

static int drop_slot(__u32 slot, const struct tls_flow_key *k, const struct tls_flow *f, void *ctx)
{
	const struct without_slot *w = ctx;

	(void)slot;
	return w->cb(k, f, w->ctx);
}

int tls_for_each_slot_flow(const struct tls_maps *m, tls_flow_cb cb, void *ctx)
{
	struct without_slot w = { cb, ctx };

	return tls_for_each_slot_flow_at(m, drop_slot, &w);
}

/* An ingress slot's record is a flow's if it has a packet and its seal
 * holds (not a slot two CPUs wrote at once, nor one being written). */
static bool in_rec_valid(const struct tls_flow_in_rec *r)
{
	const struct tls_flow_in *f = &r->in;

	return r->key.family && f->first_ns &&
	       f->check == tls_flow_in_check(tls_flow_hash(&r->key), f->job, f->gen, f->egen);
}

/* One ingress slot, from memory or by a lookup. */
static int in_slot(struct slot_walk *sw, __u32 i)
{
	const struct tls_maps *m = sw->m;
	struct tls_flow_in_rec r;

	if (m->in_slots_mem) {
		sw->held = m->in_slots_mem[i].key.family != 0;
		if (!sw->held || !copy_slot(&r, &m->in_slots_mem[i], sizeof(r),
					    offsetof(struct tls_flow_in_rec, in.check)))
			return 0;
	} else if (bpf_map_lookup_elem(m->in_slots, &i, &r))
		return -errno;
	if (!in_rec_valid(&r))
		return 0;
	if (r.in.seen_ns < sw->idle_before) {
		sw->held = false; /* its next packet counts a resume */
		sw->idle = true;
	}
	return sw->in_cb(i, &r.key, &r.in, sw->ctx);
}

int tls_for_each_in_slot_flow(const struct tls_maps *m, tls_flow_in_cb cb, void *ctx)
{
	return tls_for_each_in_slot_flow_ways(m, NULL, cb, NULL, ctx);
}

int tls_for_each_in_slot_flow_ways(const struct tls_maps *m, struct tls_slot_ways *kw,
				   tls_flow_in_cb cb, tls_slot_skipped_cb skipped, void *ctx)
{
	struct slot_walk sw = {
		.m = m, .one = in_slot, .in_cb = cb, .skipped = skipped, .ctx = ctx
	};

	if (m->in_slots < 0 || m->in_used < 0)
		return -EBADF;
	if (kw && kw->which != TLS_FLOW_MAP_IN)
		return -EINVAL;
	/* the ways are known only where the slots are read from memory */
	return walk_marked(&sw, m->in_used_mem, m->in_used, TLS_IN_USED_WORDS, TLS_IN_WAYS,
			   m->in_slots_mem ? kw : NULL);
}

/* The last entry of a map of used sets (TLS_FLOW_USED_ENTRIES): from its
 * memory, else by a lookup; 0 if neither. */
static __u64 moves_of(const volatile __u64 *mem, int fd, __u32 words)
{
	__u64 v = 0;

	if (mem)
		return __atomic_load_n(&mem[words], __ATOMIC_ACQUIRE);
	if (fd >= 0 && bpf_map_lookup_elem(fd, &words, &v))
		v = 0;
	return v;
}

__u64 tls_flow_map_moves(const struct tls_maps *m, enum tls_flow_map which)
{
	if (which == TLS_FLOW_MAP_IN)
		return moves_of(m->in_used_mem, m->in_used, TLS_IN_USED_WORDS);
	return moves_of(m->slots_used_mem, m->slots_used, TLS_FLOW_USED_WORDS);
}

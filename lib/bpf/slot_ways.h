/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a reader of the classifier's flow slots knows of their ways: which
 * ways of each used set hold a flow that had a packet in the last
 * TLS_SLOT_IDLE_NS (egress: one it sent; ingress: any), and which hold one
 * idle.
 * The slots are read from memory where they are mapped, each way a cache
 * miss; most ways of a used set are empty (1024 flows in the 4096 ingress
 * sets of four: 3.5 ways read a flow), and slots keep their flows after
 * these end, until another flow of the set needs one: on a host whose
 * flows come and go, every way of every set in the end. So a reading
 * visits the ways it saw holding a flow not idle, and every way of a set
 * when the set's byte in the map of used sets changed (the classifier
 * counts there each take of a slot, each record started again in place for another job, and
 * each packet of a flow idle TLS_SLOT_RESUME_NS, half TLS_SLOT_IDLE_NS:
 * tls_common.h), at the reading
 * after that (the take's or the resume's stores may be seen after the
 * byte's), every TLS_SLOT_WAYS_ALL_EVERY readings, after
 * tls_slot_ways_forget() and when the maps change (a reload's program):
 * those twice. A flow skipped while idle has sent nothing since it was
 * seen idle (its next packet changes the byte): the caller is told
 * (tls_slot_skipped_cb), and feeds the statistics engine the flow as it
 * was (tls_stats_flow_unchanged()), which is not the same as not feeding
 * it (a flow not fed keeps its period's base: lib/model/stats.c). The
 * ingress sampler also sums each job's bursts over every record at each
 * reading (S_param): for a skipped flow it adds those it kept from the
 * reading that saw it idle (tcd/stats_ingress.c; an idle flow's burst
 * counters change only at its next packet). Implemented in flow_slots.c.
 */
#ifndef TLS_SLOT_WAYS_H
#define TLS_SLOT_WAYS_H

#include <stdbool.h>

#include "classifier.h"
#include "map_batch.h"

/* A flow with no packet for this long is not read until its set's byte
 * changes: twice TLS_SLOT_RESUME_NS, so that its next packet counts a
 * resume whatever the two clocks' lag. */
#define TLS_SLOT_IDLE_NS (2 * TLS_SLOT_RESUME_NS)
/* Every way of the used sets is read at this many readings (10 s at the
 * default period) whatever the bytes say: a take or a resume the byte did
 * not show (255 of them between two readings, or a program that counts in
 * other maps, a takeover's) is read then. */
#define TLS_SLOT_WAYS_ALL_EVERY 100

struct tls_slot_ways;

/* For the slots of which (TLS_FLOW_MAP_OUT: tls_flow_slots; IN:
 * tls_in_slots). 0 or -ENOMEM. */
int tls_slot_ways_new(enum tls_flow_map which, struct tls_slot_ways **out);
void tls_slot_ways_free(struct tls_slot_ways *kw);
/* The next two readings visit every way of the used sets: after slots were
 * filled by a program that does not count in these maps (a takeover's). */
void tls_slot_ways_forget(struct tls_slot_ways *kw);

struct tls_slot_ways_info {
	unsigned int last_visits; /* ways the last reading with it read */
};
void tls_slot_ways_info(const struct tls_slot_ways *kw, struct tls_slot_ways_info *out);

/* A flow at slot the reading did not read, kw having seen it idle: the
 * same as at the reading that saw it (tls_stats_flow_unchanged()).
 * TLS_SLOT_READ: read it after all; another non-zero return stops the
 * walk and is returned. */
typedef int (*tls_slot_skipped_cb)(__u32 slot, void *ctx);
#define TLS_SLOT_READ 1

/* tls_for_each_slot_flow_at() and tls_for_each_in_slot_flow() that visit
 * the ways kw knows (kw: of the same kind; NULL, or slots read by
 * syscalls: every way of the used sets, and kw learns nothing); skipped
 * (may be NULL) for each flow seen idle and not read. */
int tls_for_each_slot_flow_ways(const struct tls_maps *m, struct tls_slot_ways *kw,
				tls_slot_flow_cb cb, tls_slot_skipped_cb skipped, void *ctx);
int tls_for_each_in_slot_flow_ways(const struct tls_maps *m, struct tls_slot_ways *kw,
				   tls_flow_in_cb cb, tls_slot_skipped_cb skipped, void *ctx);

#endif /* TLS_SLOT_WAYS_H */

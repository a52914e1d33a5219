/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The HTB tree on the egress interface, built through libnl-route-3:
 *
 *   M:0  htb root qdisc, default class M:ff
 *   M:1    root class at the link rate
 *   M:10 ... M:1N   one leaf per job band, prio = band (0 first), a small
 *                   rate floor, ceil at the link rate (band 0: a little
 *                   below it under `one`, policy.h)
 *   M:ff            the default class: everything not of a PS, prio 7
 *
 * M is TLS_HTB_MAJOR, so a later start recognises its own tree. The root
 * qdisc found at start is saved and put back at exit.
 */
#ifndef TLS_SHAPER_H
#define TLS_SHAPER_H

#include <stdbool.h>
#include <stdint.h>

#include "tls_common.h"

#define TLS_HTB_MAJOR	      TLS_TC_MAGIC
#define TLS_HTB_DEFAULT_MINOR 0xff
#define TLS_HTB_BAND_MINOR(b) (0x10 + (b))
#define TLS_CLASSID(minor)    ((uint32_t)TLS_HTB_MAJOR << 16 | (minor))

struct tls_shaper;

/* The link rate in bits/s from the driver (ethtool, in this network
 * namespace); -ENODATA with a message if the interface reports none. */
int tls_link_rate(const char *ifname, uint64_t *bps);
/* The same without a message: -errno, -ENODATA if the link reports none (a
 * link that is down). */
int tls_link_speed(const char *ifname, uint64_t *bps);

/* An egress qdisc of an interface, as the kernel lists it. */
struct tls_qdisc_id {
	uint32_t handle, parent;
	char kind[16];
};

/* Of an interface's qdiscs, the one that makes its egress side not the
 * kernel's default, or NULL. Default: every egress qdisc (the root and, for
 * mq, its children) has handle 0:, which only the kernel's own attachment
 * gives (noqueue, pfifo_fast, mq, or net.core.default_qdisc such as
 * fq_codel); a qdisc anyone adds gets a handle (8001: if none is asked
 * for). clsact/ingress are left out, and so is tlsd's own tree: a crashed
 * run's is taken over. The root is named first. */
const struct tls_qdisc_id *tls_qdisc_not_default(const struct tls_qdisc_id *q, size_t n);
/* The same asked of the kernel for ifname: 0 if default (or tlsd's tree),
 * 1 with the qdisc described in desc ("pfifo 1: root"), or -errno. */
int tls_root_qdisc_foreign(const char *ifname, char *desc, size_t len);

/* Open: find the interface, save its root qdisc. */
int tls_shaper_open(const char *ifname, struct tls_shaper **out);
/* Build (or take over and update) the tree for this rate and band count.
 * Taking over a tree of ours changes its classes in place: no gap. */
int tls_shaper_build(struct tls_shaper *s, uint64_t rate_bps, unsigned int bands);
/* Band 0's headroom below the link rate, in parts per million (policy.h:
 * tls_policy_lead_headroom; 0: none, at most 50% is applied). Every build
 * applies it at the build's rate; set before the first build it is only
 * remembered, after, band 0 changes in place. 1 changed, 0 unchanged, or
 * -errno (the old headroom stays). */
int tls_shaper_set_lead_headroom(struct tls_shaper *s, uint64_t ppm);
/* true if the root qdisc was already our HTB when opened (a leftover). */
bool tls_shaper_took_over(const struct tls_shaper *s);
/* The saved root qdisc as a netlink request to keep (len 0: the kernel's
 * default), and the same handed back to a later start that took over. */
int tls_shaper_saved_request(const struct tls_shaper *s, void *buf, size_t *len);
void tls_shaper_set_saved_request(struct tls_shaper *s, const void *buf, size_t len);
/* Put the saved root qdisc back (or the kernel default) and free. Only over
 * tlsd's tree or the kernel's default: another tool's root qdisc stays, and
 * an interface that is gone or was re-created is left alone. */
int tls_shaper_restore(struct tls_shaper *s);
/* The same without freeing (tlsd yields the interface to another tool);
 * the tree is lost from then on. */
int tls_shaper_yield(struct tls_shaper *s);
/* The tree is gone (deleted, replaced, or its interface gone): the next build
 * creates the root qdisc again; until then a new headroom is only
 * remembered. The record of the root qdisc from before tlsd stays. */
void tls_shaper_lost(struct tls_shaper *s);
/* The interface came back at another index: the next build is there. */
int tls_shaper_set_ifindex(struct tls_shaper *s, int ifindex);
/* Free without touching the interface. */
void tls_shaper_close(struct tls_shaper *s);
/* --cleanup: remove our HTB tree from ifname if it is there, putting the
 * saved request's qdisc back (len 0: the kernel's default). */
int tls_shaper_remove(const char *ifname, const void *saved, size_t len);

#endif /* TLS_SHAPER_H */

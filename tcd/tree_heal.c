// SPDX-License-Identifier: GPL-2.0-only
/* The self-healing tree's decisions: tree_heal.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/pkt_sched.h>

#include "tree_heal.h"

static void __attribute__((format(printf, 4, 5)))
say(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= len)
		return;
	if (*off)
		*off += (size_t)snprintf(buf + *off, len - *off, "; ");
	if (*off >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

unsigned int tls_tree_judge(const struct tls_tree_facts *f, const struct tls_tree_target *t,
			    char *why, size_t len)
{
	unsigned int r = 0;
	size_t off = 0;

	if (len)
		why[0] = '\0';
	if (!t->root_handle) {
		/* observe mode: the root qdisc is the user's, whatever it is */
	} else if (!f->root.present || f->root.handle != t->root_handle ||
		   strcmp(f->root.kind, "htb")) {
		r |= TLS_REPAIR_ROOT;
		if (!f->root.present)
			say(why, len, &off, "root qdisc deleted");
		else if (!TC_H_MAJ(f->root.handle))
			/* a root qdisc of handle 0: the one the kernel attaches
			 * by itself once the root is deleted */
			say(why, len, &off, "root qdisc deleted (the kernel's default %s is back)",
			    f->root.kind[0] ? f->root.kind : "qdisc");
		else
			say(why, len, &off, "root qdisc replaced by %s (handle %x:)",
			    f->root.kind[0] ? f->root.kind : "a qdisc",
			    TC_H_MAJ(f->root.handle) >> 16);
	} else if (f->classes_missing) {
		r |= TLS_REPAIR_CLASSES;
		if (f->classes_missing > 1)
			say(why, len, &off, "HTB classes %x:%x and %u more deleted",
			    TC_H_MAJ(f->missing_class) >> 16, TC_H_MIN(f->missing_class),
			    f->classes_missing - 1);
		else
			say(why, len, &off, "HTB class %x:%x deleted",
			    TC_H_MAJ(f->missing_class) >> 16, TC_H_MIN(f->missing_class));
	}
	if (!f->clsact.present) {
		r |= TLS_REPAIR_FILTER;
		say(why, len, &off, "clsact qdisc deleted");
	} else if (strcmp(f->clsact.kind, "clsact")) {
		r |= TLS_REPAIR_FILTER;
		say(why, len, &off, "clsact qdisc replaced by %s", f->clsact.kind);
	} else if (!f->filter) {
		r |= TLS_REPAIR_FILTER;
		say(why, len, &off, "classifier filter deleted");
	} else if (strcmp(f->filter_kind, "bpf") || f->filter_prog_id != t->prog_id) {
		r |= TLS_REPAIR_FILTER;
		say(why, len, &off, "classifier filter replaced by %s (program id %u)",
		    f->filter_kind[0] ? f->filter_kind : "another filter", f->filter_prog_id);
	} else if (t->in_prog_id && !f->in_filter) {
		r |= TLS_REPAIR_FILTER;
		say(why, len, &off, "ingress counter filter deleted");
	} else if (t->in_prog_id &&
		   (strcmp(f->in_filter_kind, "bpf") || f->in_filter_prog_id != t->in_prog_id)) {
		r |= TLS_REPAIR_FILTER;
		say(why, len, &off, "ingress counter filter replaced by %s (program id %u)",
		    f->in_filter_kind[0] ? f->in_filter_kind : "another filter",
		    f->in_filter_prog_id);
	}
	return r;
}

const char *tls_tree_state_name(enum tls_tree_state s)
{
	switch (s) {
	case TLS_TREE_INTACT:
		return "intact";
	case TLS_TREE_ABSENT:
		return "absent";
	case TLS_TREE_YIELDED:
		return "yielded";
	}
	return "unknown";
}

void tls_heal_init(struct tls_heal *h, unsigned int limit, uint64_t window_ns)
{
	memset(h, 0, sizeof(*h));
	tls_heal_set_limit(h, limit, window_ns);
}

void tls_heal_set_limit(struct tls_heal *h, unsigned int limit, uint64_t window_ns)
{
	h->limit = limit > TLS_HEAL_LIMIT_MAX ? TLS_HEAL_LIMIT_MAX : limit;
	h->window_ns = window_ns;
	/* a smaller limit keeps the newest heals */
	if (h->nrecent > h->limit) {
		memmove(h->recent, h->recent + (h->nrecent - h->limit),
			h->limit * sizeof(h->recent[0]));
		h->nrecent = h->limit;
	}
}

/* Drop the heals older than the window ending at now. */
static void expire(struct tls_heal *h, uint64_t now_ns)
{
	unsigned int i = 0;

	while (i < h->nrecent && now_ns - h->recent[i] >= h->window_ns)
		i++;
	memmove(h->recent, h->recent + i, (h->nrecent - i) * sizeof(h->recent[0]));
	h->nrecent -= i;
}

bool tls_heal_admit(struct tls_heal *h, uint64_t now_ns)
{
	expire(h, now_ns);
	if (h->nrecent >= h->limit)
		return false;
	h->recent[h->nrecent++] = now_ns;
	return true;
}

unsigned int tls_heal_recent(const struct tls_heal *h, uint64_t now_ns)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < h->nrecent; i++)
		n += now_ns - h->recent[i] < h->window_ns;
	return n;
}

void tls_heal_forget(struct tls_heal *h)
{
	h->nrecent = 0;
}

uint64_t tls_heal_new_rate(uint64_t conf_bps, uint64_t cur_bps, int speed_err, uint64_t speed_bps)
{
	if (conf_bps || speed_err || !speed_bps || speed_bps == cur_bps)
		return 0;
	return speed_bps;
}

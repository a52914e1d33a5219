/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The self-healing tree's decisions, pure (tlsd.c acts on them): what the
 * state of the interface calls for (tls_tree_judge), whether tlsd may heal
 * once more or yields because another tool keeps undoing its tree
 * (tls_heal_admit), and the rate to follow after a link speed change
 * (tls_heal_new_rate). struct tls_heal is also what `tlsctl status` shows.
 *
 * The choice (docs/design.md, tlsd(8)): tlsd heals what vanished or was
 * replaced and counts every heal; more than `heal_limit` heals within
 * `heal_window` means a tool is replacing the tree on purpose: tlsd then
 * stops scheduling the interface (it takes away what is still its own and
 * leaves the other tool's qdiscs and filters), says so once, and waits for
 * SIGHUP or a restart.
 */
#ifndef TLS_TREE_HEAL_H
#define TLS_TREE_HEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_state.h"
#include "tree_watch.h"

#define TLS_HEAL_LIMIT_DEFAULT	   5
#define TLS_HEAL_LIMIT_MAX	   100
#define TLS_HEAL_WINDOW_DEFAULT_NS (60ULL * 1000 * 1000 * 1000)
#define TLS_HEAL_WINDOW_MIN_NS	   (1000ULL * 1000 * 1000)

/* The repairs the state calls for. */
enum tls_repair {
	TLS_REPAIR_ROOT = 1 << 0,    /* the HTB root qdisc and all its classes */
	TLS_REPAIR_CLASSES = 1 << 1, /* classes of the tree (the root is there) */
	TLS_REPAIR_FILTER = 1 << 2,  /* the classifier's filter, and clsact if gone */
};

/* f against t (same interface index): the repairs needed, 0 if intact, and
 * in why what is wrong, e.g. "root qdisc replaced by pfifo 1:". */
unsigned int tls_tree_judge(const struct tls_tree_facts *f, const struct tls_tree_target *t,
			    char *why, size_t len);

enum tls_tree_state {
	TLS_TREE_INTACT,  /* tlsd's tree and filter are in place (as last checked) */
	TLS_TREE_ABSENT,  /* the interface is gone; tlsd waits for it */
	TLS_TREE_YIELDED, /* another tool won: tlsd does not schedule it */
};
const char *tls_tree_state_name(enum tls_tree_state s);

struct tls_heal {
	unsigned int limit; /* heals allowed within window */
	uint64_t window_ns;
	uint64_t recent[TLS_HEAL_LIMIT_MAX]; /* the admitted heals' times, oldest first */
	unsigned int nrecent;
	enum tls_tree_state state;
	bool watched;	   /* the notifications arrive (kernel feature rtnl_watch) */
	uint64_t since_ns; /* absent or yielded since (monotonic) */
	uint64_t heals;	   /* repairs made */
	uint64_t failed;   /* repairs that failed */
	char last_reason[160];
	uint64_t last_ns;      /* when the last repair was made; 0: none */
	uint64_t last_took_ns; /* from the check that saw it to the tree back */
	char yield_reason[256];
	uint64_t returns;      /* times the interface came back */
	uint64_t rate_changes; /* link speed changes followed */
	uint64_t yields;       /* times tlsd yielded the interface */
};

void tls_heal_init(struct tls_heal *h, unsigned int limit, uint64_t window_ns);
/* A new bound (a reload); the heals counted so far stay counted. */
void tls_heal_set_limit(struct tls_heal *h, unsigned int limit, uint64_t window_ns);
/* A repair is needed at now: true and counted if within the bound, false if
 * it is one too many (tlsd yields). */
bool tls_heal_admit(struct tls_heal *h, uint64_t now_ns);
/* Heals counted within the window ending at now. */
unsigned int tls_heal_recent(const struct tls_heal *h, uint64_t now_ns);
/* SIGHUP: the window starts empty (an operator took the interface back). */
void tls_heal_forget(struct tls_heal *h);

/*
 * The link rate after the interface changed: 0 to keep cur_bps, else the new
 * rate. conf_bps is link_rate (0: auto, follow the driver); speed_err is
 * reading the speed's result (a link that is down reports none: keep the
 * rate it had) and speed_bps what it read.
 */
uint64_t tls_heal_new_rate(uint64_t conf_bps, uint64_t cur_bps, int speed_err, uint64_t speed_bps);

#endif /* TLS_TREE_HEAL_H */

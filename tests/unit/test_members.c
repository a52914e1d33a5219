// SPDX-License-Identifier: GPL-2.0-only
/*
 * The membership table (lib/model/members.c): reference counts, the
 * conflict rule between the configuration and discovery, the bounds, the
 * undo of a failed write, the takeover's diff, and a random sequence of
 * claims against a model kept by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "members.h"
#include "unit.h"

static struct tls_member_key ep(uint16_t port, uint8_t last)
{
	struct tls_endpoint_key k = { .family = AF_INET,
				      .proto = IPPROTO_TCP,
				      .port = htons(port) };

	k.addr[3] = last; /* 0: any address */
	return tls_member_ep(&k);
}

static int acq(struct tls_members_table *t, struct tls_member_key k, enum tls_member_holder h,
	       __u32 job, __u32 before, __u32 after)
{
	struct tls_member_change ch = { 0xdead, 0xdead };
	int ret = tls_members_acquire(t, &k, h, job, &ch, NULL);

	if (ret >= 0) {
		assert_int_equal(ch.before, before);
		assert_int_equal(ch.after, after);
	}
	return ret;
}

static int rel(struct tls_members_table *t, struct tls_member_key k, enum tls_member_holder h,
	       __u32 job, __u32 before, __u32 after)
{
	struct tls_member_change ch = { 0xdead, 0xdead };
	int ret = tls_members_release(t, &k, h, job, &ch);

	if (!ret) {
		assert_int_equal(ch.before, before);
		assert_int_equal(ch.after, after);
	}
	return ret;
}

#define CFG  TLS_HOLDER_CONFIG
#define DISC TLS_HOLDER_DISCOVERY

static void test_refcounts(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key k = ep(9000, 0), pid = tls_member_pid(4242);

	(void)state;
	/* two PSes of job 5 on one port: in the map from the first claim to
	 * the last release */
	assert_int_equal(acq(t, k, DISC, 5, 0, 5), 0);
	assert_int_equal(acq(t, k, DISC, 5, 5, 5), 0);
	assert_int_equal(tls_members_find(t, &k)->disc_refs, 2);
	assert_int_equal(rel(t, k, DISC, 5, 5, 5), 0);
	assert_int_equal(tls_members_job(t, &k), 5);
	assert_int_equal(rel(t, k, DISC, 5, 5, 0), 0);
	assert_null(tls_members_find(t, &k));
	assert_int_equal(rel(t, k, DISC, 5, 0, 0), -ENOENT);
	/* the configuration is one holder: claimed twice, let go once */
	assert_int_equal(acq(t, k, CFG, 3, 0, 3), 0);
	assert_int_equal(acq(t, k, CFG, 3, 3, 3), 0);
	assert_int_equal(rel(t, k, CFG, 3, 3, 0), 0);
	assert_int_equal(tls_members_count(t, TLS_MEMBER_ENDPOINT), 0);
	/* pids are keys of their own kind */
	assert_int_equal(acq(t, pid, DISC, 5, 0, 5), 0);
	assert_int_equal(tls_members_count(t, TLS_MEMBER_PID), 1);
	assert_int_equal(tls_members_count(t, TLS_MEMBER_ENDPOINT), 0);
	assert_int_equal(tls_members_job(t, &k), 0);
	assert_int_equal(acq(t, pid, DISC, 0, 0, 0), -EINVAL);
	tls_members_table_free(t);
}

/* The file's job against a discovered one, each way round. */
static void test_config_wins(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key k = ep(9000, 0);

	(void)state;
	/* the file claims a port a PS of job 5 holds: the file's job 7 */
	assert_int_equal(acq(t, k, DISC, 5, 0, 5), 0);
	assert_int_equal(acq(t, k, CFG, 7, 5, 7), 0);
	/* the PS goes: the file's stays */
	assert_int_equal(rel(t, k, DISC, 5, 7, 7), 0);
	assert_int_equal(rel(t, k, CFG, 7, 7, 0), 0);
	/* a PS claims the file's port: kept, shadowed; the file lets go:
	 * the PS's job takes it */
	assert_int_equal(acq(t, k, CFG, 7, 0, 7), 0);
	assert_int_equal(acq(t, k, DISC, 5, 7, 7), TLS_MEMBER_SHADOWED);
	assert_int_equal(tls_members_job(t, &k), 7);
	assert_int_equal(rel(t, k, CFG, 7, 7, 5), 0);
	assert_int_equal(rel(t, k, DISC, 5, 5, 0), 0);
	tls_members_table_free(t);
}

/* A reload drops the file's job while discovery follows its PS (the job
 * stays, as discovered): the PS's endpoint stays in the map. */
static void test_config_drops_shared(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key k = ep(9000, 0), pid = tls_member_pid(77);

	(void)state;
	assert_int_equal(acq(t, k, CFG, 4, 0, 4), 0);
	assert_int_equal(acq(t, pid, DISC, 4, 0, 4), 0);
	assert_int_equal(acq(t, k, DISC, 4, 4, 4), 0);
	assert_int_equal(rel(t, k, CFG, 4, 4, 4), 0); /* no map write */
	assert_int_equal(tls_members_job(t, &k), 4);
	assert_int_equal(tls_members_job(t, &pid), 4);
	assert_int_equal(rel(t, k, DISC, 4, 4, 0), 0);
	tls_members_table_free(t);
}

static void test_discovery_first_wins(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key k = ep(9000, 1);

	(void)state;
	assert_int_equal(acq(t, k, DISC, 5, 0, 5), 0);
	assert_int_equal(acq(t, k, DISC, 6, 0, 0), -EBUSY);
	assert_int_equal(tls_members_find(t, &k)->disc_refs, 1); /* not counted */
	assert_int_equal(rel(t, k, DISC, 6, 0, 0), -ENOENT);
	assert_int_equal(tls_members_job(t, &k), 5);
	assert_int_equal(rel(t, k, DISC, 5, 5, 0), 0);
	assert_int_equal(acq(t, k, DISC, 6, 0, 6), 0); /* free: the other's now */
	/* shadowed by the file, the first PS's job still decides */
	assert_int_equal(acq(t, k, CFG, 7, 6, 7), 0);
	assert_int_equal(acq(t, k, DISC, 5, 0, 0), -EBUSY);
	tls_members_table_free(t);
}

/* A reload moves a port from job 3 to job 8, whichever job is synced
 * first: the port ends in job 8. */
static void test_config_moves_port(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key k = ep(9000, 0);

	(void)state;
	assert_int_equal(acq(t, k, CFG, 3, 0, 3), 0);
	assert_int_equal(acq(t, k, CFG, 8, 3, 8), 0);
	assert_int_equal(rel(t, k, CFG, 3, 0, 0), -ENOENT);
	assert_int_equal(tls_members_job(t, &k), 8);
	tls_members_table_free(t);
}

static void test_restore(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key k = ep(9000, 0), k2 = ep(9001, 0);
	struct tls_member_change ch;
	struct tls_member was;

	(void)state;
	assert_int_equal(tls_members_acquire(t, &k, DISC, 5, &ch, &was), 0);
	tls_members_restore(t, &was); /* a new key goes */
	assert_null(tls_members_find(t, &k));
	assert_int_equal(tls_members_count(t, TLS_MEMBER_ENDPOINT), 0);
	assert_int_equal(acq(t, k, DISC, 5, 0, 5), 0);
	assert_int_equal(acq(t, k2, CFG, 2, 0, 2), 0);
	assert_int_equal(tls_members_acquire(t, &k, CFG, 7, &ch, &was), 0);
	assert_int_equal(tls_members_acquire(t, &k2, CFG, 9, &ch, &was), 0);
	tls_members_restore(t, &was);
	assert_int_equal(tls_members_job(t, &k2), 2);
	assert_int_equal(tls_members_job(t, &k), 7);
	assert_int_equal(tls_members_count(t, TLS_MEMBER_ENDPOINT), 2);
	tls_members_table_free(t);
}

/* Discovery fills its half of the endpoints; the file's jobs still have
 * room; pids stop at the map's size. */
static void test_bounds(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key k;
	unsigned int i;

	(void)state;
	for (i = 0; i < TLS_MEMBERS_MAX_DISC_ENDPOINTS; i++) {
		k = ep((uint16_t)(1 + i / 200), (uint8_t)(1 + i % 200));
		assert_int_equal(acq(t, k, DISC, 5, 0, 5), 0);
	}
	k = ep(60000, 1);
	assert_int_equal(acq(t, k, DISC, 5, 0, 0), -ENOSPC);
	/* another claim of a key discovery holds is no new room */
	k = ep(1, 1);
	assert_int_equal(acq(t, k, DISC, 5, 5, 5), 0);
	for (i = 0; i < TLS_MEMBERS_MAX_ENDPOINTS - TLS_MEMBERS_MAX_DISC_ENDPOINTS; i++) {
		k = ep((uint16_t)(1 + i / 200), (uint8_t)(201 + i % 50));
		k.ep.addr[2] = (uint8_t)(i % 200 / 50 + 1);
		assert_int_equal(acq(t, k, CFG, 7, 0, 7), 0);
	}
	k = ep(60001, 0);
	assert_int_equal(acq(t, k, CFG, 7, 0, 0), -ENOSPC);
	assert_int_equal(tls_members_count(t, TLS_MEMBER_ENDPOINT), TLS_MEMBERS_MAX_ENDPOINTS);
	for (i = 1; i <= TLS_MEMBERS_MAX_PIDS; i++) {
		k = tls_member_pid(i);
		assert_int_equal(acq(t, k, DISC, 5, 0, 5), 0);
	}
	k = tls_member_pid(i);
	assert_int_equal(acq(t, k, DISC, 5, 0, 0), -ENOSPC);
	tls_members_table_free(t);
}

/* The takeover's diff: what the maps had that no holder claims. */
static void test_stale(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key keys[6] = { ep(1, 0), ep(2, 0),		tls_member_pid(10),
					  ep(3, 0), tls_member_pid(11), ep(4, 0) };
	struct tls_member_key e1 = ep(1, 0);

	(void)state;
	assert_int_equal(tls_members_stale(t, keys, 0), 0);
	acq(t, ep(2, 0), CFG, 1, 0, 1);
	acq(t, tls_member_pid(11), DISC, 1, 0, 1);
	acq(t, ep(4, 0), DISC, 1, 0, 1);
	acq(t, tls_member_pid(12), DISC, 1, 0, 1); /* a new PS: not the maps' */
	assert_int_equal(tls_members_stale(t, keys, 6), 3);
	assert_memory_equal(&keys[0], &e1, sizeof(e1));
	assert_int_equal(keys[1].pid, 10);
	assert_int_equal(ntohs(keys[2].ep.port), 3);
	tls_members_table_free(t);
}

/*
 * Random claims and releases over a few keys against a model kept by hand:
 * every answer, the job in force and what a map that follows the changes
 * holds agree; at the end every release leaves the table empty.
 */
#define NKEYS 40
#define NOPS  40000
/* The file's claim on a port on every address shadows discovered exact
 * endpoints of other jobs on that port, whichever came first; its release
 * brings them back. Other ports, protocols and families are not touched. */
static void test_file_port_shadows_exact(void **state)
{
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key any = ep(9000, 0), a1 = ep(9000, 1), a2 = ep(9000, 2);
	struct tls_member_key other = ep(9001, 1), udp = a1, v6 = a1, found[4];

	(void)state;
	udp.ep.proto = IPPROTO_UDP;
	v6.ep.family = AF_INET6;
	assert_int_equal(acq(t, a1, DISC, 5, 0, 5), 0);
	assert_int_equal(acq(t, other, DISC, 5, 0, 5), 0);
	assert_int_equal(acq(t, udp, DISC, 5, 0, 5), 0);
	assert_int_equal(acq(t, v6, DISC, 5, 0, 5), 0);
	/* the file takes port 9000 for job 1: 198.18.0.1... (a1) is shadowed */
	assert_int_equal(acq(t, any, CFG, 1, 0, 1), 0);
	assert_int_equal(tls_members_job(t, &a1), 0);
	assert_int_equal(tls_members_exact_on(t, &any, found, 4), 1);
	assert_memory_equal(&found[0], &a1, sizeof(a1));
	assert_int_equal(tls_members_job(t, &other), 5);
	assert_int_equal(tls_members_job(t, &udp), 5);
	assert_int_equal(tls_members_job(t, &v6), 5);
	/* a PS claiming another address on it now: recorded, shadowed */
	assert_int_equal(acq(t, a2, DISC, 5, 0, 0), TLS_MEMBER_SHADOWED);
	assert_int_equal(tls_members_exact_on(t, &any, found, 4), 2);
	/* its own job's port: no shadow */
	assert_int_equal(acq(t, any, CFG, 5, 1, 5), 0);
	assert_int_equal(tls_members_job(t, &a1), 5);
	assert_int_equal(acq(t, any, CFG, 1, 5, 1), 0);
	/* released by the exact key's holder while shadowed: nothing changes */
	assert_int_equal(rel(t, a2, DISC, 5, 0, 0), 0);
	/* the file lets the port go: a1 is job 5's again */
	assert_int_equal(rel(t, any, CFG, 1, 1, 0), 0);
	assert_int_equal(tls_members_job(t, &a1), 5);
	assert_int_equal(tls_members_exact_on(t, &any, found, 4), 1);
	/* not an any-address key: no list */
	assert_int_equal(tls_members_exact_on(t, &a1, found, 4), 0);
	tls_members_table_free(t);
}

static void test_random(void **state)
{
	struct model {
		__u32 cfg, disc, refs, map;
	} m[NKEYS];
	struct tls_members_table *t = tls_members_table_new();
	struct tls_member_key keys[NKEYS];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned int i, op;

	(void)state;
	memset(m, 0, sizeof(m));
	for (i = 0; i < NKEYS; i++)
		keys[i] = i % 4 ? ep((uint16_t)(i * 7919 % 65535 + 1), (uint8_t)i) :
				  tls_member_pid(i * 1000003u);
	for (op = 0; op < NOPS; op++) {
		struct tls_member_change ch;
		struct model *k;
		__u32 job, want;
		bool cfg;
		int ret;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		i = (unsigned int)(x % NKEYS);
		k = &m[i];
		cfg = (x >> 8) % 3 == 0;
		job = (__u32)((x >> 16) % 3 + 1);
		if ((x >> 24) % 2) {
			ret = tls_members_acquire(t, &keys[i], cfg ? CFG : DISC, job, &ch, NULL);
			if (!cfg && k->refs && k->disc != job) {
				assert_int_equal(ret, -EBUSY);
				continue;
			}
			if (cfg) {
				k->cfg = job;
			} else {
				k->disc = job;
				k->refs++;
			}
			assert_int_equal(ret,
					 !cfg && k->cfg && k->cfg != job ? TLS_MEMBER_SHADOWED : 0);
		} else {
			ret = tls_members_release(t, &keys[i], cfg ? CFG : DISC, job, &ch);
			if (cfg ? k->cfg != job : !k->refs || k->disc != job) {
				assert_int_equal(ret, -ENOENT);
				continue;
			}
			assert_int_equal(ret, 0);
			if (cfg)
				k->cfg = 0;
			else if (!--k->refs)
				k->disc = 0;
		}
		want = k->cfg ? k->cfg : k->refs ? k->disc : 0;
		assert_int_equal(ch.before, k->map);
		assert_int_equal(ch.after, want);
		k->map = ch.after;
		assert_int_equal(tls_members_job(t, &keys[i]), want);
		/* every key still found after the shifts of a delete */
		if (op % 997 == 0)
			for (i = 0; i < NKEYS; i++)
				assert_int_equal(tls_members_job(t, &keys[i]), m[i].map);
	}
	for (i = 0; i < NKEYS; i++) {
		struct tls_member_change ch;

		if (m[i].cfg)
			assert_int_equal(tls_members_release(t, &keys[i], CFG, m[i].cfg, &ch), 0);
		while (m[i].refs--)
			assert_int_equal(tls_members_release(t, &keys[i], DISC, m[i].disc, &ch), 0);
	}
	assert_int_equal(tls_members_count(t, TLS_MEMBER_ENDPOINT), 0);
	assert_int_equal(tls_members_count(t, TLS_MEMBER_PID), 0);
	tls_members_table_free(t);
}

int run_members_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refcounts),
		cmocka_unit_test(test_config_wins),
		cmocka_unit_test(test_config_drops_shared),
		cmocka_unit_test(test_discovery_first_wins),
		cmocka_unit_test(test_config_moves_port),
		cmocka_unit_test(test_restore),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_file_port_shadows_exact),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests_name("members", tests, NULL, NULL);
}

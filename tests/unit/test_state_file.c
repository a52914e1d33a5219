// SPDX-License-Identifier: GPL-2.0-only
/*
 * The daemon's state file (tcd/state_file.c): encoded and decoded back
 * the same (the root qdisc's request byte for byte), its size for 64 jobs;
 * every malformed input refused with the field and the fault named (a
 * truncation at every byte, too); the file written atomically, 0600, and
 * read only as a plain file of our own within the bound.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "state_file.h"
#include "unit.h"

/* A root qdisc request as tlsd saves it: nlmsghdr (length 36, type
 * RTM_NEWQDISC) and tcmsg (handle 7:, parent TC_H_ROOT). */
#define REQ                                                                                        \
	"24000000240005040000000000000000"                                                         \
	"0000000000000000"                                                                         \
	"00000700ffffffff00000000"
#define INST  "eth0@4026531840"
#define HEAD  "{\"format\":\"tlsd-state\",\"version\":1,\"instance\":\"" INST "\","
#define VALID HEAD "\"saved_qdisc\":\"" REQ "\",\"jobs\":[{\"id\":1,\"name\":\"a\"}]}"

static struct tls_state_file *new_state(void)
{
	struct tls_state_file *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	return s;
}

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;

	for (size_t i = 0; i < n; i++) {
		unsigned int b;

		sscanf(h + 2 * i, "%2x", &b);
		out[i] = (uint8_t)b;
	}
	return n;
}

static void test_round_trip(void **state)
{
	struct tls_state_file *s = new_state(), *t = new_state();
	uint8_t req[64];
	size_t n = unhex(REQ, req), len;
	char *text, err[256];

	(void)state;
	tls_state_file_init(s, INST);
	assert_int_equal(tls_state_file_set_qdisc(s, req, n, err, sizeof(err)), 0);
	assert_int_equal(tls_state_file_add_job(s, 3, "bert"), 0);
	assert_int_equal(tls_state_file_add_job(s, 1023, "job \"quoted\" \\ / \xc3\xa9"), 0);
	assert_int_equal(tls_state_file_add_job(s, 3, "other"), -EEXIST);
	assert_int_equal(tls_state_file_add_job(s, 4, "bert"), -EEXIST);
	assert_int_equal(tls_state_file_add_job(s, 0, "zero"), -EINVAL);
	assert_int_equal(tls_state_file_add_job(s, 1024, "big"), -EINVAL);
	/* a name the decoder would refuse stays off the record, which stays
	 * readable: Latin-1, an overlong '/', a surrogate, a cut sequence */
	assert_int_equal(tls_state_file_add_job(s, 5,
						"\xe9"
						"t\xe9"),
			 -EILSEQ);
	assert_int_equal(tls_state_file_add_job(s, 6,
						"a\xc0\xaf"
						"b"),
			 -EILSEQ);
	assert_int_equal(tls_state_file_add_job(s, 7, "\xed\xa0\x80"), -EILSEQ);
	assert_int_equal(tls_state_file_add_job(s, 8, "x\xe2\x82"), -EILSEQ);
	assert_int_equal(tls_state_file_encode(s, &text, &len), 0);
	assert_int_equal(len, strlen(text));
	assert_int_equal(tls_state_file_decode(text, len, INST, t, err, sizeof(err)), 0);
	assert_string_equal(t->instance, INST);
	assert_int_equal(t->qdisc_len, n);
	assert_memory_equal(t->qdisc, req, n);
	assert_int_equal(t->njobs, 2);
	assert_string_equal(tls_state_file_job_name(t, 3), "bert");
	assert_string_equal(tls_state_file_job_name(t, 1023), "job \"quoted\" \\ / \xc3\xa9");
	assert_null(tls_state_file_job_name(t, 2));
	free(text);
	/* the kernel's default: no request */
	tls_state_file_set_qdisc(s, NULL, 0, NULL, 0);
	assert_int_equal(tls_state_file_encode(s, &text, &len), 0);
	assert_non_null(strstr(text, "\"saved_qdisc\":\"\""));
	assert_int_equal(tls_state_file_decode(text, len, NULL, t, err, sizeof(err)), 0);
	assert_int_equal(t->qdisc_len, 0);
	free(text);
	free(s);
	free(t);
}

/* 64 jobs and the largest request: the file's size, and the bound holds
 * every job with the longest names. */
static void test_sizes(void **state)
{
	struct tls_state_file *s = new_state(), *t = new_state();
	uint8_t req[64];
	size_t n = unhex(REQ, req), len;
	char name[TLS_JOB_NAME_LEN], *text, err[256];

	(void)state;
	tls_state_file_init(s, INST);
	tls_state_file_set_qdisc(s, req, n, NULL, 0);
	for (uint32_t id = 1; id <= 64; id++) {
		snprintf(name, sizeof(name), "job-%u", id);
		assert_int_equal(tls_state_file_add_job(s, id, name), 0);
	}
	assert_int_equal(tls_state_file_encode(s, &text, &len), 0);
	print_message("state file of 64 jobs (job-1..job-64) and a 36-byte request: %zu bytes\n",
		      len);
	assert_true(len < 4096);
	free(text);
	/* every id, names of 63 bytes, a request of the largest size */
	tls_state_file_init(s, INST);
	memset(s->qdisc, 0, sizeof(s->qdisc));
	memcpy(s->qdisc, req, n);
	s->qdisc[0] = TLS_SAVED_QDISC_MAX & 0xff;
	s->qdisc[1] = TLS_SAVED_QDISC_MAX >> 8;
	assert_int_equal(
		tls_state_file_set_qdisc(s, s->qdisc, TLS_SAVED_QDISC_MAX, err, sizeof(err)), 0);
	for (uint32_t id = 1; id < TLS_MAX_JOBS; id++) {
		snprintf(name, sizeof(name), "%062u-", id);
		assert_int_equal(tls_state_file_add_job(s, id, name), 0);
	}
	assert_int_equal(tls_state_file_add_job(s, 1, "one more"), -EEXIST);
	assert_int_equal(tls_state_file_encode(s, &text, &len), 0);
	print_message("the largest state file: %zu bytes (bound %d)\n", len, TLS_STATE_FILE_MAX);
	assert_true(len <= TLS_STATE_FILE_MAX);
	assert_int_equal(tls_state_file_decode(text, len, INST, t, err, sizeof(err)), 0);
	assert_int_equal(t->njobs, TLS_MAX_JOBS - 1);
	assert_int_equal(t->qdisc_len, TLS_SAVED_QDISC_MAX);
	free(text);
	free(s);
	free(t);
}

static const struct bad {
	const char *what, *text, *err;
	int ret;
} bad[] = {
	{ "empty", "", "empty", -EINVAL },
	{ "not JSON", "state", "not JSON: ", -EINVAL },
	{ "truncated", HEAD "\"saved_qdisc\":\"24", "not JSON: truncated at byte", -EINVAL },
	{ "two objects", VALID VALID, "not JSON: ", -EINVAL },
	{ "not an object", "[1,2]", "not a JSON object", -EINVAL },
	{ "format missing", "{\"version\":1}", "format: missing", -EINVAL },
	{ "format not a string", "{\"format\":1}", "format: not a string", -EINVAL },
	{ "format of another file", "{\"format\":\"tlsd-stats\"}",
	  "format: 'tlsd-stats', not 'tlsd-state'", -EINVAL },
	{ "version missing", "{\"format\":\"tlsd-state\"}", "version: missing", -EINVAL },
	{ "version a string", "{\"format\":\"tlsd-state\",\"version\":\"1\"}",
	  "version: not an integer", -EINVAL },
	{ "version a fraction", "{\"format\":\"tlsd-state\",\"version\":1.5}",
	  "version: not an integer", -EINVAL },
	{ "version newer", "{\"format\":\"tlsd-state\",\"version\":2,\"other\":[]}",
	  "version: 2, this tlsd reads 1", -EPROTO },
	{ "version 0", "{\"format\":\"tlsd-state\",\"version\":0}", "version: 0, this tlsd reads 1",
	  -EINVAL },
	{ "unknown field", HEAD "\"saved_qdisc\":\"\",\"jobs\":[],\"pid\":1}",
	  "unknown field 'pid'", -EINVAL },
	{ "instance missing",
	  "{\"format\":\"tlsd-state\",\"version\":1,\"saved_qdisc\":\"\",\"jobs\":[]}",
	  "instance: missing", -EINVAL },
	{ "instance another's",
	  "{\"format\":\"tlsd-state\",\"version\":1,\"instance\":\"eth1@1\",\"saved_qdisc\":\"\","
	  "\"jobs\":[]}",
	  "instance: 'eth1@1', not this instance's '" INST "'", -EINVAL },
	{ "instance empty",
	  "{\"format\":\"tlsd-state\",\"version\":1,\"instance\":\"\",\"saved_qdisc\":\"\","
	  "\"jobs\":[]}",
	  "instance: empty", -EINVAL },
	{ "instance too long",
	  "{\"format\":\"tlsd-state\",\"version\":1,\"instance\":\"0123456789012345678901234567890"
	  "1234567890123456789\",\"saved_qdisc\":\"\",\"jobs\":[]}",
	  "instance: longer than 47 bytes", -EINVAL },
	{ "saved_qdisc missing", HEAD "\"jobs\":[]}", "saved_qdisc: missing", -EINVAL },
	{ "saved_qdisc a number", HEAD "\"saved_qdisc\":0,\"jobs\":[]}",
	  "saved_qdisc: not a string", -EINVAL },
	{ "saved_qdisc odd", HEAD "\"saved_qdisc\":\"240\",\"jobs\":[]}",
	  "saved_qdisc: an odd number of hex digits (3)", -EINVAL },
	{ "saved_qdisc not hex", HEAD "\"saved_qdisc\":\"24x0\",\"jobs\":[]}",
	  "saved_qdisc: not a hex digit at offset 2", -EINVAL },
	{ "saved_qdisc short", HEAD "\"saved_qdisc\":\"2400000024000504\",\"jobs\":[]}",
	  "saved_qdisc: shorter than a netlink qdisc request", -EINVAL },
	{ "saved_qdisc length", HEAD "\"saved_qdisc\":\"" REQ "00\",\"jobs\":[]}",
	  "saved_qdisc: its netlink length is not its own", -EINVAL },
	{ "saved_qdisc type",
	  HEAD "\"saved_qdisc\":\"24000000250005040000000000000000"
	       "000000000000000000000700ffffffff00000000\",\"jobs\":[]}",
	  "saved_qdisc: not a request to add a qdisc", -EINVAL },
	{ "saved_qdisc not root",
	  HEAD "\"saved_qdisc\":\"24000000240005040000000000000000"
	       "0000000000000000000007000000010000000000\",\"jobs\":[]}",
	  "saved_qdisc: not a root qdisc", -EINVAL },
	{ "saved_qdisc a NUL", HEAD "\"saved_qdisc\":\"24\\u000000\",\"jobs\":[]}",
	  "saved_qdisc: holds a NUL character", -EINVAL },
	{ "jobs missing", HEAD "\"saved_qdisc\":\"\"}", "jobs: missing", -EINVAL },
	{ "jobs an object", HEAD "\"saved_qdisc\":\"\",\"jobs\":{}}", "jobs: not an array",
	  -EINVAL },
	{ "a job a number", HEAD "\"saved_qdisc\":\"\",\"jobs\":[1]}", "jobs[0]: not an object",
	  -EINVAL },
	{ "a job's unknown field",
	  HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":\"a\",\"band\":2}]}",
	  "jobs[0]: unknown field 'band'", -EINVAL },
	{ "id missing", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"name\":\"a\"}]}",
	  "jobs[0].id: missing", -EINVAL },
	{ "id a string", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":\"1\",\"name\":\"a\"}]}",
	  "jobs[0].id: not an integer", -EINVAL },
	{ "id a fraction", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1.0,\"name\":\"a\"}]}",
	  "jobs[0].id: not an integer", -EINVAL },
	{ "id 0", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":0,\"name\":\"a\"}]}",
	  "jobs[0].id: out of range 1..1023", -EINVAL },
	{ "id 1024", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1024,\"name\":\"a\"}]}",
	  "jobs[0].id: out of range 1..1023", -EINVAL },
	{ "id negative", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":-1,\"name\":\"a\"}]}",
	  "jobs[0].id: out of range 1..1023", -EINVAL },
	{ "id huge",
	  HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":99999999999999999999999,\"name\":\"a\"}]}",
	  "jobs[0].id: out of range 1..1023", -EINVAL },
	{ "name missing", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1}]}",
	  "jobs[0].name: missing", -EINVAL },
	{ "name a number", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":7}]}",
	  "jobs[0].name: not a string", -EINVAL },
	{ "name empty", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":\"\"}]}",
	  "jobs[0].name: empty", -EINVAL },
	{ "name too long",
	  HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":\"0123456789012345678901234567"
	       "8901234567890123456789012345678901234\"}]}",
	  "jobs[0].name: longer than 63 bytes", -EINVAL },
	{ "name with a NUL",
	  HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":\"a\\u0000b\"}]}",
	  "jobs[0].name: holds a NUL character", -EINVAL },
	{ "id twice",
	  HEAD
	  "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":\"a\"},{\"id\":1,\"name\":\"b\"}]}",
	  "jobs[1].id: 1, also jobs[0]'s", -EINVAL },
	{ "name twice",
	  HEAD
	  "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":\"a\"},{\"id\":2,\"name\":\"a\"}]}",
	  "jobs[1].name: 'a', also jobs[0]'s", -EINVAL },
	{ "too deep", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":[[[]]]}]}",
	  "not JSON: ", -EINVAL },
	{ "not UTF-8", HEAD "\"saved_qdisc\":\"\",\"jobs\":[{\"id\":1,\"name\":\"\xff\"}]}",
	  "not JSON: ", -EINVAL },
};

static void test_malformed(void **state)
{
	struct tls_state_file *s = new_state();
	char err[256];

	(void)state;
	/* the valid text the cases are cut from decodes */
	assert_int_equal(tls_state_file_decode(VALID, strlen(VALID), INST, s, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = tls_state_file_decode(bad[i].text, strlen(bad[i].text), INST, s, err,
						sizeof(err));

		if (ret != bad[i].ret || !strstr(err, bad[i].err))
			fail_msg("%s: %d '%s', expected %d '%s'", bad[i].what, ret, err, bad[i].ret,
				 bad[i].err);
		/* nothing of a refused file is kept */
		assert_int_equal(s->njobs, 0);
		assert_int_equal(s->qdisc_len, 0);
	}
	free(s);
}

/* Every prefix of a valid file is refused (a write cut short), and so is
 * the text with a NUL byte or too many bytes. */
static void test_cut(void **state)
{
	struct tls_state_file *s = new_state();
	const size_t n = strlen(VALID);
	char err[256], *big;

	(void)state;
	for (size_t len = 1; len < n; len++) {
		int ret = tls_state_file_decode(VALID, len, INST, s, err, sizeof(err));

		if (ret != -EINVAL || !strstr(err, "not JSON: "))
			fail_msg("cut at %zu: %d '%s'", len, ret, err);
	}
	assert_int_equal(tls_state_file_decode(VALID "\n \n", n + 3, INST, s, err, sizeof(err)), 0);
	assert_int_equal(tls_state_file_decode(VALID "\0", n + 1, INST, s, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "holds a NUL byte (not text)");
	big = malloc(TLS_STATE_FILE_MAX + 1);
	assert_non_null(big);
	memset(big, ' ', TLS_STATE_FILE_MAX + 1);
	assert_int_equal(
		tls_state_file_decode(big, TLS_STATE_FILE_MAX + 1, INST, s, err, sizeof(err)),
		-EINVAL);
	assert_string_equal(err, "larger than 262144 bytes");
	free(big);
	/* a request tlsd would not send is not kept either */
	assert_int_equal(tls_state_file_set_qdisc(s, "short", 5, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "saved_qdisc: shorter than a netlink qdisc request");
	free(s);
}

static void test_files(void **state)
{
	struct tls_state_file *s = new_state(), *t = new_state();
	char dir[] = "/tmp/tls-state-XXXXXX", path[128], tmp[160], other[160], err[512];
	uint8_t req[64];
	size_t n = unhex(REQ, req);
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/" INST ".state", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(other, sizeof(other), "%s/target", dir);
	assert_int_equal(tls_state_file_read(path, INST, t, err, sizeof(err)), -ENOENT);
	tls_state_file_init(s, INST);
	tls_state_file_set_qdisc(s, req, n, NULL, 0);
	tls_state_file_add_job(s, 7, "x");
	/* a link left at the temporary name is replaced, never followed */
	assert_int_equal(symlink(other, tmp), 0);
	umask(022);
	assert_int_equal(tls_state_file_write(path, s, err, sizeof(err)), 0);
	assert_int_equal(access(other, F_OK), -1);
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(tls_state_file_read(path, INST, t, err, sizeof(err)), 0);
	assert_string_equal(tls_state_file_job_name(t, 7), "x");
	assert_memory_equal(t->qdisc, req, n);
	/* another instance's file */
	assert_int_equal(tls_state_file_read(path, "eth9@1", t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ".state: instance: '" INST "', not this instance's 'eth9@1'"));
	/* a second name: not read (a link made to a file of someone's) */
	assert_int_equal(link(path, other), 0);
	assert_int_equal(tls_state_file_read(path, INST, t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a plain file of uid"));
	unlink(other);
	/* a symbolic link, a FIFO: refused at once */
	assert_int_equal(rename(path, other), 0);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(tls_state_file_read(path, INST, t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ": a symbolic link"));
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(tls_state_file_read(path, INST, t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a plain file of uid"));
	unlink(path);
	/* larger than the bound */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, TLS_STATE_FILE_MAX + 1), 0);
	close(fd);
	assert_int_equal(tls_state_file_read(path, INST, t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ": 262145 bytes, more than 262144"));
	/* cut short: named with its path */
	assert_int_equal(truncate(path, 0), 0);
	fd = open(path, O_WRONLY);
	assert_int_equal(write(fd, VALID, 30), 30);
	close(fd);
	assert_int_equal(tls_state_file_read(path, INST, t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ".state: not JSON: truncated at byte 30"));
	unlink(path);
	unlink(other);
	rmdir(dir);
	free(s);
	free(t);
}

int run_state_file_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip), cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_malformed),  cmocka_unit_test(test_cut),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests_name("state_file", tests, NULL, NULL);
}

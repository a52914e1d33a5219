// SPDX-License-Identifier: GPL-2.0-only
/*
 * The logger: what other users put in a process name or a configuration
 * value (ESC, CR, other control characters) never reaches the log raw, and
 * logging does not change errno. Lines carry journald's priority prefix
 * exactly when stderr is the stream JOURNAL_STREAM names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "log.h"
#include "unit.h"

static void test_escape(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(tls_log_escape("plain text\n", out, sizeof(out)), 11);
	assert_string_equal(out, "plain text\n");
	/* ESC, CR, a newline inside, DEL: escaped; tab and the last newline kept */
	tls_log_escape("PS pid 7 (\x1b[2Jx\r\nfake line\x7f)\tok\n", out, sizeof(out));
	assert_string_equal(out, "PS pid 7 (\\x1b[2Jx\\x0d\\x0afake line\\x7f)\tok\n");
	/* bytes of UTF-8 pass */
	tls_log_escape("caf\xc3\xa9\n", out, sizeof(out));
	assert_string_equal(out, "caf\xc3\xa9\n");
	/* the buffer bounds the output, never an escape cut in half */
	assert_int_equal(tls_log_escape("abc\x01", out, 6), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(tls_log_escape("abcdef", out, 4), 3);
	assert_string_equal(out, "abc");
	assert_int_equal(tls_log_escape("x", out, 1), 0);
	assert_string_equal(out, "");
}

static void test_errno_kept(void **state)
{
	enum tls_log_level old = tls_log_get_level();

	(void)state;
	tls_log_set_level(TLS_LOG_WARN);
	errno = ENOSPC;
	pr_warn("test_log: a warning on stderr (expected)\n");
	assert_int_equal(errno, ENOSPC);
	errno = EPERM;
	pr_debug("not shown at this level\n");
	assert_int_equal(errno, EPERM);
	tls_log_set_level(old);
}

static void test_journal_match(void **state)
{
	(void)state;
	assert_true(tls_log_journal_match("2049:131077", 2049, 131077));
	assert_false(tls_log_journal_match(NULL, 2049, 131077));
	assert_false(tls_log_journal_match("", 2049, 131077));
	/* another stream (tlsd's stderr sent elsewhere by its caller) */
	assert_false(tls_log_journal_match("2049:131078", 2049, 131077));
	assert_false(tls_log_journal_match("2048:131077", 2049, 131077));
	/* anything that is not DEV:INO in decimal */
	assert_false(tls_log_journal_match("2049", 2049, 131077));
	assert_false(tls_log_journal_match("2049:", 2049, 131077));
	assert_false(tls_log_journal_match(":131077", 2049, 131077));
	assert_false(tls_log_journal_match("2049:131077x", 2049, 131077));
	assert_false(tls_log_journal_match(" 2049:131077", 2049, 131077));
	assert_false(tls_log_journal_match("2049: 131077", 2049, 131077));
	assert_false(tls_log_journal_match("+2049:131077", 2049, 131077));
	assert_false(tls_log_journal_match("2049:-131077", 2049, 131077));
	assert_false(tls_log_journal_match("0x801:131077", 0x801, 131077));
	assert_false(tls_log_journal_match("99999999999999999999999:1", ~0ULL, 1));
}

/* What tls_log wrote to stderr, sent to a file, with JOURNAL_STREAM set to
 * that file (match) or to something else, or unset (NULL). */
static void logged(const char *journal_stream, bool same, char *out, size_t len)
{
	char path[] = "/tmp/tls-test-log.XXXXXX", env[64];
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct stat st;
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	assert_int_equal(fstat(fd, &st), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + !same);
	if (journal_stream)
		setenv("JOURNAL_STREAM", journal_stream[0] ? journal_stream : env, 1);
	else
		unsetenv("JOURNAL_STREAM");
	fflush(stderr);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	tls_log_detect_journal();
	errno = EAGAIN;
	pr_err("e %d\n", 1);
	pr_warn("w\x1bx\n");
	pr_info("i\n");
	pr_debug("d\n");
	assert_int_equal(errno, EAGAIN);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, out, len - 1, 0);
	close(fd);
	assert_true(n >= 0);
	out[n] = '\0';
	unsetenv("JOURNAL_STREAM");
	tls_log_detect_journal();
}

static void test_journal_prefix(void **state)
{
	enum tls_log_level old = tls_log_get_level();
	char out[256];

	(void)state;
	tls_log_set_level(TLS_LOG_DEBUG);
	logged("", true, out, sizeof(out));
	assert_string_equal(out, "<3>e 1\n<4>w\\x1bx\n<6>i\n<7>d\n");
	/* JOURNAL_STREAM of another file, unset, or not a DEV:INO */
	logged("", false, out, sizeof(out));
	assert_string_equal(out, "e 1\nw\\x1bx\ni\nd\n");
	logged(NULL, true, out, sizeof(out));
	assert_string_equal(out, "e 1\nw\\x1bx\ni\nd\n");
	logged("garbage", true, out, sizeof(out));
	assert_string_equal(out, "e 1\nw\\x1bx\ni\nd\n");
	/* the level still filters */
	tls_log_set_level(TLS_LOG_WARN);
	logged("", true, out, sizeof(out));
	assert_string_equal(out, "<3>e 1\n<4>w\\x1bx\n");
	tls_log_set_level(old);
}

/* A tool's name before each line on a terminal or a file, never in the
 * journal (which keeps the identifier apart). */
static void test_ident(void **state)
{
	enum tls_log_level old = tls_log_get_level();
	char out[256];

	(void)state;
	tls_log_set_level(TLS_LOG_WARN);
	tls_log_set_ident("tool");
	logged("", false, out, sizeof(out));
	assert_string_equal(out, "tool: e 1\ntool: w\\x1bx\n");
	logged("", true, out, sizeof(out));
	assert_string_equal(out, "<3>e 1\n<4>w\\x1bx\n");
	tls_log_set_ident(NULL);
	logged("", false, out, sizeof(out));
	assert_string_equal(out, "e 1\nw\\x1bx\n");
	tls_log_set_level(old);
}

int run_log_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_errno_kept),
		cmocka_unit_test(test_journal_match),
		cmocka_unit_test(test_journal_prefix),
		cmocka_unit_test(test_ident),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The logger: what other users put in a process name or a configuration
 * value (ESC, CR, other control characters) never reaches the log raw, and
 * logging does not change errno.
 */
#include <errno.h>
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

int run_log_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_errno_kept),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <bpf/libbpf.h>

#include "log.h"

static enum tls_log_level cur_level = TLS_LOG_WARN;
static bool use_syslog;

void tls_log_to_syslog(const char *ident)
{
	openlog(ident, LOG_PID, LOG_DAEMON);
	use_syslog = true;
}

void tls_log_set_level(enum tls_log_level level)
{
	cur_level = level;
}

enum tls_log_level tls_log_get_level(void)
{
	return cur_level;
}

size_t tls_log_escape(const char *in, char *out, size_t outlen)
{
	size_t o = 0;

	for (; *in; in++) {
		unsigned char c = (unsigned char)*in;
		bool keep = c >= 0x20 ? c != 0x7f : c == '\t' || (c == '\n' && !in[1]);

		if (keep) {
			if (o + 1 >= outlen)
				break;
			out[o++] = (char)c;
		} else {
			if (o + 4 >= outlen)
				break;
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
		}
	}
	out[o] = '\0';
	return o;
}

void tls_log(enum tls_log_level level, const char *fmt, ...)
{
	char msg[TLS_LOG_MAX], safe[TLS_LOG_MAX];
	int n, saved = errno; /* callers log, then return -errno */
	va_list ap;

	if (level > cur_level)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0) {
		errno = saved;
		return;
	}
	if ((size_t)n >= sizeof(msg)) /* cut: say so, keep the line's end */
		memcpy(msg + sizeof(msg) - 5, "...\n", 5);
	tls_log_escape(msg, safe, sizeof(safe));
	if (use_syslog)
		syslog(level == TLS_LOG_WARN ? LOG_WARNING :
		       level == TLS_LOG_INFO ? LOG_INFO :
					       LOG_DEBUG,
		       "%s", safe);
	else
		fputs(safe, stderr);
	errno = saved;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings carry the verifier log and kernel error text:
	 * always shown. Its info at -v, its debug at -vv. */
	/* bpf_tc_hook_create() on a clsact that exists already (a takeover,
	 * another tool's) is expected; libbpf still prints the kernel's text. */
	if (level == LIBBPF_WARN && strstr(fmt, "Kernel error message") &&
	    cur_level < TLS_LOG_DEBUG) {
		va_list aq;
		char msg[256];

		va_copy(aq, ap);
		vsnprintf(msg, sizeof(msg), fmt, aq);
		va_end(aq);
		if (strstr(msg, "Exclusivity flag on"))
			return 0;
	}
	if ((level == LIBBPF_DEBUG && cur_level < TLS_LOG_DEBUG) ||
	    (level == LIBBPF_INFO && cur_level < TLS_LOG_INFO))
		return 0;
	if (use_syslog) {
		vsyslog(level == LIBBPF_WARN ? LOG_WARNING : LOG_DEBUG, fmt, ap);
		return 0;
	}
	return vfprintf(stderr, fmt, ap);
}

void tls_log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}

int tls_errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

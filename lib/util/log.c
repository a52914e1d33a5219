// SPDX-License-Identifier: GPL-2.0-only
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "log.h"

static enum tls_log_level cur_level = TLS_LOG_WARN;
static bool use_syslog;
static const char *ident; /* a tool's name before each line on stderr */
static int journal = -1;  /* stderr is the journal's stream; -1: not decided */

void tls_log_to_syslog(const char *ident)
{
	openlog(ident, LOG_PID, LOG_DAEMON);
	use_syslog = true;
}

void tls_log_set_ident(const char *name)
{
	ident = name;
}

void tls_log_set_level(enum tls_log_level level)
{
	cur_level = level;
}

enum tls_log_level tls_log_get_level(void)
{
	return cur_level;
}

static bool decimal(const char *s, char **end, unsigned long long *v)
{
	/* strtoull alone would take blanks, a sign and an empty number */
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno == 0;
}

bool tls_log_journal_match(const char *env, unsigned long long dev, unsigned long long ino)
{
	unsigned long long d, i;
	char *end;

	if (!env || !decimal(env, &end, &d) || *end != ':' || !decimal(end + 1, &end, &i) || *end)
		return false;
	return d == dev && i == ino;
}

void tls_log_detect_journal(void)
{
	int saved = errno;
	struct stat st;

	/* A child that inherited JOURNAL_STREAM but whose stderr was sent
	 * elsewhere (a pipe, a file) does not match: plain text there. */
	journal = !fstat(STDERR_FILENO, &st) &&
		  tls_log_journal_match(getenv("JOURNAL_STREAM"), st.st_dev, st.st_ino);
	errno = saved;
}

/* text on stderr, in the journal with prefix (SD_ERR, ...) before each of
 * its lines: journald reads the level line by line. One write per message,
 * so that the lines of two threads do not mix. */
static void put_stderr(const char *prefix, const char *text)
{
	size_t len = strlen(text), lines = 1, o = 0, plen = strlen(prefix);
	const char *p;
	char *buf;

	if (journal < 0)
		tls_log_detect_journal();
	if (!journal) {
		if (ident)
			fprintf(stderr, "%s: %s", ident, text);
		else
			fputs(text, stderr);
		return;
	}
	for (p = text; (p = strchr(p, '\n')) && p[1]; p++)
		lines++;
	buf = malloc(len + lines * plen + 1);
	if (!buf) { /* the text without its level beats no text */
		fputs(text, stderr);
		return;
	}
	for (p = text; *p;) {
		size_t n = strcspn(p, "\n");

		n += p[n] == '\n';
		memcpy(buf + o, prefix, plen);
		memcpy(buf + o + plen, p, n);
		o += plen + n;
		p += n;
	}
	buf[o] = '\0';
	fputs(buf, stderr);
	free(buf);
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
		syslog(level == TLS_LOG_ERR  ? LOG_ERR :
		       level == TLS_LOG_WARN ? LOG_WARNING :
		       level == TLS_LOG_INFO ? LOG_INFO :
					       LOG_DEBUG,
		       "%s", safe);
	else
		put_stderr(level == TLS_LOG_ERR	 ? SD_ERR :
			   level == TLS_LOG_WARN ? SD_WARNING :
			   level == TLS_LOG_INFO ? SD_INFO :
						   SD_DEBUG,
			   safe);
	errno = saved;
}

int tls_log_vraw(enum tls_log_level level, const char *fmt, va_list ap)
{
	int n, saved = errno;

	/* warnings and errors always, as tls_log's own */
	if (level > cur_level && level > TLS_LOG_WARN)
		return 0;
	if (use_syslog) {
		vsyslog(level <= TLS_LOG_WARN ? LOG_WARNING : LOG_DEBUG, fmt, ap);
		errno = saved;
		return 0;
	}
	if (journal < 0)
		tls_log_detect_journal();
	if (journal) {
		/* a verifier log is many lines in one message: each gets
		 * the level */
		char *text;

		n = vasprintf(&text, fmt, ap);
		if (n >= 0) {
			put_stderr(level <= TLS_LOG_WARN ? SD_WARNING :
				   level == TLS_LOG_INFO ? SD_INFO :
							   SD_DEBUG,
				   text);
			free(text);
		}
	} else {
		n = vfprintf(stderr, fmt, ap);
	}
	errno = saved;
	return n;
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

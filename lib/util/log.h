/* SPDX-License-Identifier: GPL-2.0-only */
/* Leveled logging to stderr (or syslog, or the journal with priority
 * prefixes), shared by tlsd and the tools. */
#ifndef TLS_LOG_H
#define TLS_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum tls_log_level {
	TLS_LOG_ERR = -1, /* always shown, as warnings are; journald's "err" */
	TLS_LOG_WARN = 0,
	TLS_LOG_INFO,
	TLS_LOG_DEBUG,
};

void tls_log_set_level(enum tls_log_level level);
/*
 * The one prefix convention: a tool run by hand (tlsctl, tls-classifier,
 * the emulators) starts each message on stderr with its name and ": ", as
 * GNU tools do; tlsd, a daemon, writes bare lines and leaves its name to
 * the journal or syslog (the unit's SyslogIdentifier, openlog's ident),
 * which store it apart. Set by the tools; in the journal (priority
 * prefixes) or syslog no name is written.
 */
void tls_log_set_ident(const char *name);
enum tls_log_level tls_log_get_level(void);
/* From now on to syslog (daemon facility) instead of stderr. */
void tls_log_to_syslog(const char *ident);
/* Whether fd 2 is the journal's stream: JOURNAL_STREAM (systemd.exec(5),
 * "DEV:INO" in decimal) names stderr's device and inode. Then every line
 * tls_log() writes starts with sd-daemon(3)'s priority prefix ("<3>" error,
 * "<4>" warning, "<6>" info, "<7>" debug), which journald turns into the
 * entry's level; on a terminal, a file or a pipe the text stays plain.
 * Decided at the first message; this decides again (after a dup2). */
void tls_log_detect_journal(void);
/* The decision itself: env is JOURNAL_STREAM's value (NULL: unset), dev
 * and ino stderr's. A value that does not parse is no match. */
bool tls_log_journal_match(const char *env, unsigned long long dev, unsigned long long ino);
/* One message. Control characters other than tab and a final newline (a
 * process name or a configuration value with ESC or CR in it: input from
 * other users) are written as \xNN, so that nobody can forge log lines or
 * drive the terminal that reads them. Longer than TLS_LOG_MAX: cut, "...". */
void tls_log(enum tls_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define TLS_LOG_MAX 4096
/* Another library's message as it wrote it (libbpf's: a verifier log is
 * many lines), not escaped, to the same place at the same level: warnings
 * always, info and debug as the current level allows. errno is kept.
 * Returns what vfprintf would. */
int tls_log_vraw(enum tls_log_level level, const char *fmt, va_list ap);
/* in as tls_log() writes it, into out (outlen >= 1); returns strlen(out). */
size_t tls_log_escape(const char *in, char *out, size_t outlen);

/* An error message for the caller's buffer (err may be NULL); returns
 * -EINVAL, so that parsers can `return tls_errf(err, len, ...)`. */
int tls_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define pr_err(...)   tls_log(TLS_LOG_ERR, __VA_ARGS__)
#define pr_warn(...)  tls_log(TLS_LOG_WARN, __VA_ARGS__)
#define pr_info(...)  tls_log(TLS_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) tls_log(TLS_LOG_DEBUG, __VA_ARGS__)

#endif /* TLS_LOG_H */

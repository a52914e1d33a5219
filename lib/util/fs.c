// SPDX-License-Identifier: GPL-2.0-only
/* See fs.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"

int tls_mkdir_p(const char *path, mode_t mode, char *failed)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);
	char *p;

	if (len == 0 || len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		goto fail_path;
	}
	memcpy(buf, path, len + 1);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) && errno != EEXIST)
			goto fail;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		goto fail;
	return 0;
fail:
	path = buf;
fail_path:
	if (failed) {
		int e = errno;

		snprintf(failed, PATH_MAX, "%s", path);
		errno = e;
	}
	return -errno;
}

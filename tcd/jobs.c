// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "jobs.h"

void tls_jobs_init(struct tls_jobs *t)
{
	t->n = 0;
	t->next_id = 1;
}

int tls_jobs_find(const struct tls_jobs *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->job[i].name, name))
			return (int)i;
	return -1;
}

int tls_jobs_find_id(const struct tls_jobs *t, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->job[i].id == id)
			return (int)i;
	return -1;
}

static bool id_used(const struct tls_jobs *t, uint32_t id)
{
	return tls_jobs_find_id(t, id) >= 0;
}

static int append(struct tls_jobs *t, const char *name, const uint16_t *ports, unsigned int nports,
		  uint32_t id)
{
	struct tls_job_entry *j;

	if (!name || !*name || strlen(name) >= TLS_JOB_NAME_MAX || nports > TLS_MAX_JOB_PORTS ||
	    id == 0 || id >= TLS_MAX_JOBS)
		return -EINVAL;
	if (tls_jobs_find(t, name) >= 0)
		return -EEXIST;
	if (t->n >= TLS_MAX_JOBS - 1)
		return -ENOSPC;
	if (id_used(t, id))
		return -EBUSY;
	j = &t->job[t->n++];
	t->changes++;
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->band = TLS_BAND_NONE;
	snprintf(j->name, sizeof(j->name), "%s", name);
	j->nports = nports;
	if (nports)
		memcpy(j->ports, ports, nports * sizeof(ports[0]));
	return 0;
}

int tls_jobs_add_id(struct tls_jobs *t, const char *name, const uint16_t *ports,
		    unsigned int nports, uint32_t id)
{
	return append(t, name, ports, nports, id);
}

int tls_jobs_add(struct tls_jobs *t, const char *name, const uint16_t *ports, unsigned int nports,
		 uint32_t *id)
{
	int err;

	if (t->n >= TLS_MAX_JOBS - 1)
		return -ENOSPC;
	while (id_used(t, t->next_id))
		t->next_id = t->next_id % (TLS_MAX_JOBS - 1) + 1;
	err = append(t, name, ports, nports, t->next_id);
	if (err)
		return err;
	*id = t->next_id;
	t->next_id = t->next_id % (TLS_MAX_JOBS - 1) + 1;
	return 0;
}

int tls_jobs_remove(struct tls_jobs *t, const char *name, uint32_t *id)
{
	int i = tls_jobs_find(t, name);

	if (i < 0)
		return -ENOENT;
	*id = t->job[i].id;
	memmove(&t->job[i], &t->job[i + 1], (t->n - i - 1) * sizeof(t->job[0]));
	t->n--;
	t->changes++;
	return 0;
}

void tls_jobs_note_bands(struct tls_jobs *t, const unsigned int *bands)
{
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		struct tls_job_entry *j = &t->job[i];

		if (j->band != TLS_BAND_NONE && j->band != bands[i])
			j->band_changes++;
		j->band = bands[i];
	}
}

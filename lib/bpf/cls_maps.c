// SPDX-License-Identifier: GPL-2.0-only
/* Membership, bands and counters: operations on the classifier's maps. */
#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "classifier.h"
#include "clock.h"
#include "kernel_features.h"
#include "log.h"
#include "pidfd.h"
#include "sk_flows.h"
#include "tls_burst.h"
#include "tls_rr.h"

/* Sizes are checked when pins are opened: a lookup writes the map's value
 * size into the caller's buffer, so a map of another version's layout could
 * overrun it. */
static const struct {
	const char *name;
	size_t off;
	__u32 key_size, value_size;
} pinned_maps[] = {
	{ "tls_sk_jobs", offsetof(struct tls_maps, sk_jobs), sizeof(int),
	  sizeof(struct tls_flow_rec) },
	{ "tls_pids", offsetof(struct tls_maps, pids), sizeof(__u32), sizeof(__u32) },
	{ "tls_endpoints", offsetof(struct tls_maps, endpoints), sizeof(struct tls_endpoint_key),
	  sizeof(__u32) },
	{ "tls_ports", offsetof(struct tls_maps, ports), sizeof(__u32), sizeof(__u32) },
	{ "tls_gen", offsetof(struct tls_maps, gen), sizeof(__u32), sizeof(__u32) },
	{ "tls_jobs", offsetof(struct tls_maps, jobs), sizeof(__u32), sizeof(struct tls_job) },
	{ "tls_job_gens", offsetof(struct tls_maps, job_gens), sizeof(__u32), sizeof(__u32) },
	{ "tls_bands", offsetof(struct tls_maps, bands), sizeof(__u32), sizeof(struct tls_band) },
	{ "tls_job_stats", offsetof(struct tls_maps, job_stats), sizeof(__u32),
	  sizeof(struct tls_job_stats) },
	{ "tls_flow_slots", offsetof(struct tls_maps, flow_slots), sizeof(__u32),
	  sizeof(struct tls_flow_rec) },
	{ "tls_flows", offsetof(struct tls_maps, flows), sizeof(struct tls_flow_key),
	  sizeof(struct tls_flow) },
	{ "tls_state", offsetof(struct tls_maps, state), sizeof(__u32), sizeof(struct tls_state) },
	{ "tls_layout", offsetof(struct tls_maps, layout), sizeof(__u32), sizeof(__u32) },
};

/* A rotation stores each job's entry as one 8-byte word. */
_Static_assert(sizeof(struct tls_job) == sizeof(__u64), "struct tls_job must be 8 bytes");

#define MAP_FD(m, i) (*(int *)((char *)(m) + pinned_maps[i].off))
#define NPORTS	     65536

size_t tls_map_pin_count(void)
{
	return sizeof(pinned_maps) / sizeof(pinned_maps[0]);
}

const char *tls_map_pin_name(size_t i)
{
	return i < tls_map_pin_count() ? pinned_maps[i].name : NULL;
}

void tls_maps_init(struct tls_maps *m)
{
	size_t i;

	for (i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++)
		MAP_FD(m, i) = -1;
	m->sk_iter = -1;
	m->burst = -1;
	m->weight = -1;
	m->tail = -1;
	m->tail_ctx = -1;
	m->job_in = -1;
	m->flows_in = -1;
	m->in_slots = -1;
	m->in_used = -1;
	m->slots_used = -1;
	m->rr = -1;
	m->jobs_mem = NULL;
	m->rr_mem = NULL;
	m->slots_mem = NULL;
	m->slots_used_mem = NULL;
	m->in_slots_mem = NULL;
	m->in_used_mem = NULL;
}

/* An array map's memory: its values, whole pages. */
static size_t mem_len(size_t size, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (size * n + page - 1) / page * page;
}

static size_t jobs_mem_len(void)
{
	return mem_len(sizeof(struct tls_job), TLS_MAX_JOBS);
}

static size_t rr_mem_len(void)
{
	return mem_len(sizeof(struct tls_rr), 2);
}

static size_t slots_mem_len(void)
{
	return mem_len(sizeof(struct tls_flow_rec), TLS_FLOW_SLOTS);
}

static size_t in_slots_mem_len(void)
{
	return mem_len(sizeof(struct tls_flow_in_rec), TLS_IN_SLOTS);
}

static size_t in_used_mem_len(void)
{
	return mem_len(sizeof(__u64), TLS_IN_USED_ENTRIES);
}

static size_t slots_used_mem_len(void)
{
	return mem_len(sizeof(__u64), TLS_FLOW_USED_ENTRIES);
}

/* fd's memory, read-only; NULL (read by syscalls then) if it cannot be
 * mapped, or if the ingress maps are not there (maps from pins). */
static const volatile void *map_ro(int fd, size_t len, const char *what)
{
	void *p;

	if (fd < 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		pr_debug("cannot map %s (%s): reading them by syscall\n", what, strerror(errno));
		return NULL;
	}
	return p;
}

static void unmap_ro(const volatile void *p, size_t len)
{
	if (p)
		munmap((void *)p, len);
}

int tls_maps_map_jobs(struct tls_maps *m)
{
	void *p;

	/* Read-only: a scan of the slots' memory costs a tenth of reading
	 * them by batch syscalls (measured with bench-ctl). */
	m->slots_mem = map_ro(m->flow_slots, slots_mem_len(), "the flow slots");
	if (m->slots_mem && m->slots_used >= 0) {
		/* read-write: tlsd marks what a previous program took */
		p = mmap(NULL, slots_used_mem_len(), PROT_READ | PROT_WRITE, MAP_SHARED,
			 m->slots_used, 0);
		if (p == MAP_FAILED)
			pr_debug("cannot map the flow slots' used sets (%s): reading every slot\n",
				 strerror(errno));
		m->slots_used_mem = p == MAP_FAILED ? NULL : p;
	}
	m->in_slots_mem = map_ro(m->in_slots, in_slots_mem_len(), "the ingress slots");
	m->in_used_mem = map_ro(m->in_used, in_used_mem_len(), "the ingress slots' used sets");
	if (!m->in_slots_mem || !m->in_used_mem) {
		/* one without the other is of no use */
		unmap_ro(m->in_slots_mem, in_slots_mem_len());
		unmap_ro(m->in_used_mem, in_used_mem_len());
		m->in_slots_mem = NULL;
		m->in_used_mem = NULL;
	}
	m->rr_mem = map_ro(m->rr, rr_mem_len(), "the roundrobin order");
	p = mmap(NULL, jobs_mem_len(), PROT_READ | PROT_WRITE, MAP_SHARED, m->jobs, 0);
	if (p == MAP_FAILED) {
		pr_debug("cannot map the job map (%s): writing it by syscall\n", strerror(errno));
		m->jobs_mem = NULL;
		return -errno;
	}
	m->jobs_mem = p;
	return 0;
}

void tls_maps_unmap_jobs(struct tls_maps *m)
{
	if (m->jobs_mem)
		munmap(m->jobs_mem, jobs_mem_len());
	m->jobs_mem = NULL;
	unmap_ro(m->rr_mem, rr_mem_len());
	m->rr_mem = NULL;
	unmap_ro(m->slots_mem, slots_mem_len());
	unmap_ro(m->slots_used_mem, slots_used_mem_len());
	unmap_ro(m->in_slots_mem, in_slots_mem_len());
	unmap_ro(m->in_used_mem, in_used_mem_len());
	m->slots_mem = NULL;
	m->slots_used_mem = NULL;
	m->in_slots_mem = NULL;
	m->in_used_mem = NULL;
}

static int check_sizes(int fd, size_t i, const char *path)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.key_size == pinned_maps[i].key_size &&
	    info.value_size == pinned_maps[i].value_size)
		return 0;
	pr_warn("pinned map %s has key size %u and value size %u, this version %u and %u: "
		"pinned by another version of tlsd (remove it with tlsd --cleanup)\n",
		path, info.key_size, info.value_size, pinned_maps[i].key_size,
		pinned_maps[i].value_size);
	return -ESTALE;
}

/* The map named name (of that value size) that the program pinned at
 * pin_dir/prog uses; -1 if none. */
static int prog_map_fd(const char *pin_dir, const char *prog, const char *name, __u32 value_size)
{
	__u32 ids[64], len, i, nids;
	struct bpf_prog_info info;
	char path[4096];
	int pfd, fd = -1;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", pin_dir, prog) >= sizeof(path))
		return -1;
	pfd = bpf_obj_get(path);
	if (pfd < 0)
		return -1;
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	info.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	info.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(pfd, &info, &len))
		info.nr_map_ids = 0;
	close(pfd);
	nids = info.nr_map_ids < sizeof(ids) / sizeof(ids[0]) ? info.nr_map_ids :
								sizeof(ids) / sizeof(ids[0]);
	for (i = 0; i < nids && fd < 0; i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		int f = bpf_map_get_fd_by_id(ids[i]);

		if (f < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(f, &mi, &mlen) && !strcmp(mi.name, name) &&
		    mi.value_size == value_size)
			fd = f;
		else
			close(f);
	}
	return fd;
}

int tls_maps_open_pinned(const char *pin_dir, struct tls_maps *m)
{
	char path[4096];
	size_t i;
	int err;

	tls_maps_init(m);
	for (i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", pin_dir, pinned_maps[i].name) >=
		    sizeof(path)) {
			err = -ENAMETOOLONG;
			goto fail;
		}
		MAP_FD(m, i) = bpf_obj_get(path);
		/* pins of tlsd 0.1 have no layout map; nothing here needs it */
		if (MAP_FD(m, i) < 0 && errno == ENOENT && !strcmp(pinned_maps[i].name, "tls_layout"))
			continue;
		if (MAP_FD(m, i) < 0) {
			err = -errno;
			pr_warn("cannot open pinned map %s: %s%s\n", path, strerror(-err),
				err != -ENOENT ? "" :
				access(pin_dir, F_OK) == 0 ?
						 " (pinned by another version of tlsd?)" :
						 " (is the classifier attached?)");
			goto fail;
		}
		err = check_sizes(MAP_FD(m, i), i, path);
		if (err)
			goto fail;
	}
	/* Roundrobin's order is not pinned (a takeover's program starts its
	 * own): the attached program's map, found by name through it. */
	m->rr = prog_map_fd(pin_dir, "tls_classify", "tls_rr", sizeof(struct tls_rr));
	/* The flow iterator: without it, only endpoint flows can be listed. */
	if ((size_t)snprintf(path, sizeof(path), "%s/tls_dump_sk_flows", pin_dir) < sizeof(path))
		m->sk_iter = bpf_obj_get(path);
	return 0;
fail:
	tls_maps_close(m);
	return err;
}

void tls_maps_close(struct tls_maps *m)
{
	size_t i;

	for (i = 0; i < sizeof(pinned_maps) / sizeof(pinned_maps[0]); i++) {
		if (MAP_FD(m, i) >= 0)
			close(MAP_FD(m, i));
		MAP_FD(m, i) = -1;
	}
	if (m->sk_iter >= 0)
		close(m->sk_iter);
	m->sk_iter = -1;
	tls_maps_unmap_jobs(m);
	if (m->rr >= 0)
		close(m->rr);
	m->rr = -1;
}

static int update(int fd, const void *key, const void *val, const char *what)
{
	if (bpf_map_update_elem(fd, key, val, BPF_ANY)) {
		int err = -errno;

		pr_warn("cannot update %s: %s\n", what, strerror(-err));
		return err;
	}
	return 0;
}

static int del_elem(int fd, const void *key)
{
	if (bpf_map_delete_elem(fd, key))
		return -errno;
	return 0;
}

static int check_job(__u32 job)
{
	if (job == TLS_JOB_NONE || job >= TLS_MAX_JOBS) {
		pr_warn("job id %u out of range 1..%u\n", job, TLS_MAX_JOBS - 1);
		return -EINVAL;
	}
	return 0;
}

int tls_set_band(const struct tls_maps *m, __u32 band, __u32 classid, __u8 dscp)
{
	struct tls_band b = { .classid = classid, .dscp = dscp };

	if (band >= TLS_MAX_BANDS) {
		pr_warn("band %u out of range 0..%u\n", band, TLS_MAX_BANDS - 1);
		return -EINVAL;
	}
	if (dscp > 63 && dscp != TLS_DSCP_NONE) {
		pr_warn("DSCP %u out of range 0..63\n", dscp);
		return -EINVAL;
	}
	return update(m->bands, &band, &b, "the band map");
}

int tls_set_job_band(const struct tls_maps *m, __u32 job, __u32 band)
{
	struct tls_job j = { .band = band, .flags = TLS_JOB_F_BAND };

	if (check_job(job))
		return -EINVAL;
	if (band == TLS_BAND_NONE) {
		j.band = 0;
		j.flags = 0;
	} else if (band >= TLS_MAX_BANDS) {
		pr_warn("band %u out of range 0..%u\n", band, TLS_MAX_BANDS - 1);
		return -EINVAL;
	}
	/* One array write: the classifier sees the old or the new band. */
	return update(m->jobs, &job, &j, "the job map");
}

int tls_free_job_id(const struct tls_maps *m, __u32 job)
{
	__u32 gen = 0;
	int err;

	err = tls_set_job_band(m, job, TLS_BAND_NONE);
	if (err)
		return err;
	/* Sockets still tagged with the id (a PS's socket handed to a process
	 * that outlived it) no longer count as the id's next job's. */
	if (bpf_map_lookup_elem(m->job_gens, &job, &gen))
		return -errno;
	gen++;
	err = update(m->job_gens, &job, &gen, "the job generations");
	if (err)
		return err;
	/* the id's next job starts with an equal share (after the
	 * generation: a failure here leaves only a weight, said) */
	return m->weight >= 0 ? tls_set_job_weight(m, job, 0) : 0;
}

/* A job's word: from the map's memory, as write_jobs() stores it (one
 * aligned 8-byte load, no syscall: a scrape asks for every job), else by
 * syscall. */
static int read_job(const struct tls_maps *m, __u32 job, struct tls_job *j)
{
	if (m->jobs_mem) {
		__u64 w = __atomic_load_n((const __u64 *)&m->jobs_mem[job], __ATOMIC_ACQUIRE);

		memcpy(j, &w, sizeof(*j));
		return 0;
	}
	return bpf_map_lookup_elem(m->jobs, &job, j) ? -errno : 0;
}

int tls_get_job_band(const struct tls_maps *m, __u32 job, __u32 *band)
{
	struct tls_job j;
	int err;

	if (check_job(job))
		return -EINVAL;
	err = read_job(m, job, &j);
	if (err)
		return err;
	*band = (j.flags & TLS_JOB_F_BAND) ? j.band : TLS_BAND_NONE;
	if (*band != TLS_BAND_NONE && (j.flags & TLS_JOB_F_RR)) {
		/* roundrobin: the band of this moment, as the classifier
		 * computes it; without the order (maps from pins of a program
		 * that has none), the band when tlsd wrote the entry */
		struct tls_rr r;

		if (!tls_get_rr_order(m, TLS_JOB_RR_SEL(j.flags), &r))
			*band = tls_rr_band(&r, TLS_JOB_RR_INDEX(j.flags), tls_now_ns(), *band);
	}
	return 0;
}

int tls_add_pid(const struct tls_maps *m, pid_t pid, __u32 job)
{
	__u32 tgid = (__u32)pid;

	if (check_job(job))
		return -EINVAL;
	if (pid <= 0) {
		pr_warn("bad pid %d\n", pid);
		return -EINVAL;
	}
	return update(m->pids, &tgid, &job, "the pid map");
}

int tls_del_pid(const struct tls_maps *m, pid_t pid)
{
	__u32 tgid = (__u32)pid;

	return del_elem(m->pids, &tgid);
}

/*
 * The classifier skips endpoint lookups for ports whose count is 0, so a
 * count must never be too low (too high only costs a lookup). A delete
 * recounts from the endpoint map itself rather than keeping a running delta,
 * so that a second writer (tlsd and the CLI) or an earlier failure cannot
 * leave it too low; an add only counts up (no walk per endpoint: a PS in a
 * container adds one per connection).
 */
static int count_endpoints(const struct tls_maps *m, __u32 *counts, __u16 only_port_be)
{
	struct tls_endpoint_key k, next;
	void *prev = NULL;

	while (bpf_map_get_next_key(m->endpoints, prev, &next) == 0) {
		if (!only_port_be || next.port == only_port_be)
			counts[ntohs(next.port)]++;
		k = next;
		prev = &k;
	}
	return errno == ENOENT ? 0 : -errno;
}

static int recount_port(const struct tls_maps *m, __u16 port_be)
{
	__u32 *counts = calloc(NPORTS, sizeof(*counts)), port = ntohs(port_be);
	int err;

	if (!counts)
		return -ENOMEM;
	err = count_endpoints(m, counts, port_be);
	if (!err)
		err = update(m->ports, &port, &counts[port], "the port map");
	free(counts);
	return err;
}

int tls_rebuild_port_counts(const struct tls_maps *m)
{
	__u32 *counts = calloc(NPORTS, sizeof(*counts)), port;
	int err;

	if (!counts)
		return -ENOMEM;
	err = count_endpoints(m, counts, 0);
	for (port = 0; !err && port < NPORTS; port++) {
		__u32 cur = 0;

		if (bpf_map_lookup_elem(m->ports, &port, &cur))
			err = -errno;
		else if (cur != counts[port])
			err = update(m->ports, &port, &counts[port], "the port map");
	}
	free(counts);
	return err;
}

/* Up to max keys of a hash map. */
static size_t map_keys(int fd, size_t key_size, size_t max, void **keys)
{
	char *buf = calloc(max ? max : 1, key_size);
	size_t n = 0;

	*keys = buf;
	if (!buf)
		return 0;
	/* A hash map's walk: a key deleted meanwhile by someone else may end
	 * it early; what was read is returned. */
	while (n < max && bpf_map_get_next_key(fd, n ? buf + (n - 1) * key_size : NULL,
					       buf + n * key_size) == 0)
		n++;
	return n;
}

size_t tls_endpoint_keys(const struct tls_maps *m, struct tls_endpoint_key **keys)
{
	return map_keys(m->endpoints, sizeof(**keys), TLS_MAX_ENDPOINTS, (void **)keys);
}

size_t tls_pid_keys(const struct tls_maps *m, __u32 **pids)
{
	return map_keys(m->pids, sizeof(**pids), TLS_MAX_PIDS, (void **)pids);
}

int tls_get_endpoint(const struct tls_maps *m, const struct tls_endpoint_key *k, __u32 *job)
{
	if (bpf_map_lookup_elem(m->endpoints, k, job))
		return -errno;
	return 0;
}

bool tls_maps_have_ingress(const struct tls_maps *m)
{
	return m->job_in >= 0 && m->flows_in >= 0;
}

/* Flows cache the job their endpoint resolved to until this changes. */
static int bump_gen(const struct tls_maps *m)
{
	__u32 zero = 0, g = 0;

	if (bpf_map_lookup_elem(m->gen, &zero, &g))
		return -errno;
	g++;
	return update(m->gen, &zero, &g, "the endpoint generation");
}

int tls_add_endpoint(const struct tls_maps *m, const struct tls_endpoint_key *k, __u32 job)
{
	int err;

	__u32 old, port = ntohs(k->port), n = 0;
	bool fresh;

	if (check_job(job))
		return -EINVAL;
	fresh = bpf_map_lookup_elem(m->endpoints, k, &old) != 0;
	if (!fresh && old == job)
		return 0; /* nothing changes: flows keep their cached job */
	err = update(m->endpoints, k, &job, "the endpoint map");
	/* The port's count is exact, so that adds and deletes are O(1) (a
	 * discovered PS in a container adds one per connection; a reload
	 * may delete thousands): a new endpoint whose count cannot be
	 * raised is taken out again. Only zero or not matters to the
	 * classifier. A takeover recounts once (tls_rebuild_port_counts). */
	if (!err && fresh) {
		bpf_map_lookup_elem(m->ports, &port, &n);
		n++;
		err = update(m->ports, &port, &n, "the port map");
		if (err)
			del_elem(m->endpoints, k);
	}
	return err ? err : bump_gen(m);
}

int tls_del_endpoint(const struct tls_maps *m, const struct tls_endpoint_key *k)
{
	__u32 port = ntohs(k->port), n = 0;
	int err = del_elem(m->endpoints, k);

	if (err)
		return err;
	err = bump_gen(m);
	if (bpf_map_lookup_elem(m->ports, &port, &n) || n == 0)
		/* a count that says less than there was: walk once */
		return err ? err : recount_port(m, k->port);
	n--;
	return err ? err : update(m->ports, &port, &n, "the port map");
}

int tls_add_socket_fd(const struct tls_maps *m, int fd, __u32 job)
{
	struct tls_flow_rec s = { 0 };
	__u32 gen = 0;

	if (check_job(job))
		return -EINVAL;
	if (bpf_map_lookup_elem(m->job_gens, &job, &gen))
		return -errno;
	/* sk_storage maps are keyed by a socket fd of the caller. A socket
	 * tagged already keeps its flow state and counters (a rescan must
	 * not reset them); only its job changes. */
	if (bpf_map_lookup_elem(m->sk_jobs, &fd, &s) == 0 && s.flow.job == job &&
	    s.flow.gen == gen)
		return 0;
	s.flow.job = job;
	s.flow.gen = gen;
	if (bpf_map_update_elem(m->sk_jobs, &fd, &s, BPF_ANY))
		return -errno;
	return 0;
}

int tls_del_socket_fd(const struct tls_maps *m, int fd)
{
	return del_elem(m->sk_jobs, &fd);
}

static bool is_inet_socket(int fd)
{
	int domain = 0;
	socklen_t len = sizeof(domain);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len))
		return false;
	return domain == AF_INET || domain == AF_INET6;
}

/* Tag the process's existing INET sockets, fetched with pidfd_getfd(), with
 * job; TLS_JOB_NONE removes their tags. Returns how many sockets changed. */
static int tag_sockets(const struct tls_maps *m, pid_t pid, __u32 job)
{
	char dir[64], link[320], target[64];
	struct dirent *de;
	int pidfd, n = 0, err = 0;
	DIR *d;

	/* Without pidfd_getfd (kernel 5.6) another process's sockets cannot
	 * be reached: its existing sockets stay untagged (kernel_features.h). */
	tls_features_probe_bpf();
	if (!tls_feature_has(TLS_FEAT_PIDFD_GETFD))
		return kill(pid, 0) && errno == ESRCH ? -ESRCH : 0;
	/* The pidfd first: every socket is then fetched through it, so even
	 * if the pid is recycled while /proc is read, only the sockets of
	 * the process we were given are ever tagged. */
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		if (errno == ESRCH)
			return -ESRCH; /* the caller decides whether that is wrong */
		err = -errno;
		pr_warn("pidfd_open(%d): %s\n", pid, strerror(-err));
		return err;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d) {
		err = errno == ENOENT ? -ESRCH : -errno;
		if (err != -ESRCH)
			pr_warn("cannot list the sockets of pid %d: %s\n", pid, strerror(-err));
		close(pidfd);
		return err;
	}
	while ((de = readdir(d))) {
		ssize_t len;
		char *end;
		long fdnum;
		int fd;

		fdnum = strtol(de->d_name, &end, 10);
		if (*end || fdnum < 0)
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		if (strncmp(target, "socket:", 7))
			continue;
		fd = syscall(SYS_pidfd_getfd, pidfd, (int)fdnum, 0);
		if (fd < 0) {
			/* closed meanwhile, or not ours to take */
			pr_debug("pidfd_getfd(%d, %ld): %s\n", pid, fdnum, strerror(errno));
			continue;
		}
		if (is_inet_socket(fd)) {
			err = job == TLS_JOB_NONE ? tls_del_socket_fd(m, fd) :
						    tls_add_socket_fd(m, fd, job);
			if (!err)
				n++;
			else if (err != -ENOENT)
				pr_warn("cannot %stag socket fd %ld of pid %d: %s\n",
					job == TLS_JOB_NONE ? "un" : "", fdnum, pid,
					strerror(-err));
		}
		close(fd);
	}
	close(pidfd);
	closedir(d);
	return n;
}

int tls_add_process(const struct tls_maps *m, pid_t pid, __u32 job)
{
	/* The pid first: a socket created during the scan is caught by the
	 * hook, one created before it by the scan. */
	int err = tls_add_pid(m, pid, job);

	if (err)
		return err;
	err = tag_sockets(m, pid, job);
	if (err == -ESRCH) {
		pr_warn("pid %d: no such process\n", pid);
		tls_del_pid(m, pid);
	}
	return err;
}

int tls_del_process(const struct tls_maps *m, pid_t pid)
{
	int err = tls_del_pid(m, pid);

	if (err && err != -ENOENT)
		return err;
	/* A process that is gone took its sockets with it: nothing to untag. */
	err = tag_sockets(m, pid, TLS_JOB_NONE);
	return err == -ESRCH ? 0 : err;
}

__u64 tls_burst_ns_per_kib(__u64 rate_bps)
{
	/* 8 Ki bits at the link's rate; below 1 Mbit/s as if 1 Mbit/s, which
	 * keeps the classifier's products (tls_burst_key) far from overflow */
	if (!rate_bps)
		return 0;
	return 8192ULL * 1000000000ULL / (rate_bps < 1000000 ? 1000000 : rate_bps);
}

/* n job ids, none bad or twice. */
static int check_order_jobs(const __u32 *job, unsigned int n)
{
	unsigned int i, k;

	for (i = 0; i < n; i++) {
		if (check_job(job[i]))
			return -EINVAL;
		for (k = 0; k < i; k++)
			if (job[k] == job[i]) {
				pr_warn("job id %u twice in the burst order\n", job[i]);
				return -EINVAL;
			}
	}
	return 0;
}

int tls_set_burst_order(const struct tls_maps *m, __u32 nbands, __u64 gap_ns, __u64 grace_ns,
			__u64 limit_ns, __u64 rate_bps, const struct tls_burst_seed *seed)
{
	struct tls_burst o = {
		.nbands = nbands, .gap_ns = gap_ns, .grace_ns = grace_ns, .limit_ns = limit_ns
	};
	unsigned int n = seed ? seed->n : 0, i;
	__u64 now;

	if (nbands == 0 || nbands > TLS_MAX_BANDS)
		return -EINVAL;
	if (n > TLS_BURST_SLOTS)
		n = TLS_BURST_SLOTS;
	if (seed && seed->memory) {
		memcpy(o.mem_job, seed->memory->mem_job, sizeof(o.mem_job));
		memcpy(o.mem_est, seed->memory->mem_est, sizeof(o.mem_est));
		o.mem_most = seed->memory->mem_most;
	}
	if (n) {
		/* The classifier's clock is CLOCK_MONOTONIC or its coarse
		 * reading, which is at most a tick behind: an entry stamped a
		 * little ahead of it is only taken as not idle yet. The
		 * virtual clock starts now (from 0 it would jump by all the
		 * uptime at the first packet). */
		now = tls_now_ns();
		o.n = n;
		o.fresh = 1;
		o.lead_ns = now;
		o.vtime_ns = now;
		for (i = 0; i < n; i++) {
			o.job[i] = seed->job[i];
			if (tls_get_job_weight(m, o.job[i], &o.w[i]))
				o.w[i] = 0; /* an equal share */
			o.last_ns[i] = now;
			o.band[i] = seed->band ? seed->band[i] : i < nbands - 1 ? i : nbands - 1;
		}
		if (seed->lead_floor) {
			o.lead_floor = seed->lead_floor;
			o.lead_floor_job = o.job[0];
		}
	}
	o.ns_per_kib = tls_burst_ns_per_kib(rate_bps);
	/* the seed's ids, bands and floor checked as any order written */
	return tls_write_burst_order(m, &o);
}

/* A weight as written: 0 (an equal share), or TLS_BURST_W1..TLS_BURST_W_MAX
 * (below 1 the clock would run faster than the link: sooner near its
 * wrap). */
static bool weight_ok(__u32 w)
{
	return !w || (w >= TLS_BURST_W1 && w <= TLS_BURST_W_MAX);
}

int tls_write_burst_order(const struct tls_maps *m, const struct tls_burst *order)
{
	struct tls_burst copy = *order, *o = &copy;
	unsigned int i;
	__u32 zero = 0;

	if (m->burst < 0)
		return -ENOENT;
	if (o->n > TLS_BURST_SLOTS || o->nbands == 0 || o->nbands > TLS_MAX_BANDS ||
	    o->lead_floor >= o->nbands || (o->lead_floor_job && check_job(o->lead_floor_job)) ||
	    (o->cut_job && check_job(o->cut_job)) || check_order_jobs(o->job, o->n))
		return -EINVAL;
	/* the weights' sum as the classifier keeps it, from the entries
	 * written (a seed's, or a carried order less the jobs that left) */
	o->wsum = 0;
	for (i = 0; i < o->n; i++) {
		if (o->band[i] >= o->nbands || !weight_ok(o->w[i]))
			return -EINVAL;
		o->wsum += tls_burst_w(o->w[i]);
	}
	/* BPF_F_LOCK: the whole value but the lock, under it, so the
	 * classifier never sees half an order. */
	if (bpf_map_update_elem(m->burst, &zero, o, BPF_F_LOCK)) {
		int err = -errno;

		pr_warn("cannot write the burst order: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

int tls_set_job_weight(const struct tls_maps *m, __u32 job, __u32 w)
{
	if (m->weight < 0)
		return -ENOENT;
	if (check_job(job))
		return -EINVAL;
	if (!weight_ok(w)) {
		pr_warn("job %u: weight %u out of range (0, or %u..%u)\n", job, w, TLS_BURST_W1,
			TLS_BURST_W_MAX);
		return -EINVAL;
	}
	return update(m->weight, &job, &w, "the weight map");
}

int tls_get_job_weight(const struct tls_maps *m, __u32 job, __u32 *w)
{
	if (m->weight < 0)
		return -ENOENT;
	if (check_job(job))
		return -EINVAL;
	if (bpf_map_lookup_elem(m->weight, &job, w))
		return -errno;
	return 0;
}

int tls_get_job_flags(const struct tls_maps *m, __u32 job, __u32 *flags)
{
	struct tls_job j;

	if (check_job(job))
		return -EINVAL;
	if (bpf_map_lookup_elem(m->jobs, &job, &j))
		return -errno;
	*flags = j.flags;
	return 0;
}

int tls_read_burst_order(const struct tls_maps *m, struct tls_burst *o)
{
	__u32 zero = 0;

	if (m->burst < 0)
		return -ENOENT;
	if (bpf_map_lookup_elem_flags(m->burst, &zero, o, BPF_F_LOCK))
		return -errno;
	return 0;
}

/* Into the map's memory when it is mapped: one aligned 8-byte store per
 * job, so the classifier sees a job's old or new band and flags, never
 * half of each. Otherwise one syscall for them all. */
static int write_jobs(const struct tls_maps *m, const __u32 *jobs, const struct tls_job *v,
		      unsigned int n)
{
	__u32 count = n, i;
	DECLARE_LIBBPF_OPTS(bpf_map_batch_opts, opts);

	if (m->jobs_mem) {
		for (i = 0; i < n; i++) {
			__u64 w;

			memcpy(&w, &v[i], sizeof(w));
			__atomic_store_n((__u64 *)&m->jobs_mem[jobs[i]], w, __ATOMIC_RELEASE);
		}
		return 0;
	}
	if (n == 0 || bpf_map_update_batch(m->jobs, jobs, v, &count, &opts) == 0)
		return 0;
	for (i = 0; i < n; i++) { /* kernels without batch ops on arrays */
		int err = update(m->jobs, &jobs[i], &v[i], "the job map");

		if (err)
			return err;
	}
	return 0;
}

int tls_set_job_bands(const struct tls_maps *m, const __u32 *jobs, const __u32 *bands,
		      unsigned int n, __u32 flags)
{
	struct tls_job v[TLS_MAX_JOBS];
	__u32 i;

	if (n > TLS_MAX_JOBS)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (check_job(jobs[i]))
			return -EINVAL;
		if (bands[i] == TLS_BAND_NONE) {
			v[i].band = 0;
			v[i].flags = 0;
		} else if (bands[i] < TLS_MAX_BANDS) {
			v[i].band = bands[i];
			v[i].flags = TLS_JOB_F_BAND | (flags & TLS_JOB_F_BURST);
		} else {
			return -EINVAL;
		}
	}
	return write_jobs(m, jobs, v, n);
}

int tls_get_rr_order(const struct tls_maps *m, __u32 sel, struct tls_rr *r)
{
	if (sel > 1)
		return -EINVAL;
	if (m->rr_mem) {
		/* tlsd writes an entry only while no job names it */
		memcpy(r, (const void *)&m->rr_mem[sel], sizeof(*r));
	} else if (m->rr < 0) {
		return -ENOENT;
	} else if (bpf_map_lookup_elem(m->rr, &sel, r)) {
		return -errno;
	}
	/* the cache of the step is the classifier's, stored as the copy
	 * was made (a torn one could pair a step with another's leader):
	 * the first step's, always right (tls_rr_lead computes the step) */
	r->turn = TLS_RR_TURN(0, r->lead);
	return 0;
}

/* Which entries of the order (bit 0, bit 1) the jobs' words name now. */
static __u32 jobs_naming(const struct tls_maps *m, const __u32 *jobs, unsigned int n)
{
	__u32 named = 0, i;

	for (i = 0; i < n; i++) {
		struct tls_job j;

		if (!check_job(jobs[i]) && !read_job(m, jobs[i], &j) && (j.flags & TLS_JOB_F_RR))
			named |= 1u << TLS_JOB_RR_SEL(j.flags);
	}
	return named;
}

int tls_set_job_rr(const struct tls_maps *m, const __u32 *jobs, const __u32 *bands, unsigned int n,
		   const struct tls_rr *order)
{
	struct tls_job v[TLS_MAX_JOBS];
	struct tls_rr o = *order, cur[2];
	__u32 i, sel, named;
	uint64_t tick;
	int err;

	if (n > TLS_MAX_JOBS || order->n != n || !order->interval_ns || !order->nbands ||
	    order->nbands > TLS_MAX_BANDS || (n && order->lead >= n))
		return -EINVAL;
	if (m->rr < 0)
		return -EOPNOTSUPP;
	for (i = 0; i < 2; i++) {
		err = tls_get_rr_order(m, i, &cur[i]);
		if (err)
			return err;
	}
	tls_rr_fill(&o);
	/* two: a tick late at most is the coarse clock's design, but a tick
	 * can come late itself (interrupts off, a VM's stolen time) */
	tick = tls_coarse_tick_ns();
	o.tick_ns = 2 * (__u32)(tick && tick < 100000000 ? tick : 4000000); /* unknown: HZ 250 */
	/* the entry no job names: the one the jobs' words do not name (a
	 * new program's map is empty while the pinned job map still names
	 * the old one's entries), else the older one */
	sel = cur[1].gen < cur[0].gen ? 1 : 0;
	named = jobs_naming(m, jobs, n);
	if (named == 1u << 0)
		sel = 1;
	else if (named == 1u << 1)
		sel = 0;
	o.gen = (cur[0].gen > cur[1].gen ? cur[0].gen : cur[1].gen) + 1;
	for (i = 0; i < n; i++) {
		if (check_job(jobs[i]) || bands[i] >= TLS_MAX_BANDS)
			return -EINVAL;
		v[i].band = bands[i];
		v[i].flags = TLS_JOB_F_BAND | TLS_JOB_F_RR | (sel ? TLS_JOB_F_RR_SEL : 0) |
			     (i << TLS_JOB_RR_SHIFT);
	}
	err = update(m->rr, &sel, &o, "the roundrobin order");
	return err ? err : write_jobs(m, jobs, v, n);
}

/* The flows of live PS sockets: a reader for this walk only (the CLI's,
 * the metrics'; the sampler keeps one). */
static int for_each_sk_flow(const struct tls_maps *m, tls_flow_cb cb, void *ctx)
{
	struct tls_sk_flows *r;
	int ret = tls_sk_flows_new(&r);

	if (ret)
		return ret;
	ret = tls_sk_flows_read(r, m, cb, ctx);
	if (ret < 0 && *tls_sk_flows_failed(r)) /* not cb's own */
		pr_warn("cannot read the flows of PS sockets (%s): %s\n", tls_sk_flows_failed(r),
			strerror(-ret));
	tls_sk_flows_free(r);
	return ret;
}

int tls_for_each_flow(const struct tls_maps *m, tls_flow_cb cb, void *ctx)
{
	struct tls_flow_key key, next;
	struct tls_flow f;
	void *prev = NULL;
	int ret;

	ret = for_each_sk_flow(m, cb, ctx);
	if (!ret)
		ret = tls_for_each_slot_flow(m, cb, ctx);
	if (ret)
		return ret;
	while (bpf_map_get_next_key(m->flows, prev, &next) == 0) {
		if (bpf_map_lookup_elem(m->flows, &next, &f) == 0) {
			ret = cb(&next, &f, ctx);
			if (ret)
				return ret;
		}
		key = next;
		prev = &key;
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <string.h>

#include "policy.h"
#include "tls_common.h"
#include "tls_rr.h"

int tls_policy_parse(const char *s, enum tls_policy *out)
{
	if (!s)
		return -EINVAL;
	if (!strcmp(s, "fifo"))
		*out = TLS_POLICY_FIFO;
	else if (!strcmp(s, "one"))
		*out = TLS_POLICY_ONE;
	else if (!strcmp(s, "roundrobin") || !strcmp(s, "rr"))
		*out = TLS_POLICY_RR;
	else if (!strcmp(s, "bursts"))
		*out = TLS_POLICY_BURSTS;
	else
		return -EINVAL;
	return 0;
}

const char *tls_policy_name(enum tls_policy p)
{
	switch (p) {
	case TLS_POLICY_FIFO:
		return "fifo";
	case TLS_POLICY_ONE:
		return "one";
	case TLS_POLICY_RR:
		return "roundrobin";
	case TLS_POLICY_BURSTS:
		return "bursts";
	}
	return "?";
}

unsigned int tls_policy_position(enum tls_policy p, unsigned int n, uint64_t step, unsigned int i)
{
	if (n == 0 || p != TLS_POLICY_RR)
		return i;
	/* At step s the job that arrived (s mod n)-th leads (tls_rr.h: the
	 * classifier's copy of the order). */
	return tls_rr_position(n, (__u32)(step % n), i);
}

unsigned int tls_policy_lead_after_leave(uint64_t step, unsigned int n, unsigned int gone)
{
	unsigned int lead;

	if (n <= 1)
		return 0;
	lead = (unsigned int)(step % n);
	if (gone < lead)
		return lead - 1;
	/* the leader, or one after it: the same place in the order, the
	 * last place wrapping to the first */
	return lead < n - 1 ? lead : 0;
}

unsigned int tls_policy_band_of_position(unsigned int pos, unsigned int n, unsigned int nbands)
{
	return tls_rr_band_of_position(pos, n, nbands);
}

uint64_t tls_policy_rr_band_changes(unsigned int n, unsigned int nbands, unsigned int pos,
				    uint64_t k)
{
	unsigned int groups, b;
	uint64_t changes = 0;

	if (n < 2 || nbands < 2 || pos >= n)
		return 0;
	groups = n < nbands ? n : nbands;
	/* A step moves the job from position p to p - 1 (0 to n - 1), and
	 * its band changes when p is the first of its group: the steps that
	 * leave p are those at t = (pos - p) mod n, n, 2n, ... below k. No
	 * division for k <= n: tlsd counts at every scrape, a step or two
	 * since the last. */
	for (b = 0; b < groups; b++) {
		unsigned int first = tls_rr_first_of_band(b, n, nbands);
		unsigned int t = pos >= first ? pos - first : pos + n - first;

		if (k <= n)
			changes += k > t;
		else if (k > t)
			changes += (k - t - 1) / n + 1;
	}
	return changes;
}

unsigned int tls_policy_burst_seed(unsigned int n, const unsigned int *rank, const bool *active,
				   unsigned int max, unsigned int *out)
{
	unsigned int i, k, cnt = 0;

	/* insertion by rank into out[0..cnt): stable, and n is at most the
	 * jobs tlsd has (TLS_MAX_JOBS) */
	for (i = 0; i < n; i++) {
		if (!active[i])
			continue;
		for (k = cnt; k > 0 && rank[out[k - 1]] > rank[i]; k--)
			if (k < max)
				out[k] = out[k - 1];
		if (k < max) {
			out[k] = i;
			if (cnt < max)
				cnt++;
		}
	}
	return cnt;
}

unsigned int tls_policy_burst_weight(unsigned int flows)
{
	double w;

	if (flows <= 1)
		return TLS_BURST_W1;
	w = TLS_BURST_W1 * sqrt((double)flows) + 0.5;
	return w < TLS_BURST_W_MAX ? (unsigned int)w : TLS_BURST_W_MAX;
}

bool tls_policy_burst_seed_bands(unsigned int n, const unsigned int *cur, unsigned int nbands,
				 unsigned int *out, unsigned int *floor)
{
	unsigned int last = nbands ? nbands - 1 : 0, i;
	bool keep = n > 0 && cur[0] <= last;

	for (i = 1; keep && i < n; i++)
		keep = cur[i] <= last &&
		       (cur[i] > cur[i - 1] || (i >= 2 && cur[i] == last && cur[i - 1] == last));
	/* the floor first: out may be cur */
	*floor = !keep && n && cur[0] > 0 && cur[0] <= last ? cur[0] : 0;
	for (i = 0; i < n; i++)
		out[i] = keep ? cur[i] : (i < last ? i : last);
	return keep;
}

uint64_t tls_policy_lead_headroom(enum tls_policy p, unsigned int njobs, unsigned int nbands,
				  uint64_t headroom_ppm)
{
	return p == TLS_POLICY_ONE && njobs >= 2 && nbands >= 2 ? headroom_ppm : 0;
}

void tls_policy_assign(enum tls_policy p, unsigned int n, unsigned int nbands, uint64_t step,
		       unsigned int *bands)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (p == TLS_POLICY_FIFO) {
			bands[i] = 0;
			continue;
		}
		if (p == TLS_POLICY_BURSTS) {
			bands[i] = nbands ? nbands - 1 : 0;
			continue;
		}
		bands[i] =
			tls_policy_band_of_position(tls_policy_position(p, n, step, i), n, nbands);
	}
}

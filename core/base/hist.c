/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hist.c - the log-linear histogram (see hist.h). No DPDK, no allocation:
 * cheap enough to add every probe, exact enough for p99.9.
 */
#include <math.h>
#include <string.h>

#include "hist.h"

void
hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned
hist_index(uint64_t v)
{
	unsigned msb, shift;

	if (v < HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	shift = msb - HIST_SUB_BITS;
	/* (v >> shift) is in [HIST_SUB, 2 * HIST_SUB) */
	return HIST_SUB + shift * HIST_SUB + (unsigned)((v >> shift) - HIST_SUB);
}

uint64_t
hist_bucket_low(unsigned idx)
{
	unsigned shift;

	if (idx < HIST_SUB)
		return idx;
	shift = (idx - HIST_SUB) / HIST_SUB;
	return (uint64_t)(HIST_SUB + (idx - HIST_SUB) % HIST_SUB) << shift;
}

uint64_t
hist_bucket_high(unsigned idx)
{
	return idx + 1 >= HIST_BUCKETS ? UINT64_MAX : hist_bucket_low(idx + 1) - 1;
}

/* n values at once: the count, sum and extremes in registers over the
 * batch (one hist_add a value chains its double add to h->sum through
 * memory: a receiver adding a burst's probes waits on it, issue 20) */
void
hist_add_n(struct hist *h, const uint64_t *v, uint32_t n)
{
	uint64_t lo = h->min, hi = h->max;
	double sum = h->sum;

	for (uint32_t i = 0; i < n; i++) {
		h->bucket[hist_index(v[i])]++;
		sum += (double)v[i];
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	h->count += n;
	h->sum = sum;
	h->min = lo;
	h->max = hi;
}

void
hist_add(struct hist *h, uint64_t v)
{
	hist_add_n(h, &v, 1);
}

double
hist_mean(const struct hist *h)
{
	return h->count ? h->sum / (double)h->count : 0;
}

double
hist_percentile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	if (q <= 0)
		return (double)h->min;
	if (q >= 100)
		return (double)h->max;
	/* the smallest value with at least q % of the samples at or below it */
	rank = (uint64_t)ceil(q / 100.0 * (double)h->count - 1e-9);
	if (rank == 0)
		rank = 1;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			double lo = (double)hist_bucket_low(i), hi = (double)hist_bucket_high(i);
			double mid = (lo + hi) / 2;

			if (mid < (double)h->min)
				mid = (double)h->min;
			if (mid > (double)h->max)
				mid = (double)h->max;
			return mid;
		}
	}
	return (double)h->max;
}

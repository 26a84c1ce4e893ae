/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hist.h - log-linear histogram of non-negative integers (latencies in ns).
 *
 * Values below 32 have a bucket each; above, every power of two is split into
 * 32 equal buckets, so a bucket is at most 1/32 (3.1 %) of its values wide
 * and 1920 buckets cover all of uint64_t. Percentiles report the bucket's
 * midpoint, clamped to the exact minimum and maximum.
 */
#ifndef SURGE_HIST_H
#define SURGE_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 5
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (HIST_SUB + (64 - HIST_SUB_BITS) * HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t min, max;
	double sum;
	uint64_t bucket[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_add(struct hist *h, uint64_t v);
void hist_add_n(struct hist *h, const uint64_t *v, uint32_t n);   /* hist_add of each */
unsigned hist_index(uint64_t v);
uint64_t hist_bucket_low(unsigned idx);
uint64_t hist_bucket_high(unsigned idx);     /* inclusive */
double hist_percentile(const struct hist *h, double q);   /* q in [0, 100] */
double hist_mean(const struct hist *h);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * latency.c - latency receivers: probes (probe.c marks and stamps them)
 * matched on receive into a histogram with loss, duplicate and reorder
 * counts. The timestamps are the TSC's, so sender and receiver must share
 * the clock (one process, like a loopback or reflector setup).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <netinet/in.h>

#include "hist.h"
#include "dataplane.h"
#include "probe.h"

#define WINDOW 65536              /* sequence numbers remembered for dups */

struct latency {
	struct hist h;
	double ns_per_cycle;          /* the TSC's, fixed at start-up: no division a burst */
	uint64_t top;                 /* highest sequence seen + 1 */
	uint64_t unique, dup, reordered;
	uint64_t seen[WINDOW / 64];   /* bit s % WINDOW: s was seen */
};


int
surge_latency_new(void)
{
	struct runtime *r = rt();
	struct latency *l = calloc(1, sizeof(*l));
	int id;

	if (l == NULL)
		return rt_error(-ENOMEM, "out of memory for a latency histogram");
	hist_init(&l->h);
	l->ns_per_cycle = 1e9 / (double)rt_hz();
	id = registry_add(&r->nlat, SURGE_LATENCY_MAX, r->lat, sizeof(l), &l, "latency receivers");
	if (id < 0) {
		free(l);
		return id;
	}
	r->rx_tsc_ordered = 1;   /* before the id is handed out: its probes are timed ordered */
	idle_for_latency();
	return id;
}

static struct latency *
get(int id)
{
	return registry_holds(RT_REGISTRY_SIZE(nlat), id) ? rt()->lat[id] : NULL;
}

static void
track(struct latency *l, uint64_t s)
{
	uint64_t *word = &l->seen[(s % WINDOW) / 64], bit = 1ULL << (s % 64);

	if (s >= l->top) {
		/* forget what falls out of the window as the top moves up */
		uint64_t from = l->top + WINDOW <= s ? s - WINDOW + 1 : l->top;

		for (uint64_t k = from; k <= s; k++)
			l->seen[(k % WINDOW) / 64] &= ~(1ULL << (k % 64));
		l->top = s + 1;
		*word |= bit;
		l->unique++;
	} else if (l->top - s > WINDOW) {
		l->reordered++;            /* too old to tell a duplicate: late */
		l->unique++;
	} else if (*word & bit) {
		l->dup++;
	} else {
		*word |= bit;
		l->unique++;
		l->reordered++;
	}
}

/* A probe's latency: received at rx_tsc, stamped sent. The TSCs of two
 * CPUs may differ by a few cycles: a probe "received before it was sent"
 * took no measurable time */
static uint64_t
probe_ns(uint64_t rx_tsc, uint64_t sent, double ns_per_cycle)
{
	return sent < rx_tsc ? (uint64_t)((double)(rx_tsc - sent) * ns_per_cycle) : 0;
}

/* One probe's arrival: tracked (unique, late or a copy); 1 when it is a
 * copy of one seen, whose latency stays out of the histogram: a frame the
 * network duplicated is one departure, timed once. */
static int
arrive(struct latency *l, uint64_t seq)
{
	uint64_t dups = l->dup;

	track(l, seq);
	return l->dup != dups;
}

/* The one rule for a received probe, whichever path found it (the scan
 * below, dutrx.c's measuring poll): a probe never stamped (TSC 0) was no
 * real departure and is skipped; every other one is tracked, and its
 * latency goes into the histogram unless it is a copy. */
int
latency_take_n(int id, const uint8_t *const *at, uint32_t n, uint64_t rx_tsc, struct surge_latency_sample *out,
	       uint32_t max)
{
	struct latency *l = get(id);
	uint64_t keep[SURGE_BURST_MAX];
	uint32_t kept = 0, taken = 0;

	if (l == NULL)
		return rt_error(-EINVAL, "no latency receiver %d", id);
	if (n > SURGE_BURST_MAX)
		return rt_error(-EINVAL, "latency: %u probes at once (at most %d)", n, SURGE_BURST_MAX);
	for (uint32_t j = 0; j < n; j++) {
		uint32_t seq;
		uint64_t sent, ns = 0;
		int dup, sampled = out != NULL && taken < max;

		memcpy(&seq, at[j] + 4, 4);
		memcpy(&sent, at[j] + 8, 8);
		if (sent == 0)
			continue;
		dup = arrive(l, seq);
		/* a copy's latency is converted only for a sample that shows it */
		if (!dup || sampled)
			ns = probe_ns(rx_tsc, sent, l->ns_per_cycle);
		if (!dup)
			keep[kept++] = ns;   /* the histogram's sums in registers: one hist_add_n */
		if (sampled) {
			out[taken].ns = ns;
			out[taken].seq = seq;
			out[taken].duplicate = dup;
		}
		taken++;
	}
	hist_add_n(&l->h, keep, kept);
	return (int)taken;
}

/* A receiver made empty again, for a new measurement on the same id: ids
 * are at most SURGE_LATENCY_MAX for the process's life, so a server that
 * measures run after run (surge otg) reuses its receivers. Only while no
 * lcore adds to it. */
int
surge_latency_reset(int id)
{
	struct latency *l = get(id);

	if (l == NULL)
		return rt_error(-EINVAL, "no latency receiver %d", id);
	hist_init(&l->h);
	l->top = 0;
	l->unique = 0;
	l->dup = 0;
	l->reordered = 0;
	memset(l->seen, 0, sizeof(l->seen));
	return 0;
}

int
surge_latency_add(int id, uint64_t ns, uint32_t seq)
{
	struct latency *l = get(id);

	if (l == NULL)
		return rt_error(-EINVAL, "no latency receiver %d", id);
	if (!arrive(l, seq))
		hist_add(&l->h, ns);
	return 0;
}

int
surge_latency_scan(int id, const struct surge_burst *b, uint16_t off)
{
	return surge_latency_scan_samples(id, b, off, NULL, 0);
}

int
surge_latency_scan_samples(int id, const struct surge_burst *b, uint16_t off,
			   struct surge_latency_sample *out, uint32_t max)
{
	const uint8_t *at[SURGE_BURST_MAX];
	uint32_t n = 0;
	int rc = burst_check(b);

	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t magic;

		if (off + PROBE_LEN > b->len[i])
			continue;
		memcpy(&magic, b->data[i] + off, 4);
		if (magic == PROBE_MAGIC)
			at[n++] = b->data[i] + off;
	}
	return latency_take_n(id, at, n, b->tsc, out, max);
}

int
surge_latency_buckets(int id, struct surge_hist_bucket *out, uint32_t max)
{
	struct latency *l = get(id);
	uint32_t n = 0;

	if (l == NULL)
		return rt_error(-EINVAL, "no latency receiver %d", id);
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		if (l->h.bucket[i] == 0)
			continue;
		if (out != NULL && n < max) {
			out[n].low_ns = hist_bucket_low(i);
			out[n].high_ns = hist_bucket_high(i);
			out[n].count = l->h.bucket[i];
		}
		n++;
	}
	return (int)n;
}

double
surge_latency_percentile(int id, double q)
{
	struct latency *l = get(id);

	return l != NULL ? hist_percentile(&l->h, q) : -1;
}

int
surge_latency_get(int id, struct surge_latency *out)
{
	struct latency *l = get(id);

	if (l == NULL)
		return rt_error(-EINVAL, "no latency receiver %d", id);
	memset(out, 0, sizeof(*out));
	out->probes = l->unique;
	out->lost = l->top - l->unique;
	out->duplicated = l->dup;
	out->reordered = l->reordered;
	if (l->h.count == 0)
		return 0;
	out->min_ns = (double)l->h.min;
	out->mean_ns = hist_mean(&l->h);
	out->p50_ns = hist_percentile(&l->h, 50);
	out->p90_ns = hist_percentile(&l->h, 90);
	out->p99_ns = hist_percentile(&l->h, 99);
	out->p999_ns = hist_percentile(&l->h, 99.9);
	out->max_ns = (double)l->h.max;
	return 0;
}

int
latency_hist_copy(int id, struct hist *out)
{
	struct latency *l = get(id);

	if (l == NULL)
		return -EINVAL;    /* no rt_error: the caller is no lcore */
	memcpy(out, &l->h, sizeof(*out));
	return 0;
}

void
latency_free_all(void)
{
	RT_REGISTRY_CLEAR(nlat, lat, NULL);
	rt()->rx_tsc_ordered = 0;
}

int
surge_latency_count(void)
{
	return RT_REGISTRY_SIZE(nlat);
}

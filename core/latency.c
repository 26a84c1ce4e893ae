/* SPDX-License-Identifier: BSD-3-Clause
 *
 * latency.c - latency probes: a sequence number and a TSC timestamp in a
 * packet, matched on receive into a histogram with loss, duplicate and
 * reorder counts.
 *
 * The TX side marks a probe (magic and sequence number written now) and
 * flags its mbuf with a dynamic field holding the probe's offset; the send
 * path writes the TSC into every flagged packet just before the packet is
 * handed to the driver, after any pacing wait, so the wait is not counted as
 * latency. These are software timestamps on the TSC, so sender and receiver
 * must share the clock (one process, like a loopback or reflector setup).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "hist.h"
#include "runtime.h"

#define PROBE_MAGIC 0x50475253u   /* "SRGP" in memory on little-endian */
#define PROBE_LEN 16              /* magic 4, seq 4, tsc 8 */
#define WINDOW 65536              /* sequence numbers remembered for dups */

struct latency {
	struct hist h;
	uint64_t top;                 /* highest sequence seen + 1 */
	uint64_t unique, dup, reordered;
	uint64_t seen[WINDOW / 64];   /* bit s % WINDOW: s was seen */
};

int
latency_init(void)
{
	static const struct rte_mbuf_dynfield probe_off = {
		.name = "surge_probe_offset", .size = sizeof(uint16_t), .align = __alignof__(uint16_t),
	};
	int off = rte_mbuf_dynfield_register(&probe_off);

	if (off < 0)
		return rt_error(-rte_errno, "cannot register the probe mbuf field: %s", rte_strerror(rte_errno));
	rt()->probe_field = off;
	return 0;
}

static uint16_t *
probe_off(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, rt()->probe_field, uint16_t *);
}

/* An mbuf that carried a probe comes back with the probe's bytes: give it
 * the template's bytes again so a later packet is not taken for a probe. */
void
probe_unmark(const struct pool_state *p, struct rte_mbuf *m, uint8_t *data)
{
	uint16_t *off = probe_off(m);

	if (p->tmpl != NULL && *off + PROBE_LEN <= p->tmpl_len)
		memcpy(data + *off, p->tmpl + *off, PROBE_LEN);
	else if (*off + PROBE_LEN <= m->buf_len - m->data_off)
		memset(data + *off, 0, PROBE_LEN);
	*off = 0;
}

void
probes_stamp(struct rte_mbuf **m, uint32_t n)
{
	uint64_t now = rte_rdtsc();

	for (uint32_t i = 0; i < n; i++) {
		uint16_t off = *probe_off(m[i]);

		if (off != 0)
			memcpy(rte_pktmbuf_mtod_offset(m[i], uint8_t *, off + 8), &now, sizeof(now));
	}
}

int
surge_probe_mark(struct surge_burst *b, uint32_t i, uint16_t off, uint32_t seq)
{
	uint32_t magic = PROBE_MAGIC;

	if (i >= b->n)
		return rt_error(-EINVAL, "probe: packet %u of a burst of %u", i, b->n);
	if (off == 0 || off + PROBE_LEN > b->len[i])
		return rt_error(-EINVAL, "probe at offset %u needs %u bytes, the packet has %u",
				off, PROBE_LEN, b->len[i]);
	memcpy(b->data[i] + off, &magic, 4);
	memcpy(b->data[i] + off + 4, &seq, 4);
	memset(b->data[i] + off + 8, 0, 8);
	*probe_off(b->mbuf[i]) = off;
	b->probes++;
	if (b->pool >= 0 && !rt()->pool[b->pool].probed)
		rt()->pool[b->pool].probed = 1;     /* from now on alloc undoes marks */
	return 0;
}

int
surge_latency_new(void)
{
	struct runtime *r = rt();
	struct latency *l = calloc(1, sizeof(*l));
	int id;

	if (l == NULL)
		return rt_error(-ENOMEM, "out of memory for a latency histogram");
	hist_init(&l->h);
	rte_spinlock_lock(&r->pool_lock);
	id = r->nlat;
	if (id < SURGE_LATENCY_MAX) {
		r->lat[id] = l;
		__atomic_store_n(&r->nlat, id + 1, __ATOMIC_RELEASE);
	}
	rte_spinlock_unlock(&r->pool_lock);
	if (id >= SURGE_LATENCY_MAX) {
		free(l);
		return rt_error(-ENOSPC, "too many latency receivers (at most %d)", SURGE_LATENCY_MAX);
	}
	return id;
}

static struct latency *
get(int id)
{
	struct runtime *r = rt();

	if (r == NULL || id < 0 || id >= __atomic_load_n(&r->nlat, __ATOMIC_ACQUIRE))
		return NULL;
	return r->lat[id];
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

int
surge_latency_add(int id, uint64_t ns, uint32_t seq)
{
	struct latency *l = get(id);

	if (l == NULL)
		return rt_error(-EINVAL, "no latency receiver %d", id);
	track(l, seq);
	hist_add(&l->h, ns);
	return 0;
}

int
surge_latency_scan(int id, const struct surge_burst *b, uint16_t off)
{
	struct latency *l = get(id);
	double ns_per_cycle = 1e9 / (double)rte_get_tsc_hz();
	int found = 0;

	if (l == NULL)
		return rt_error(-EINVAL, "no latency receiver %d", id);
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t magic, seq;
		uint64_t sent;

		if (off + PROBE_LEN > b->len[i])
			continue;
		memcpy(&magic, b->data[i] + off, 4);
		if (magic != PROBE_MAGIC)
			continue;
		memcpy(&seq, b->data[i] + off + 4, 4);
		memcpy(&sent, b->data[i] + off + 8, 8);
		if (sent == 0)
			continue;               /* never stamped: not a real departure */
		uint64_t dups = l->dup;

		track(l, seq);
		/* the TSCs of two CPUs may differ by a few cycles: a probe
		 * "received before it was sent" took no measurable time */
		if (l->dup == dups)
			hist_add(&l->h, sent < b->tsc ? (uint64_t)((double)(b->tsc - sent) * ns_per_cycle) : 0);
		found++;
	}
	return found;
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

void
latency_free_all(void)
{
	struct runtime *r = rt();

	for (int i = 0; i < r->nlat; i++) {
		free(r->lat[i]);
		r->lat[i] = NULL;
	}
	r->nlat = 0;
}

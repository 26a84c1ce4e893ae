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
#include <netinet/in.h>

#include "hist.h"
#include "runtime.h"

#define PROBE_MAGIC 0x50475253u   /* "SRGP" in memory on little-endian: format version 1 */
#define PROBE_LEN SURGE_PROBE_LEN /* magic 4, seq 4, tsc 8 (surge.h) */
#define WINDOW 65536              /* sequence numbers remembered for dups */

struct latency {
	struct hist h;
	uint64_t top;                 /* highest sequence seen + 1 */
	uint64_t unique, dup, reordered;
	uint64_t seen[WINDOW / 64];   /* bit s % WINDOW: s was seen */
};

/* Per mbuf: where its probe is and which L4 checksum covers it, so every
 * change to the probe's bytes (mark, stamp, unmark) keeps that checksum
 * valid on ports that do not compute it (RFC 1624, like the flows). */
struct probe_field {
	uint16_t off;                 /* probe offset in the frame, 0 = not a probe */
	uint16_t l4;                  /* L4 header offset, where checksum words start */
	uint16_t csum;                /* checksum field offset, 0 = none */
	uint16_t zero_none;           /* UDP: 0 means "no checksum" */
};

int
latency_init(void)
{
	static const struct rte_mbuf_dynfield probe_field = {
		.name = "surge_probe", .size = sizeof(struct probe_field),
		.align = __alignof__(struct probe_field),
	};
	int off = rte_mbuf_dynfield_register(&probe_field);

	if (off < 0)
		return rt_error(-rte_errno, "cannot register the probe mbuf field: %s", rte_strerror(rte_errno));
	rt()->probe_field = off;
	return 0;
}

static struct probe_field *
probe_of(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, rt()->probe_field, struct probe_field *);
}

/* Ones' complement sum of bytes [from, from + n) of the L4 segment at l4,
 * as 16-bit words aligned to the segment's start. */
static uint32_t
seg_sum(const uint8_t *l4, uint32_t from, uint32_t n)
{
	uint32_t s = 0;

	for (uint32_t k = from; k < from + n; k++)
		s += (k & 1) ? l4[k] : (uint32_t)l4[k] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Writes n bytes at frame offset `at`, updating the covering checksum. */
static void
rewrite(struct rte_mbuf *m, const struct probe_field *pf, uint16_t at, const void *bytes, uint16_t n)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	int fix = pf->csum != 0 && at >= pf->l4 && !(m->ol_flags & RTE_MBUF_F_TX_L4_MASK);
	uint32_t old = 0, now;
	uint16_t hc;

	if (fix)
		old = fold(seg_sum(d + pf->l4, at - pf->l4, n));
	memcpy(d + at, bytes, n);
	if (!fix)
		return;
	hc = (uint16_t)(d[pf->csum] << 8 | d[pf->csum + 1]);
	if (pf->zero_none && hc == 0)
		return;
	now = fold(seg_sum(d + pf->l4, at - pf->l4, n));
	hc = (uint16_t)~fold((uint16_t)~hc + (uint16_t)~old + now);
	if (pf->zero_none && hc == 0)
		hc = 0xffff;
	d[pf->csum] = (uint8_t)(hc >> 8);
	d[pf->csum + 1] = (uint8_t)hc;
}

void
probe_clear(struct rte_mbuf *m)
{
	memset(probe_of(m), 0, sizeof(struct probe_field));
}

/* An mbuf that carried a probe comes back with the probe's bytes: give it
 * the template's bytes again so a later packet is not taken for a probe. */
void
probe_unmark(const struct pool_state *p, struct rte_mbuf *m)
{
	struct probe_field *pf = probe_of(m);
	static const uint8_t zeros[PROBE_LEN];

	if (pf->off == 0)
		return;
	if (p->tmpl != NULL && pf->off + PROBE_LEN <= p->tmpl_len)
		rewrite(m, pf, pf->off, p->tmpl + pf->off, PROBE_LEN);
	else if (pf->off + PROBE_LEN <= m->buf_len - m->data_off)
		rewrite(m, pf, pf->off, zeros, PROBE_LEN);
	pf->off = 0;
}

void
probes_stamp(struct rte_mbuf **m, uint32_t n)
{
	uint64_t now = rte_rdtsc();

	for (uint32_t i = 0; i < n; i++) {
		struct probe_field *pf = probe_of(m[i]);

		if (pf->off != 0)
			rewrite(m[i], pf, pf->off + 8, &now, sizeof(now));
	}
}

int
surge_probe_mark(struct surge_burst *b, uint32_t i, uint16_t off, uint32_t seq)
{
	uint8_t probe[PROBE_LEN] = { 0 };
	uint32_t magic = PROBE_MAGIC;
	struct rte_mbuf *m;
	struct probe_field *pf;
	const struct pool_state *p;
	int rc = burst_check(b);

	if (rc != 0)
		return rc;
	p = b->pool >= 0 ? &rt()->pool[b->pool] : NULL;
	if (i >= b->n)
		return rt_error(-EINVAL, "probe: packet %u of a burst of %u", i, b->n);
	m = b->mbuf[i];
	if (off == 0 || off + PROBE_LEN > b->len[i] || off + PROBE_LEN > m->buf_len - m->data_off)
		return rt_error(-EINVAL, "probe at offset %u needs %u bytes, the packet has %u",
				off, PROBE_LEN, b->len[i]);
	pf = probe_of(m);
	memset(pf, 0, sizeof(*pf));
	if (p != NULL && p->l4_proto != 0 && off >= p->l2_len + p->l3_len) {
		pf->l4 = p->l2_len + p->l3_len;
		pf->csum = pf->l4 + (p->l4_proto == IPPROTO_UDP ? 6 : 16);
		pf->zero_none = p->l4_proto == IPPROTO_UDP && p->ip_version == 4;
	}
	memcpy(probe, &magic, 4);
	memcpy(probe + 4, &seq, 4);
	rewrite(m, pf, off, probe, PROBE_LEN);
	pf->off = off;
	b->probes++;
	if (p != NULL && !p->probed)
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
	idle_for_latency();
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
	return surge_latency_scan_samples(id, b, off, NULL, 0);
}

int
surge_latency_scan_samples(int id, const struct surge_burst *b, uint16_t off,
			   struct surge_latency_sample *out, uint32_t max)
{
	struct latency *l = get(id);
	double ns_per_cycle = 1e9 / (double)rt_hz();
	int found = 0, rc = burst_check(b);

	if (rc != 0)
		return rc;
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
		/* the TSCs of two CPUs may differ by a few cycles: a probe
		 * "received before it was sent" took no measurable time */
		uint64_t ns = sent < b->tsc ? (uint64_t)((double)(b->tsc - sent) * ns_per_cycle) : 0;

		track(l, seq);
		if (l->dup == dups)
			hist_add(&l->h, ns);
		if (out != NULL && (uint32_t)found < max) {
			out[found].ns = ns;
			out[found].seq = seq;
			out[found].duplicate = l->dup != dups;
		}
		found++;
	}
	return found;
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

int
surge_latency_count(void)
{
	return rt() != NULL ? __atomic_load_n(&rt()->nlat, __ATOMIC_ACQUIRE) : 0;
}

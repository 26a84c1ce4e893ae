/* SPDX-License-Identifier: BSD-3-Clause
 *
 * probe.c - the latency probe in a packet: a sequence number and a TSC
 * timestamp (latency.c is the receiving side).
 *
 * The TX side marks a probe (magic and sequence number written now) and
 * flags its mbuf with a dynamic field holding the probe's offset; the send
 * path writes the TSC into every flagged packet just before the packet is
 * handed to the driver, after any pacing wait, so the wait is not counted as
 * latency.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <netinet/in.h>

#include "csum.h"
#include "dataplane.h"
#include "probe.h"

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
probe_field_register(void)
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

/* Writes n bytes at frame offset `at`, updating the covering checksum. */
static void
rewrite(struct rte_mbuf *m, const struct probe_field *pf, uint16_t at, const void *bytes, uint16_t n)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	int fix = pf->csum != 0 && at >= pf->l4 && !(m->ol_flags & RTE_MBUF_F_TX_L4_MASK);
	uint32_t old = 0, now;
	uint16_t hc;

	if (fix)
		old = csum_fold(seg_sum(d + pf->l4, at - pf->l4, n));
	memcpy(d + at, bytes, n);
	if (!fix)
		return;
	hc = (uint16_t)(d[pf->csum] << 8 | d[pf->csum + 1]);
	if (pf->zero_none && hc == 0)
		return;
	now = csum_fold(seg_sum(d + pf->l4, at - pf->l4, n));
	hc = (uint16_t)~csum_fold((uint16_t)~hc + (uint16_t)~old + now);
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
	int rc = burst_ok(rt(), b);

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


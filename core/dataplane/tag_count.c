/* SPDX-License-Identifier: BSD-3-Clause
 *
 * tag_count.c - an OTG port's counts a burst at a time (issue 32): each
 * received frame classified by its flow tag (lua/surge/otg/flows.lua puts
 * "SOTG" and the flow's number right after a measured flow's headers),
 * counted per flow and, for a flow with metric tags, per value of its
 * tagged bits; and a tagged flow's sent frames counted per value. In the
 * port task's Lua the same work, a frame at a time, ran partly interpreted
 * (cdata boxed, trace aborts): a tagged flow sent at 0.4 of an untagged
 * one's rate (docs/performance.md, "OTG metric tags"). A pure file: the
 * bytes are the network's, every read bounded by the frame's length
 * (tests/unit/test_tag_count_fuzz.c); the latency probes it finds go back
 * to Lua for surge_latency_add, the frames without a tag too (ARP, ND and
 * echo for the port's devices).
 */
#include <errno.h>
#include <string.h>

#include "surge.h"

#define FCS 4                     /* what the wire adds to a frame: otg/flows.lua's FCS */
#define PROBE_MAGIC 0x50475253u   /* "SRGP" read as a little-endian uint32 (surge.h's probe format) */
#define NO_VALUE 0xffffu          /* a frame whose tagged bits lie past its end */

static inline uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The value of frame p (l bytes) by t: its tags' bits one after the
 * other; NO_VALUE when one lies past l or t is malformed (no tag, a bit
 * past 7, more than 12 bits in all). A tag's bits span at most 3 bytes
 * (bit + len <= 19). */
static inline uint32_t
tag_value(const struct surge_otg_tagger *t, const uint8_t *p, uint32_t l)
{
	uint32_t v = 0, bits = 0;

	if (t->n == 0 || t->n > SURGE_OTG_TAGS_MAX)
		return NO_VALUE;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct surge_otg_tagbits *g = &t->tag[i];
		uint32_t end = (uint32_t)g->bit + g->len, w = 0;
		uint32_t nb = (end + 7) / 8;

		bits += g->len;
		if (g->len == 0 || bits > SURGE_OTG_TAGS_MAX || g->bit > 7 || (uint32_t)g->byte + nb > l)
			return NO_VALUE;
		for (uint32_t k = 0; k < nb; k++)
			w = w << 8 | p[g->byte + k];
		w >>= nb * 8 - end;
		v = v << g->len | (w & ((1u << g->len) - 1));
	}
	return v;
}

/* A tagger checked and made ready for a burst's frames: each tag's 3
 * bytes from its first, shifted and masked; need the length a frame needs
 * for those reads (a shorter one is read exactly by tag_value). */
struct reader {
	uint32_t n, need;
	uint32_t byte[SURGE_OTG_TAGS_MAX], sh[SURGE_OTG_TAGS_MAX], len[SURGE_OTG_TAGS_MAX], mask[SURGE_OTG_TAGS_MAX];
};

/* 0, or -1 when t is malformed (as tag_value would find every frame). */
static int
reader_init(struct reader *r, const struct surge_otg_tagger *t)
{
	uint32_t bits = 0;

	r->n = 0;
	r->need = 0;
	if (t->n == 0 || t->n > SURGE_OTG_TAGS_MAX)
		return -1;
	r->n = t->n;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct surge_otg_tagbits *g = &t->tag[i];

		bits += g->len;
		if (g->len == 0 || bits > SURGE_OTG_TAGS_MAX || g->bit > 7)
			return -1;
		r->byte[i] = g->byte;
		r->sh[i] = 24u - g->bit - g->len;
		r->len[i] = g->len;
		r->mask[i] = (1u << g->len) - 1;
		if ((uint32_t)g->byte + 3 > r->need)
			r->need = (uint32_t)g->byte + 3;
	}
	return 0;
}

static inline uint32_t
reader_value(const struct reader *r, const struct surge_otg_tagger *t, const uint8_t *p, uint32_t l)
{
	uint32_t v = 0;

	if (l < r->need)
		return tag_value(t, p, l);
	for (uint32_t i = 0; i < r->n; i++) {
		const uint8_t *q = p + r->byte[i];

		v = v << r->len[i] | (((uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2]) >> r->sh[i] & r->mask[i]);
	}
	return v;
}

static inline void
add(struct surge_otg_count *c, uint32_t l, double tsc)
{
	c->frames += 1;
	c->bytes += l + FCS;
	if (c->first == 0)
		c->first = tsc;
	c->last = tsc;
}

/* Counts frame p (l bytes, received at tsc) of flow k whose tag is at o. */
static inline void
count_flow(struct surge_otg_rx *st, uint32_t k, uint32_t o, const uint8_t *p, uint32_t l, uint64_t tsc)
{
	double t = (double)tsc;

	add(&st->rx[k], l, t);
	if (st->tagger_of != NULL && st->tagger_of[k] >= 0) {
		const struct surge_otg_tagger *g = &st->taggers[st->tagger_of[k]];

		if (g->hb == o) {
			uint32_t v = tag_value(g, p, l);

			if (v != NO_VALUE && (uint64_t)g->at + v < st->nslots)
				add(&st->slots[g->at + v], l, t);
		}
	}
	if (st->lat != NULL && st->lat[k] >= 0) {
		uint32_t at = o + SURGE_OTG_TAG_LEN;

		if (l >= at + SURGE_PROBE_LEN && le32(p + at) == PROBE_MAGIC) {
			uint64_t sent = le64(p + at + 8);

			if (sent != 0) {   /* 0: marked, never stamped (no departure) */
				struct surge_otg_probe *pr = &st->probe[st->n_probe++];

				pr->lat = st->lat[k];
				pr->seq = le32(p + at + 4);
				pr->ns = sent < tsc ? (uint64_t)((double)(tsc - sent) * st->ns_per_cycle) : 0;
			}
		}
	}
}

int
surge_otg_rx_count(struct surge_otg_rx *st, const struct surge_burst *b)
{
	if (st == NULL || b == NULL || b->n > SURGE_BURST_MAX || (st->noffs > 0 && st->offs == NULL) ||
	    (st->nflows > 0 && st->rx == NULL) || (st->tagger_of != NULL && (st->taggers == NULL || st->slots == NULL)))
		return -EINVAL;
	st->n_other = 0;
	st->n_probe = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		const uint8_t *p = b->data[i];
		uint32_t l = b->len[i], j;

		for (j = 0; j < st->noffs; j++) {
			uint32_t o = st->offs[j];

			if (l >= o + SURGE_OTG_TAG_LEN && memcmp(p + o, "SOTG", 4) == 0) {
				uint32_t k = (uint32_t)p[o + 4] << 8 | p[o + 5];

				if (k < st->nflows)
					count_flow(st, k, o, p, l, b->tsc);
				break;    /* a tag, whatever its flow number: not the port's devices' */
			}
		}
		if (j == st->noffs)
			st->other[st->n_other++] = (uint16_t)i;
	}
	return (int)st->n_other;
}

int
surge_otg_tx_read(struct surge_otg_tx *tx, const struct surge_otg_tagger *t, const struct surge_burst *b,
		  struct surge_otg_count *slots, uint32_t nslots)
{
	struct reader r;

	if (tx == NULL || t == NULL || b == NULL || slots == NULL || b->n > SURGE_BURST_MAX)
		return -EINVAL;
	tx->n = 0;
	if (reader_init(&r, t) != 0) {
		for (uint32_t i = 0; i < b->n; i++)
			tx->value[i] = NO_VALUE;
		tx->n = b->n;
		return (int)b->n;
	}
	/* every frame's first tagged byte fetched before the first is read: the
	 * flow's rewrite has just stored into those lines, which the cache may
	 * not hold yet (the pool's mbufs cycle through more than it holds); read
	 * one at a time they waited in turn (docs/performance.md, "OTG metric tags") */
	for (uint32_t i = 0; i < b->n; i++)
		__builtin_prefetch(b->data[i] + r.byte[0]);
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t v = reader_value(&r, t, b->data[i], b->len[i]);

		tx->len[i] = b->len[i];
		if ((uint64_t)t->at + v >= nslots)    /* NO_VALUE too: slots hold at most 2^20 */
			v = NO_VALUE;
		tx->value[i] = (uint16_t)v;
		if (v != NO_VALUE) {
			struct surge_otg_count *c = &slots[t->at + v];

			c->frames += 1;
			c->bytes += b->len[i] + FCS;
		}
	}
	tx->n = b->n;
	return (int)b->n;
}

int
surge_otg_tx_unsent(const struct surge_otg_tx *tx, const struct surge_otg_tagger *t, struct surge_otg_count *slots,
		    uint32_t nslots, uint32_t sent)
{
	uint32_t back = 0;

	if (tx == NULL || t == NULL || slots == NULL || sent > tx->n || tx->n > SURGE_BURST_MAX)
		return -EINVAL;
	for (uint32_t i = sent; i < tx->n; i++) {
		uint32_t v = tx->value[i];

		if (v == NO_VALUE || (uint64_t)t->at + v >= nslots)
			continue;
		struct surge_otg_count *c = &slots[t->at + v];

		c->frames -= 1;
		c->bytes -= tx->len[i] + FCS;
		back++;
	}
	return (int)back;
}

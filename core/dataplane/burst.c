/* SPDX-License-Identifier: BSD-3-Clause
 *
 * burst.c - bursts: make, allocate (the template path), check, free.
 *
 * Calls are batch-shaped so one FFI call moves a whole burst (send.c and
 * recv.c hand them to the driver).
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_cycles.h>

#include "burst.h"


int
burst_check(const struct surge_burst *b)
{
	return burst_ok(rt(), b);
}

struct surge_burst *
surge_burst_new(int pool, uint32_t cap)
{
	struct surge_burst *b;
	struct pool_state *p = NULL;

	if (cap == 0 || cap > SURGE_BURST_MAX) {
		rt_error(-EINVAL, "burst size %u outside 1..%d", cap, SURGE_BURST_MAX);
		return NULL;
	}
	if (pool >= 0 && (p = pool_get(pool)) == NULL) {
		rt_error(-EINVAL, "no pool %d", pool);
		return NULL;
	}
	/* a task's own pool has a single-producer/single-consumer ring: another
	 * lcore allocating or freeing would corrupt it. Bursts never leave their
	 * VM (lcore), so refusing the burst here guards every alloc and free at
	 * no cost in the hot path. */
	if (p != NULL && p->single_owner && p->owner_lcore != (int32_t)lcore_self()) {
		rt_error(-EPERM, "pool %d belongs to the task on lcore %d that made it (a single-owner "
			 "pool): lcore %u cannot take bursts from it; make it with shared = true to use "
			 "it from several lcores", pool, p->owner_lcore, lcore_self());
		return NULL;
	}
	b = rte_zmalloc_socket("surge_burst", sizeof(*b), RTE_CACHE_LINE_SIZE, (int)rte_socket_id());
	if (b == NULL) {
		rt_error(-ENOMEM, "out of memory for a burst");
		return NULL;
	}
	b->cap = cap;
	b->pool = pool;
	return b;
}

void
surge_burst_free(struct surge_burst *b)
{
	if (burst_check(b) == 0)
		burst_empty(b);
}

void
surge_burst_destroy(struct surge_burst *b)
{
	if (b == NULL)
		return;
	surge_burst_free(b);
	rte_free(b);
}

/* Takes up to n mbufs; an all-or-nothing bulk get that fails falls back to
 * whatever the pool still has, so an empty pool gives a short burst. */
static uint32_t
take(struct rte_mempool *mp, void **out, uint32_t n)
{
	while (n > 0) {
		if (rte_mempool_get_bulk(mp, out, n) == 0)
			return n;
		n = RTE_MIN(n - 1, rte_mempool_avail_count(mp));
	}
	return 0;
}

/* The raw template path: mbufs of a template pool are taken as they came
 * back, without rte_pktmbuf_reset. That is safe because of what the standard
 * free path guarantees and what surge never does (docs/architecture.md,
 * "Allocation without reset"): rte_pktmbuf_free hands an mbuf back to its
 * pool with refcnt 1, nb_segs 1 and next NULL; surge never chains a template
 * mbuf, never moves its data_off, and sets its lengths at every send. What a
 * send needs is written here (data pointer, length) or at the send (mbuf
 * lengths, checksum offload flags); the offload flags of a pool that ever
 * used offload are cleared here, a probe mark only in a probed pool, and
 * the mbuf lengths only in a resized pool (one a send gave other lengths).
 * Debug builds (the sanitizer pass) check those invariants on every mbuf. */
static inline void
raw_invariants(const struct pool_state *p, const struct rte_mbuf *m)
{
#ifndef NDEBUG
	RTE_VERIFY(m->pool == p->mp);
	RTE_VERIFY(rte_mbuf_refcnt_read(m) == 1);
	RTE_VERIFY(m->nb_segs == 1 && m->next == NULL);
	RTE_VERIFY(m->data_off == RTE_PKTMBUF_HEADROOM);
	RTE_VERIFY(p->offloaded || (m->ol_flags & ~RTE_MBUF_F_EXTERNAL) == 0);
	RTE_VERIFY(p->resized || (m->data_len == p->tmpl_len && m->pkt_len == p->tmpl_len));
	RTE_VERIFY(p->data_delta == 0 || rte_pktmbuf_mtod(m, const uint8_t *) == (const uint8_t *)m + p->data_delta);
#else
	(void)p, (void)m;
#endif
}

uint32_t
surge_burst_alloc(struct surge_burst *b, uint32_t n)
{
	struct runtime *r = rt();
	struct pool_state *p;

	if (unlikely(burst_ok(r, b) != 0) || (p = pool_at(r, b->pool)) == NULL)
		return 0;
	burst_empty(b);
	if (unlikely(!rt_live(r, rte_lcore_id())) && run_stop_expired() != 0)
		return 0;   /* the Lua side raises "run stopped" */
	return burst_fill(p, b, n);
}

uint32_t
rx_split_end(struct rx_split *s, struct surge_burst *rx)
{
	rx->n = s->keep;
	if (s->ndone > 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)s->done, s->ndone);
	return s->keep;
}

/* surge_burst_alloc's work on a checked, empty burst of pool p (send.c's
 * fused send + alloc calls it after a send emptied the burst) */
uint32_t
burst_fill(struct pool_state *p, struct surge_burst *b, uint32_t n)
{
	uint32_t got;
	uint16_t len, delta;

	b->tsc = 0;     /* generated, not received: pcap writers stamp them now */
	if (n > b->cap)
		n = b->cap;
	got = take(p->mp, b->mbuf, n);
	if (unlikely(got < n))
		__atomic_fetch_add(&p->alloc_fail, 1, __ATOMIC_RELAXED);
	len = p->tmpl_len;
	delta = p->data_delta;
	/* the send's lengths: a send that finds len[] unchanged need not touch
	 * the mbufs again. Every mbuf of a pool not resized already holds them
	 * (the fill wrote them, no send wrote another, the free keeps them), so
	 * only a resized pool's are written, as the bare loop does: two stores
	 * a packet, ~0.5 cycle of the template path's ~14 (issue 20)... */
	for (uint32_t i = 0; i < got; i++)
		raw_invariants(p, b->mbuf[i]);
	if (unlikely(p->resized))
		for (uint32_t i = 0; i < got; i++) {
			struct rte_mbuf *m = b->mbuf[i];

			m->data_len = len;
			m->pkt_len = len;
		}
	/* ...and what Lua sees in loops of their own, which the compiler
	 * vectorises: each data pointer at the pool's fixed offset */
	if (likely(delta != 0))
		for (uint32_t i = 0; i < got; i++)
			b->data[i] = (uint8_t *)b->mbuf[i] + delta;
	else
		for (uint32_t i = 0; i < got; i++)
			b->data[i] = rte_pktmbuf_mtod((struct rte_mbuf *)b->mbuf[i], uint8_t *);
	for (uint32_t i = 0; i < got; i++)
		b->len[i] = len;
	/* read once a burst: the flags only ever go from 0 to 1, before the
	 * mbufs they concern went back to the pool. Only pools that used
	 * offload or carried probes look further (the probe field lives in
	 * the mbuf's second cache line). */
	if (unlikely(p->offloaded | p->probed)) {
		for (uint32_t i = 0; i < got; i++) {
			struct rte_mbuf *m = b->mbuf[i];

			if (p->offloaded)
				m->ol_flags = 0;
			if (p->probed)
				probe_unmark(p, m);
		}
	}
	b->n = got;
	b->from_alloc = got > 0;
	b->plain = 1;   /* one pool's mbufs as its free left them (raw_invariants) */
	return got;
}

/* A burst from Lua and an index into it: 0 when both may be used. */
static int
burst_index_ok(const struct surge_burst *b, uint32_t i)
{
	int rc = burst_check(b);

	if (rc != 0)
		return rc;
	if (i >= b->n)
		return rt_error(-EINVAL, "burst index %u out of range (n = %u)", i, b->n);
	return 0;
}

int
surge_burst_refcnt(const struct surge_burst *b, uint32_t i)
{
	int rc = burst_index_ok(b, i);

	return rc != 0 ? rc : rte_mbuf_refcnt_read((struct rte_mbuf *)b->mbuf[i]);
}

/* len[i] is the script's to set: whatever reads a frame's bytes (a send,
 * a pcap writer, burst:bytes) first checks it here, so nothing reads past
 * the mbuf or passes on a frame shorter than an Ethernet header. For a
 * burst its caller already checked, packet i < n. */
int
burst_frame_len_ok(const struct surge_burst *b, uint32_t i)
{
	const struct rte_mbuf *m = b->mbuf[i];
	/* no mbuf: C code handing its own buffers to a pcap writer (Lua cannot
	 * set mbuf[] or data[]), whose size it knows */
	uint32_t room = m != NULL ? (uint32_t)(m->buf_len - m->data_off) : UINT16_MAX;

	if (b->len[i] < RTE_ETHER_HDR_LEN || b->len[i] > room)
		return rt_error(-EINVAL, "packet %u of the burst has length %u, outside %u..%u",
				i, b->len[i], RTE_ETHER_HDR_LEN, room);
	return 0;
}

/* burst_frame_len_ok for Lua (burst:bytes): the burst and i checked first */
int
surge_burst_frame_ok(const struct surge_burst *b, uint32_t i)
{
	int rc = burst_index_ok(b, i);

	return rc != 0 ? rc : burst_frame_len_ok(b, i);
}

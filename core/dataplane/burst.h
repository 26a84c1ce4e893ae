/* SPDX-License-Identifier: BSD-3-Clause
 *
 * burst.h - the checks every burst entry point (burst.c, send.c, recv.c)
 * makes, inline: an FFI entry reads rt() and its lcore id once and hands
 * them down, and a call per check is measurable on a template send
 * (docs/performance.md). Internal to the data plane.
 */
#ifndef SURGE_BURST_H
#define SURGE_BURST_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dataplane.h"

/* An mbuf is plain when it is as a receive or a template allocation
 * leaves it: refcnt 1, one segment, direct (rte_mbuf_core.h: next is NULL
 * in a packet of one segment). A burst of plain mbufs of one pool needs no
 * rte_pktmbuf_free_bulk: its per-mbuf prefree would do nothing, so one
 * rte_mempool_put_bulk puts them back (issue 20). 0 when m is plain and
 * from mp; the caller ORs it over a burst. Only loads of the mbuf's first
 * cache line, which every receive and allocation has just touched. */
static inline uint64_t
mbuf_not_plain(const struct rte_mbuf *m, const struct rte_mempool *mp)
{
	return (uint64_t)(m->pool != mp) | (uint64_t)(rte_mbuf_refcnt_read(m) ^ 1) |
	       (uint64_t)(m->nb_segs ^ 1) | (m->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL));
}

/* Frees n mbufs: one mempool put when every one is plain and from one pool
 * (the check is one pass of loads and ORs: no per-mbuf branches and no copy
 * into a pending array, ~1-2 cycles a packet of an RX loop's ~13 on
 * net_null), the general free otherwise. */
static inline void
mbufs_free(struct rte_mbuf **m, uint32_t n)
{
	struct rte_mempool *mp = m[0]->pool;
	uint64_t bad = 0;

	for (uint32_t i = 0; i < n; i++)
		bad |= mbuf_not_plain(m[i], mp) | (uint64_t)(uintptr_t)m[i]->next;
	if (likely(bad == 0))
		rte_mempool_put_bulk(mp, (void **)m, n);
	else
		rte_pktmbuf_free_bulk(m, n);
}

/* Frees what a checked burst holds. b->plain: whoever filled the burst
 * (recv, burst_fill) found every mbuf plain and from mbuf[0]'s pool in the
 * pass it made over them anyway, so the free skips its own pass over the
 * mbufs (their headers are not read again: ~2-3 cycles a packet of the
 * bare RX loop, issue 20). What may change an mbuf while the burst holds
 * it clears the flag or empties the burst (send_clones' refcount update
 * empties it; dropping some mbufs from a burst keeps the rest plain); Lua
 * cannot write mbuf[]. Debug builds (the sanitizer pass) check the claim. */
static inline void
burst_empty(struct surge_burst *b)
{
	if (b->n > 0) {
		struct rte_mbuf **m = (struct rte_mbuf **)b->mbuf;

		if (likely(b->plain)) {
#ifndef NDEBUG
			for (uint32_t i = 0; i < b->n; i++)
				RTE_VERIFY(mbuf_not_plain(m[i], m[0]->pool) == 0 && m[i]->next == NULL);
#endif
			rte_mempool_put_bulk(m[0]->pool, (void **)m, b->n);
		} else {
			mbufs_free(m, b->n);
		}
	}
	b->n = 0;
	b->probes = 0;
	b->from_alloc = 0;
	b->timed = 0;
	b->plain = 0;
}

/* recv.c: a poll in two halves, around the caller's pass over the mbufs
 * (surge_rx_recv's, which fills data[] and len[] for Lua; the measuring
 * receiver's, which parses the frames as it reads them, dutrx.c).
 * rx_poll_begin checks and claims, empties the burst, receives into
 * b->mbuf and stamps b->tsc: the count received or -errno. rx_poll_end
 * sets b->n and b->plain (bad == 0, see rx_view) and counts the poll;
 * both inline, below claim(): a call each costs a poll ~10 cycles. */

/* The one read of a received mbuf's first cache line: its frame (data
 * pointer, length), its bytes and whether it is plain (burst_empty's one
 * mempool put). The loop is bound by its loads: data_off, refcnt and
 * nb_segs come in one 64-bit load (rearm_data), pkt_len and data_len in
 * another, 5 loads a packet instead of 8 (issue 20). */
#if RTE_BYTE_ORDER != RTE_LITTLE_ENDIAN
#error "burst.h's wide mbuf loads assume a little-endian CPU"
#endif
_Static_assert(offsetof(struct rte_mbuf, refcnt) == offsetof(struct rte_mbuf, data_off) + 2 &&
	       offsetof(struct rte_mbuf, nb_segs) == offsetof(struct rte_mbuf, data_off) + 4 &&
	       offsetof(struct rte_mbuf, port) == offsetof(struct rte_mbuf, data_off) + 6 &&
	       offsetof(struct rte_mbuf, data_len) == offsetof(struct rte_mbuf, pkt_len) + 4,
	       "rte_mbuf layout");
#define PLAIN_REFCNT_SEGS 0x00010001u   /* refcnt 1 (low half), nb_segs 1 */

struct rx_view {
	const struct rte_mempool *mp;  /* the first mbuf's pool: a plain burst's */
	uint64_t bytes, bad;
};

static inline void
rx_view_begin(struct rx_view *v, const struct surge_burst *b, uint16_t n)
{
	v->mp = n > 0 ? ((const struct rte_mbuf *)b->mbuf[0])->pool : NULL;
	v->bytes = 0;
	v->bad = 0;
}

/* m's frame into *p, its length returned */
static inline uint16_t
rx_view_next(struct rx_view *v, const void *mv, const uint8_t **p)
{
	const struct rte_mbuf *m = mv;
	uint64_t rearm, lens;

	memcpy(&rearm, &m->data_off, sizeof(rearm));
	memcpy(&lens, &m->pkt_len, sizeof(lens));
	*p = (const uint8_t *)m->buf_addr + (uint16_t)rearm;
	v->bytes += (uint32_t)lens;
	v->bad |= ((rearm >> 16) & 0xffffffffu) ^ PLAIN_REFCNT_SEGS;
	v->bad |= (uint64_t)(m->pool != v->mp) | (m->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL));
	return (uint16_t)(lens >> 32);
}

/* Finds the queue slot and claims it for this lcore (`me`) on first use: a
 * queue has one writer, so its counters need no atomics. */
static inline struct queue_slot *
claim(struct runtime *r, int32_t me, uint16_t port, uint16_t q, int tx, struct port_state **psp,
      int *rc)
{
	struct port_state *ps;
	struct queue_slot *s;
	int32_t holder;

	/* a loop that ignores surge.running() ends here (base/run_state.c) */
	if (unlikely(!rt_live(r, (unsigned)me)) && (*rc = run_stop_expired()) != 0)
		return NULL;
	if (unlikely(port >= RTE_MAX_ETHPORTS || !r->port[port].opened)) {
		*rc = rt_error(-ENODEV, "port %u is not open", port);
		return NULL;
	}
	ps = &r->port[port];
	if (unlikely(q >= (tx ? ps->conf.txq : ps->conf.rxq))) {
		*rc = rt_error(-EINVAL, "port %u has no %s queue %u (opened with %u)", port, tx ? "tx" : "rx",
			 q, tx ? ps->conf.txq : ps->conf.rxq);
		return NULL;
	}
	s = tx ? &ps->txq[q] : &ps->rxq[q];
	if (unlikely(owner_claim(&s->st.lcore, me, &holder) != 0)) {
		*rc = rt_error(-EBUSY, "port %u %s queue %u is already used by lcore %d", port,
			 tx ? "tx" : "rx", q, holder);
		return NULL;
	}
	*psp = ps;
	return s;
}

/* The TSC after the loads before it: RDTSC alone may run ahead of them.
 * RDTSCP "waits until all previous instructions have executed and all
 * previous loads are globally visible" (Intel SDM; AMD APM: older
 * instructions retire first), which is what a receive time must follow.
 * LFENCE + RDTSC orders the same for more on AMD EPYC (LFENCE is
 * dispatch-serialising there): 0.1-0.5 cycles a packet of the bare RX
 * loop's ~11 (issue 20). LFENCE stays for a CPU (or VM) without RDTSCP. */
#ifdef RTE_ARCH_X86
#include <x86intrin.h>
static inline uint64_t
rx_tsc_after_loads(int rdtscp)
{
	unsigned aux;

	if (likely(rdtscp))
		return __rdtscp(&aux);
	_mm_lfence();
	return rte_rdtsc();
}
#else
static inline uint64_t
rx_tsc_after_loads(int rdtscp)
{
	(void)rdtscp;
	rte_mb();
	return rte_rdtsc();
}
#endif

static inline int
rx_poll_begin(struct runtime *r, uint16_t port, uint16_t q, struct surge_burst *b, struct queue_slot **sp)
{
	struct port_state *ps;
	uint16_t n;
	int rc = burst_ok(r, b);
	struct queue_slot *s;

	if (unlikely(rc != 0))
		return rc;
	s = claim(r, (int32_t)lcore_self(), port, q, 0, &ps, &rc);
	if (unlikely(s == NULL))
		return rc;
	burst_empty(b);
	idle_before_poll(port, q);   /* the sleep earned by light polls: never after one */
	n = rte_eth_rx_burst(port, q, (struct rte_mbuf **)b->mbuf, (uint16_t)b->cap);
	/* the receive time of a latency probe. RDTSC may run ahead of the
	 * loads before it (Intel SDM: a fence before RDTSC when it must follow
	 * them): a poll spinning while a probe arrives could read the clock
	 * before the load that saw the probe completed, at or before the
	 * sender's stamp, a latency of 0 (issue 22 item 3). Ordered only
	 * where packets came and only in a run that has a latency receiver
	 * (a run without one times no probe; the wait for the poll's loads
	 * is ~1 cycle a packet of a bare receive loop, issue 20). The flag
	 * sits beside rdtscp, on a line the poll reads anyway */
	if (n > 0 && r->rx_tsc_ordered)
		b->tsc = rx_tsc_after_loads(r->rdtscp);
	else
		b->tsc = rte_rdtsc();
	*sp = s;
	return n;
}

static inline void
rx_poll_end(struct queue_slot *s, struct surge_burst *b, uint16_t n, uint64_t bytes, uint64_t bad)
{
	b->n = n;
	b->plain = bad == 0;
	if (n > 0) {
		s->st.packets += n;
		s->st.bytes += bytes;
		s->st.bursts++;
	}
	idle_after_poll(n, b->cap, b->tsc);
}

#endif /* SURGE_BURST_H */

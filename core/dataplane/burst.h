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

#include <rte_mbuf.h>

#include "dataplane.h"

/* burst_check() with the runtime at hand */
static inline int
burst_ok(struct runtime *r, const struct surge_burst *b)
{
	if (unlikely(b == NULL))
		return rt_error(-EINVAL, "no burst (NULL)");
	if (unlikely(b->cap == 0 || b->cap > SURGE_BURST_MAX || b->n > b->cap))
		return rt_error(-EINVAL, "corrupt burst: n %u, capacity %u (at most %d)", b->n, b->cap,
				SURGE_BURST_MAX);
	if (unlikely(b->pool != -1 && pool_at(r, b->pool) == NULL))
		return rt_error(-EINVAL, "corrupt burst: no pool %d", b->pool);
	return 0;
}

/* Frees n mbufs. When every one is as a receive or a template send
 * leaves it (one pool, refcnt 1, one segment, no next, direct), that is
 * what rte_pktmbuf_free_bulk would find after its per-mbuf prefree, so
 * they go back with one rte_mempool_put_bulk: no per-mbuf branches and no
 * copy into a pending array, ~1-2 cycles a packet of an RX loop's ~13 on
 * net_null (issue 20). Any other burst takes the general path. */
static inline void
mbufs_free(struct rte_mbuf **m, uint32_t n)
{
	struct rte_mempool *mp = m[0]->pool;
	uint64_t bad = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct rte_mbuf *x = m[i];

		bad |= (uint64_t)(x->pool != mp) | (uint64_t)(rte_mbuf_refcnt_read(x) ^ 1) |
		       (uint64_t)(x->nb_segs ^ 1) | (uint64_t)(uintptr_t)x->next |
		       (x->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL));
	}
	if (likely(bad == 0))
		rte_mempool_put_bulk(mp, (void **)m, n);
	else
		rte_pktmbuf_free_bulk(m, n);
}

/* Frees what a checked burst holds. */
static inline void
burst_empty(struct surge_burst *b)
{
	if (b->n > 0)
		mbufs_free((struct rte_mbuf **)b->mbuf, b->n);
	b->n = 0;
	b->probes = 0;
	b->from_alloc = 0;
	b->timed = 0;
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

#endif /* SURGE_BURST_H */

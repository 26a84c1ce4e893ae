/* SPDX-License-Identifier: BSD-3-Clause
 *
 * burst.c - the hot path: allocate, send (with clones), receive, free.
 *
 * Calls are batch-shaped so one FFI call moves a whole burst. Clone sends
 * follow Linux pktgen's clone_skb: one refcount add of N-1 per mbuf, then N
 * pointers to it on the wire. Every mbuf leaves here either owned by the
 * driver or freed and counted as a drop; none is lost.
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_cycles.h>

#include "runtime.h"

#define CLONES_MAX 1024          /* keeps refcnt (16 bit) far from overflow */
#define CHUNK 512                /* pointers handed to one tx_burst call */

struct surge_burst *
surge_burst_new(int pool, uint32_t cap)
{
	struct surge_burst *b;

	if (cap == 0 || cap > SURGE_BURST_MAX) {
		rt_error(-EINVAL, "burst size %u outside 1..%d", cap, SURGE_BURST_MAX);
		return NULL;
	}
	if (pool >= 0 && pool_get(pool) == NULL) {
		rt_error(-EINVAL, "no pool %d", pool);
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
	if (b->n > 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)b->mbuf, b->n);
	b->n = 0;
	b->probes = 0;
	b->timed = 0;
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

uint32_t
surge_burst_alloc(struct surge_burst *b, uint32_t n)
{
	struct pool_state *p = pool_get(b->pool);
	uint32_t got;

	if (p == NULL)
		return 0;
	surge_burst_free(b);
	b->tsc = 0;     /* generated, not received: pcap writers stamp them now */
	if (n > b->cap)
		n = b->cap;
	got = take(p->mp, b->mbuf, n);
	if (unlikely(got < n))
		__atomic_fetch_add(&p->alloc_fail, 1, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < got; i++) {
		struct rte_mbuf *m = b->mbuf[i];

		rte_pktmbuf_reset(m);
		b->data[i] = rte_pktmbuf_mtod(m, uint8_t *);
		/* only pools that carried probes look at the probe field: it lives
		 * in the mbuf's second cache line */
		if (unlikely(p->probed))
			probe_unmark(p, m);
		b->len[i] = p->tmpl_len;
	}
	b->n = got;
	return got;
}

int
surge_burst_refcnt(const struct surge_burst *b, uint32_t i)
{
	if (i >= b->n)
		return rt_error(-EINVAL, "burst index %u out of range (n = %u)", i, b->n);
	return rte_mbuf_refcnt_read((struct rte_mbuf *)b->mbuf[i]);
}

/* Finds the queue slot and claims it for this lcore on first use: a queue
 * has one writer, so its counters need no atomics. */
static struct queue_slot *
claim(uint16_t port, uint16_t q, int tx, struct port_state **psp, int *rc)
{
	struct runtime *r = rt();
	struct port_state *ps;
	struct queue_slot *s;
	int32_t me = (int32_t)rte_lcore_id(), none = -1;

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
	if (likely(s->st.lcore == me))
		goto ok;
	if (!__atomic_compare_exchange_n(&s->st.lcore, &none, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		*rc = rt_error(-EBUSY, "port %u %s queue %u is already used by lcore %d", port,
			 tx ? "tx" : "rx", q, s->st.lcore);
		return NULL;
	}
ok:
	*psp = ps;
	return s;
}

/* Applies len[] to the mbufs and checks what the queue promised the driver. */
static int
prepare(uint16_t port, uint16_t q, struct port_state *ps, struct queue_slot *s,
	struct surge_burst *b, uint32_t clones, uint64_t *bytes)
{
	uint64_t sum = 0;
	const struct pool_state *pl = ps->csum && b->pool >= 0 ? &rt()->pool[b->pool] : NULL;

	if (unlikely(clones > 1 && !ps->conf.clones))
		return rt_error(-EINVAL, "port %u tx queue %u: clone send refused: the port was opened "
				"without clones (MBUF_FAST_FREE %s); open it with clones = true",
				port, q, ps->fast_free ? "on" : "allowed");
	if (unlikely(clones > CLONES_MAX))
		return rt_error(-EINVAL, "clones = %u, at most %d", clones, CLONES_MAX);
	if (unlikely(ps->handover && b->pool >= 0 && rt()->pool[b->pool].single_owner))
		return rt_error(-EINVAL, "port %u (%s) hands sent mbufs to its receiver, which frees them "
				"on another lcore: make the pool with shared = true", port, ps->driver);
	for (uint32_t i = 0; i < b->n; i++) {
		struct rte_mbuf *m = b->mbuf[i];
		uint16_t len = b->len[i];

		if (unlikely(len < RTE_ETHER_HDR_LEN || len > m->buf_len - m->data_off))
			return rt_error(-EINVAL, "packet %u of the burst has length %u, outside %u..%u",
					i, len, RTE_ETHER_HDR_LEN, m->buf_len - m->data_off);
		if (unlikely(len > ps->max_len))
			return rt_error(-EMSGSIZE, "packet %u of the burst is %u bytes: port %u's MTU %u "
					"allows %u (open the port with mtu = N where it takes jumbo frames)",
					i, len, port, ps->mtu, ps->max_len);
		if (ps->fast_free) {
			if (unlikely(rte_mbuf_refcnt_read(m) != 1))
				return rt_error(-EINVAL, "port %u tx queue %u uses MBUF_FAST_FREE: packet %u "
						"is shared (refcount %u)", port, q, i, rte_mbuf_refcnt_read(m));
			if (unlikely(s->pool == NULL))
				s->pool = m->pool;
			else if (unlikely(s->pool != m->pool))
				return rt_error(-EINVAL, "port %u tx queue %u uses MBUF_FAST_FREE: all its "
						"mbufs must come from one pool", port, q);
		}
		m->data_len = len;
		m->pkt_len = len;
		sum += len;
		if (pl != NULL && pl->ip_version != 0 && m->pool == pl->mp)   /* not forwarded ones */
			offload_csum_prepare(m, pl, ps->csum);
	}
	*bytes = sum;
	return 0;
}

/* Sends through the pacer when the queue has a rate, straight otherwise. */
static uint32_t
push(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts, uint32_t n,
     uint32_t clones, const uint32_t *gap_ns, uint32_t ptr_base, int stamp)
{
	/* an unpaced queue with no new rate request costs one compare here */
	if (unlikely(s->pc.active || __atomic_load_n(&s->req.seq, __ATOMIC_RELAXED) != s->pc.seq_seen) &&
	    pacer_refresh(s, (double)rt_hz(), rte_rdtsc()))
		return pace_push(port, q, s, pkts, n, clones,
				 s->pc.r.pattern == SURGE_PACE_GAPS ? gap_ns : NULL, ptr_base, stamp);
	return push_all(port, q, pkts, n, stamp);
}

static uint32_t
send_clones(uint16_t port, uint16_t q, struct queue_slot *s, struct surge_burst *b, uint32_t n,
	    uint32_t clones, int stamp, uint64_t *bytes)
{
	struct rte_mbuf *ptrs[CHUNK];
	uint32_t k = 0, sent_all = 0;
	uint64_t lost_bytes = 0;

	for (uint32_t i = 0; i < n; i++)
		rte_mbuf_refcnt_update(b->mbuf[i], (int16_t)(clones - 1));
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t c = 0; c < clones; c++) {
			ptrs[k++] = b->mbuf[i];
			if (k == CHUNK || (i == n - 1 && c == clones - 1)) {
				uint32_t base = i * clones + c + 1 - k;   /* pointer index of ptrs[0] */
				uint32_t done = push(port, q, s, ptrs, k, clones, b->gap_ns, base,
						     stamp);

				for (uint32_t j = done; j < k; j++) {
					lost_bytes += ptrs[j]->data_len;
					rte_pktmbuf_free(ptrs[j]);
				}
				sent_all += done;
				k = 0;
			}
		}
	}
	*bytes = *bytes * clones - lost_bytes;
	return sent_all;
}

int
surge_tx_send(uint16_t port, uint16_t q, struct surge_burst *b, uint32_t clones)
{
	struct port_state *ps;
	uint64_t bytes, unsent0;
	uint32_t n = b->n, sent, total;
	int rc = 0, stamp;
	struct queue_slot *s = claim(port, q, 1, &ps, &rc);

	if (unlikely(s == NULL))
		return rc;
	if (n == 0)
		return 0;
	if (clones == 0)
		clones = 1;
	if (unlikely((rc = prepare(port, q, ps, s, b, clones, &bytes)) != 0))
		return rc;
	if (unlikely(b->timed) && (rc = pace_timed_burst(port, q, s)) != 0)
		return rc;
	stamp = b->probes > 0;
	b->n = 0;       /* from here the mbufs belong to the driver or are freed */
	b->probes = 0;
	b->timed = 0;
	total = n * clones;
	unsent0 = s->st.unsent;
	if (clones == 1) {
		sent = push(port, q, s, (struct rte_mbuf **)b->mbuf, n, 1, b->gap_ns, 0, stamp);
		for (uint32_t j = sent; j < n; j++) {
			bytes -= b->len[j];
			rte_pktmbuf_free(b->mbuf[j]);
		}
	} else {
		sent = send_clones(port, q, s, b, n, clones, stamp, &bytes);
	}
	s->st.packets += sent;
	s->st.bytes += bytes;
	/* not sent: either never due before the stop (unsent, counted by the
	 * pacer) or refused by the driver until the stop (drops) */
	s->st.drops += total - sent - (s->st.unsent - unsent0);
	if (sent > 0)
		s->st.bursts++;
	return (int)sent;
}

int
surge_rx_recv(uint16_t port, uint16_t q, struct surge_burst *b)
{
	struct port_state *ps;
	uint64_t bytes = 0, start;
	uint16_t n;
	int rc = 0;
	struct queue_slot *s = claim(port, q, 0, &ps, &rc);

	if (unlikely(s == NULL))
		return rc;
	surge_burst_free(b);
	idle_before_poll(port, q);   /* the sleep earned by light polls: never after one */
	start = rte_rdtsc();
	n = rte_eth_rx_burst(port, q, (struct rte_mbuf **)b->mbuf, (uint16_t)b->cap);
	b->tsc = rte_rdtsc();
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = b->mbuf[i];

		b->data[i] = rte_pktmbuf_mtod(m, uint8_t *);
		b->len[i] = m->data_len;
		bytes += m->pkt_len;
	}
	b->n = n;
	if (n > 0) {
		s->st.packets += n;
		s->st.bytes += bytes;
		s->st.bursts++;
	}
	idle_after_poll(n, b->cap, start);
	return n;
}

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

/* burst_check() with the runtime at hand: inline in the hot entries */
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
	if (p != NULL && p->single_owner && p->owner_lcore != (int32_t)rte_lcore_id()) {
		rt_error(-EPERM, "pool %d belongs to the task on lcore %d that made it (a single-owner "
			 "pool): lcore %u cannot take bursts from it; make it with shared = true to use "
			 "it from several lcores", pool, p->owner_lcore, rte_lcore_id());
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

/* Frees what a checked burst holds. */
static inline void
burst_empty(struct surge_burst *b)
{
	if (b->n > 0)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)b->mbuf, b->n);
	b->n = 0;
	b->probes = 0;
	b->from_alloc = 0;
	b->timed = 0;
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
 * used offload are cleared here, and a probe mark only in a probed pool.
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
	uint32_t got;
	uint16_t len, delta;

	if (unlikely(burst_ok(r, b) != 0) || (p = pool_at(r, b->pool)) == NULL)
		return 0;
	burst_empty(b);
	if (unlikely(!rt_live(r, rte_lcore_id())) && run_stop_expired() != 0)
		return 0;   /* the Lua side raises "run stopped" */
	b->tsc = 0;     /* generated, not received: pcap writers stamp them now */
	if (n > b->cap)
		n = b->cap;
	got = take(p->mp, b->mbuf, n);
	if (unlikely(got < n))
		__atomic_fetch_add(&p->alloc_fail, 1, __ATOMIC_RELAXED);
	len = p->tmpl_len;
	delta = p->data_delta;
	/* the send's lengths, written now: a send that finds len[] unchanged
	 * need not touch the mbufs again. The headers are only written, as the
	 * bare loop does (a read of one not yet in cache would stall)... */
	for (uint32_t i = 0; i < got; i++) {
		struct rte_mbuf *m = b->mbuf[i];

		raw_invariants(p, m);
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
	return got;
}

int
surge_burst_refcnt(const struct surge_burst *b, uint32_t i)
{
	int rc = burst_check(b);

	if (rc != 0)
		return rc;
	if (i >= b->n)
		return rt_error(-EINVAL, "burst index %u out of range (n = %u)", i, b->n);
	return rte_mbuf_refcnt_read((struct rte_mbuf *)b->mbuf[i]);
}

/* Finds the queue slot and claims it for this lcore (`me`) on first use: a
 * queue has one writer, so its counters need no atomics. */
static inline struct queue_slot *
claim(struct runtime *r, int32_t me, uint16_t port, uint16_t q, int tx, struct port_state **psp,
      int *rc)
{
	struct port_state *ps;
	struct queue_slot *s;
	int32_t none = -1;

	/* a loop that ignores surge.running() ends here (core/stop.c) */
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
	int rc = burst_check(b);

	if (rc != 0)
		return rc;
	if (i >= b->n)
		return rt_error(-EINVAL, "burst index %u out of range (n = %u)", i, b->n);
	return burst_frame_len_ok(b, i);
}

/* Why packet i of a burst cannot be sent as it is (the slow path of
 * prepare(): the hot loop only finds out that something is wrong). */
static int
refuse(uint16_t port, uint16_t q, const struct port_state *ps, const struct queue_slot *s,
       const struct surge_burst *b, uint32_t i)
{
	const struct rte_mbuf *m = b->mbuf[i];
	uint16_t len = b->len[i];
	int rc = burst_frame_len_ok(b, i);

	if (rc != 0)
		return rc;
	if (len > ps->max_len)
		return rt_error(-EMSGSIZE, "packet %u of the burst is %u bytes: port %u's MTU %u "
				"allows %u (open the port with mtu = N where it takes jumbo frames)",
				i, len, port, ps->mtu, ps->max_len);
	if (rte_mbuf_refcnt_read(m) != 1)
		return rt_error(-EINVAL, "port %u tx queue %u uses MBUF_FAST_FREE: packet %u "
				"is shared (refcount %u)", port, q, i, rte_mbuf_refcnt_read(m));
	(void)s;
	return rt_error(-EINVAL, "port %u tx queue %u uses MBUF_FAST_FREE: all its "
			"mbufs must come from one pool", port, q);
}

/* The template path's shortcut: a burst exactly as alloc left it (every
 * mbuf from its pool with refcount 1 and data_len = pkt_len = the template
 * length, see surge_burst_alloc) whose len[] Lua left alone needs no look
 * at any mbuf: only len[] is read, which the compiler vectorises. */
static inline int
fresh_ok(struct runtime *r, const struct port_state *ps, const struct queue_slot *s,
	 const struct surge_burst *b, int fast_free, uint64_t *sum)
{
	const struct pool_state *p = &r->pool[b->pool];
	const uint16_t len = p->tmpl_len;
	uint16_t diff = 0;

	if (len > ps->max_len || (fast_free && s->pool != p->mp))
		return 0;
	for (uint32_t i = 0; i < b->n; i++)
		diff |= b->len[i] ^ len;     /* 16-bit lanes, no widening */
	if (diff != 0)
		return 0;
	*sum = (uint64_t)len * b->n;
	return 1;
}

/* Applies len[] to the mbufs and checks what the queue promised the driver.
 * The port's limits are read once: the compiler cannot keep them in
 * registers across the stores into the mbufs. Nothing is written before
 * every packet passed, so a refused burst is left as it was. */
static inline int
prepare(struct runtime *r, uint16_t port, uint16_t q, struct port_state *ps, struct queue_slot *s,
	struct surge_burst *b, uint32_t clones, uint64_t *bytes)
{
	uint64_t sum = 0;
	struct pool_state *pl = ps->csum && b->pool >= 0 ? &r->pool[b->pool] : NULL;
	const uint32_t max_len = ps->max_len, n = b->n;
	const int fast_free = ps->fast_free;

	if (unlikely(clones > 1 && !ps->conf.clones))
		return rt_error(-EINVAL, "port %u tx queue %u: clone send refused: the port was opened "
				"without clones (MBUF_FAST_FREE %s); open it with clones = true",
				port, q, ps->fast_free ? "on" : "allowed");
	if (unlikely(clones > CLONES_MAX))
		return rt_error(-EINVAL, "clones = %u, at most %d", clones, CLONES_MAX);
	if (unlikely(ps->handover && b->pool >= 0 && r->pool[b->pool].single_owner))
		return rt_error(-EINVAL, "port %u (%s) hands sent mbufs to its receiver, which frees them "
				"on another lcore: make the pool with shared = true", port, ps->driver);
	if (unlikely(fast_free && s->pool == NULL && n > 0))
		s->pool = ((struct rte_mbuf *)b->mbuf[0])->pool;
	if (likely(b->from_alloc) && fresh_ok(r, ps, s, b, fast_free, &sum))
		goto offload;
	for (uint32_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = b->mbuf[i];
		uint32_t len = b->len[i];
		uint32_t room = (uint32_t)(m->buf_len - m->data_off);

		if (unlikely(len < RTE_ETHER_HDR_LEN || len > RTE_MIN(room, max_len)))
			return refuse(port, q, ps, s, b, i);
		if (fast_free && unlikely(rte_mbuf_refcnt_read(m) != 1 || m->pool != s->pool))
			return refuse(port, q, ps, s, b, i);
		sum += len;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *m = b->mbuf[i];

		m->data_len = b->len[i];
		m->pkt_len = b->len[i];
	}
offload:
	if (pl != NULL && pl->ip_version != 0)
		for (uint32_t i = 0; i < n; i++) {
			struct rte_mbuf *m = b->mbuf[i];

			if (m->pool == pl->mp)         /* not forwarded ones */
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
	if (likely(!stamp)) {
		/* the usual case in one driver call; push_all retries the rest */
		uint16_t k = rte_eth_tx_burst(port, q, pkts, (uint16_t)n);

		return likely(k == n) ? n : k + push_all(port, q, s, pkts + k, n - k, 0);
	}
	return push_all(port, q, s, pkts, n, stamp);
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
	struct runtime *r = rt();
	struct port_state *ps;
	uint64_t bytes, unsent0;
	uint32_t n, sent, total;
	int rc = burst_ok(r, b), stamp;
	struct queue_slot *s;

	if (unlikely(rc != 0))
		return rc;
	n = b->n;
	s = claim(r, (int32_t)rte_lcore_id(), port, q, 1, &ps, &rc);
	if (unlikely(s == NULL))
		return rc;
	if (n == 0)
		return 0;
	if (clones == 0)
		clones = 1;
	if (unlikely((rc = prepare(r, port, q, ps, s, b, clones, &bytes)) != 0))
		return rc;
	if (unlikely(b->timed) && (rc = pace_timed_burst(port, q, s)) != 0)
		return rc;
	stamp = b->probes > 0;
	b->n = 0;       /* from here the mbufs belong to the driver or are freed */
	b->from_alloc = 0;
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
	struct runtime *r = rt();
	struct port_state *ps;
	uint64_t bytes = 0, start;
	uint16_t n;
	int rc = burst_ok(r, b);
	struct queue_slot *s;

	if (unlikely(rc != 0))
		return rc;
	s = claim(r, (int32_t)rte_lcore_id(), port, q, 0, &ps, &rc);
	if (unlikely(s == NULL))
		return rc;
	burst_empty(b);
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

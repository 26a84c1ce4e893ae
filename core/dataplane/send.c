/* SPDX-License-Identifier: BSD-3-Clause
 *
 * send.c - the unpaced send path, in one translation unit: claim the
 * queue, apply and check len[], hand the burst (or its clones) to the
 * driver, count.
 *
 * Clone sends follow Linux pktgen's clone_skb: one refcount add of N-1 per
 * mbuf, then N pointers to it on the wire. Every mbuf leaves here either
 * owned by the driver or freed and counted as a drop; none is lost.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "burst.h"

#define CLONES_MAX 1024          /* keeps refcnt (16 bit) far from overflow */
#define SEND_KEEP 1              /* tx_send: keep what is not yet due */
#define SEND_ONCE 2              /* tx_send: one driver call, a full ring not waited for */
#define CHUNK 512                /* pointers handed to one tx_burst call */

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

/* A send gives some mbufs of the burst lengths they did not hold: their
 * pools are resized, so alloc writes the lengths of their mbufs again
 * (burst_fill; a pool not resized holds its template length in every free
 * mbuf). Marked before the driver has them, so before they can go back to
 * a pool; a pool marked already is left alone (no store to a shared line). */
static void __attribute__((noinline))
mark_resized(struct runtime *r, const struct surge_burst *b)
{
	const struct rte_mempool *last = NULL;
	int npools = registry_count(&r->npools);

	for (uint32_t i = 0; i < b->n; i++) {
		const struct rte_mbuf *m = b->mbuf[i];

		if (b->len[i] == m->data_len || m->pool == last)
			continue;
		last = m->pool;
		for (int k = 0; k < npools; k++)
			if (r->pool[k].mp == last && !r->pool[k].resized)
				r->pool[k].resized = 1;
	}
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
	const struct pool_state *bp = b->pool >= 0 ? &r->pool[b->pool] : NULL;
	const struct rte_mempool *bmp = bp != NULL ? bp->mp : NULL;
	const uint32_t max_len = ps->max_len, n = b->n;
	const int fast_free = ps->fast_free;
	uint32_t changed = 0;          /* some length differs from its mbuf's */
	uint64_t foreign = 0;          /* some mbuf is not of the burst's pool */

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
		changed |= len ^ m->data_len;
		foreign |= (uint64_t)(m->pool != bmp);
	}
	/* after the checks (a refused burst may mark a pool: harmless, alloc
	 * then writes lengths it need not), before the writes and the driver */
	if (unlikely(changed != 0) && (foreign != 0 || bp == NULL || !bp->resized))
		mark_resized(r, b);
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
/* once: hand the burst to the driver once, what a full ring refuses is the
 * caller's (tx_send_once); kept: see pace_push (NULL: wait for the schedule) */
static inline uint32_t
push(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts, uint32_t n,
     uint32_t clones, const uint32_t *gap_ns, uint32_t ptr_base, int stamp, int once, uint32_t *kept)
{
	/* an unpaced queue with no new rate request costs one compare here */
	if (unlikely(s->pc.active || __atomic_load_n(&s->req.seq, __ATOMIC_RELAXED) != s->pc.seq_seen) &&
	    pacer_refresh(s, (double)rt_hz(), rte_rdtsc()))
		return pace_push(port, q, s, pkts, n, clones,
				 s->pc.r.pattern == SURGE_PACE_GAPS ? gap_ns : NULL, ptr_base, stamp, kept);
	if (likely(!stamp)) {
		/* the usual case in one driver call; push_all retries the rest */
		uint16_t k = rte_eth_tx_burst(port, q, pkts, (uint16_t)n);

		/* once: what a full ring did not take is the caller's to drop
		 * (tx_send_once) rather than waited for */
		return likely(k == n) || once ? k : k + push_all(port, q, s, pkts + k, n - k, 0);
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
						     stamp, 0, NULL);

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

/* The send. mode 0: every packet of the burst leaves (waiting for a paced
 * queue's schedule, or for room in the ring) or is freed and counted; the
 * burst is empty afterwards. SEND_KEEP (clones 1 only): the packets a paced
 * queue has not yet due stay in the burst, moved to its front, for a later
 * send. SEND_ONCE (clones 1 only): one driver call; what a full ring refuses
 * is freed and counted, never waited for. */
static inline int
tx_send(uint16_t port, uint16_t q, struct surge_burst *b, uint32_t clones, int mode)
{
	struct runtime *r = rt();
	struct port_state *ps;
	uint64_t bytes, unsent0;
	uint32_t n, sent, total, kept = 0;
	int rc = burst_ok(r, b), stamp;
	struct queue_slot *s;

	if (unlikely(rc != 0))
		return rc;
	n = b->n;
	s = claim(r, (int32_t)lcore_self(), port, q, 1, &ps, &rc);
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
	total = n * clones;
	unsent0 = s->st.unsent;
	if (clones == 1) {
		sent = push(port, q, s, (struct rte_mbuf **)b->mbuf, n, 1, b->gap_ns, 0, stamp,
			    mode & SEND_ONCE, (mode & SEND_KEEP) ? &kept : NULL);
		for (uint32_t j = sent; j < n - kept; j++) {
			bytes -= b->len[j];
			rte_pktmbuf_free(b->mbuf[j]);
		}
	} else {
		sent = send_clones(port, q, s, b, n, clones, stamp, &bytes);
	}
	if (unlikely(kept > 0)) {
		/* the rest, prepared, to the front: a later send prepares them
		 * again (the same lengths and flags) and draws their departures */
		uint32_t from = n - kept;

		for (uint32_t j = from; j < n; j++)
			bytes -= b->len[j];
		memmove(b->mbuf, b->mbuf + from, kept * sizeof(b->mbuf[0]));
		memmove(b->data, b->data + from, kept * sizeof(b->data[0]));
		memmove(b->len, b->len + from, kept * sizeof(b->len[0]));
		memmove(b->gap_ns, b->gap_ns + from, kept * sizeof(b->gap_ns[0]));
		b->n = kept;    /* probes, from_alloc, timed and plain hold for the rest */
		total -= kept;
	} else {
		b->n = 0;       /* from here the mbufs belong to the driver or are freed */
		b->from_alloc = 0;
		b->probes = 0;
		b->timed = 0;
		b->plain = 0;   /* send_clones changed their refcounts */
	}
	s->st.packets += sent;
	s->st.bytes += bytes;
	/* not sent: either never due before the stop (unsent, counted by the
	 * pacer) or refused by the driver until the stop (drops) */
	s->st.drops += total - sent - (s->st.unsent - unsent0);
	if (sent > 0) {
		s->st.bursts++;
		idle_note_sent();
	}
	return (int)sent;
}

int
surge_tx_send(uint16_t port, uint16_t q, struct surge_burst *b, uint32_t clones)
{
	return tx_send(port, q, b, clones, 0);
}

int
tx_send_once(uint16_t port, uint16_t q, struct surge_burst *b)
{
	return tx_send(port, q, b, 1, SEND_ONCE);
}

int
tx_flush_written(uint16_t port, uint16_t q, struct surge_burst *b, uint32_t used, uint32_t got)
{
	int rc;

	if (got == 0)
		return 0;
	if (used < got)
		rte_pktmbuf_free_bulk((struct rte_mbuf **)&b->mbuf[used], got - used);
	b->n = used;
	if (used == 0)
		return 0;
	rc = tx_send_once(port, q, b);
	if (rc < 0)
		surge_burst_free(b);   /* nothing left held */
	return rc;
}

int
surge_tx_send_due(uint16_t port, uint16_t q, struct surge_burst *b)
{
	return tx_send(port, q, b, 1, SEND_KEEP);
}

int
surge_tx_send_alloc(uint16_t port, uint16_t q, struct surge_burst *b, uint32_t clones, uint32_t n)
{
	int rc = tx_send(port, q, b, clones, 0);
	struct runtime *r = rt();
	struct pool_state *p;

	/* tx_send checked b and left it empty (or failed, leaving it as it was) */
	if (unlikely(rc < 0) || n == 0 || (p = pool_at(r, b->pool)) == NULL)
		return rc;
	if (unlikely(!rt_live(r, rte_lcore_id())) && run_stop_expired() != 0)
		return rc;   /* the Lua side raises "run stopped" on an empty burst */
	burst_fill(p, b, n);
	return rc;
}


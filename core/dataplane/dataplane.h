/* SPDX-License-Identifier: BSD-3-Clause
 *
 * dataplane.h - the per-packet layer: pools, bursts, send and receive, the
 * pacer and the driver hand-off, idle waits, RX interrupts, latency probes
 * and receivers, checksum offload. Calls only base.
 */
#ifndef SURGE_DATAPLANE_H
#define SURGE_DATAPLANE_H

#include <errno.h>
#include <stdint.h>

#include "base.h"

struct rte_mbuf;

/* Bytes a frame adds on the wire besides len: for L1 rates FCS 4 +
 * preamble 7 + SFD 1 + IFG 12, for L2 rates the FCS. */
#define WIRE_L1_OVERHEAD 24
#define WIRE_L2_OVERHEAD 4

/* pool.c */
struct pool_state *pool_get(int id);
int pools_check_and_free(void);   /* at exit: the pools that are not full, then frees them */

/* The hot path's checks, inline: an FFI entry reads rt() and its lcore id
 * once and hands them down (a call per check is measurable on a template
 * send: docs/performance.md). */

/* Pool `id` of runtime r, or NULL when there is none (pool_get's check). */
static inline struct pool_state *
pool_at(struct runtime *r, int id)
{
	if (r == NULL || !registry_holds(registry_count(&r->npools), id) || r->pool[id].mp == NULL)
		return NULL;
	return &r->pool[id];
}

/* burst_check() with the runtime at hand: a burst's validity, inline where
 * every file that takes a burst (burst.c, send.c, recv.c, probe.c) reads
 * it, beside pool_at (in burst.h, probe.c's one use of it made probe.c and
 * burst.c call each other: burst.c unmarks probes) */
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

/* burst.c: every entry point taking a burst from Lua calls this first, so
 * no count or pool id in it is trusted: 0, or -EINVAL with the reason */
int burst_check(const struct surge_burst *b);
int burst_frame_len_ok(const struct surge_burst *b, uint32_t i);   /* b checked, i < n */
uint32_t burst_fill(struct pool_state *p, struct surge_burst *b, uint32_t n);   /* b checked, empty */

/* A poll that takes some of the frames it received (the connection engine,
 * a host table): each frame i of rx, in order, is taken (its mbuf freed at
 * rx_split_end) or kept (moved down to the first free place in rx, for
 * whoever reads the queue next). */
struct rx_split {
	void *done[SURGE_BURST_MAX];
	uint32_t keep, ndone;
};
static inline void
rx_split_one(struct rx_split *s, struct surge_burst *rx, int i, int taken)
{
	if (taken) {
		s->done[s->ndone++] = rx->mbuf[i];
	} else {
		rx->mbuf[s->keep] = rx->mbuf[i];
		rx->data[s->keep] = rx->data[i];
		rx->len[s->keep] = rx->len[i];
		s->keep++;
	}
}
/* rx holds what was kept; the taken frames are freed: returns the kept */
uint32_t rx_split_end(struct rx_split *s, struct surge_burst *rx);

/* pacer.c: the per-packet schedule of a rated TX queue */
double pacer_gap(struct pacer *p, uint16_t len, double now, uint32_t custom_ns, double hz);
int pacer_refresh(struct queue_slot *s, double hz, uint64_t now);
void pacer_start(struct pacer *p, const struct surge_rate *r, double limit, double hz, uint64_t now);
uint32_t pace_push(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts,
		   uint32_t n, uint32_t clones, const uint32_t *gap_ns, uint32_t ptr_base, int stamp,
		   uint32_t *kept);
int pace_timed_burst(uint16_t port, uint16_t q, struct queue_slot *s);
void rate_req_publish(struct rate_req *req, const struct surge_rate *r, double bps_limit);
double link_bps(uint16_t port);   /* the link's speed in bit/s, 0 when unknown */

/* send.c: surge_tx_send without the wait for a full ring: one hand-off to
 * the driver (a paced queue still paces); what the driver did not take is
 * freed and counted as drops. A sender that must not stall while its peer
 * waits on it (the connection engine: its RX and TX share one loop, and a
 * peer doing the same would wait on it in turn) uses this and retransmits
 * what was dropped. Returns the frames sent, or -errno. */
int tx_send_once(uint16_t port, uint16_t q, struct surge_burst *b);
/* The flush of a writer that allocates b whole and fills it frame by frame
 * (the connection engine, a host table): of the `got` mbufs allocated, the
 * first `used` were written. The rest go back to the pool, the written
 * ones to tx_send_once: the frames sent (0 when none was written), or
 * -errno with b freed as a whole (refused: a bad queue). */
int tx_flush_written(uint16_t port, uint16_t q, struct surge_burst *b, uint32_t used, uint32_t got);

/* Such a writer: a poll's frames written in place (the connection
 * engine's segments, a host table's frames) into the mbufs of its tx
 * burst, a burst's worth allocated at a time, and flushed without waiting
 * for room: the peer may be waiting on us to drain its frames (each side's
 * RX and TX share one loop), and a wait would hold both ends. What the
 * ring refuses is freed and counted, and sent again by the owner's
 * timers, as a lost frame would be. Inline: a segment's hot path. */
struct tx_writer {
	struct surge_burst *b;      /* the poll's tx burst; NULL between polls */
	uint32_t got, used;         /* mbufs allocated into b, and written */
	uint16_t port, q;
	int err;                    /* a send refused (a bad queue): its -errno */
	uint8_t full;               /* the last flush that sent found the ring full */
	uint64_t *sent, *refused;   /* the owner's counters (sent may be NULL) */
};

/* A poll starts writing into b, for queue q of port. */
static inline void
tx_writer_start(struct tx_writer *w, struct surge_burst *b, uint16_t port, uint16_t q)
{
	w->b = b;
	w->port = port;
	w->q = q;
	w->err = 0;
}

/* Sends what was written, the unused mbufs back to the pool: 0, or the
 * -errno of a refused send (kept in err). */
static inline int
tx_writer_flush(struct tx_writer *w)
{
	uint32_t used = w->used;
	int rc = tx_flush_written(w->port, w->q, w->b, used, w->got);

	w->used = w->got = 0;
	if (rc < 0)
		return w->err = rc;
	if (used > 0)               /* a flush that sent nothing says nothing of the ring */
		w->full = (uint32_t)rc < used;
	if (w->sent != NULL)
		*w->sent += (uint32_t)rc;
	*w->refused += used - (uint32_t)rc;
	return 0;
}

/* The slot of the next mbuf to write (the full burst sent and a new one
 * allocated as needed), or -ENOBUFS when the pool is empty, or the -errno
 * of a refused send. */
static inline int
tx_writer_next(struct tx_writer *w)
{
	if (w->used == w->got) {
		if (w->got > 0 && tx_writer_flush(w) < 0)
			return w->err;
		w->got = surge_burst_alloc(w->b, w->b->cap);
		w->used = 0;
		if (w->got == 0)
			return -ENOBUFS;
	}
	return (int)w->used++;
}

/* handoff.c: hands n pointers to the driver, retrying while it takes them */
uint32_t push_all(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts, uint32_t n,
		  int stamp);

/* rxintr.c */
int rx_intr_capable(const char *driver);
int rx_intr_wait(uint16_t port, uint16_t q);
void rx_intr_forget(uint16_t port, uint16_t q);

/* offload.c */
uint64_t offload_csum_pick(uint64_t capa);
void offload_csum_prepare(struct rte_mbuf *m, struct pool_state *p, uint64_t csum);

/* latency.c: n probes of receiver id (at[j]: a probe's bytes, magic
 * checked) received at rx_tsc, by the rule of every receive path; each
 * taken also into out[] (at most max). The count taken, or -errno. */
int latency_take_n(int id, const uint8_t *const *at, uint32_t n, uint64_t rx_tsc, struct surge_latency_sample *out,
		   uint32_t max);

/* probe.c: the probe field every mbuf carries (where to stamp at TX) */
int probe_field_register(void);
void probes_stamp(struct rte_mbuf **m, uint32_t n);
void probe_unmark(const struct pool_state *p, struct rte_mbuf *m);
void probe_clear(struct rte_mbuf *m);

/* latency.c: the receivers */
void latency_free_all(void);
/* A copy of receiver id's histogram, for a reader on another thread (the
 * metrics server): plain loads of fields the receiving lcore writes, so a
 * copy taken while probes arrive may have a few more in some buckets than
 * in count or sum. 0, or -EINVAL when there is no such receiver. */
struct hist;
int latency_hist_copy(int id, struct hist *out);

/* idle.c */
void idle_task_begin(void);
void idle_task_end(void);
void idle_wait_until(uint64_t target, uint64_t period);
void idle_before_poll(uint16_t port, uint16_t q);
void idle_for_latency(void);
void idle_after_poll(uint32_t n, uint32_t cap, uint64_t now);
void idle_note_sent(void);

#endif /* SURGE_DATAPLANE_H */

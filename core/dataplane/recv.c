/* SPDX-License-Identifier: BSD-3-Clause
 *
 * recv.c - receive a burst from a claimed RX queue, with the idle policy's
 * sleep before a poll and its accounting after.
 */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "burst.h"

#ifdef RTE_ARCH_X86
#include <immintrin.h>
/* LFENCE: the loads before it done, nothing after it started: what the SDM
 * asks before an RDTSC that must follow them (MFENCE would also drain the
 * store buffer, which costs more and orders nothing more here) */
static inline void rx_fence(void) { _mm_lfence(); }
#else
static inline void rx_fence(void) { rte_mb(); }
#endif

int
surge_rx_recv(uint16_t port, uint16_t q, struct surge_burst *b)
{
	struct runtime *r = rt();
	struct port_state *ps;
	uint64_t bytes = 0;
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
	 * sender's stamp, a latency of 0 (issue 22 item 3). The fence only
	 * where packets came: an empty poll times nothing */
	if (n > 0)
		rx_fence();
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
	idle_after_poll(n, b->cap, b->tsc);
	return n;
}


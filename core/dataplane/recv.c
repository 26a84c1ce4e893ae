/* SPDX-License-Identifier: BSD-3-Clause
 *
 * recv.c - receive a burst from a claimed RX queue, with the idle policy's
 * sleep before a poll and its accounting after.
 */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "burst.h"

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
	s = claim(r, (int32_t)lcore_self(), port, q, 0, &ps, &rc);
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


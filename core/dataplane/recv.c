/* SPDX-License-Identifier: BSD-3-Clause
 *
 * recv.c - receive a burst from a claimed RX queue, with the idle policy's
 * sleep before a poll and its accounting after (burst.h rx_poll_begin and
 * rx_poll_end, which the measuring receiver's poll shares, dutrx.c).
 */
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "burst.h"

int
surge_rx_recv(uint16_t port, uint16_t q, struct surge_burst *b)
{
	struct queue_slot *s = NULL;   /* set where the poll returns n >= 0 */
	struct rx_view v;
	int n = rx_poll_begin(rt(), port, q, b, &s);

	if (unlikely(n < 0))
		return n;
	/* each mbuf's first cache line, read once: its frame for Lua, and the
	 * burst's byte count and plainness (burst.h rx_view) */
	rx_view_begin(&v, b, (uint16_t)n);
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *p;
		uint16_t len = rx_view_next(&v, b->mbuf[i], &p);

		b->data[i] = (uint8_t *)(uintptr_t)p;
		b->len[i] = len;
	}
	rx_poll_end(s, b, (uint16_t)n, v.bytes, v.bad);
	return n;
}

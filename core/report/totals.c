/* SPDX-License-Identifier: BSD-3-Clause
 *
 * totals.c - a port's counters summed over its queues: the one walk the
 * stats line, the summary and the results series share.
 */
#include "report.h"

void
queue_totals(uint16_t port, struct queue_totals *t)
{
	const struct port_state *ps = &rt()->port[port];

	*t = (struct queue_totals){ 0 };
	for (uint16_t q = 0; q < ps->conf.txq; q++) {
		const struct surge_queue_stats *st = &ps->txq[q].st;

		t->tx_packets += st->packets;
		t->tx_bytes += st->bytes;
		t->drops += st->drops;
		t->unsent += st->unsent;
	}
	for (uint16_t q = 0; q < ps->conf.rxq; q++) {
		t->rx_packets += ps->rxq[q].st.packets;
		t->rx_bytes += ps->rxq[q].st.bytes;
	}
}

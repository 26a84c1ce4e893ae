/* SPDX-License-Identifier: BSD-3-Clause
 *
 * handoff.c - the driver hand-off loop every send ends in.
 */
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pause.h>

#include "dataplane.h"

/* Hands n pointers to the driver, retrying while the run goes on, the link
 * is up (a driver whose link went down, like memif without its peer, takes
 * nothing) and the driver took something in the last STALL_MS: a queue
 * nobody drains (a net_ring without a reader, a DUT that stopped
 * forwarding, a link that reports up regardless) would hold the send, and
 * the task's loop, forever. Once a queue stalled, later sends retry only
 * STALL_AGAIN_MS until the driver takes something again, so a loop of sends
 * into a dead queue moves on. The caller frees the rest and counts it as
 * drops. */
#define STALL_MS 1000
#define STALL_AGAIN_MS 1

uint32_t
push_all(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts, uint32_t n, int stamp)
{
	uint32_t sent = 0, idle = 0;
	uint64_t stall_since = rte_rdtsc();
	const uint64_t stall_max = rt_hz() / 1000 * (s->stalled ? STALL_AGAIN_MS : STALL_MS);

	while (sent < n) {
		uint16_t k;

		if (unlikely(stamp))
			probes_stamp(pkts + sent, n - sent);   /* as late as possible */
		k = rte_eth_tx_burst(port, q, pkts + sent, (uint16_t)RTE_MIN(n - sent, 65535u));

		sent += k;
		if (k == 0) {
			struct rte_eth_link link;

			if (!surge_running())
				break;
			if ((++idle & 1023) == 0) {
				if (rte_eth_link_get_nowait(port, &link) == 0 && !link.link_status)
					break;
				if (rte_rdtsc() - stall_since > stall_max) {
					s->stalled = 1;
					break;
				}
			}
			rte_pause();
		} else {
			stall_since = rte_rdtsc();
			s->stalled = 0;
		}
	}
	return sent;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * rxintr.c - idle receive queues that the device can wake.
 *
 * A poller that has backed off to its longest sleep (idle.c) would still
 * wake max_sleep_us apart, ~2000 times a second, each wake-up costing CPU
 * time (in a VM much of it: docs/performance.md "Idle CPU"). Where the port
 * offers RX queue interrupts it blocks in epoll on the queue's event
 * instead, until a packet arrives or a slice of RX_INTR_SLICE_MS passes (so
 * a stop, or the script's own timers, are seen promptly): the DPDK power
 * library's approach (l3fwd-power). Ports are configured with intr_conf.rxq
 * on the drivers known to take it without failing their start (net_tap,
 * net_memif); elsewhere the adaptive sleep stays. The queue's event joins
 * the owning thread's epoll on first use and leaves it when the task
 * releases the queue.
 */
#include <errno.h>
#include <string.h>

#include <rte_epoll.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_lcore.h>

#include "dataplane.h"

#define RX_INTR_SLICE_MS 10

/* Drivers whose rx queue interrupts work on a plain virtual/userspace set-up.
 * PCI NICs need vfio with MSI-X vectors; with uio their start fails, so they
 * are left out rather than risk a port that does not start. */
int
rx_intr_capable(const char *driver)
{
	static const char *const ok[] = { "net_tap", "net_memif" };

	for (size_t i = 0; i < RTE_DIM(ok); i++)
		if (strcmp(driver, ok[i]) == 0)
			return 1;
	return 0;
}

/* Waits for the queue's interrupt, at most one slice. 1 when the queue
 * signalled (traffic: the caller stops sleeping before polls, since the
 * driver may need a moment to see the packet - net_tap learns of it from a
 * SIGIO handler that can run after we woke), 0 after a quiet slice,
 * -ENOTSUP when the queue has no interrupt (the caller sleeps instead). */
int
rx_intr_wait(uint16_t port, uint16_t q)
{
	struct port_state *ps = &rt()->port[port];
	struct queue_slot *s;
	struct rte_epoll_event ev;
	int rc;

	if (!ps->rx_intr || q >= ps->conf.rxq)
		return -ENOTSUP;
	s = &ps->rxq[q];
	if (s->intr == 0) {
		rc = rte_eth_dev_rx_intr_ctl_q(port, q, RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_ADD, NULL);

		s->intr = rc == 0 ? 1 : -1;
		if (rc != 0)
			rt_info("port %u rx queue %u: no rx interrupt (%s): idle polls sleep", port, q,
				rte_strerror(-rc));
	}
	if (s->intr < 0)
		return -ENOTSUP;
	/* net_tap has nothing to arm (its event is the queue's fd, readable
	 * while packets wait): -ENOTSUP from enable is fine there */
	rc = rte_eth_dev_rx_intr_enable(port, q);
	if (rc != 0 && rc != -ENOTSUP) {
		s->intr = -1;
		return -ENOTSUP;
	}
	/* a packet that came since the last poll is pending on the event too
	 * (the tap's fd is level-triggered); elsewhere the slice bounds it */
	rc = rte_epoll_wait(RTE_EPOLL_PER_THREAD, &ev, 1, RX_INTR_SLICE_MS);
	rte_eth_dev_rx_intr_disable(port, q);
	return rc > 0 ? 1 : 0;
}

/* The queue's event leaves the releasing thread's epoll (the thread that
 * registered it), so another lcore may take the queue. */
void
rx_intr_forget(uint16_t port, uint16_t q)
{
	struct port_state *ps = &rt()->port[port];

	if (ps->rx_intr && q < ps->conf.rxq && ps->rxq[q].intr == 1)
		rte_eth_dev_rx_intr_ctl_q(port, q, RTE_EPOLL_PER_THREAD, RTE_INTR_EVENT_DEL, NULL);
	if (q < ps->conf.rxq)
		ps->rxq[q].intr = 0;
}

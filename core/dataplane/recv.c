/* SPDX-License-Identifier: BSD-3-Clause
 *
 * recv.c - receive a burst from a claimed RX queue, with the idle policy's
 * sleep before a poll and its accounting after.
 */
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "burst.h"

/* The TSC after the loads before it: RDTSC alone may run ahead of them.
 * RDTSCP "waits until all previous instructions have executed and all
 * previous loads are globally visible" (Intel SDM; AMD APM: older
 * instructions retire first), which is what a receive time must follow.
 * LFENCE + RDTSC orders the same for more on AMD EPYC (LFENCE is
 * dispatch-serialising there): 0.1-0.5 cycles a packet of the bare RX
 * loop's ~11 (issue 20). LFENCE stays for a CPU (or VM) without RDTSCP. */
#ifdef RTE_ARCH_X86
#include <x86intrin.h>
static inline uint64_t
rx_tsc_after_loads(int rdtscp)
{
	unsigned aux;

	if (likely(rdtscp))
		return __rdtscp(&aux);
	_mm_lfence();
	return rte_rdtsc();
}
#else
static inline uint64_t
rx_tsc_after_loads(int rdtscp)
{
	(void)rdtscp;
	rte_mb();
	return rte_rdtsc();
}
#endif

int
rx_poll_begin(struct runtime *r, uint16_t port, uint16_t q, struct surge_burst *b, struct queue_slot **sp)
{
	struct port_state *ps;
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
	 * sender's stamp, a latency of 0 (issue 22 item 3). Ordered only
	 * where packets came: an empty poll times nothing */
	b->tsc = n > 0 ? rx_tsc_after_loads(r->rdtscp) : rte_rdtsc();
	*sp = s;
	return n;
}

void
rx_poll_end(struct queue_slot *s, struct surge_burst *b, uint16_t n, uint64_t bytes, uint64_t bad)
{
	b->n = n;
	b->plain = bad == 0;
	if (n > 0) {
		s->st.packets += n;
		s->st.bytes += bytes;
		s->st.bursts++;
	}
	idle_after_poll(n, b->cap, b->tsc);
}

int
surge_rx_recv(uint16_t port, uint16_t q, struct surge_burst *b)
{
	struct queue_slot *s;
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

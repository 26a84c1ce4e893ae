/* SPDX-License-Identifier: BSD-3-Clause
 *
 * recv.c - receive a burst from a claimed RX queue, with the idle policy's
 * sleep before a poll and its accounting after.
 */
#include <stddef.h>
#include <string.h>

#include <rte_byteorder.h>
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

/* the layout the loop's wide loads assume (rte_mbuf_core.h, little-endian):
 * rearm_data is data_off, refcnt, nb_segs, port; data_len follows pkt_len */
#if RTE_BYTE_ORDER != RTE_LITTLE_ENDIAN
#error "recv.c's wide mbuf loads assume a little-endian CPU"
#endif
_Static_assert(offsetof(struct rte_mbuf, refcnt) == offsetof(struct rte_mbuf, data_off) + 2 &&
	       offsetof(struct rte_mbuf, nb_segs) == offsetof(struct rte_mbuf, data_off) + 4 &&
	       offsetof(struct rte_mbuf, port) == offsetof(struct rte_mbuf, data_off) + 6 &&
	       offsetof(struct rte_mbuf, data_len) == offsetof(struct rte_mbuf, pkt_len) + 4,
	       "rte_mbuf layout");
#define PLAIN_REFCNT_SEGS 0x00010001u   /* refcnt 1 (low half), nb_segs 1 */

int
surge_rx_recv(uint16_t port, uint16_t q, struct surge_burst *b)
{
	struct runtime *r = rt();
	struct port_state *ps;
	uint64_t bytes = 0, bad = 0;
	const struct rte_mempool *mp;
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
	/* the loop reads each mbuf's first cache line for Lua; whether the
	 * burst is plain (burst.h) is a few ORs more, and spares the free its
	 * own pass over the mbufs. It is bound by its loads: data_off, refcnt
	 * and nb_segs come in one 64-bit load (rearm_data), pkt_len and
	 * data_len in another, 5 loads a packet instead of 8 */
	mp = n > 0 ? ((struct rte_mbuf *)b->mbuf[0])->pool : NULL;
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = b->mbuf[i];
		uint64_t rearm, lens;

		memcpy(&rearm, &m->data_off, sizeof(rearm));
		memcpy(&lens, &m->pkt_len, sizeof(lens));
		b->data[i] = (uint8_t *)m->buf_addr + (uint16_t)rearm;
		b->len[i] = (uint16_t)(lens >> 32);
		bytes += (uint32_t)lens;
		bad |= ((rearm >> 16) & 0xffffffffu) ^ PLAIN_REFCNT_SEGS;
		bad |= (uint64_t)(m->pool != mp) | (m->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL));
	}
	b->n = n;
	b->plain = bad == 0;
	if (n > 0) {
		s->st.packets += n;
		s->st.bytes += bytes;
		s->st.bursts++;
	}
	idle_after_poll(n, b->cap, b->tsc);
	return n;
}


/* SPDX-License-Identifier: BSD-3-Clause
 *
 * dutrx.c - the measuring receiver's per-burst pass: every test frame of a
 * received burst parsed, counted per flow and scanned for a latency probe
 * in one call into C (issue 20). In Lua the same work, a frame at a time
 * through surge.dut.view and counters.lua, took ~100 cycles a frame: no
 * scenario could count loss above ~16-24 Mpps per lcore. The rules are
 * those of lua/surge/dut/view.lua (parse) and counters.lua (sequence
 * window), which the unit tests check frame by frame; frames that are not
 * test traffic go back to Lua (ARP/NDP answering, the "other" count). The
 * same pass checks each flow's own destination port (dport_of) and counts
 * each unique frame in its class's availability interval (ivl): y1564's
 * services, counted here too, not in a second loop in Lua.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_prefetch.h>

#include "burst.h"
#include "probe.h"

#define ETH_VLAN 0x8100
#define ETH_QINQ 0x88a8
#define ETH_IP4 0x0800
#define ETH_IP6 0x86dd
#define WINDOW SURGE_DUT_WINDOW
#define SEQ_OFF 8               /* UDP header, then the 16-bit sequence number */
#define PROBE_AT 10             /* the probe right after it (from the UDP header) */
#define PROBE_BYTES PROBE_LEN   /* magic, seq, TSC */

static inline uint32_t
be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* The UDP header's offset in the frame, or -1 when the frame is no UDP
 * over IPv4/IPv6 (after any 802.1Q/802.1ad tags), as view.parse finds it. */
static inline int32_t
udp_at(const uint8_t *p, uint32_t len)
{
	uint32_t off = 12, et = be16(p + 12), l3;

	while ((et == ETH_VLAN || et == ETH_QINQ) && off + 6 <= len) {
		off += 4;
		et = be16(p + off);
	}
	l3 = off + 2;
	if (et == ETH_IP4 && len >= l3 + 20) {
		uint32_t ihl = (uint32_t)(p[l3] & 0x0f) * 4;

		if (p[l3 + 9] == 17 && ihl >= 20 && len >= l3 + ihl)
			return (int32_t)(l3 + ihl);
	} else if (et == ETH_IP6 && len >= l3 + 40 && p[l3 + 6] == 17) {
		return (int32_t)(l3 + 40);
	}
	return -1;
}

/* What the per-frame loop reads of a receiver, in locals: st's fields
 * read through st would be reloaded after every store into its arrays
 * (a store into a flow's record may alias st->flows as far as the
 * compiler knows), and the totals are kept in registers and added to st's
 * once a burst: an add to st->total per frame is a chain of dependent
 * double adds through memory (issue 20). One record a flow (counts,
 * expectation and window together) keeps the loop's pointers few enough
 * for the registers. */
struct counting {
	uint32_t flows, sport0, dport;
	const uint16_t *dport_of;
	struct surge_dut_flow *flow;
	uint32_t counted, reordered, duplicated;
};

static inline void
counting_begin(struct counting *c, const struct surge_dut_rx *st)
{
	c->flows = st->flows;
	c->sport0 = st->sport0;
	c->dport = st->dport;
	c->dport_of = st->dport_of;
	c->flow = st->flow;
	c->counted = c->reordered = c->duplicated = 0;
}

static inline void
counting_end(const struct counting *c, struct surge_dut_rx *st)
{
	st->total += c->counted;
	st->reordered += c->reordered;
	st->duplicated += c->duplicated;
}

/* The flow of a test frame (its UDP header at u, avail bytes from u on),
 * or -1 when it is not one of st's. */
static inline int32_t
flow_of(const struct counting *c, const uint8_t *u, uint32_t avail)
{
	int32_t f;

	if (avail < SEQ_OFF + 2)
		return -1;
	f = (int32_t)be16(u) - (int32_t)c->sport0;
	if (f < 0 || (uint32_t)f >= c->flows)
		return -1;
	return be16(u + 2) == (c->dport_of != NULL ? c->dport_of[f] : c->dport) ? f : -1;
}

/* The UDP header's offset of a frame in the fixed layout of surge's own
 * untagged IPv4 test frames (Ethernet, IPv4 without options, UDP towards
 * dport, room for the sequence number), or 0 for any other frame, which
 * the general parse then looks at (it finds 34 for these too). Three
 * 32-bit loads and one branch instead of a load and a test per field: the
 * loop is bound by its loads (~14 a frame before, issue 20). The words
 * are compared in network byte order, whatever the CPU's. dport_mask
 * covers the destination port in the third word, or nothing when each
 * flow has its own port (dport_of, checked once the flow is known).
 * *ports: the third word, whose source port the caller reads from it. */
#define FIXED_L4 34
#define FIXED_MIN (FIXED_L4 + 14)   /* the 8-byte load of checksum, sequence number, magic */
static inline uint32_t
fixed_layout(uint32_t dport_word, uint32_t dport_mask, const uint8_t *p, uint32_t len, uint32_t *ports)
{
	uint32_t w0, w1, w2;

	if (len < FIXED_MIN)
		return 0;
	memcpy(&w0, p + 12, 4);            /* ethertype, IPv4 version and IHL */
	memcpy(&w1, p + 20, 4);            /* ..., protocol */
	memcpy(&w2, p + FIXED_L4, 4);      /* UDP ports */
	*ports = w2;
	return (((w0 & RTE_BE32(0xffffff00)) ^ RTE_BE32((uint32_t)ETH_IP4 << 16 | 0x4500)) |
		((w1 & RTE_BE32(0x000000ff)) ^ RTE_BE32(17)) | ((w2 & dport_mask) ^ dport_word)) == 0 ?
		FIXED_L4 : 0;
}

/* A frame outside the fixed layout (tags, IPv6, IP options, not UDP):
 * its flow as udp_at and flow_of find it (-1: not a test frame;
 * NOT_A_FRAME: no Ethernet header, which view.parse ignores) in the low
 * half, its UDP header's offset in the high half (a pointer to it would
 * keep the offset in memory on every frame's path). Out of line, as
 * keep_other below: inlined, the rare paths' values took registers from
 * the fixed layout's loop, which then spilled its own to the stack (perf
 * annotate, issue 20). */
#define NOT_A_FRAME (-2)
static __rte_noinline uint64_t
general_flow(const struct counting *c, const uint8_t *p, uint32_t len)
{
	int32_t l4, f;

	if (len < 14)
		return (uint32_t)NOT_A_FRAME;
	l4 = udp_at(p, len);
	f = l4 < 0 ? -1 : flow_of(c, p + l4, len - (uint32_t)l4);
	return (uint64_t)(uint32_t)l4 << 32 | (uint32_t)f;
}

/* A received frame that is no test traffic, for Lua: its place in
 * st->other, and (from_mbufs) its data[] and len[] */
static __rte_noinline void
keep_other(struct surge_dut_rx *st, struct surge_burst *b, uint32_t i, const uint8_t *p, uint32_t len,
	   int from_mbufs)
{
	if (from_mbufs) {
		b->data[i] = (uint8_t *)(uintptr_t)p;
		b->len[i] = (uint16_t)len;
	}
	st->other[st->n_other++] = (uint16_t)i;
}

/* The flow's window (struct surge_dut_flow.seen) holds a bit for each of
 * the WINDOW numbers before the expectation, at the number mod WINDOW:
 * set when that number was counted. The window moving on from `from` past
 * n numbers that did not come (yet): their bits, a lap older numbers',
 * cleared. Rare (a loss or a late frame ahead), hence out of line. */
_Static_assert(WINDOW == 128, "the window is two 64-bit words");
_Static_assert(sizeof(struct surge_dut_flow) == 64, "a flow's record is one cache line");
static __rte_noinline void
window_skip(struct surge_dut_flow *fl, uint32_t from, uint32_t n)
{
	if (n >= WINDOW) {
		fl->seen[0] = fl->seen[1] = 0;
		return;
	}
	for (uint32_t k = 0; k < n; k++) {
		uint32_t x = (from + k) & (WINDOW - 1);

		fl->seen[x >> 6] &= ~(1ULL << (x & 63));
	}
}

/* Serial-number arithmetic on 16 bits: at or ahead of the expectation is
 * new and moves it on; behind is a copy of a counted frame (its bit in the
 * window set) or a late one. The window lives in the flow's own cache
 * line: a frame reads one line of its flow's, not two. Returns 1 for a
 * unique frame (counted), 0 for a copy. */
static inline int
count_seq(struct counting *c, uint32_t f, uint32_t s)
{
	struct surge_dut_flow *fl = &c->flow[f];
	int32_t e = fl->expect;
	uint32_t d = e < 0 ? 0 : (s - (uint32_t)e) & 0xffff;
	uint64_t *word = &fl->seen[(s >> 6) & 1], bit = 1ULL << (s & 63);

	if (d < 0x8000) {
		if (unlikely(d > 0))
			window_skip(fl, (uint32_t)e, d);
		fl->expect = (int32_t)((s + 1) & 0xffff);
		*word |= bit;
	} else {
		uint32_t back = ((uint32_t)e - 1 - s) & 0xffff;   /* 0: the newest frame again */

		if (back < WINDOW) {
			if (*word & bit) {
				fl->dup += 1;
				c->duplicated++;
				return 0;
			}
			*word |= bit;
		}
		fl->reord += 1;
		c->reordered++;
	}
	fl->rx += 1;
	c->counted++;
	return 1;
}

/* A unique frame of flow f, sequence number s, in its class's interval
 * (struct surge_dut_ivl): s unwrapped against the flow's highest (the
 * nearest whole number above or below it, so a late frame lands behind,
 * not 65536 ahead), its place in the class's tag order from that, the
 * interval from its place. A first frame numbered past 32767 unwraps
 * below 0: sent before the trial, in no interval. */
static void
ivl_add(const struct surge_dut_rx *st, uint32_t f, uint32_t s)
{
	int16_t k = st->class_of[f];
	struct surge_dut_ivl *iv;
	int64_t hi, seq, j, i;
	int32_t d;
	uint32_t fl;

	if (k <= 0 || (uint32_t)k > st->nclasses)
		return;
	iv = &st->ivl[k];
	if (iv->per == 0 || f < iv->first || f - iv->first >= iv->flows)
		return;
	fl = f - iv->first;
	hi = iv->hi[fl];
	d = (int32_t)((s - (uint32_t)hi) & 0xffff);
	if (d >= 0x8000)
		d -= 0x10000;
	seq = hi + d;
	if (seq > hi)
		iv->hi[fl] = seq;
	j = seq * iv->flows + fl;
	if (j < 0)
		return;
	i = j / iv->per;
	iv->rx[i < iv->n ? i : iv->n - 1] += 1;
}

/* The receiver's interval arrays: ivl needs class_of (a flow's class) and
 * each class with intervals its arrays. */
static int
ivl_check(const struct surge_dut_rx *st, const char *what)
{
	if (st->ivl == NULL)
		return 0;
	if (st->class_of == NULL)
		return rt_error(-EINVAL, "%s: intervals without class_of", what);
	for (uint32_t k = 0; k <= st->nclasses; k++) {
		const struct surge_dut_ivl *iv = &st->ivl[k];

		if (iv->per > 0 && (iv->n == 0 || iv->rx == NULL || iv->hi == NULL))
			return rt_error(-EINVAL, "%s: class %u's intervals without their arrays", what, k);
	}
	return 0;
}

int
surge_dut_count_udp(struct surge_dut_rx *st, const uint8_t *u, uint32_t avail)
{
	struct counting c;
	int32_t f;

	int rc;

	if (st == NULL || u == NULL || st->flow == NULL)
		return rt_error(-EINVAL, "surge_dut_count_udp: NULL receiver, arrays or frame");
	rc = ivl_check(st, "surge_dut_count_udp");
	if (rc != 0)
		return rc;
	counting_begin(&c, st);
	f = flow_of(&c, u, avail);
	if (f < 0)
		return 0;
	if (count_seq(&c, (uint32_t)f, be16(u + SEQ_OFF)) && st->ivl != NULL)
		ivl_add(st, (uint32_t)f, be16(u + SEQ_OFF));
	counting_end(&c, st);
	return 1;
}

/* The latency probes of the test frames found (their flows and probe
 * bytes), matched to their classes' receivers after the counting loop: a
 * call inside it would make the compiler keep the loop's state on the
 * stack around it. Each receiver's run of probes in one latency_take_n:
 * in a trial's burst they are mostly one class's. */
static void
add_probes(const struct surge_dut_rx *st, const uint8_t *const *at, const uint32_t *flow, uint32_t n,
	   uint64_t tsc)
{
	uint32_t from = 0;
	int32_t id = -1;

	for (uint32_t j = 0; j < n; j++) {
		int16_t k = st->class_of[flow[j]];
		int32_t to = k <= 0 || (uint32_t)k > st->nclasses ? -1 : st->lat[k];

		if (to == id)
			continue;
		if (id >= 0)
			latency_take_n(id, at + from, j - from, tsc, NULL, 0);
		id = to;
		from = j;
	}
	if (id >= 0)
		latency_take_n(id, at + from, n - from, tsc, NULL, 0);
}

/* Counts the test frames a parse pass found: a loop of its own, with
 * few enough values live that the totals stay in registers (in the parse
 * loop they went to the stack, and an add to a counter in memory per frame
 * is a chain through store forwarding, ~5 cycles a frame). */
static __rte_noinline void
count_found(struct counting *c, const uint32_t *flow, const uint16_t *seq, uint32_t n)
{
	struct counting k = *c;

	for (uint32_t j = 0; j < n; j++)
		count_seq(&k, flow[j], seq[j]);
	*c = k;
}

/* The same with availability intervals: each unique frame also in its
 * class's interval. A loop of its own so that the common case's keeps
 * its registers. */
static __rte_noinline void
count_found_ivl(struct counting *c, const struct surge_dut_rx *st, const uint32_t *flow, const uint16_t *seq,
		uint32_t n)
{
	struct counting k = *c;

	for (uint32_t j = 0; j < n; j++)
		if (count_seq(&k, flow[j], seq[j]))
			ivl_add(st, flow[j], seq[j]);
	*c = k;
}

/* A receiver a burst may be counted into: 0, or -EINVAL naming `what` */
static int
rx_state_ok(const struct surge_dut_rx *st, const char *what)
{
	if (st == NULL || st->flow == NULL || (st->class_of != NULL && st->lat == NULL))
		return rt_error(-EINVAL, "%s: receiver without its arrays", what);
	return ivl_check(st, what);
}

/* The parse and the counting of the burst's n frames into st (checked);
 * returns st->n_other. from_mbufs, a constant in each caller: the frames
 * are read from the received mbufs (the poll), whose first cache lines
 * are read this once (v: the poll's bytes and plainness, as surge_rx_recv
 * finds them), and data[] and len[] are written only for the frames
 * listed in st->other, the only ones Lua reads: one pass over the burst
 * instead of recv's and then the parse's over data[] and len[] (issue 20).
 * Otherwise the frames are data[] and len[] (surge_dut_rx_count). The
 * caller has emptied st->other (n_other 0). */
static __rte_always_inline int
count_frames(struct surge_dut_rx *st, struct surge_burst *b, uint32_t n, int from_mbufs, struct rx_view *v,
	     int one_dport)
{
	/* v's sums in registers: through the pointer they were a load and a
	 * store a frame, a chain through store forwarding */
	struct rx_view lv = from_mbufs ? *v : (struct rx_view){ 0 };
	struct counting c;
	uint32_t found = 0, probes = 0, dport_word, dport_mask, scan, sport0, flows;
	const uint16_t *dport_of;
	uint32_t found_flow[SURGE_BURST_MAX], probe_flow[SURGE_BURST_MAX];
	uint16_t found_seq[SURGE_BURST_MAX];
	const uint8_t *probe_at[SURGE_BURST_MAX];

	counting_begin(&c, st);
	dport_of = one_dport ? NULL : c.dport_of;
	dport_mask = dport_of != NULL ? 0 : RTE_BE32(0x0000ffff);
	dport_word = dport_of != NULL ? 0 : rte_cpu_to_be_32(c.dport);
	sport0 = c.sport0;
	flows = c.flows;
	scan = st->class_of != NULL;
	/* the parse: each frame's flow and sequence number, or its place in
	 * the list of frames that are not test traffic */
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *p;
		uint32_t len, magic, off, ports;
		int32_t l4, f;

		/* the headers a few frames on, while this one is parsed: from a
		 * NIC's DMA they are not in cache yet */
		if (from_mbufs) {
			/* where the frame of a mbuf of surge's pools (no private
			 * area) lies when the driver keeps the default headroom:
			 * from the mbuf's address alone, not two more loads a frame
			 * (buf_addr, data_off) in a pass bound by its loads. A
			 * frame elsewhere is only not prefetched */
			rte_prefetch0((const uint8_t *)b->mbuf[i + 4 < n ? i + 4 : i] + sizeof(struct rte_mbuf) +
				      RTE_PKTMBUF_HEADROOM);
			len = rx_view_next(&lv, b->mbuf[i], &p);
		} else {
			/* past the burst's end a stale pointer, which a prefetch
			 * may be given: it never faults */
			rte_prefetch0(b->data[(i + 4) & (SURGE_BURST_MAX - 1)]);
			p = b->data[i];
			len = b->len[i];
		}
		l4 = (int32_t)fixed_layout(dport_word, dport_mask, p, len, &ports);
		if (likely(l4 > 0)) {
			/* the ports from the word the layout check loaded, the
			 * sequence number and what follows it (a probe's magic)
			 * in one load: 4 loads of the frame, not 7 (issue 20) */
			uint64_t after;

			f = (int32_t)rte_be_to_cpu_16((uint16_t)ports) - (int32_t)sport0;
			if ((uint32_t)f >= flows ||
			    (dport_of != NULL && rte_be_to_cpu_16((uint16_t)(ports >> 16)) != dport_of[f])) {
				f = -1;
			} else {
				/* bytes 40..47 of the frame: inside one 16-byte block,
				 * so a copy made of 16-byte stores (net_pcap's) can
				 * forward it while those are still buffered */
				memcpy(&after, p + FIXED_L4 + 6, 8);
				found_flow[found] = (uint32_t)f;
				found_seq[found++] = rte_be_to_cpu_16((uint16_t)(after >> 16));
				if ((uint32_t)(after >> 32) == PROBE_MAGIC && scan &&
				    FIXED_L4 + PROBE_AT + PROBE_BYTES <= len) {
					probe_at[probes] = p + FIXED_L4 + PROBE_AT;
					probe_flow[probes++] = (uint32_t)f;
				}
				continue;
			}
		} else {
			uint64_t g = general_flow(&c, p, len);

			f = (int32_t)(uint32_t)g;
			l4 = (int32_t)(g >> 32);
			if (f == NOT_A_FRAME)
				continue;
		}
		if (unlikely(f < 0)) {
			keep_other(st, b, i, p, len, from_mbufs);
			continue;
		}
		found_flow[found] = (uint32_t)f;
		found_seq[found++] = (uint16_t)be16(p + l4 + SEQ_OFF);
		off = (uint32_t)l4 + PROBE_AT;
		if (!scan || off + PROBE_BYTES > len)
			continue;
		memcpy(&magic, p + off, 4);
		if (magic == PROBE_MAGIC) {
			probe_at[probes] = p + off;
			probe_flow[probes++] = (uint32_t)f;
		}
	}
	if (st->ivl != NULL)
		count_found_ivl(&c, st, found_flow, found_seq, found);
	else
		count_found(&c, found_flow, found_seq, found);
	counting_end(&c, st);
	if (from_mbufs)
		*v = lv;
	if (probes > 0)
		add_probes(st, probe_at, probe_flow, probes, b->tsc);
	return (int)st->n_other;
}

int
surge_dut_rx_count(struct surge_dut_rx *st, const struct surge_burst *b)
{
	int rc = burst_check(b);

	if (rc != 0)
		return rc;
	if ((rc = rx_state_ok(st, "surge_dut_rx_count")) != 0)
		return rc;
	st->n_other = 0;
	/* read only: from_mbufs = 0 writes nothing into b */
	return count_frames(st, (struct surge_burst *)(uintptr_t)b, b->n, 0, NULL, st->dport_of == NULL);
}

int
surge_dut_rx_poll(uint16_t port, uint16_t queue, struct surge_burst *b, struct surge_dut_rx *st)
{
	struct queue_slot *s = NULL;   /* set where the poll returns n >= 0 */
	struct rx_view v;
	int n, rc = rx_state_ok(st, "surge_dut_rx_poll");

	if (rc != 0)
		return rc;   /* before the receive: no frame taken and left uncounted */
	st->n_other = 0;   /* an empty or failed poll lists nothing either */
	n = rx_poll_begin(rt(), port, queue, b, &s);
	if (n < 0)
		return n;
	rx_view_begin(&v, b, (uint16_t)n);
	/* one copy of the loop a destination port rule: with one port for
	 * every flow, the loop holds no per-flow port table */
	if (n > 0 && st->dport_of == NULL)
		count_frames(st, b, (uint32_t)n, 1, &v, 1);
	else if (n > 0)
		count_frames(st, b, (uint32_t)n, 1, &v, 0);
	rx_poll_end(s, b, (uint16_t)n, v.bytes, v.bad);
	return n;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * pacer.c - pacing a TX queue on the TSC.
 *
 * Each packet gets a departure time; a send hands the driver every packet
 * whose time has come in one tx_burst call and waits (idle.c decides how) for
 * the next. Falling behind (the core was taken away) is handled as the rate
 * asks: SURGE_CATCHUP_BURST sends the late packets back to back, up to
 * max_late_us of schedule, so the average rate holds; SURGE_CATCHUP_SKIP
 * drops the missed schedule beyond max_late_us so the gaps hold. Packets
 * that leave more than LATE_NS after their time are counted as late. The
 * owner adopts a new rate request (control/rate.c) at its next send.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "dataplane.h"

#define BURST_MAX_LATE_US 10000  /* catch-up bound by default: keeps the average */
#define SKIP_MAX_LATE_US 20      /* skip: lateness tolerated before schedule is dropped */
#define LATE_NS 5000             /* a departure this late counts in rate_stats().late */

/* Owner side: adopts a new request, if any. Returns 1 when pacing is on. */
int
pacer_refresh(struct queue_slot *s, double hz, uint64_t now)
{
	struct pacer *p = &s->pc;
	uint32_t seq = __atomic_load_n(&s->req.seq, __ATOMIC_ACQUIRE);
	struct surge_rate r;
	double limit;

	if (likely(seq == p->seq_seen))
		return p->active;
	do {
		seq = __atomic_load_n(&s->req.seq, __ATOMIC_ACQUIRE);
		r = s->req.r;
		limit = s->req.bps_limit;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);   /* the copy before the re-check */
	} while ((seq & 1) || seq != __atomic_load_n(&s->req.seq, __ATOMIC_RELAXED));

	pacer_start(p, &r, limit, hz, now);
	p->seq_seen = seq;
	return p->active;
}

/* A fresh schedule for rate r starting at now (limit: the link's bit/s for
 * a % rate): a queue's, or the open schedule of a TCP client (conn_poll.c). */
void
pacer_start(struct pacer *p, const struct surge_rate *rate, double limit, double hz, uint64_t now)
{
	struct surge_rate r = *rate;
	double v;

	memset(p, 0, sizeof(*p));
	if (r.unit == SURGE_RATE_LINK_PCT) {
		r.value = r.value / 100.0 * limit;
		r.ramp_to = r.ramp_to / 100.0 * limit;
		r.unit = SURGE_RATE_L1_BPS;
	}
	p->r = r;
	p->active = r.value > 0 || r.pattern == SURGE_PACE_GAPS || r.pattern == SURGE_PACE_ONOFF;
	v = r.value;
	p->gap = r.unit == SURGE_RATE_PPS && v > 0 ? hz / v : 0;
	p->cyc_per_bit = r.unit != SURGE_RATE_PPS && v > 0 ? hz / v : 0;
	p->overhead = r.unit == SURGE_RATE_L1_BPS ? WIRE_L1_OVERHEAD : WIRE_L2_OVERHEAD;
	p->rng = r.seed ? r.seed : 0x9e3779b97f4a7c15ULL;
	p->max_late = (r.max_late_us ? r.max_late_us
		       : r.catchup == SURGE_CATCHUP_SKIP ? SKIP_MAX_LATE_US : BURST_MAX_LATE_US) * hz / 1e6;
	p->late_cyc = LATE_NS * hz / 1e9;
	p->start_tsc = now;
	p->next = (double)now;
}

static double
uniform01(uint64_t *state)
{
	uint64_t x = *state;     /* xorshift64*: fast, good enough for gaps */

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return ((x * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* Cycles to wait after a frame of `len` bytes leaves at time `now`. */
double
pacer_gap(struct pacer *p, uint16_t len, double now, uint32_t custom_ns, double hz)
{
	const struct surge_rate *r = &p->r;
	double v = r->value, gap;

	switch (r->pattern) {
	case SURGE_PACE_GAPS:
		return custom_ns * hz / 1e9;
	case SURGE_PACE_RAMP: {
		double f = (now - (double)p->start_tsc) / (r->ramp_s * hz);

		v = f >= 1 ? r->ramp_to : r->value + (r->ramp_to - r->value) * f;
		break;
	}
	default:
		break;
	}
	if (v <= 0)
		gap = 0;
	else if (r->unit == SURGE_RATE_PPS)
		gap = hz / v;
	else
		gap = (len + p->overhead) * 8.0 * hz / v;
	if (r->pattern == SURGE_PACE_POISSON)
		gap *= -log(1.0 - uniform01(&p->rng));
	else if (r->pattern == SURGE_PACE_ONOFF && ++p->on_count >= r->on_pkts) {
		p->on_count = 0;
		gap += r->off_s * hz;
	}
	return gap;
}

/* Paced variant: packet j may leave once the clock passes its departure.
 * kept == NULL: waits for each departure. Otherwise it returns at the first
 * packet not yet due, with *kept the packets from there on, which never
 * met the pacer (no departure drawn for them): a task feeding several paced
 * queues sends each what is due and none waits for another's schedule. */
uint32_t
pace_push(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts, uint32_t n,
	  uint32_t clones, const uint32_t *gap_ns, uint32_t ptr_base, int stamp, uint32_t *kept)
{
	struct pacer *p = &s->pc;
	double hz = (double)rt_hz();
	uint32_t i = 0;

	while (i < n) {
		uint64_t now = rte_rdtsc();
		uint32_t due = 0, sent;
		double behind;

		if ((double)now < p->next) {
			if (kept != NULL && surge_running()) {
				*kept = n - i;
				break;
			}
			if (!surge_running()) {
				p->unsent += n - i;         /* not due yet: never offered to the driver */
				s->st.unsent += n - i;
				break;
			}
			idle_wait_until((uint64_t)p->next, (uint64_t)p->last_gap);
			continue;
		}
		behind = (double)now - p->next;
		if (unlikely(behind > p->max_late)) {
			/* burst: forgive what no burst should catch up; skip: all of it */
			double keep = p->r.catchup == SURGE_CATCHUP_SKIP ? 0 : p->max_late;

			p->skipped += behind - keep;
			p->next = (double)now - keep;
		}
		if (p->r.pattern == SURGE_PACE_CONSTANT && p->gap > 0) {
			/* constant pps: every gap is p->gap, so the packets due and
			 * the late ones are counted at once, one division a burst
			 * rather than a gap drawn (a division) per packet - at rates
			 * the queue cannot reach (1e9 pps: a few cycles a gap) the
			 * per-packet schedule was a quarter of the send's cost */
			double ahead = (double)now - p->next, k = floor(ahead / p->gap) + 1;
			double late = ahead > p->late_cyc ? ceil((ahead - p->late_cyc) / p->gap) : 0;

			due = k < (double)(n - i) ? (uint32_t)k : n - i;
			p->late += late < (double)due ? (uint64_t)late : due;
			p->last_gap = p->gap;
			p->next += due * p->gap;
			p->gap_sum += due * p->gap;
			for (uint32_t j = 0; j < due; j++)
				p->bytes += pkts[i + j]->data_len;
		}
		while (i + due < n && p->next <= (double)now) {
			struct rte_mbuf *m = pkts[i + due];

			if ((double)now - p->next > p->late_cyc)
				p->late++;
			p->last_gap = pacer_gap(p, m->data_len, (double)now,
						gap_ns != NULL ? gap_ns[(ptr_base + i + due) / clones] : 0, hz);
			p->next += p->last_gap;
			p->gap_sum += p->last_gap;
			p->bytes += m->data_len;
			due++;
		}
		sent = push_all(port, q, s, pkts + i, due, stamp);
		if (p->packets == 0 && sent > 0)
			p->first_tsc = now;
		p->packets += sent;
		p->last_tsc = now;
		i += sent;
		if (sent < due)
			break;                              /* stopped */
	}
	return i;
}

/* A burst filled by a pcap reader with a timing mode carries the file's
 * gaps: the queue sending it paces by them. An unpaced queue starts doing so
 * (what r:pace(q) does); a queue with a rate of its own cannot obey both. */
int
pace_timed_burst(uint16_t port, uint16_t q, struct queue_slot *s)
{
	struct surge_rate r;
	uint32_t seq = __atomic_load_n(&s->req.seq, __ATOMIC_ACQUIRE);

	if (seq == s->pc.seq_seen && s->pc.active && s->pc.r.pattern == SURGE_PACE_GAPS)
		return 0;
	if (s->req.r.pattern == SURGE_PACE_GAPS)
		return 0;
	if (s->req.r.value > 0 || s->req.r.pattern == SURGE_PACE_ONOFF || s->req.hw_active)
		return rt_error(-EINVAL, "port %u tx queue %u has a rate of its own, but the burst carries a "
				"pcap reader's timing: open the reader with timing = \"fast\" to send its "
				"packets at the queue's rate", port, q);
	memset(&r, 0, sizeof(r));
	r.pattern = SURGE_PACE_GAPS;
	r.unit = SURGE_RATE_PPS;
	rate_req_publish(&s->req, &r, link_bps(port));
	return 0;
}

/* The writer's side of a queue's rate request, from any lcore: a seqlock
 * (seq is odd while it is written); the owner adopts it at its next send
 * (pacer_refresh). */
void
rate_req_publish(struct rate_req *req, const struct surge_rate *r, double bps_limit)
{
	__atomic_fetch_add(&req->seq, 1, __ATOMIC_ACQ_REL);      /* odd: writing */
	req->r = *r;
	req->bps_limit = bps_limit;
	__atomic_fetch_add(&req->seq, 1, __ATOMIC_RELEASE);      /* even: done */
}

double
link_bps(uint16_t port)
{
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
	    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		return link.link_speed * 1e6;
	return 0;
}


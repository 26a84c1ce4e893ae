/* SPDX-License-Identifier: BSD-3-Clause
 *
 * rate.c - rates: parsing "14.88mpps" / "10gbit" / "40%", and pacing a tx
 * queue on the TSC.
 *
 * Each packet gets a departure time; a send hands the driver every packet
 * whose time has come in one tx_burst call and waits (idle.c decides how) for
 * the next. Falling behind (the core was taken away) is handled as the rate
 * asks: SURGE_CATCHUP_BURST sends the late packets back to back, up to
 * max_late_us of schedule, so the average rate holds; SURGE_CATCHUP_SKIP
 * drops the missed schedule beyond max_late_us so the gaps hold. Packets
 * that leave more than LATE_NS after their time are counted as late. The rate
 * can be changed from another lcore at any time: the setter writes a request
 * under a seqlock, the owner picks it up at its next send.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "runtime.h"

#define BURST_MAX_LATE_US 10000  /* catch-up bound by default: keeps the average */
#define SKIP_MAX_LATE_US 20      /* skip: lateness tolerated before schedule is dropped */
#define LATE_NS 5000             /* a departure this late counts in rate_stats().late */
#define L1_OVERHEAD 24   /* FCS 4 + preamble 7 + SFD 1 + IFG 12 */
#define L2_OVERHEAD 4    /* FCS */

static const struct {
	const char *suffix;
	uint8_t unit;
	double scale;
} units[] = {
	{ "pps", SURGE_RATE_PPS, 1 }, { "kpps", SURGE_RATE_PPS, 1e3 },
	{ "mpps", SURGE_RATE_PPS, 1e6 }, { "gpps", SURGE_RATE_PPS, 1e9 },
	{ "bit", SURGE_RATE_L1_BPS, 1 }, { "kbit", SURGE_RATE_L1_BPS, 1e3 },
	{ "mbit", SURGE_RATE_L1_BPS, 1e6 }, { "gbit", SURGE_RATE_L1_BPS, 1e9 },
	{ "bps", SURGE_RATE_L1_BPS, 1 }, { "kbps", SURGE_RATE_L1_BPS, 1e3 },
	{ "mbps", SURGE_RATE_L1_BPS, 1e6 }, { "gbps", SURGE_RATE_L1_BPS, 1e9 },
	{ "%", SURGE_RATE_LINK_PCT, 1 },
};

int
surge_rate_parse(const char *text, struct surge_rate *out)
{
	char unit[16];
	char *end;
	double v;
	size_t n;
	int l2 = 0;

	if (text == NULL || *text == '\0')
		return rt_error(-EINVAL, "empty rate (try 1mpps, 10gbit, 10gbit-l2, 40%%)");
	v = strtod(text, &end);
	if (end == text || !isfinite(v))
		return rt_error(-EINVAL, "rate '%s' does not start with a number (try 1mpps, 10gbit, 40%%)", text);
	while (*end == ' ')
		end++;
	n = strlen(end);
	if (n >= sizeof(unit))
		return rt_error(-EINVAL, "rate '%s': unknown unit '%s'", text, end);
	memcpy(unit, end, n + 1);
	if (n > 3 && strcasecmp(unit + n - 3, "-l2") == 0) {
		l2 = 1;
		unit[n - 3] = '\0';
	}
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < RTE_DIM(units); i++) {
		if (strcasecmp(unit, units[i].suffix) != 0)
			continue;
		if (l2 && units[i].unit != SURGE_RATE_L1_BPS)
			return rt_error(-EINVAL, "rate '%s': -l2 applies to bit rates only", text);
		if (!(v > 0))
			return rt_error(-EINVAL, "rate '%s' must be above zero", text);
		if (units[i].unit == SURGE_RATE_LINK_PCT && v > 100)
			return rt_error(-EINVAL, "rate '%s' is above 100%% of the link", text);
		out->value = v * units[i].scale;
		if (!isfinite(out->value))
			return rt_error(-EINVAL, "rate '%s' is too large", text);
		out->unit = l2 ? SURGE_RATE_L2_BPS : units[i].unit;
		return 0;
	}
	return rt_error(-EINVAL, "rate '%s': unknown unit '%s' (pps kpps mpps, bit kbit mbit gbit "
			"[-l2], %%)", text, end);
}

static int
check_rate(const struct surge_rate *r, double bps_limit, uint16_t port)
{
	double bits = r->unit == SURGE_RATE_L1_BPS || r->unit == SURGE_RATE_L2_BPS ? r->value : 0;

	if (r->value == 0 && r->pattern != SURGE_PACE_GAPS && r->pattern != SURGE_PACE_ONOFF)
		return 0;                       /* unpaced */
	if (!(r->value >= 0) || !isfinite(r->value))
		return rt_error(-EINVAL, "rate %g must be positive", r->value);
	if (r->unit < SURGE_RATE_PPS || r->unit > SURGE_RATE_LINK_PCT)
		return rt_error(-EINVAL, "rate unit %u unknown", r->unit);
	if (r->pattern > SURGE_PACE_GAPS)
		return rt_error(-EINVAL, "pacing pattern %u unknown", r->pattern);
	if (r->unit == SURGE_RATE_LINK_PCT && bps_limit <= 0)
		return rt_error(-EINVAL, "port %u reports no link speed: give the rate in pps or bit/s", port);
	if (r->pattern == SURGE_PACE_RAMP && bits > 0 && r->ramp_to > bits)
		bits = r->ramp_to;              /* the ramp's end must fit the link too */
	if (bits > 0 && bps_limit > 0 && bits > bps_limit)
		return rt_error(-EINVAL, "rate %.6g Gbit/s is above port %u's link speed of %.6g Gbit/s",
				bits / 1e9, port, bps_limit / 1e9);
	if (bits > 0 && bps_limit > 0 && r->unit == SURGE_RATE_L2_BPS) {
		/* the link's speed counts preamble, SFD and IFG too: an L2 rate
		 * needs more than itself on the wire, least with the longest
		 * frames the port sends */
		double longest = rt()->port[port].max_len > 0 ? rt()->port[port].max_len : 1514;
		double l1 = bits * (longest + L1_OVERHEAD) / (longest + L2_OVERHEAD);

		if (l1 > bps_limit)
			return rt_error(-EINVAL, "rate %.6g Gbit/s at L2 is %.6g Gbit/s on the wire even with "
					"%.0f-byte frames: above port %u's link speed of %.6g Gbit/s",
					bits / 1e9, l1 / 1e9, longest, port, bps_limit / 1e9);
	}
	if (r->unit == SURGE_RATE_PPS && r->value > 1e9)
		return rt_error(-EINVAL, "rate %.6g Mpps is beyond any link", r->value / 1e6);
	if (r->pattern == SURGE_PACE_RAMP && (!(r->ramp_s > 0) || !(r->ramp_to > 0)))
		return rt_error(-EINVAL, "a ramp needs ramp_to > 0 and ramp_s > 0");
	if (r->pattern == SURGE_PACE_ONOFF && (r->on_pkts == 0 || !(r->off_s >= 0)))
		return rt_error(-EINVAL, "on/off pacing needs on_pkts >= 1 and off_s >= 0");
	if (r->catchup > SURGE_CATCHUP_SKIP)
		return rt_error(-EINVAL, "catch-up mode %u unknown (burst, skip)", r->catchup);
	if (r->max_late_us > 10000000)
		return rt_error(-EINVAL, "max_late_us %u outside 0..10000000", r->max_late_us);
	return 0;
}

/* A constant bit rate can go to the NIC's per-queue limiter. Returns 0 when
 * the NIC took it, 1 to fall back to software pacing (said in one line). */
static int
try_hw_limit(uint16_t port, uint16_t q, const struct surge_rate *r, double limit)
{
	double bps = r->unit == SURGE_RATE_LINK_PCT ? r->value / 100.0 * limit : r->value;
	int rc;

	if (r->pattern != SURGE_PACE_CONSTANT || r->unit == SURGE_RATE_PPS) {
		rt_info("port %u tx queue %u: the hardware limiter takes constant bit rates only: "
			"pacing in software", port, q);
		return 1;
	}
	if (bps < 1e6)
		return rt_error(-EINVAL, "port %u tx queue %u: the hardware limiter counts whole Mbit/s: "
				"%.6g bit/s is below 1 Mbit/s", port, q, bps);
	rc = rte_eth_set_queue_rate_limit(port, q, (uint32_t)(bps / 1e6 + 0.5));
	if (rc == 0)
		return 0;
	if (rc == -ENOTSUP || rc == -ENODEV || rc == -EINVAL) {
		rt_info("port %u tx queue %u: no hardware queue rate limit (%s): pacing in software",
			port, q, rte_strerror(-rc));
		return 1;
	}
	return rt_error(rc, "port %u tx queue %u: hardware rate limit failed: %s", port, q, rte_strerror(-rc));
}

int
surge_txq_set_rate(uint16_t port, uint16_t q, const struct surge_rate *r)
{
	struct runtime *x = rt();
	struct rte_eth_link link;
	struct rate_req *req;
	double limit = 0;
	int rc = 1, unpaced = 0;

	if (port >= RTE_MAX_ETHPORTS || !x->port[port].opened || q >= x->port[port].conf.txq)
		return rt_error(-EINVAL, "port %u has no open tx queue %u", port, q);
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
	    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		limit = link.link_speed * 1e6;
	if ((rc = check_rate(r, limit, port)) != 0)
		return rc;
	req = &x->port[port].txq[q].req;
	if (r->hw && (rc = try_hw_limit(port, q, r, limit)) < 0)
		return rc;                      /* refused for a reason other than "none here" */
	if (r->hw && rc == 0) {
		req->hw_active = 1;             /* the NIC paces: software pacing stops */
		unpaced = 1;
	} else if (req->hw_active) {
		rte_eth_set_queue_rate_limit(port, q, 0);   /* software takes over */
		req->hw_active = 0;
	}
	__atomic_fetch_add(&req->seq, 1, __ATOMIC_ACQ_REL);      /* odd: writing */
	req->r = *r;
	if (unpaced)
		memset(&req->r, 0, sizeof(req->r));
	req->bps_limit = limit;
	__atomic_fetch_add(&req->seq, 1, __ATOMIC_RELEASE);      /* even: done */
	return 0;
}

/* Owner side: adopts a new request, if any. Returns 1 when pacing is on. */
int
pacer_refresh(struct queue_slot *s, double hz, uint64_t now)
{
	struct pacer *p = &s->pc;
	uint32_t seq = __atomic_load_n(&s->req.seq, __ATOMIC_ACQUIRE);
	struct surge_rate r;
	double limit, v;

	if (likely(seq == p->seq_seen))
		return p->active;
	do {
		seq = __atomic_load_n(&s->req.seq, __ATOMIC_ACQUIRE);
		r = s->req.r;
		limit = s->req.bps_limit;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);   /* the copy before the re-check */
	} while ((seq & 1) || seq != __atomic_load_n(&s->req.seq, __ATOMIC_RELAXED));

	memset(p, 0, sizeof(*p));
	p->seq_seen = seq;
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
	p->overhead = r.unit == SURGE_RATE_L1_BPS ? L1_OVERHEAD : L2_OVERHEAD;
	p->rng = r.seed ? r.seed : 0x9e3779b97f4a7c15ULL;
	p->max_late = (r.max_late_us ? r.max_late_us
		       : r.catchup == SURGE_CATCHUP_SKIP ? SKIP_MAX_LATE_US : BURST_MAX_LATE_US) * hz / 1e6;
	p->late_cyc = LATE_NS * hz / 1e9;
	p->start_tsc = now;
	p->next = (double)now;
	return p->active;
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

/* Paced variant: packet j may leave once the clock passes its departure. */
uint32_t
pace_push(uint16_t port, uint16_t q, struct queue_slot *s, struct rte_mbuf **pkts, uint32_t n,
	  uint32_t clones, const uint32_t *gap_ns, uint32_t ptr_base, int stamp)
{
	struct pacer *p = &s->pc;
	double hz = (double)rt_hz();
	uint32_t i = 0;

	while (i < n) {
		uint64_t now = rte_rdtsc();
		uint32_t due = 0, sent;
		double behind;

		if ((double)now < p->next) {
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
	return surge_txq_set_rate(port, q, &r);
}

int
surge_txq_rate_stats(uint16_t port, uint16_t q, struct surge_rate_stats *out)
{
	struct runtime *x = rt();
	const struct pacer *p;
	double hz = (double)rt_hz(), sec;

	if (port >= RTE_MAX_ETHPORTS || !x->port[port].opened || q >= x->port[port].conf.txq)
		return rt_error(-EINVAL, "port %u has no open tx queue %u", port, q);
	p = &x->port[port].txq[q].pc;
	memset(out, 0, sizeof(*out));
	out->packets = p->packets;
	out->bytes = p->bytes;
	/* n departures span n - 1 gaps (counted from the first departure) */
	sec = p->packets > 1 && p->last_tsc > p->first_tsc ? (double)(p->last_tsc - p->first_tsc) / hz : 0;
	out->seconds = sec;
	out->pps = sec > 0 ? (p->packets - 1) / sec : 0;
	out->l1_bps = sec > 0 ? (p->bytes + p->packets * (double)L1_OVERHEAD) * 8 / sec
			  * (p->packets - 1) / p->packets : 0;
	if ((p->r.pattern == SURGE_PACE_CONSTANT || p->r.pattern == SURGE_PACE_POISSON) &&
	    p->r.unit == SURGE_RATE_PPS)
		out->target_pps = p->r.value;
	else if (p->packets > 1 && p->gap_sum - p->last_gap > 0)
		/* what the schedule asked for the departures so far: n - 1 gaps
		 * (ramps, on/off, custom gaps, bit rates of the frames sent) */
		out->target_pps = (double)(p->packets - 1) * hz / (p->gap_sum - p->last_gap);
	out->late = p->late;
	out->skipped_s = p->skipped / hz;
	out->unsent = p->unsent;
	out->catchup = p->r.catchup;
	out->max_late_us = (uint32_t)(p->max_late * 1e6 / hz + 0.5);
	return 0;
}

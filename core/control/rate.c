/* SPDX-License-Identifier: BSD-3-Clause
 *
 * rate.c - rates: parsing "14.88mpps" / "10gbit" / "40%", checking one
 * against the link, the NIC's per-queue limiter, and the request a TX
 * queue's pacer (dataplane/pacer.c) picks up.
 *
 * The rate can be changed from another lcore at any time: the setter writes
 * a request under a seqlock, the owner picks it up at its next send.
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

#include "control.h"


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
		double l1 = bits * (longest + WIRE_L1_OVERHEAD) / (longest + WIRE_L2_OVERHEAD);

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
	struct rate_req *req;
	static const struct surge_rate none;
	double limit;
	int rc = 1, unpaced = 0;

	if (port >= RTE_MAX_ETHPORTS || !x->port[port].opened || q >= x->port[port].conf.txq)
		return rt_error(-EINVAL, "port %u has no open tx queue %u", port, q);
	limit = link_bps(port);
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
	rate_req_publish(req, unpaced ? &none : r, limit);
	return 0;
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
	out->l1_bps = sec > 0 ? (p->bytes + p->packets * (double)WIRE_L1_OVERHEAD) * 8 / sec
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

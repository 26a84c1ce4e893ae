/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_rate.c - rate parsing and pacing (core/control/rate.c, core/dataplane/pacer.c), idle policy (idle.c).
 *
 * Proves: surge_rate_parse reads pps, L1/L2 bit rates and link percent
 * (any case, a space allowed before the unit) and refuses empty, non-numeric,
 * non-positive, unknown, over-100 % and misplaced -l2 rates with -EINVAL and
 * a message quoting the text and naming the problem. pacer_refresh adopts a
 * request only when its seqlock count moves and makes link percent L1 bit/s;
 * no request or a zero rate is unpaced. pacer_gap (hz = 1e9: cycles are ns)
 * spaces constant pps and L1/L2 bit rates exactly, draws Poisson gaps with
 * the right mean and a coefficient of variation of 1, the same per seed,
 * adds the off time after each on_pkts-th packet, ramps linearly and holds,
 * and turns custom ns into cycles. surge_idle_set refuses bad policies and
 * keeps the old one, needs an EAL lcore, and is per lcore. Only the idle
 * tests start EAL (--no-huge, as test_burst.c); they skip without it.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "run.h"
#include "check.h"

#define HZ 1e9
#define NGAPS 100000

static struct surge_opts opts = { .cmd = CMD_TEST, .no_huge = 1, .quiet = 1,
				   .vdev = { "net_null0,no-rx=1" }, .nvdev = 1 };
static struct queue_slot slot;
static double gaps[NGAPS];
static int eal_up;                 /* 0 not tried, 1 up, -1 unavailable */

#define assert_near(got, want, tol)                                             \
	do {                                                                    \
		double g_ = (got), w_ = (want), t_ = (tol);                     \
		if (!(fabs(g_ - w_) <= t_))                                     \
			fail_msg("%s = %.17g, want %.17g +- %.6g", #got, g_, w_, t_); \
	} while (0)

static int
group_setup(void **state)
{
	(void)state;
	return rt_create(&opts);
}

static int
group_teardown(void **state)
{
	(void)state;
	if (eal_up == 1)
		eal_stop();
	rt_destroy();
	return 0;
}

static int
clear_slot(void **state)
{
	(void)state;
	memset(&slot, 0, sizeof(slot));
	return 0;
}

static void
parses(const char *text, double value, uint8_t unit)
{
	struct surge_rate r;

	memset(&r, 0xa5, sizeof(r));
	if (surge_rate_parse(text, &r) != 0)
		fail_msg("'%s' refused: %s", text, surge_last_error());
	if (r.unit != unit)
		fail_msg("'%s': unit %u, want %u", text, r.unit, unit);
	assert_near(r.value, value, value * 1e-15);
	/* the rest zeroed: a constant pattern, no ramp, default seed */
	assert_true(r.pattern == SURGE_PACE_CONSTANT && r.ramp_to == 0 && r.ramp_s == 0 &&
		    r.off_s == 0 && r.seed == 0 && r.on_pkts == 0);
}

static void
refuses(const char *text, const char *needle)
{
	struct surge_rate r;
	int rc = surge_rate_parse(text, &r);

	if (rc != -EINVAL)
		fail_msg("'%s' gave %d (value %g unit %u), want -EINVAL", text ? text : "(null)",
			 rc, r.value, r.unit);
	assert_error_mentions(needle);
	if (text != NULL && *text != '\0')
		assert_error_mentions(text);       /* the message quotes what it refused */
}

static void
test_parse_good(void **state)
{
	(void)state;
	parses("14.88mpps", 14.88e6, SURGE_RATE_PPS);
	parses("100kpps", 1e5, SURGE_RATE_PPS);
	parses("1.5Mpps", 1.5e6, SURGE_RATE_PPS);
	parses("2gpps", 2e9, SURGE_RATE_PPS);
	parses("300pps", 300, SURGE_RATE_PPS);
	parses("10gbit", 1e10, SURGE_RATE_L1_BPS);
	parses("10Gbps", 1e10, SURGE_RATE_L1_BPS);
	parses("500 kbit", 5e5, SURGE_RATE_L1_BPS);
	parses("2.5mbit", 2.5e6, SURGE_RATE_L1_BPS);
	parses("10gbit-l2", 1e10, SURGE_RATE_L2_BPS);
	parses("1Mbit-L2", 1e6, SURGE_RATE_L2_BPS);
	parses("40%", 40, SURGE_RATE_LINK_PCT);
	parses("0.5 %", 0.5, SURGE_RATE_LINK_PCT);
	parses("1e3kpps", 1e6, SURGE_RATE_PPS);
}

static void
test_parse_errors(void **state)
{
	(void)state;
	refuses(NULL, "empty rate");
	refuses("", "empty rate");
	refuses("abc", "does not start with a number");
	refuses("nanpps", "does not start with a number");
	refuses("1e999pps", "does not start with a number");
	refuses("-1mpps", "must be above zero");
	refuses("0pps", "must be above zero");
	refuses("10furlongs", "unknown unit 'furlongs'");
	refuses("10", "unknown unit ''");
	refuses("10gbit-l3", "unknown unit 'gbit-l3'");
	refuses("10 averyveryverylongunit", "unknown unit");
	refuses("150%", "above 100% of the link");
	refuses("1mpps-l2", "-l2 applies to bit rates only");
	refuses("40%-l2", "-l2 applies to bit rates only");
}

/* Regression: surge_rate_parse checked the number for being finite before
 * applying the unit's scale, so "1e300gpps" parsed to value = inf and
 * surge_txq_set_rate later refused it as "rate inf must be positive". */
static void
test_parse_refuses_overflow(void **state)
{
	(void)state;
	refuses("1e300gpps", "rate");
	refuses("1e305gbit", "rate");
}

/* Writes a request the way surge_txq_set_rate does (seq odd, then even). */
static void
request(struct surge_rate r, double bps_limit)
{
	slot.req.seq++;
	slot.req.r = r;
	slot.req.bps_limit = bps_limit;
	slot.req.seq++;
}

/* Requests r and has the owner adopt it at TSC `now`. */
static struct pacer *
adopt(struct surge_rate r, double bps_limit, uint64_t now)
{
	request(r, bps_limit);
	assert_int_equal(pacer_refresh(&slot, HZ, now), 1);
	assert_int_equal(slot.pc.seq_seen, slot.req.seq);
	return &slot.pc;
}

static void
test_refresh(void **state)
{
	struct pacer *p = &slot.pc;

	(void)state;
	assert_int_equal(pacer_refresh(&slot, HZ, 100), 0);     /* no request: unpaced */
	assert_int_equal(pacer_refresh(&slot, HZ, 200), 0);

	request((struct surge_rate){ .value = 1e6, .unit = SURGE_RATE_PPS }, 0);
	assert_int_equal(pacer_refresh(&slot, HZ, 1000), 1);
	assert_true(p->active == 1 && p->seq_seen == 2 && p->r.value == 1e6);
	assert_true(p->gap == 1000 && p->next == 1000 && p->start_tsc == 1000);
	pacer_gap(p, 60, 1000, 0, HZ);

	/* the same request again: nothing restarts */
	p->packets = 5;
	assert_int_equal(pacer_refresh(&slot, HZ, 5000), 1);
	assert_true(p->start_tsc == 1000 && p->packets == 5);

	/* a new one is picked up and starts the schedule afresh */
	request((struct surge_rate){ .value = 2e6, .unit = SURGE_RATE_PPS }, 0);
	assert_int_equal(pacer_refresh(&slot, HZ, 9000), 1);
	assert_true(p->seq_seen == 4 && p->gap == 500 && p->start_tsc == 9000 && p->next == 9000);
	assert_int_equal(p->packets, 0);
	assert_true(pacer_gap(p, 60, 9000, 0, HZ) == 500);

	/* link percent becomes L1 bit/s of the link the setter saw */
	p = adopt((struct surge_rate){ .value = 10, .unit = SURGE_RATE_LINK_PCT }, 1e10, 10000);
	assert_int_equal(p->r.unit, SURGE_RATE_L1_BPS);
	assert_true(p->r.value == 1e9 && p->cyc_per_bit == 1 && p->overhead == 24);

	/* zero is unpaced again, except for the patterns that need no rate */
	request((struct surge_rate){ .value = 0, .unit = SURGE_RATE_PPS }, 0);
	assert_int_equal(pacer_refresh(&slot, HZ, 11000), 0);
	assert_int_equal(pacer_refresh(&slot, HZ, 12000), 0);
	adopt((struct surge_rate){ .pattern = SURGE_PACE_GAPS, .unit = SURGE_RATE_PPS }, 0, 13000);
	adopt((struct surge_rate){ .pattern = SURGE_PACE_ONOFF, .on_pkts = 10, .off_s = 1,
				   .unit = SURGE_RATE_PPS }, 0, 14000);
}

static void
test_gap_constant(void **state)
{
	struct pacer *p;

	(void)state;
	p = adopt((struct surge_rate){ .value = 1e6, .unit = SURGE_RATE_PPS }, 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(pacer_gap(p, (uint16_t)(60 + i % 1400), i * 1000.0, 0, HZ) == 1000);

	p = adopt((struct surge_rate){ .value = 1e9, .unit = SURGE_RATE_L1_BPS }, 0, 0);
	assert_true(pacer_gap(p, 60, 0, 0, HZ) == (60 + 24) * 8);
	assert_true(pacer_gap(p, 1514, 0, 0, HZ) == (1514 + 24) * 8);

	p = adopt((struct surge_rate){ .value = 1e9, .unit = SURGE_RATE_L2_BPS }, 0, 0);
	assert_true(pacer_gap(p, 60, 0, 0, HZ) == (60 + 4) * 8);

	p = adopt((struct surge_rate){ .value = 10, .unit = SURGE_RATE_LINK_PCT }, 1e10, 0);
	assert_true(pacer_gap(p, 60, 0, 0, HZ) == (60 + 24) * 8);
	assert_true(pacer_gap(p, 1000, 0, 0, HZ) == (1000 + 24) * 8);
	assert_true(pacer_gap(p, 60, 0, 0, 2.5e9) == (60 + 24) * 8 * 2.5);   /* a 2.5 GHz TSC */
}

/* Fills gaps[] from a Poisson pacer with `seed` at 100 kpps. */
static void
poisson_gaps(uint64_t seed)
{
	struct pacer *p = adopt((struct surge_rate){ .value = 1e5, .unit = SURGE_RATE_PPS,
						     .pattern = SURGE_PACE_POISSON, .seed = seed }, 0, 0);

	for (int i = 0; i < NGAPS; i++)
		gaps[i] = pacer_gap(p, 60, 0, 0, HZ);
}

static void
test_gap_poisson(void **state)
{
	static double first[100];
	double sum = 0, sq = 0, mean, cv;
	int below = 0, same = 0;

	(void)state;
	poisson_gaps(12345);
	for (int i = 0; i < NGAPS; i++)
		sum += gaps[i];
	mean = sum / NGAPS;
	for (int i = 0; i < NGAPS; i++) {
		assert_true(gaps[i] >= 0 && isfinite(gaps[i]));
		sq += (gaps[i] - mean) * (gaps[i] - mean);
		below += gaps[i] < mean;
	}
	cv = sqrt(sq / (NGAPS - 1)) / mean;
	assert_near(mean, 10000, 200);
	assert_near(cv, 1.0, 0.05);
	assert_near((double)below / NGAPS, 1 - exp(-1), 0.01);   /* exponential's shape */

	memcpy(first, gaps, sizeof(first));
	poisson_gaps(12345);                /* the same seed: the same gaps */
	assert_memory_equal(first, gaps, sizeof(first));
	poisson_gaps(54321);                /* another: other gaps */
	for (int i = 0; i < 100; i++)
		same += first[i] == gaps[i];
	assert_true(same < 5);
	poisson_gaps(0);                    /* the default seed: random too */
	assert_true(gaps[0] != gaps[1] && gaps[0] > 0);
}

static void
test_gap_onoff(void **state)
{
	struct pacer *p;
	double sum = 0;

	(void)state;
	p = adopt((struct surge_rate){ .value = 1e6, .unit = SURGE_RATE_PPS, .pattern = SURGE_PACE_ONOFF,
				       .on_pkts = 1000, .off_s = 0.01 }, 0, 0);
	for (int i = 0; i < 10000; i++) {
		double g = pacer_gap(p, 60, sum, 0, HZ);

		if (i % 1000 == 999)
			assert_near(g, 1000 + 1e7, 1e-6);
		else
			assert_true(g == 1000);
		sum += g;
	}
	assert_near(10000 / (sum / HZ), 1000 / (1000 / 1e6 + 0.01), 1e-6);

	/* on/off with no rate: bursts of on_pkts back to back, then silence */
	p = adopt((struct surge_rate){ .unit = SURGE_RATE_PPS, .pattern = SURGE_PACE_ONOFF,
				       .on_pkts = 3, .off_s = 0.5 }, 0, 0);
	for (int i = 0; i < 9; i++)
		assert_true(pacer_gap(p, 60, 0, 0, HZ) == (i % 3 == 2 ? 5e8 : 0));
}

static void
test_gap_ramp(void **state)
{
	const uint64_t start = 3000000000ULL;
	struct pacer *p;
	double prev = INFINITY;

	(void)state;
	p = adopt((struct surge_rate){ .value = 1e4, .ramp_to = 1e5, .ramp_s = 1, .unit = SURGE_RATE_PPS,
				       .pattern = SURGE_PACE_RAMP }, 0, start);
	assert_near(pacer_gap(p, 60, start, 0, HZ), 1e5, 1e-6);
	assert_near(pacer_gap(p, 60, start + 0.5e9, 0, HZ), 1e9 / 55000, 1e-6);
	assert_near(pacer_gap(p, 60, start + 0.25e9, 0, HZ), 1e9 / 32500, 1e-6);
	assert_near(pacer_gap(p, 60, start + 1e9, 0, HZ), 1e4, 1e-9);
	assert_near(pacer_gap(p, 60, start + 3600e9, 0, HZ), 1e4, 1e-9);
	for (double t = 0; t <= 1e9; t += 1e7) {    /* the rate only rises */
		double g = pacer_gap(p, 60, start + t, 0, HZ);

		assert_true(g < prev);
		prev = g;
	}

	/* in link percent, both ends are converted: 10 % to 20 % of 10G */
	p = adopt((struct surge_rate){ .value = 10, .ramp_to = 20, .ramp_s = 2,
				       .unit = SURGE_RATE_LINK_PCT, .pattern = SURGE_PACE_RAMP }, 1e10, start);
	assert_near(pacer_gap(p, 60, start, 0, HZ), (60 + 24) * 8, 1e-9);
	assert_near(pacer_gap(p, 60, start + 2e9, 0, HZ), (60 + 24) * 4, 1e-9);
}

static void
test_gap_custom(void **state)
{
	struct pacer *p;

	(void)state;
	p = adopt((struct surge_rate){ .unit = SURGE_RATE_PPS, .pattern = SURGE_PACE_GAPS }, 0, 0);
	assert_true(pacer_gap(p, 60, 0, 12345, HZ) == 12345);
	assert_true(pacer_gap(p, 1500, 0, 0, HZ) == 0);
	assert_true(pacer_gap(p, 60, 0, UINT32_MAX, HZ) == UINT32_MAX);
	assert_true(pacer_gap(p, 60, 0, 1000, 2.5e9) == 2500);     /* ns to cycles */
	p->r.value = 1e6;                   /* a rate, if any, does not matter */
	assert_true(pacer_gap(p, 60, 0, 7, HZ) == 7);
}

/* Starts EAL once, for the tests that need an lcore; skips without it.
 * Before it, this thread is no lcore and has no idle policy. */
static void
need_eal(void)
{
	if (eal_up == 0) {
		struct surge_idle p = { .step_us = 1 };
		int rc;

		assert_int_equal(rte_lcore_id(), LCORE_ID_ANY);
		assert_int_equal(surge_idle_set(&p), -EINVAL);
		assert_error_mentions("not on an lcore");
		assert_int_equal(surge_idle_get(&p), -EINVAL);
		rc = boot_start(&opts, "test_rate");

		if ((eal_up = rc == 0 ? 1 : -1) < 0)
			fprintf(stderr, "test_rate: EAL did not start: %s\n", surge_last_error());
		if (rc == -EINVAL)     /* refusing surge's own arguments is a bug */
			fail();
	}
	if (eal_up != 1)
		skip();
}

static void
test_idle_set(void **state)
{
	struct surge_idle good = { .mode = SURGE_IDLE_PAUSE, .max_sleep_us = 200, .step_us = 5,
				   .sleep_min_us = 30 }, got;
	const struct {
		struct surge_idle p;
		const char *needle;
	} refused[] = {
		{ { .mode = 3, .step_us = 5 }, "idle mode 3" },
		{ { .max_sleep_us = 2000000, .step_us = 5 }, "max_sleep_us 2000000" },
		{ { .max_sleep_us = 200, .step_us = 0 }, "step_us 0" },
		{ { .step_us = 1000001 }, "step_us 1000001" },
		{ { .step_us = 5, .sleep_min_us = 1000001 }, "sleep_min_us 1000001" },
	};

	(void)state;
	need_eal();
	assert_int_equal(surge_idle_get(&got), 0);       /* defaults before any set */
	assert_true(got.mode == SURGE_IDLE_SLEEP && got.max_sleep_us == 500 && got.step_us == 10 &&
		    got.sleep_min_us == 50);

	assert_int_equal(surge_idle_set(&good), 0);
	assert_int_equal(surge_idle_get(&got), 0);
	assert_memory_equal(&got, &good, sizeof(got));

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(surge_idle_set(&refused[i].p), -EINVAL);
		assert_error_mentions(refused[i].needle);
	}
	/* refusals leave the policy as it was */
	assert_int_equal(surge_idle_get(&got), 0);
	assert_memory_equal(&got, &good, sizeof(got));

	/* the limits themselves are fine */
	good = (struct surge_idle){ .max_sleep_us = 1000000, .step_us = 1000000, .sleep_min_us = 1000000 };
	assert_int_equal(surge_idle_set(&good), 0);
	assert_int_equal(surge_idle_get(&got), 0);
	assert_memory_equal(&got, &good, sizeof(got));
}

static int
worker_idle(void *arg)
{
	return surge_idle_get(arg);
}

static void
test_idle_is_per_lcore(void **state)
{
	struct surge_idle mine = { .mode = SURGE_IDLE_BUSY, .max_sleep_us = 7, .step_us = 3 }, theirs;
	unsigned worker;

	(void)state;
	need_eal();
	worker = rte_get_next_lcore(-1, 1, 0);
	if (worker >= RTE_MAX_LCORE)
		skip();
	assert_int_equal(surge_idle_set(&mine), 0);
	memset(&theirs, 0, sizeof(theirs));
	assert_int_equal(rte_eal_remote_launch(worker_idle, &theirs, worker), 0);
	assert_int_equal(rte_eal_wait_lcore(worker), 0);
	/* the worker has its own policy: the defaults */
	assert_true(theirs.mode == SURGE_IDLE_SLEEP && theirs.max_sleep_us == 500 && theirs.step_us == 10);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_refuses_overflow),
		cmocka_unit_test_setup(test_refresh, clear_slot),
		cmocka_unit_test_setup(test_gap_constant, clear_slot),
		cmocka_unit_test_setup(test_gap_poisson, clear_slot),
		cmocka_unit_test_setup(test_gap_onoff, clear_slot),
		cmocka_unit_test_setup(test_gap_ramp, clear_slot),
		cmocka_unit_test_setup(test_gap_custom, clear_slot),
		cmocka_unit_test(test_idle_set),
		cmocka_unit_test(test_idle_is_per_lcore),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * clock.c - the run's one clock: the TSC, measured against CLOCK_MONOTONIC_RAW.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include <rte_cpuflags.h>
#include <rte_cycles.h>

#include "base.h"

uint64_t
surge_tsc(void)
{
	return rte_rdtsc();
}

/* One clock for the run. DPDK's rte_get_tsc_hz() rounds its calibration to
 * 10 MHz (every paced rate off by that rounding: docs/performance.md
 * "Precision"), so surge measures the TSC itself against CLOCK_MONOTONIC_RAW
 * (the kernel's unslewed clock) and stores the result in runtime.tsc_hz;
 * pacing, stats, latency and surge.tsc_hz() all read that one value. */
#define CAL_WINDOWS 3
#define CAL_WINDOW_NS 40000000ull   /* 40 ms: a 100 ns pair error is 2.5 ppm */
#define CAL_TRIES 16
#define DRIFT_PPM 20.0
#define DRIFT_MIN_NS 1000000000ull  /* shorter runs cannot resolve 20 ppm reliably */

/* A (TSC, ns) pair taken tightly: the TSC read before and after the clock
 * read, the tightest bracket of a few tries (a preempted try is wide). */
static void
clock_pair(struct tsc_pair *p)
{
	uint64_t best = UINT64_MAX;

	p->tsc = p->ns = 0;   /* the first try always replaces them */
	for (int i = 0; i < CAL_TRIES; i++) {
		struct timespec ts;
		uint64_t a = rte_rdtsc_precise(), b;

		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		b = rte_rdtsc_precise();
		if (b - a < best) {
			best = b - a;
			p->tsc = a + (b - a) / 2;
			p->ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		}
	}
}

static double
pair_hz(const struct tsc_pair *a, const struct tsc_pair *b)
{
	return b->ns > a->ns ? (double)(b->tsc - a->tsc) * 1e9 / (double)(b->ns - a->ns) : 0;
}

/* Measures the TSC's rate: the median of CAL_WINDOWS windows (one slow
 * window, e.g. a migration between CPUs, cannot move it). */
uint64_t
tsc_measure_hz(struct tsc_pair *first)
{
	struct tsc_pair p[CAL_WINDOWS + 1];
	double hz[CAL_WINDOWS], t;

	clock_pair(&p[0]);
	for (int i = 1; i <= CAL_WINDOWS; i++) {
		struct timespec ts;

		/* CLOCK_MONOTONIC_RAW cannot be slept on everywhere: fall back */
		ts.tv_sec = 0;
		ts.tv_nsec = (long)CAL_WINDOW_NS;
		if (clock_nanosleep(CLOCK_MONOTONIC_RAW, 0, &ts, NULL) != 0)
			nanosleep(&ts, NULL);
		clock_pair(&p[i]);
		hz[i - 1] = pair_hz(&p[i - 1], &p[i]);
	}
	for (int i = 1; i < CAL_WINDOWS; i++)     /* insertion sort of three */
		for (int j = i; j > 0 && hz[j] < hz[j - 1]; j--) {
			t = hz[j];
			hz[j] = hz[j - 1];
			hz[j - 1] = t;
		}
	if (first != NULL)
		*first = p[0];
	return (uint64_t)(hz[CAL_WINDOWS / 2] + 0.5);
}

void
rt_tsc_calibrate(void)
{
	struct runtime *r = rt_current;

	if (r == NULL)
		return;
#ifdef RTE_ARCH_X86
	/* a VM may hide it: recv.c then orders its receive time with LFENCE */
	r->rdtscp = rte_cpu_get_flag_enabled(RTE_CPUFLAG_RDTSCP) > 0;
#endif
	r->tsc_hz = tsc_measure_hz(&r->tsc_ref);
	if (r->tsc_hz == 0)
		r->tsc_hz = rte_get_tsc_hz();   /* no usable clock pairs: DPDK's figure */
}

/* At exit: the TSC's rate over the whole run against the one used. */
void
rt_tsc_check(void)
{
	struct runtime *r = rt_current;
	struct tsc_pair now;
	double whole, ppm;

	if (r == NULL || r->tsc_hz == 0 || r->tsc_ref.ns == 0)
		return;
	clock_pair(&now);
	if (now.ns - r->tsc_ref.ns < DRIFT_MIN_NS)
		return;
	whole = pair_hz(&r->tsc_ref, &now);
	ppm = (whole / (double)r->tsc_hz - 1) * 1e6;
	r->tsc_drift_ppm = ppm;
	if (fabs(ppm) > DRIFT_PPM)
		fprintf(stderr, "surge: the TSC ran at %.0f Hz over the run, not the %" PRIu64 " Hz "
			"measured at start-up (%+.1f ppm): timed figures are off by that much\n",
			whole, r->tsc_hz, ppm);
}

uint64_t
rt_hz(void)
{
	return rt_current->tsc_hz;
}

uint64_t
surge_tsc_to_ns(uint64_t tsc)
{
	const struct runtime *r = rt_current;

	if (r == NULL || r->tsc_hz == 0)
		return 0;
	/* signed: a reading from before the calibration is fine too */
	return r->tsc_ref.ns + (uint64_t)(int64_t)((double)(int64_t)(tsc - r->tsc_ref.tsc) * 1e9 /
						   (double)r->tsc_hz);
}

uint64_t
surge_tsc_hz(void)
{
	if (rt_current == NULL)
		return rte_get_tsc_hz();
	if (rt_current->tsc_hz == 0)
		rt_tsc_calibrate();          /* no EAL (surge show): measured on first use */
	return rt_current->tsc_hz;
}


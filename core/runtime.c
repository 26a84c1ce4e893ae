/* SPDX-License-Identifier: BSD-3-Clause
 *
 * runtime.c - the one run context, per-lcore error strings, the stop flag,
 * clocks, and the ABI layout table that keeps C and LuaJIT in agreement.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "runtime.h"

#ifndef SURGE_VERSION
#define SURGE_VERSION "0.0.0"
#endif

/* The single run context (see rt() in runtime.h). */
struct runtime *rt_current;

int
rt_create(const struct surge_opts *opts)
{
	struct runtime *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	r->opts = *opts;
	r->exit_status = -1;
	rte_spinlock_init(&r->pool_lock);
	pthread_mutex_init(&r->stats_lock, NULL);
	rt_current = r;
	return 0;
}

void
rt_destroy(void)
{
	struct runtime *r = rt_current;

	if (r == NULL)
		return;
	for (unsigned i = 0; i < RTE_MAX_LCORE; i++) {
		free(r->lcore[i].args);
		free(r->lcore[i].result);
	}
	for (int i = 0; i < r->nvdev_lock; i++)
		if (r->vdev_lock_fd[i] >= 0)
			close(r->vdev_lock_fd[i]);
	free(r->prev_tx);
	free(r->prev_rx);
	free(r->prev_txb);
	free(r->prev_rxb);
	free(r->series.rows);
	rt_current = NULL;
	free(r);
}

static struct lcore_slot *
my_slot(void)
{
	unsigned id = rte_lcore_id();

	if (rt_current == NULL)
		return NULL;
	if (id >= RTE_MAX_LCORE)
		id = rte_get_main_lcore();
	return &rt_current->lcore[id];
}

int
rt_error(int err, const char *fmt, ...)
{
	struct lcore_slot *s = my_slot();
	va_list ap;

	if (s != NULL) {
		va_start(ap, fmt);
		vsnprintf(s->err, sizeof(s->err), fmt, ap);
		va_end(ap);
	}
	return err < 0 ? err : -err;
}

void
rt_info(const char *fmt, ...)
{
	va_list ap;

	if (rt_current != NULL && rt_current->opts.quiet)
		return;
	va_start(ap, fmt);
	fputs("surge: ", stdout);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

const char *
surge_version(void)
{
	return SURGE_VERSION;
}

const char *
surge_last_error(void)
{
	struct lcore_slot *s = my_slot();

	return s != NULL && s->err[0] != '\0' ? s->err : "no error";
}

int
surge_running(void)
{
	/* a task stopped alone (surge_task_stop) sees the run as stopped */
	return rt_live(rt_current, rte_lcore_id());
}

void
surge_stop(void)
{
	uint64_t none = 0;

	if (rt_current == NULL)
		return;
	/* async-signal-safe: the signal handlers call this */
	__atomic_compare_exchange_n(&rt_current->stop_tsc, &none, rte_rdtsc(), 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	__atomic_store_n(&rt_current->stop, 1, __ATOMIC_RELAXED);
}

/* os.exit(status) in any VM (lua/surge/core.lua): the run ends as on
 * surge.stop(), and the process exits with this status once the summary,
 * the pool check and the pcap writers' flush are done (a real exit from a
 * VM would skip them all). The first request wins. */
void
surge_exit(int status)
{
	int none = -1;

	if (rt_current == NULL)
		return;
	__atomic_compare_exchange_n(&rt_current->exit_status, &none, status, 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	surge_stop();
}

/* What os.exit asked for, -1 = nothing (master's return value then counts). */
int
surge_exit_status(void)
{
	return rt_current != NULL ? __atomic_load_n(&rt_current->exit_status, __ATOMIC_RELAXED) : -1;
}

/* The process's exit status: an error's (rc), else what os.exit asked for. */
int
rt_exit_status(int rc)
{
	int want = rt_current != NULL ? __atomic_load_n(&rt_current->exit_status, __ATOMIC_RELAXED) : -1;

	return rc == 0 && want >= 0 ? want : rc;
}

int
surge_lcore_id(void)
{
	return (int)rte_lcore_id();
}

int
surge_is_main(void)
{
	return rte_lcore_id() == rte_get_main_lcore();
}

uint64_t
surge_tsc(void)
{
	return rte_rdtsc();
}

/* One clock for the run. DPDK's rte_get_tsc_hz() rounds its calibration to
 * 10 MHz (2.600 GHz where the kernel measured 2596.130 MHz: every paced rate
 * 0.15 % low), so surge measures the TSC itself against CLOCK_MONOTONIC_RAW
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

void
surge_sleep_us(uint32_t us)
{
	int main_lcore = surge_is_main() && rt_current != NULL && rt_current->eal_up;

	if (!surge_running()) {
		/* begun after a stop: sleep, but no longer than until calls into
		 * surge raise "run stopped" - a loop around it neither spins nor
		 * outlives the stop (core/stop.c) */
		uint32_t left = run_stop_left_us();
		struct timespec ts;

		us = us < left ? us : left;
		ts.tv_sec = us / 1000000;
		ts.tv_nsec = (long)(us % 1000000) * 1000;
		if (us > 0)
			nanosleep(&ts, NULL);
		return;
	}
	/* nanosleep (usleep refuses a second or more), in slices of at most
	 * 10 ms so that a stop ends the sleep */
	while (us > 0 && surge_running()) {
		uint32_t now = us < 10000 ? us : 10000;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)now * 1000 };

		nanosleep(&ts, NULL);
		us -= now;
		if (main_lcore)
			rt_current->master_seen_tsc = rte_rdtsc();
	}
}

int
surge_quiet(void)
{
	return rt_current != NULL && rt_current->opts.quiet;
}

double
surge_duration(void)
{
	return rt_current != NULL ? rt_current->opts.duration : 0.0;
}

#define F(T, f) { "struct " #T, #f, offsetof(struct T, f), sizeof(((struct T *)0)->f) }
#define S(T) { "struct " #T, "", 0, sizeof(struct T) }
static const struct surge_abi_field abi_fields[] = {
	S(surge_burst), F(surge_burst, n), F(surge_burst, cap), F(surge_burst, pool),
	F(surge_burst, probes), F(surge_burst, tsc), F(surge_burst, mbuf), F(surge_burst, data), F(surge_burst, len),
	S(surge_port_conf), F(surge_port_conf, rxq), F(surge_port_conf, txq),
	F(surge_port_conf, rxd), F(surge_port_conf, txd), F(surge_port_conf, link_timeout_ms),
	F(surge_port_conf, promisc), F(surge_port_conf, clones), F(surge_port_conf, mtu),
	F(surge_port_conf, csum_offload), F(surge_port_conf, reserved),
	S(surge_port_info), F(surge_port_info, name), F(surge_port_info, driver),
	F(surge_port_info, mac), F(surge_port_info, link_up), F(surge_port_info, started),
	F(surge_port_info, link_speed_mbps), F(surge_port_info, socket),
	F(surge_port_info, max_rxq), F(surge_port_info, max_txq), F(surge_port_info, rxq),
	F(surge_port_info, txq), F(surge_port_info, fast_free), F(surge_port_info, clones),
	F(surge_port_info, mtu), F(surge_port_info, rx_offload_capa),
	F(surge_port_info, tx_offload_capa), F(surge_port_info, tx_offloads),
	S(surge_port_stats), F(surge_port_stats, ipackets), F(surge_port_stats, opackets),
	F(surge_port_stats, ibytes), F(surge_port_stats, obytes), F(surge_port_stats, imissed),
	F(surge_port_stats, ierrors), F(surge_port_stats, oerrors), F(surge_port_stats, rx_nombuf),
	S(surge_queue_stats), F(surge_queue_stats, packets), F(surge_queue_stats, bytes),
	F(surge_queue_stats, drops), F(surge_queue_stats, bursts), F(surge_queue_stats, lcore),
	F(surge_queue_stats, reserved), F(surge_queue_stats, unsent),
	S(surge_pool_conf), F(surge_pool_conf, size), F(surge_pool_conf, cache),
	F(surge_pool_conf, data_room), F(surge_pool_conf, single_owner),
	F(surge_pool_conf, reserved), F(surge_pool_conf, socket),
	S(surge_pool_info), F(surge_pool_info, name), F(surge_pool_info, size),
	F(surge_pool_info, avail), F(surge_pool_info, alloc_fail), F(surge_pool_info, data_room),
	F(surge_pool_info, tmpl_len), F(surge_pool_info, socket), F(surge_pool_info, single_owner),
	F(surge_pool_info, reserved), F(surge_pool_info, owner_lcore),
	F(surge_burst, gap_ns), F(surge_burst, from_alloc), F(surge_burst, timed),
	S(surge_rate), F(surge_rate, value), F(surge_rate, ramp_to), F(surge_rate, ramp_s),
	F(surge_rate, off_s), F(surge_rate, seed), F(surge_rate, on_pkts), F(surge_rate, unit),
	F(surge_rate, pattern), F(surge_rate, hw), F(surge_rate, catchup), F(surge_rate, max_late_us),
	S(surge_rate_stats), F(surge_rate_stats, packets), F(surge_rate_stats, bytes),
	F(surge_rate_stats, seconds), F(surge_rate_stats, pps), F(surge_rate_stats, l1_bps),
	F(surge_rate_stats, target_pps), F(surge_rate_stats, late), F(surge_rate_stats, skipped_s),
	F(surge_rate_stats, unsent), F(surge_rate_stats, catchup), F(surge_rate_stats, reserved),
	F(surge_rate_stats, max_late_us),
	S(surge_idle), F(surge_idle, mode), F(surge_idle, batch), F(surge_idle, rx_intr), F(surge_idle, reserved), F(surge_idle, max_sleep_us),
	F(surge_idle, step_us), F(surge_idle, sleep_min_us),
	S(surge_lcore_stats), F(surge_lcore_stats, busy_cycles), F(surge_lcore_stats, idle_cycles),
	F(surge_lcore_stats, sleeps), F(surge_lcore_stats, lcore), F(surge_lcore_stats, reserved),
	S(surge_latency), F(surge_latency, probes), F(surge_latency, lost),
	F(surge_latency, duplicated), F(surge_latency, reordered), F(surge_latency, min_ns),
	F(surge_latency, mean_ns), F(surge_latency, p50_ns), F(surge_latency, p90_ns),
	F(surge_latency, p99_ns), F(surge_latency, p999_ns), F(surge_latency, max_ns),
	S(surge_pcap_info), F(surge_pcap_info, records), F(surge_pcap_info, bytes),
	F(surge_pcap_info, next), F(surge_pcap_info, duration_ns), F(surge_pcap_info, speed),
	F(surge_pcap_info, loops), F(surge_pcap_info, pass), F(surge_pcap_info, snaplen),
	F(surge_pcap_info, linktype), F(surge_pcap_info, max_len), F(surge_pcap_info, nano),
	F(surge_pcap_info, writer), F(surge_pcap_info, reserved),
	S(surge_counter_info), F(surge_counter_info, name), F(surge_counter_info, kind),
	F(surge_counter_info, reserved), F(surge_counter_info, lcores), F(surge_counter_info, total),
	F(surge_counter_info, value),
	S(surge_sample), F(surge_sample, t), F(surge_sample, value), F(surge_sample, tx_packets),
	F(surge_sample, tx_bytes), F(surge_sample, rx_packets), F(surge_sample, rx_bytes),
	F(surge_sample, drops), F(surge_sample, unsent), F(surge_sample, busy_cycles),
	F(surge_sample, idle_cycles), F(surge_sample, tick), F(surge_sample, port), F(surge_sample, id),
	F(surge_sample, kind), F(surge_sample, reserved),
	S(surge_latency_sample), F(surge_latency_sample, ns), F(surge_latency_sample, seq),
	F(surge_latency_sample, duplicate),
	S(surge_hist_bucket), F(surge_hist_bucket, low_ns), F(surge_hist_bucket, high_ns),
	F(surge_hist_bucket, count),
	S(surge_abi_field), F(surge_abi_field, type), F(surge_abi_field, field),
	F(surge_abi_field, offset), F(surge_abi_field, size),
};
#undef F
#undef S

const struct surge_abi_field *
surge_abi_fields(uint32_t *count)
{
	*count = sizeof(abi_fields) / sizeof(abi_fields[0]);
	return abi_fields;
}

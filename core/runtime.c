/* SPDX-License-Identifier: BSD-3-Clause
 *
 * runtime.c - the one run context, per-lcore error strings, the stop flag,
 * clocks, and the ABI layout table that keeps C and LuaJIT in agreement.
 */
#include <errno.h>
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

/* The single run context. Set once by main() before any lcore starts and
 * cleared after they all stopped; its contents follow the one-writer rule
 * documented in runtime.h. */
static struct runtime *the_rt;

struct runtime *
rt(void)
{
	return the_rt;
}

int
rt_create(const struct surge_opts *opts)
{
	struct runtime *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	r->opts = *opts;
	rte_spinlock_init(&r->pool_lock);
	pthread_mutex_init(&r->stats_lock, NULL);
	the_rt = r;
	return 0;
}

void
rt_destroy(void)
{
	struct runtime *r = the_rt;

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
	the_rt = NULL;
	free(r);
}

static struct lcore_slot *
my_slot(void)
{
	unsigned id = rte_lcore_id();

	if (the_rt == NULL)
		return NULL;
	if (id >= RTE_MAX_LCORE)
		id = rte_get_main_lcore();
	return &the_rt->lcore[id];
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

	if (the_rt != NULL && the_rt->opts.quiet)
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
	unsigned id = rte_lcore_id();

	if (the_rt == NULL || __atomic_load_n(&the_rt->stop, __ATOMIC_RELAXED))
		return 0;
	/* a task stopped alone (surge_task_stop) sees the run as stopped */
	return id >= RTE_MAX_LCORE || !__atomic_load_n(&the_rt->lcore[id].stop_req, __ATOMIC_RELAXED);
}

void
surge_stop(void)
{
	uint64_t none = 0;

	if (the_rt == NULL)
		return;
	/* async-signal-safe: the signal handlers call this */
	__atomic_compare_exchange_n(&the_rt->stop_tsc, &none, rte_rdtsc(), 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	__atomic_store_n(&the_rt->stop, 1, __ATOMIC_RELAXED);
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

uint64_t
surge_tsc_hz(void)
{
	return rte_get_tsc_hz();
}

void
surge_sleep_us(uint32_t us)
{
	int main_lcore = surge_is_main() && the_rt != NULL && the_rt->eal_up;

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
			the_rt->master_seen_tsc = rte_rdtsc();
	}
}

int
surge_quiet(void)
{
	return the_rt != NULL && the_rt->opts.quiet;
}

double
surge_duration(void)
{
	return the_rt != NULL ? the_rt->opts.duration : 0.0;
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
	F(surge_queue_stats, reserved),
	S(surge_pool_conf), F(surge_pool_conf, size), F(surge_pool_conf, cache),
	F(surge_pool_conf, data_room), F(surge_pool_conf, single_owner),
	F(surge_pool_conf, reserved), F(surge_pool_conf, socket),
	S(surge_pool_info), F(surge_pool_info, name), F(surge_pool_info, size),
	F(surge_pool_info, avail), F(surge_pool_info, alloc_fail), F(surge_pool_info, data_room),
	F(surge_pool_info, tmpl_len), F(surge_pool_info, socket), F(surge_pool_info, single_owner),
	F(surge_pool_info, reserved), F(surge_pool_info, owner_lcore),
	F(surge_burst, gap_ns), F(surge_burst, from_alloc),
	S(surge_rate), F(surge_rate, value), F(surge_rate, ramp_to), F(surge_rate, ramp_s),
	F(surge_rate, off_s), F(surge_rate, seed), F(surge_rate, on_pkts), F(surge_rate, unit),
	F(surge_rate, pattern), F(surge_rate, hw), F(surge_rate, reserved),
	S(surge_rate_stats), F(surge_rate_stats, packets), F(surge_rate_stats, bytes),
	F(surge_rate_stats, seconds), F(surge_rate_stats, pps), F(surge_rate_stats, l1_bps),
	F(surge_rate_stats, target_pps),
	S(surge_idle), F(surge_idle, mode), F(surge_idle, reserved), F(surge_idle, max_sleep_us),
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

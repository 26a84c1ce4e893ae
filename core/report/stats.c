/* SPDX-License-Identifier: BSD-3-Clause
 *
 * stats.c - the periodic stats line and the end-of-run summary.
 *
 * The stats line is printed by the monitor thread (run/monitor.c) during a
 * run, by master's polls under `surge test`. Both only read the per-queue
 * slots; each slot has one writer (the lcore that owns the queue), so no
 * counter needs an atomic add. L1
 * rates add the 20 bytes of preamble, start delimiter and inter-frame gap a
 * frame costs on the wire, plus the 4-byte FCS that len[] leaves out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "report.h"

/* Gbit/s at L2 (with FCS) and L1 for `pkts` frames of `bytes` in `sec`. */
static void
rates(uint64_t pkts, uint64_t bytes, double sec, double *mpps, double *l2, double *l1)
{
	*mpps = sec > 0 ? pkts / sec / 1e6 : 0;
	*l2 = sec > 0 ? (bytes + pkts * WIRE_L2_OVERHEAD) * 8.0 / sec / 1e9 : 0;
	*l1 = sec > 0 ? (bytes + pkts * WIRE_L1_OVERHEAD) * 8.0 / sec / 1e9 : 0;
}

static int
ensure_prev(struct runtime *r)
{
	if (r->prev_tx != NULL)
		return 0;
	r->prev_tx = calloc(RTE_MAX_ETHPORTS, sizeof(uint64_t));
	r->prev_rx = calloc(RTE_MAX_ETHPORTS, sizeof(uint64_t));
	r->prev_txb = calloc(RTE_MAX_ETHPORTS, sizeof(uint64_t));
	r->prev_rxb = calloc(RTE_MAX_ETHPORTS, sizeof(uint64_t));
	return r->prev_tx && r->prev_rx && r->prev_txb && r->prev_rxb ? 0 : -1;
}

/* "lcores: 1 idle 97.3% (sleeps 9988), 2 idle 0.1%": where the task lcores'
 * time went since the last line (interval) or since their task started. */
static void
print_lcores(int interval)
{
	struct runtime *r = rt();
	unsigned id;
	int any = 0;

	RTE_LCORE_FOREACH_WORKER(id) {
		struct surge_lcore_stats ls;
		uint64_t total, idle;
		double pct;

		if (surge_lcore_stats((int)id, &ls) != 0 || ls.busy_cycles + ls.idle_cycles == 0)
			continue;
		total = ls.busy_cycles + ls.idle_cycles;
		idle = ls.idle_cycles;
		if (interval) {
			/* counters of a lcore running a new task start again at 0 */
			uint64_t t0 = total >= r->prev_busy[id] ? r->prev_busy[id] : 0;
			uint64_t i0 = idle >= r->prev_idle[id] ? r->prev_idle[id] : 0;

			r->prev_busy[id] = total;
			r->prev_idle[id] = idle;
			total -= t0;
			idle -= i0;
		}
		pct = total ? idle * 100.0 / (double)total : 0.0;
		printf("%s lcore %u %5.1f%%", any ? "," : "           idle:", id, RTE_MIN(pct, 100.0));
		any = 1;
	}
	if (any)
		printf("\n");
}

/* "counters: hits 1234, depth 3.5": the scripts' counters and gauges. */
static void
print_counters(void)
{
	int n = surge_counter_count();

	for (int i = 0; i < n; i++) {
		struct surge_counter_info ci;

		if (surge_counter_get(i, &ci) != 0)
			continue;
		if (ci.kind == SURGE_GAUGE)
			printf("%s %s %g%s", i ? "," : "       counters:", ci.name, ci.value,
			       ci.flags & SURGE_COUNTER_SATURATED ? " (saturated)" : "");
		else
			printf("%s %s %" PRIu64 "%s", i ? "," : "       counters:", ci.name, ci.total,
			       ci.flags & SURGE_COUNTER_SATURATED ? " (saturated)" : "");
	}
	if (n > 0)
		printf("\n");
}

static void
stats_tick_locked(int force)
{
	struct runtime *r = rt();
	uint64_t now = rte_rdtsc(), hz = rt_hz();
	double sec;
	uint16_t port;

	series_tick(now, force);     /* the results keep sampling when nothing is printed */
	if (r->start_tsc == 0 || r->opts.quiet || r->opts.stats_interval <= 0 || r->at_prompt ||
	    ensure_prev(r) != 0)
		return;                  /* (at the prompt: lines only when asked, watch()) */
	if (r->last_print_tsc == 0)
		r->last_print_tsc = r->start_tsc;
	sec = (double)(now - r->last_print_tsc) / hz;
	if (!force && sec < r->opts.stats_interval)
		return;
	RTE_ETH_FOREACH_DEV(port) {
		struct queue_totals t;
		double tm, tl2, tl1, rm, rl2, rl1;

		/* master may be opening a port right now: started is set last */
		if (!__atomic_load_n(&r->port[port].started, __ATOMIC_ACQUIRE))
			continue;
		queue_totals(port, &t);
		rates(t.tx_packets - r->prev_tx[port], t.tx_bytes - r->prev_txb[port], sec, &tm, &tl2, &tl1);
		rates(t.rx_packets - r->prev_rx[port], t.rx_bytes - r->prev_rxb[port], sec, &rm, &rl2, &rl1);
		printf("[%7.2fs] port %u  TX %8.3f Mpps %7.3f Gbit/s (L1 %7.3f)  RX %8.3f Mpps %7.3f Gbit/s  drops %" PRIu64 "\n",
		       (double)(now - r->start_tsc) / hz, port, tm, tl2, tl1, rm, rl2, t.drops);
		(void)rl1;
		r->prev_tx[port] = t.tx_packets;
		r->prev_txb[port] = t.tx_bytes;
		r->prev_rx[port] = t.rx_packets;
		r->prev_rxb[port] = t.rx_bytes;
	}
	print_lcores(1);
	print_counters();
	fflush(stdout);
	r->last_print_tsc = now;
}

/* A run that opened no port and started no task (a script that failed
 * early, or pure Lua) has nothing to summarise. */
static int
did_something(const struct runtime *r)
{
	uint16_t port;

	if (r->launched)
		return 1;
	RTE_ETH_FOREACH_DEV(port)
		if (r->port[port].opened)
			return 1;
	return 0;
}

/* The monitor thread calls this once per tick, master when a prompt asks:
 * one at a time (the previous interval's counters are shared state). */
void
stats_tick(int force)
{
	struct runtime *r = rt();

	pthread_mutex_lock(&r->stats_lock);
	stats_tick_locked(force);
	pthread_mutex_unlock(&r->stats_lock);
}

/* One line per paced tx queue: how it handled falling behind, and how
 * often it did (the catch-up choice and the late packets, per queue). */
static void
print_paced(uint16_t port)
{
	for (uint16_t q = 0; q < rt()->port[port].conf.txq; q++) {
		struct surge_rate_stats rs;

		if (surge_txq_rate_stats(port, q, &rs) != 0 || rs.packets == 0)
			continue;
		printf("  port %u  txq %u paced: %.3f pps (target %.3f)  late %" PRIu64 "  catch-up %s "
		       "(max %u us)  skipped %.6f s\n", port, q, rs.pps, rs.target_pps, rs.late,
		       rs.catchup == SURGE_CATCHUP_SKIP ? "skip" : "burst", rs.max_late_us, rs.skipped_s);
	}
}

void
stats_summary(void)
{
	struct runtime *r = rt();
	uint64_t end = r->end_tsc ? r->end_tsc : rte_rdtsc();
	double sec = r->start_tsc ? (double)(end - r->start_tsc) / rt_hz() : 0;
	uint16_t port;

	if (r->start_tsc == 0 || !did_something(r))
		return;
	printf("surge: summary over %.3f s\n", sec);
	RTE_ETH_FOREACH_DEV(port) {
		struct surge_port_stats ps = { 0 };
		struct queue_totals t;
		double tm, tl2, tl1, rm, rl2, rl1;

		if (!r->port[port].opened)
			continue;
		queue_totals(port, &t);
		surge_port_stats(port, &ps);
		rates(t.tx_packets, t.tx_bytes, sec, &tm, &tl2, &tl1);
		rates(t.rx_packets, t.rx_bytes, sec, &rm, &rl2, &rl1);
		printf("  port %u  TX %" PRIu64 " packets %" PRIu64 " bytes  %.3f Mpps %.3f Gbit/s (L1 %.3f)\n",
		       port, t.tx_packets, t.tx_bytes, tm, tl2, tl1);
		printf("  port %u  RX %" PRIu64 " packets %" PRIu64 " bytes  %.3f Mpps %.3f Gbit/s (L1 %.3f)\n",
		       port, t.rx_packets, t.rx_bytes, rm, rl2, rl1);
		printf("  port %u  tx-drops %" PRIu64 "  unsent-at-stop %" PRIu64 "  rx-missed %" PRIu64 "  rx-errors %" PRIu64
		       "  tx-errors %" PRIu64 "  rx-nombuf %" PRIu64 "\n",
		       port, t.drops, t.unsent, ps.imissed, ps.ierrors, ps.oerrors, ps.rx_nombuf);
		print_paced(port);
	}
	print_lcores(0);
	print_counters();
	fflush(stdout);
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * monitor.c - the one stop path of a run, and the thread that watches it.
 *
 * Everything that ends a run early sets one flag with surge_stop(): the end
 * of --duration, SIGINT, SIGTERM, SIGHUP, a failed task, or a script's own
 * surge.stop(). What follows is the same for all of them:
 *
 *  1. surge.running() turns false; loops that check it end by themselves.
 *  2. A loop that never checks it but calls into surge (send, recv, alloc,
 *     sleep, poll, wait) gets the error "run stopped" from that call once the
 *     stop is a quarter of the grace period old (0.5 s by default). Task and
 *     master code treat that error as a normal end, not as a failure. The
 *     delay leaves well-behaved code time for its own clean-up calls; a sleep
 *     begun after the stop sleeps (up to that moment) instead of returning
 *     at once, so a loop around it does not spin.
 *  3. The monitor, a plain thread (master itself may be the stuck one),
 *     waits the grace period (--stop-grace, 2 s), counted in the CPU time
 *     each stuck thread ran since the stop (a thread that got no CPU could
 *     not see the stop), or at most the wall bound, max(5 s, 10 x grace),
 *     for code blocked in a call outside surge. Code still running then
 *     either never calls into surge at all, or goes on after its calls
 *     raised "run stopped" (a pcall around them, or around a loop the
 *     prompt's hook interrupts): the monitor names it, prints the summary,
 *     flushes the pcap writers nobody stuck holds, and exits with status 3.
 *     Its lcores cannot be joined, so the pool check is skipped (and said
 *     so). This holds for `surge run` and `surge repl` alike.
 *
 * The monitor also ends the run at --duration and prints the stats lines,
 * so a master that never calls surge.wait() or surge.poll() (a master-only
 * script sending in its own loop) still stops on time and shows its rates.
 * In a run it is the only writer of the stats line's state.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "run.h"

#define MONITOR_TICK_NS 10000000ull /* 10 ms: duration and watchdog resolution */
#define MONITOR_LATE_NS 250000000ull /* a tick this late: the process got no CPU at all */

enum { MASTER_ENDS, MASTER_SILENT, MASTER_IGNORES };   /* what the watchdog sees of master */

/* What the monitor keeps of the stop, on its own stack: each lcore thread's
 * CPU time when the stop was first seen, master's last sign of life (a call
 * into surge) with master's CPU time when it was seen, and how long the
 * monitor itself was not scheduled since the stop. A grace period counts
 * the CPU time the code ran since (rt_overdue): code that got no CPU could
 * not see the stop. */
struct watch {
	uint64_t last_tick;              /* TSC of the previous tick */
	uint64_t lost;                   /* cycles since the stop in which no tick ran */
	int armed;                       /* the stop was seen: what follows is set */
	uint64_t cpu0[RTE_MAX_LCORE];    /* CPU ns of each lcore's thread at the stop, UINT64_MAX = unknown */
	uint64_t seen_tsc;               /* max(master's last sign of life, the stop) */
	uint64_t seen_cpu, seen_lost;    /* master's CPU ns and `lost` when that was seen */
};

/* Seconds of CPU between two readings of one thread's clock; 0 when either
 * is unknown (then only the wall bound ends the code). */
static double
cpu_since(uint64_t base, uint64_t now_ns)
{
	return base != UINT64_MAX && now_ns != UINT64_MAX && now_ns > base ? (double)(now_ns - base) / 1e9 : 0;
}

/* Seconds from `mark` to `now` in which the process was scheduled: the
 * monitor's late ticks since `lost_then` do not count. */
static double
wall_since(const struct watch *w, uint64_t now, uint64_t mark, uint64_t lost_then)
{
	uint64_t d = now > mark ? now - mark : 0, l = w->lost - lost_then;

	return d > l ? (double)(d - l) / (double)rt_hz() : 0;
}

/* CPU seconds lcore `id`'s thread ran since the stop. */
static double
lcore_cpu_since_stop(struct watch *w, unsigned id)
{
	uint64_t ns = rt_cpu_ns(&rt()->lcore[id]);

	if (w->cpu0[id] == UINT64_MAX)   /* its thread had not said its clock at the stop */
		w->cpu0[id] = ns;
	return cpu_since(w->cpu0[id], ns);
}

/* What master runs, for the watchdog's line: code typed at the prompt (or
 * sent by a client) or master() itself. */
static int
evaluating(void)
{
	return run_hooks()->evaluating != NULL ? run_hooks()->evaluating() : 0;
}

static const char *
master_what(void)
{
	return evaluating() ? "the command typed at the prompt" : "master()";
}

/* Why code still runs, for the watchdog's line. */
static const char *
stuck_why(int refused, int interrupted, int low_cpu)
{
	if (interrupted)
		return "it goes on after being interrupted (a pcall around its loop?)";
	if (refused)
		return "it goes on after its calls into surge raised \"run stopped\" (a pcall around them?)";
	if (low_cpu)
		return "it waits in a call outside surge (a blocking call in its code?)";
	return "its loop calls neither surge.running() nor surge";
}

/* Names what is still running long after the stop, reports what it can and
 * ends the process: nothing else can end a loop that never calls surge. */
static void
watchdog_fire(struct watch *w, uint64_t now, int master_stuck, int master_low_cpu)
{
	struct runtime *r = rt();
	double since = (double)(now - r->stop_tsc) / (double)rt_hz();
	unsigned id;

	RTE_LCORE_FOREACH_WORKER(id) {
		if (__atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE) != TASK_RUNNING)
			continue;
		fprintf(stderr, "surge: error: task '%s' (lcore %u) still runs %.1f s after the run "
			"stopped: %s; ending the run\n", r->lcore[id].fn, id, since,
			stuck_why(r->lcore[id].refused_tsc > r->stop_tsc, 0,
				  lcore_cpu_since_stop(w, id) < rt_stop_grace()));
	}
	if (master_stuck != MASTER_ENDS)
		fprintf(stderr, "surge: error: %s still runs %.1f s after the run stopped: %s; ending the "
			"run\n", master_what(), since, stuck_why(master_stuck == MASTER_IGNORES,
							      evaluating() == 2, master_low_cpu));
	fflush(stderr);
	r->end_tsc = now;
	stats_summary();
	pcap_close_all_abandoned(master_stuck);
	fprintf(stderr, "surge: pool check skipped: the stuck code still holds its mbufs\n");
	if (run_hooks()->watchdog_exit != NULL)
		run_hooks()->watchdog_exit();   /* e.g. remove the --control socket */
	fflush(stdout);
	fflush(stderr);
	eal_forget();
	_exit(EXIT_WATCHDOG);
}

/* Keeps the stop's account: the CPU clocks at the stop, and the time the
 * monitor was not scheduled (a tick far later than its 10 ms: the process,
 * or the whole machine, got no CPU, so nobody could see the stop). */
static void
watch_account(struct watch *w, uint64_t prev, uint64_t now, uint64_t stop_at)
{
	const struct runtime *r = rt();
	uint64_t from = RTE_MAX(prev, stop_at), hz = rt_hz();
	unsigned id;

	if (!w->armed) {
		RTE_LCORE_FOREACH(id)
			w->cpu0[id] = rt_cpu_ns(&r->lcore[id]);
		w->seen_tsc = 0;
		w->lost = 0;
		w->armed = 1;
	}
	if (now > from && now - from > MONITOR_LATE_NS * hz / 1000000000ull)
		w->lost += now - from - MONITOR_TICK_NS * hz / 1000000000ull;
}

static void
monitor_tick(struct watch *w)
{
	struct runtime *r = rt();
	uint64_t now = rte_rdtsc(), end = run_deadline(r), stop_at, seen, prev = w->last_tick;
	unsigned id, main_id = rte_get_main_lcore();
	const struct lcore_slot *m = &r->lcore[main_id];
	int stuck_tasks = 0, master_stuck, master_low_cpu = 0;
	double cpu;

	w->last_tick = now;
	if (end != 0 && surge_running() && now >= end)
		surge_stop();
	stats_tick(0);
	stop_at = __atomic_load_n(&r->stop_tsc, __ATOMIC_RELAXED);
	/* (a stop set after `now` was read, e.g. just above, is younger still) */
	if (stop_at == 0 || stop_at > now)
		return;
	watch_account(w, prev, now, stop_at);
	seen = RTE_MAX(r->master_seen_tsc, stop_at);
	if (seen != w->seen_tsc) {   /* a new sign of life: master's grace starts again */
		w->seen_tsc = seen;
		w->seen_cpu = rt_cpu_ns(m);
		w->seen_lost = w->lost;
	}
	/* no thread can have run a grace period of CPU in less wall time */
	if (now - stop_at < rt_grace_cycles(1.0))
		return;
	RTE_LCORE_FOREACH_WORKER(id)
		if (__atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE) == TASK_RUNNING &&
		    rt_overdue(lcore_cpu_since_stop(w, id), wall_since(w, now, stop_at, 0)))
			stuck_tasks++;
	master_stuck = MASTER_ENDS;
	cpu = cpu_since(w->seen_cpu, rt_cpu_ns(m));
	if (r->master_active && rt_overdue(cpu, wall_since(w, now, seen, w->seen_lost))) {
		master_stuck = MASTER_SILENT;
		master_low_cpu = cpu < rt_stop_grace();
	/* still refused after a whole grace period of its CPU since the stop: a
	 * refusal ends a loop at once unless the code catches it and calls again */
	} else if (r->master_active && m->refused_tsc > stop_at &&
		   rt_overdue(cpu_since(w->cpu0[main_id], m->refused_cpu_ns),
			      wall_since(w, m->refused_tsc, stop_at, 0))) {
		master_stuck = MASTER_IGNORES;
	}
	if (stuck_tasks > 0 || master_stuck)
		watchdog_fire(w, now, master_stuck, master_low_cpu);
}

static void *
monitor_main(void *arg)
{
	struct watch w = { .last_tick = rte_rdtsc() };

	(void)arg;
	while (!__atomic_load_n(&rt()->monitor_quit, __ATOMIC_ACQUIRE)) {
		monitor_tick(&w);
		sleep_ns(MONITOR_TICK_NS);
	}
	return NULL;
}

int
monitor_start(void)
{
	struct runtime *r = rt();
	int rc;

	r->monitor_quit = 0;
	rc = pthread_create(&r->monitor, NULL, monitor_main, NULL);
	if (rc != 0)
		return rt_error(-rc, "cannot start the monitor thread: %s", strerror(rc));
	r->monitor_up = 1;
	return 0;
}

void
monitor_stop(void)
{
	struct runtime *r = rt();

	if (r == NULL || !r->monitor_up)
		return;
	__atomic_store_n(&r->monitor_quit, 1, __ATOMIC_RELEASE);
	pthread_join(r->monitor, NULL);
	r->monitor_up = 0;
}

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
 *     waits the grace period (--stop-grace, 2 s). Code still running then
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

enum { MASTER_ENDS, MASTER_SILENT, MASTER_IGNORES };   /* what the watchdog sees of master */

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
stuck_why(int refused, int interrupted)
{
	if (interrupted)
		return "it goes on after being interrupted (a pcall around its loop?)";
	if (refused)
		return "it goes on after its calls into surge raised \"run stopped\" (a pcall around them?)";
	return "its loop calls neither surge.running() nor surge";
}

/* Names what is still running long after the stop, reports what it can and
 * ends the process: nothing else can end a loop that never calls surge. */
static void
watchdog_fire(uint64_t now, int master_stuck)
{
	struct runtime *r = rt();
	double since = (double)(now - r->stop_tsc) / (double)rt_hz();
	unsigned id;

	RTE_LCORE_FOREACH_WORKER(id) {
		if (__atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE) != TASK_RUNNING)
			continue;
		fprintf(stderr, "surge: error: task '%s' (lcore %u) still runs %.1f s after the run "
			"stopped: %s; ending the run\n", r->lcore[id].fn, id, since,
			stuck_why(r->lcore[id].refused_tsc > r->stop_tsc, 0));
	}
	if (master_stuck != MASTER_ENDS)
		fprintf(stderr, "surge: error: %s still runs %.1f s after the run stopped: %s; ending the "
			"run\n", master_what(), since, stuck_why(master_stuck == MASTER_IGNORES,
							      evaluating() == 2));
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

static void
monitor_tick(void)
{
	struct runtime *r = rt();
	uint64_t now = rte_rdtsc(), end = run_deadline(r), stop_at, seen;
	int stuck_tasks = 0, master_stuck;
	unsigned id;

	if (end != 0 && surge_running() && now >= end)
		surge_stop();
	stats_tick(0);
	stop_at = __atomic_load_n(&r->stop_tsc, __ATOMIC_RELAXED);
	/* (a stop set after `now` was read, e.g. just above, is younger still) */
	if (stop_at == 0 || stop_at > now || now - stop_at < rt_grace_cycles(1.0))
		return;
	RTE_LCORE_FOREACH_WORKER(id)
		if (__atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE) == TASK_RUNNING)
			stuck_tasks++;
	seen = RTE_MAX(r->master_seen_tsc, stop_at);
	master_stuck = MASTER_ENDS;
	if (r->master_active && seen < now && now - seen >= rt_grace_cycles(1.0))
		master_stuck = MASTER_SILENT;
	/* still refused a whole grace period after the stop: a refusal ends a
	 * loop at once unless the code catches it and calls again */
	else if (r->master_active && r->lcore[rte_get_main_lcore()].refused_tsc >= stop_at + rt_grace_cycles(1.0))
		master_stuck = MASTER_IGNORES;
	if (stuck_tasks > 0 || master_stuck)
		watchdog_fire(now, master_stuck);
}

static void *
monitor_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&rt()->monitor_quit, __ATOMIC_ACQUIRE)) {
		monitor_tick();
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

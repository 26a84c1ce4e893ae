/* SPDX-License-Identifier: BSD-3-Clause
 *
 * signals.c - SIGINT, SIGTERM and SIGHUP (a closed terminal) all take the
 * one stop path (surge_stop); before EAL, a timer ends what the options
 * pre-pass cannot.
 */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "front.h"

/* Before EAL there is no monitor thread: a stop during the options
 * pre-pass arms a timer instead. Code the pre-pass's hook cannot end (it
 * catches the stop's error and goes on, it loops in an error handler or in
 * a finalizer when its VM closes) is ended when it fires: exit 3, as the
 * watchdog ends a run. Nothing is set up yet, so nothing needs cleaning. */
static void
on_prepass_timeout(int sig)
{
	static const char msg[] = "surge: error: the script's top level or configure() still runs "
		"--stop-grace after the stop: it goes on after the stop's error (a pcall, an error "
		"handler or a finalizer that loops?); exiting\n";
	ssize_t rc;

	(void)sig;
	rc = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)rc;
	_exit(EXIT_WATCHDOG);
}

static struct itimerval
seconds_once(double s)
{
	return (struct itimerval){ .it_value = { .tv_sec = (time_t)s,
						 .tv_usec = (suseconds_t)((s - (double)(time_t)s) * 1e6) } };
}

/* The watchdog's rule (rt_overdue), as two timers: --stop-grace of CPU time
 * the process runs (before EAL it is master's thread alone: code starved of
 * CPU, which could not see the stop, is not ended), or the wall bound for
 * code blocked in a call that burns none. */
void
prepass_watchdog_arm(void)
{
	struct itimerval cpu = seconds_once(rt_stop_grace()), wall = seconds_once(rt_stop_wall_bound());

	signal(SIGPROF, on_prepass_timeout);
	signal(SIGALRM, on_prepass_timeout);
	setitimer(ITIMER_PROF, &cpu, NULL);
	setitimer(ITIMER_REAL, &wall, NULL);
}

void
prepass_watchdog_disarm(void)
{
	setitimer(ITIMER_PROF, &(struct itimerval){ 0 }, NULL);
	setitimer(ITIMER_REAL, &(struct itimerval){ 0 }, NULL);
}

static void
on_signal(int sig)
{
	if (rt() != NULL) {
		rt()->signal = sig;   /* the results file says how the run ended */
		if (rt()->prepass)
			prepass_watchdog_arm();
	}
	surge_stop();     /* a second signal takes the default action (SA_RESETHAND) */
}

/* SIGPIPE is ignored: with `surge run ... | head -2` the writes to the
 * closed pipe fail quietly and the run still ends with its summary, closed
 * pcap writers and the pool check. */
void
signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

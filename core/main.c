/* SPDX-License-Identifier: BSD-3-Clause
 *
 * main.c - `surge run | repl | attach | test | devices | show | plot | scenarios | --version | --help`.
 *
 * The order of a run: parse surge's options, start EAL (hugepage and device
 * fallbacks in eal.c), run master() in the main VM, stop and join every task,
 * print the summary, close the ports (draining what is still queued), then
 * prove every pool is full again. A leak or a failed task is a failed run.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "repl.h"
#include "runtime.h"

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

static void
prepass_watchdog_arm(void)
{
	double g = rt_stop_grace();
	struct itimerval t = { .it_value = { .tv_sec = (time_t)g,
					     .tv_usec = (suseconds_t)((g - (double)(time_t)g) * 1e6) } };

	signal(SIGALRM, on_prepass_timeout);
	setitimer(ITIMER_REAL, &t, NULL);
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

/* SIGINT, SIGTERM and SIGHUP (a closed terminal) all take the one stop
 * path. SIGPIPE is ignored: with `surge run ... | head -2` the writes to the
 * closed pipe fail quietly and the run still ends with its summary, closed
 * pcap writers and the pool check. */
static void
install_signals(void)
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

static int
wants_help(const struct surge_opts *o)
{
	for (int i = 0; i < o->script_argc; i++)
		if (strcmp(o->script_argv[i], "--help") == 0 || strcmp(o->script_argv[i], "-h") == 0)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct surge_opts o;
	char err[256];
	char *text = NULL;
	size_t text_len = 0;
	int rc, scenario;

	if (cli_parse(argc, argv, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "surge: %s\n", err);
		return 2;
	}
	if (o.cmd == CMD_HELP) {
		cli_usage("surge");
		return 0;
	}
	if (o.cmd == CMD_VERSION) {
		printf("surge %s\n", surge_version());
		return 0;
	}
	if (o.cmd == CMD_ATTACH)
		return attach_main(o.control, o.eval);   /* a client: no EAL */
	/* a word without '/' or ".lua" that is not a file names a scenario:
	 * master.lua looks it up (surge.scenario.NAME, SURGE_PATH, --path) */
	scenario = o.cmd == CMD_RUN && strcmp(o.script, "-") != 0 && access(o.script, F_OK) != 0 &&
		   strchr(o.script, '/') == NULL && strstr(o.script, ".lua") == NULL;
	/* read once: a pipe (<(cmd), -) cannot be read again by each task */
	if (o.script != NULL && !scenario && o.cmd != CMD_PLOT &&
	    (rc = script_read(o.script, &text, &text_len)) != 0) {
		fprintf(stderr, "surge: cannot read script '%s': %s\n", o.script, strerror(-rc));
		return 2;
	}
	if (o.cmd == CMD_PLOT && access(o.script, R_OK) != 0) {
		fprintf(stderr, "surge: cannot read '%s': %s\n", o.script, strerror(errno));
		return 2;
	}
	if (rt_create(&o) != 0) {
		fprintf(stderr, "surge: out of memory\n");
		free(text);
		return 1;
	}
	rt()->script_text = text;
	rt()->script_len = text_len;
	if (scenario && (rc = scenario_check(o.script)) != 0) {
		rt_destroy();          /* an unknown name fails before EAL starts */
		free(text);
		return rc;
	}
	if ((o.cmd == CMD_RUN && wants_help(&o)) || o.cmd == CMD_SHOW || o.cmd == CMD_PLOT ||
	    o.cmd == CMD_SCENARIOS) {
		/* the script's options, packets and plots need no DPDK: no EAL start-up */
		rc = rt_exit_status(master_run(o.script, o.script_argc, o.script_argv));
		rt_destroy();
		free(text);
		return rc;
	}
	if (o.output != NULL && strcmp(o.output, "-") == 0 && o.cmd == CMD_RUN) {
		/* --output -: the JSON alone on stdout, every text line on stderr */
		int fd = dup(STDOUT_FILENO);

		fflush(stdout);
		if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			fprintf(stderr, "surge: --output -: %s\n", strerror(errno));
			rt_destroy();
			free(text);
			return 1;
		}
		snprintf(rt()->json_stdout, sizeof(rt()->json_stdout), "/dev/fd/%d", fd);
	}
	/* the script's options are checked before EAL starts: a bad one exits 2
	 * (a scenario's, named rather than a file, when the scenario parses them) */
	install_signals();
	rt()->prepass = 1;
	if (rt()->stop)                /* a signal came before this line */
		prepass_watchdog_arm();
	rc = o.cmd == CMD_RUN && !scenario ? master_options(o.script, o.script_argc, o.script_argv) : 0;
	rt()->prepass = 0;
	/* it returned: nothing of it is stuck (a stop now ends the run's way) */
	setitimer(ITIMER_REAL, &(struct itimerval){ 0 }, NULL);
	if (o.cmd == CMD_RUN && !scenario && (rc != 0 || rt()->exit_status >= 0 || rt()->stop)) {
		/* os.exit(N) at the script's top level, or a signal while it ran */
		rc = rt_exit_status(rc);
		rt_destroy();
		free(text);
		return rc;
	}
	if (o.control != NULL) {
		char err[256];

		/* a live instance on the path is refused before EAL starts */
		if (control_check(o.control, err, sizeof(err)) != 0) {
			fprintf(stderr, "surge: %s\n", err);
			rt_destroy();
			free(text);
			return 2;
		}
	}
	if ((rc = eal_start(&o, argv[0])) != 0) {
		fprintf(stderr, "surge: %s\n", surge_last_error());
		if (rt()->eal_up)
			eal_stop();      /* started, then a device failed: no runtime folder left */
		rt_destroy();
		free(text);
		return 1;
	}
	if (o.cmd == CMD_DEVICES) {
		port_print_devices();
		rc = 0;
	} else {
		/* the monitor: --duration, stats lines, the watchdog (a typed
		 * command that ignores the stop is stopped as master() is) */
		if ((o.cmd == CMD_RUN || o.cmd == CMD_REPL) && monitor_start() != 0) {
			fprintf(stderr, "surge: %s\n", surge_last_error());
			rc = 1;
		} else {
			rc = master_run(o.script, o.script_argc, o.script_argv);
		}
		monitor_stop();
		stats_summary();
	}
	if (ports_close_all() > 0 && rc == 0)
		rc = 1;
	if (pcap_close_all() > 0 && rc == 0)
		rc = 1;
	if (pools_check_and_free() > 0 && rc == 0)
		rc = 1;
	latency_free_all();
	eal_stop();
	rc = rt_exit_status(rc);
	rt_destroy();
	free(text);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * main.c - `surge run | repl | attach | otg | test | devices | show | plot | scenarios | --version | --help`.
 *
 * Dispatch only: parse surge's options, read the script once, check the
 * script's options before EAL starts, then hand the run to the core's one
 * composition root (run/boot.c: start-up, master(), tear-down).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "front.h"
#include "otg.h"

static int
wants_help(const struct surge_opts *o)
{
	for (int i = 0; i < o->script_argc; i++)
		if (strcmp(o->script_argv[i], "--help") == 0 || strcmp(o->script_argv[i], "-h") == 0)
			return 1;
	return 0;
}

/* How `surge run NAME` reads NAME, the one rule (docs/scenarios.md, "How
 * NAME is found"): "-" is standard input; a path that exists and is not a
 * folder (a file, the pipe of <(cmd)) is a script; else a word of letters,
 * digits, '-' and '_' (what a module name may be) names a scenario, which
 * master.lua looks up (surge.scenario.NAME, SURGE_PATH, --path); anything
 * else is a script that cannot be read (exit 2, "Is a directory" for a
 * folder). So a folder never hides a scenario, nor passes for a script. */
static int
names_scenario(const struct surge_opts *o)
{
	struct stat st;

	if (o->cmd != CMD_RUN || strcmp(o->script, "-") == 0)
		return 0;
	if (stat(o->script, &st) == 0 && !S_ISDIR(st.st_mode))
		return 0;
	return o->script[0] != '\0' && strspn(o->script, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
							 "0123456789-_") == strlen(o->script);
}

/* The script's options, packets and plots need no DPDK: no EAL start-up. */
static int
needs_no_eal(const struct surge_opts *o)
{
	return (o->cmd == CMD_RUN && wants_help(o)) || o->cmd == CMD_SHOW || o->cmd == CMD_PLOT ||
	       o->cmd == CMD_SCENARIOS;
}

/* --output -: the JSON alone on stdout, every text line on stderr. */
static int
json_to_stdout(void)
{
	int fd = dup(STDOUT_FILENO);

	fflush(stdout);
	if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "surge: --output -: %s\n", strerror(errno));
		return 1;
	}
	snprintf(rt()->json_stdout, sizeof(rt()->json_stdout), "/dev/fd/%d", fd);
	return 0;
}

/* The script's options are checked before EAL starts: a bad one exits 2
 * (a scenario's, named rather than a file, when the scenario parses them).
 * Returns -1 to go on, else the exit status. */
static int
options_prepass(const struct surge_opts *o, int scenario)
{
	int rc;

	signals_install();
	rt()->prepass = 1;
	if (!surge_running())          /* a signal came before this line */
		prepass_watchdog_arm();
	rc = o->cmd == CMD_RUN && !scenario ? master_options(o->script, o->script_argc, o->script_argv) : 0;
	rt()->prepass = 0;
	prepass_watchdog_disarm();     /* it returned: nothing of it is stuck */
	if (o->cmd == CMD_RUN && !scenario && (rc != 0 || rt()->exit_status >= 0 || !surge_running()))
		return rt_exit_status(rc);   /* os.exit(N) at the top level, or a signal while it ran */
	return -1;
}

/* A live instance on the --control path is refused before EAL starts. */
static int
control_path_free(const struct surge_opts *o)
{
	char err[256];

	if (o->control == NULL || control_check(o->control, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "surge: %s\n", err);
	return 2;
}

/* Everything after the run context exists; returns the exit status. */
static int
run(struct surge_opts *o, int scenario, const char *prog)
{
	int rc;

	run_hooks_set(&repl_hooks);
	if (scenario && (rc = scenario_check(o->script, o->script_argc, o->script_argv)) != 0)
		return rc;             /* a name, module or option error fails before EAL starts */
	if (needs_no_eal(o))
		return rt_exit_status(master_run(o->script, o->script_argc, o->script_argv));
	if (o->output != NULL && strcmp(o->output, "-") == 0 && o->cmd == CMD_RUN && json_to_stdout() != 0)
		return 1;
	if ((rc = options_prepass(o, scenario)) >= 0 || (rc = control_path_free(o)) != 0)
		return rc;
	if (boot_listen() != 0) {          /* --metrics: a bad address or a port in use */
		fprintf(stderr, "surge: %s\n", surge_last_error());
		return 2;
	}
	if (o->cmd == CMD_OTG) {           /* --listen in use, --cert unreadable: before EAL */
		char err[512];

		if (otg_prepare(o, err, sizeof(err)) != 0) {
			fprintf(stderr, "surge otg: %s\n", err);
			return 2;
		}
	}
	if (boot_start(o, prog) != 0) {
		fprintf(stderr, "surge: %s\n", surge_last_error());
		boot_abandon();
		return 1;
	}
	rc = boot_run(o);
	otg_release();                     /* its connections closed before the ports */
	return rt_exit_status(boot_finish(rc));
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
		/* every error of `surge plot` starts "surge plot:", also in Lua */
		fprintf(stderr, "%s: %s\n", o.cmd == CMD_PLOT ? "surge plot" : "surge", err);
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
	if ((o.cmd == CMD_RUN || o.cmd == CMD_REPL) && cli_output_clash(&o, err, sizeof(err)) != 0) {
		fprintf(stderr, "surge: %s\n", err);   /* before anything is read or written */
		return 2;
	}
	scenario = names_scenario(&o);
	/* a scenario prints a progress line per trial: 1 s stats lines between
	 * them are noise, so it has none unless --stats-interval asks */
	if (scenario && !o.stats_interval_set)
		o.stats_interval = 0;
	/* read once: a pipe (<(cmd), -) cannot be read again by each task */
	if (o.script != NULL && !scenario && o.cmd != CMD_PLOT &&
	    (rc = script_read(o.script, &text, &text_len)) != 0) {
		fprintf(stderr, "surge: cannot read script '%s': %s\n", o.script, strerror(-rc));
		return 2;
	}
	if (o.cmd == CMD_PLOT && access(o.script, R_OK) != 0) {
		fprintf(stderr, "surge plot: cannot read '%s': %s\n", o.script, strerror(errno));
		return 2;
	}
	if (rt_create(&o) != 0) {
		fprintf(stderr, "surge: out of memory\n");
		free(text);
		return 1;
	}
	rt()->script_text = text;
	rt()->script_len = text_len;
	rc = run(&o, scenario, argv[0]);
	rt_destroy();
	free(text);
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * master.c - master's VM on the main lcore: the options pre-pass before
 * EAL, master() itself (or surge test/show/plot/repl/scenarios).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>

#include <rte_cycles.h>
#include <rte_lcore.h>

#include "run.h"

/* The options pre-pass runs the script's top level and configure() before
 * EAL starts, where no watchdog looks: a loop there would ignore SIGINT.
 * That VM runs interpreted (compiled code calls no hooks; the pre-pass does
 * no real work) with a count hook that ends such a loop once a stop came.
 * Code the hook cannot end (it catches the error and goes on, it loops in
 * an error handler or a finalizer, where hooks do not run) is ended by
 * front/signals.c's pre-EAL watchdog. */
static void
prepass_hook(lua_State *L, lua_Debug *ar)
{
	lua_Debug where;

	(void)ar;
	if (surge_running())
		return;
	/* the script's line the loop was on: the running function's */
	/* lua_error, not luaL_error: that would prefix the caller's position */
	if (lua_getstack(L, 0, &where) && lua_getinfo(L, "Sl", &where) && where.currentline > 0)
		lua_pushfstring(L, "%s:%d: stopped while the script's top level or configure() ran",
				where.short_src, where.currentline);
	else
		lua_pushstring(L, "stopped while the script's top level or configure() ran");
	lua_error(L);
}

static int
master_call(const char *cmd, const char *script, int argc, char **argv)
{
	struct runtime *r = rt();
	unsigned me = lcore_self();
	lua_State *L = vm_new(script, &r->lcore[me].mem);
	int rc;

	if (L == NULL) {
		fprintf(stderr, "surge: out of memory for the master LuaJIT VM\n");
		return 1;
	}
	rt_publish_cpu_clock();   /* master's thread, for the watchdog */
	if (strcmp(cmd, "options") == 0) {
		luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_OFF);
		lua_sethook(L, prepass_hook, LUA_MASKCOUNT, 10000);
	}
	/* script options go to Lua as the global `arg`, as the luajit CLI does */
	lua_createtable(L, argc, 1);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_pushstring(L, script != NULL ? script : "");
	lua_rawseti(L, -2, 0);
	lua_setglobal(L, "arg");
	if (run_hooks()->master_vm_open != NULL)
		run_hooks()->master_vm_open(L);   /* the prompt's module (front/repl.c) */
	{
		char packets[16];
		const char *args[3] = { cmd, script != NULL ? script : "", packets };

		snprintf(packets, sizeof(packets), "%d", r->opts.packets);
		r->master_seen_tsc = rte_rdtsc();
		r->master_active = 1;
		if (vm_call_entry(L, "surge.vm.master", 3, args, 1) != 0) {
			fprintf(stderr, "surge: %s\n", lua_tostring(L, -1));
			rc = 1;
		} else {
			rc = (int)lua_tointeger(L, -1);
		}
		r->master_active = 0;
		if (r->lcore[me].mem.over) {
			char hint[200];

			vm_budget_hint(&r->lcore[me].mem, hint, sizeof(hint));
			fprintf(stderr, "  %s\n", hint);
		}
	}
	if (tasks_stop_and_wait() > 0 && rc == 0)
		rc = 1;
	if (run_hooks()->master_vm_close != NULL)
		run_hooks()->master_vm_close();
	/* the summary covers the whole run, up to the last task joined (or to
	 * where the results file ended it, surge_run_end) */
	surge_run_end();
	/* finalizers run in lua_close: a loop there is master's, for the watchdog */
	r->master_seen_tsc = rte_rdtsc();
	r->master_active = 1;
	lua_close(L);
	r->master_active = 0;
	return rc;
}

/* `surge run NAME [options]` before EAL starts: the name, the scenario's
 * module (its contract) and its options, as far as they need no port
 * (surge.scenario.check). Returns 0 to go on, else the exit status. */
int
scenario_check(const char *name, int argc, char **argv)
{
	lua_State *L = vm_new(NULL, &rt()->lcore[rte_get_main_lcore()].mem);
	const char **args = calloc((size_t)argc + 1, sizeof(*args));
	int rc = 2;

	if (L == NULL || args == NULL) {
		fprintf(stderr, "surge: out of memory for a LuaJIT VM\n");
		free(args);
		if (L != NULL)
			lua_close(L);
		return 1;
	}
	args[0] = name;
	for (int i = 0; i < argc; i++)
		args[i + 1] = argv[i];
	if (vm_call_entry(L, "surge.scenario.check", argc + 1, args, 2) != 0) {
		fprintf(stderr, "surge: %s\n", lua_tostring(L, -1));
	} else if (lua_isnil(L, -2)) {
		rc = 0;
	} else {
		/* the message names the scenario, its file or its option */
		fprintf(stderr, "%s\n", lua_tostring(L, -2));
		rc = (int)lua_tointeger(L, -1);
	}
	lua_close(L);
	free(args);
	return rc;
}

int
master_run(const char *script, int argc, char **argv)
{
	static const char *names[] = { [CMD_TEST] = "test", [CMD_SHOW] = "show", [CMD_PLOT] = "plot",
				       [CMD_REPL] = "repl", [CMD_SCENARIOS] = "scenarios", [CMD_OTG] = "otg" };
	enum surge_cmd c = rt()->opts.cmd;

	return master_call(c < sizeof(names) / sizeof(names[0]) && names[c] ? names[c] : "run",
			   script, argc, argv);
}

/* Before EAL starts: loads the script and parses its options in a VM of its
 * own, so a bad script option exits 2 at once (master.lua "options"). */
int
master_options(const char *script, int argc, char **argv)
{
	return master_call("options", script, argc, argv);
}

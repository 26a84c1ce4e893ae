/* SPDX-License-Identifier: BSD-3-Clause
 *
 * task.c - one LuaJIT VM per lcore.
 *
 * master() runs in a VM on the main lcore. surge.launch() serialises the
 * task's arguments to Lua source text, and a worker lcore starts a fresh VM
 * that loads the same script and calls the named function with them. Results
 * (or the error with its traceback) come back as text. VMs share nothing but
 * this hand-off and the C core, so no Lua state is ever touched by two lcores.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "runtime.h"

#ifndef SURGE_LUA_DIR
#define SURGE_LUA_DIR "lua"
#endif
#ifndef SURGE_GEN_DIR
#define SURGE_GEN_DIR "lua"
#endif

/* package.path: $SURGE_LUA_PATH, the source tree, the generated cdefs, then
 * the script's own folder so scripts can require their neighbours. */
static void
set_path(lua_State *L, const char *script)
{
	const char *env = getenv("SURGE_LUA_PATH");
	char dir[1024] = ".";
	const char *slash = script != NULL ? strrchr(script, '/') : NULL;

	if (slash != NULL)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - script), script);
	lua_getglobal(L, "package");
	lua_pushfstring(L, "%s%s" SURGE_LUA_DIR "/?.lua;" SURGE_LUA_DIR "/?/init.lua;"
			SURGE_GEN_DIR "/?.lua;%s/?.lua;",
			env != NULL ? env : "", env != NULL ? ";" : "", dir);
	lua_setfield(L, -2, "path");
	lua_pop(L, 1);
}

lua_State *
vm_new(const char *script)
{
	lua_State *L = luaL_newstate();

	if (L == NULL)
		return NULL;
	luaL_openlibs(L);
	set_path(L, script);
	return L;
}

/* Calls require(module).main(...) with string arguments; on return the top
 * holds `nret` results, or the error text when it returns non-zero. */
static int
call_entry(lua_State *L, const char *module, int nargs, const char **args, int nret)
{
	lua_getglobal(L, "require");
	lua_pushstring(L, module);
	if (lua_pcall(L, 1, 1, 0) != 0)
		return -1;
	lua_getfield(L, -1, "main");
	lua_remove(L, -2);
	for (int i = 0; i < nargs; i++)
		lua_pushstring(L, args[i]);
	return lua_pcall(L, nargs, nret, 0) != 0 ? -1 : 0;
}

static char *
dup_text(const char *s, size_t len, size_t *out_len)
{
	char *d = malloc(len + 1);

	if (d != NULL) {
		memcpy(d, s, len);
		d[len] = '\0';
		*out_len = len;
	}
	return d;
}

static int
task_main(void *arg)
{
	struct lcore_slot *s = arg;
	const char *args[3] = { rt()->opts.script, s->fn, s->args };
	lua_State *L = vm_new(rt()->opts.script);
	int failed = 1;
	char *text = NULL;
	size_t len = 0;

	idle_task_begin();
	if (L == NULL) {
		text = dup_text("out of memory for a LuaJIT VM", 29, &len);
	} else if (call_entry(L, "surge.task", 3, args, 2) != 0) {
		const char *e = lua_tolstring(L, -1, &len);

		text = dup_text(e ? e : "unknown error", e ? len : 13, &len);
	} else {
		const char *t = lua_tolstring(L, -1, &len);

		failed = !lua_toboolean(L, -2);
		text = dup_text(t ? t : "", t ? len : 0, &len);
	}
	/* closing the VM runs the finalisers that return bursts to their
	 * pools, on this lcore, before main may look at the pools */
	if (L != NULL)
		lua_close(L);
	idle_task_end();
	queues_release(rte_lcore_id());
	s->result = text;
	s->result_len = text != NULL ? len : 0;
	if (failed)
		surge_stop();
	__atomic_store_n(&s->state, failed ? TASK_FAILED : TASK_DONE, __ATOMIC_RELEASE);
	return 0;
}

int
surge_task_launch(const char *fn, const char *args, size_t len)
{
	struct runtime *r = rt();
	unsigned id, workers = 0;

	if (!surge_is_main())
		return rt_error(-EPERM, "surge.launch() is for master(); tasks cannot start tasks");
	if (strlen(fn) >= SURGE_NAME_MAX)
		return rt_error(-EINVAL, "task function name too long: %s", fn);
	RTE_LCORE_FOREACH_WORKER(id) {
		struct lcore_slot *s = &r->lcore[id];

		workers++;
		if (s->state != TASK_IDLE || rte_eal_get_lcore_state(id) != WAIT)
			continue;
		snprintf(s->fn, sizeof(s->fn), "%s", fn);
		free(s->args);
		s->args = dup_text(args, len, &s->args_len);
		free(s->result);
		s->result = NULL;
		if (s->args == NULL)
			return rt_error(-ENOMEM, "out of memory for task arguments");
		s->state = TASK_RUNNING;
		if (r->start_tsc == 0)
			r->start_tsc = rte_rdtsc();
		if (rte_eal_remote_launch(task_main, s, id) != 0) {
			s->state = TASK_IDLE;
			return rt_error(-EBUSY, "lcore %u refused the task", id);
		}
		return (int)id;
	}
	return rt_error(-EBUSY, "no free lcore for task '%s': all %u worker lcores are busy "
			"(give more with --lcores, e.g. --lcores '(0-%u)@(0-%u)')",
			fn, workers, workers + 1, rte_lcore_count() > 1 ? rte_lcore_count() - 1 : 0);
}

/* Counts running tasks and reaps finished ones so their lcore can be reused
 * once their result was collected. */
static int
running_tasks(void)
{
	struct runtime *r = rt();
	unsigned id;
	int n = 0;

	RTE_LCORE_FOREACH_WORKER(id) {
		int st = __atomic_load_n(&r->lcore[id].state, __ATOMIC_ACQUIRE);

		if (st == TASK_RUNNING)
			n++;
		else if (st != TASK_IDLE && rte_eal_get_lcore_state(id) != WAIT)
			rte_eal_wait_lcore(id);
	}
	return n;
}

int
surge_task_poll(uint32_t wait_ms)
{
	struct runtime *r = rt();
	uint64_t hz = rt_hz(), until = rte_rdtsc() + hz / 1000 * wait_ms;
	int n;

	for (;;) {
		n = running_tasks();
		if (r->opts.duration > 0 && r->start_tsc != 0 &&
		    rte_rdtsc() - r->start_tsc >= (uint64_t)(r->opts.duration * (double)hz))
			surge_stop();
		stats_tick(0);
		if (n == 0 || rte_rdtsc() >= until)
			break;
		rte_delay_us_sleep(master_nap_us(until));
	}
	if (n == 0 && r->end_tsc == 0 && r->start_tsc != 0)
		r->end_tsc = rte_rdtsc();
	return n;
}

int
surge_task_result(int task, const char **text, size_t *len)
{
	struct lcore_slot *s;
	int st;

	if (task < 0 || task >= RTE_MAX_LCORE)
		return rt_error(-EINVAL, "no task %d", task);
	s = &rt()->lcore[task];
	st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
	if (st == TASK_RUNNING)
		return rt_error(-EAGAIN, "task %d is still running", task);
	if (st == TASK_IDLE)
		return rt_error(-EINVAL, "no task %d", task);
	*text = s->result != NULL ? s->result : "";
	*len = s->result_len;
	/* the lcore may take a new task once main has its result */
	if (rte_eal_get_lcore_state((unsigned)task) != WAIT)
		rte_eal_wait_lcore((unsigned)task);
	s->state = TASK_IDLE;
	return st == TASK_FAILED ? 1 : 0;
}

int
surge_task_count(void)
{
	return running_tasks();
}

int
tasks_stop_and_wait(void)
{
	struct runtime *r = rt();
	unsigned id;
	int failed = 0;

	if (!r->eal_up)
		return 0;
	surge_stop();
	rte_eal_mp_wait_lcore();
	RTE_LCORE_FOREACH_WORKER(id) {
		struct lcore_slot *s = &r->lcore[id];

		if (s->state == TASK_FAILED) {
			/* a failure nobody collected still fails the run */
			fprintf(stderr, "surge: task on lcore %u failed: %s\n", id,
				s->result != NULL ? s->result : "?");
			failed++;
		}
		s->state = TASK_IDLE;
	}
	if (r->end_tsc == 0 && r->start_tsc != 0)
		r->end_tsc = rte_rdtsc();
	return failed;
}

int
master_run(const char *script, int argc, char **argv)
{
	lua_State *L = vm_new(script);
	const char *cmd = rt()->opts.cmd == CMD_TEST ? "test" : rt()->opts.cmd == CMD_SHOW ? "show" : "run";
	int rc;

	if (L == NULL) {
		fprintf(stderr, "surge: out of memory for the master LuaJIT VM\n");
		return 1;
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
	{
		char packets[16];
		const char *args[3] = { cmd, script != NULL ? script : "", packets };

		snprintf(packets, sizeof(packets), "%d", rt()->opts.packets);
		if (call_entry(L, "surge.master", 3, args, 1) != 0) {
			fprintf(stderr, "surge: %s\n", lua_tostring(L, -1));
			rc = 1;
		} else {
			rc = (int)lua_tointeger(L, -1);
		}
	}
	if (tasks_stop_and_wait() > 0 && rc == 0)
		rc = 1;
	lua_close(L);
	return rc;
}

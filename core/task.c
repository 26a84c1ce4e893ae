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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Where surge's Lua library is: an installed binary (PREFIX/bin/surge) finds
 * it next to itself in PREFIX/share/surge/lua, wherever PREFIX was moved to;
 * a binary in its build tree uses the source tree and the generated cdefs.
 * Writes the two folders into lua and gen. */
static void
lua_dirs(char *lua, char *gen, size_t len)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	snprintf(lua, len, "%s", SURGE_LUA_DIR);
	snprintf(gen, len, "%s", SURGE_GEN_DIR);
	if (n <= 0)
		return;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return;
	*slash = '\0';                       /* PREFIX/bin */
	snprintf(probe, sizeof(probe), "%s/../share/surge/lua/surge/cdef.lua", exe);
	if (access(probe, R_OK) != 0)
		return;
	if (snprintf(lua, len, "%s/../share/surge/lua", exe) >= (int)len) {
		snprintf(lua, len, "%s", SURGE_LUA_DIR);   /* too long a path: keep the build's */
		return;
	}
	snprintf(gen, len, "%s", lua);
}

/* The user's folders ($SURGE_PATH, then each --path; ':'-separated lists) as
 * package.path entries into paths, and as a ';'-separated list into list.
 * A list longer than the buffers is cut at a whole folder. */
static void
user_folders(char *paths, size_t plen, char *list, size_t llen)
{
	const char *srcs[SURGE_MAX_DEVS + 1];
	size_t used = 0, lused = 0;
	int ns = 0;

	paths[0] = list[0] = '\0';
	srcs[ns++] = getenv("SURGE_PATH");
	for (int i = 0; i < rt()->opts.npath; i++)
		srcs[ns++] = rt()->opts.path[i];
	for (int i = 0; i < ns; i++) {
		const char *l = srcs[i];

		while (l != NULL && *l != '\0') {
			const char *end = strchr(l, ':');
			int n = end != NULL ? (int)(end - l) : (int)strlen(l);

			if (n > 0 && used + 2 * (size_t)n + 32 < plen && lused + (size_t)n + 2 < llen) {
				used += (size_t)snprintf(paths + used, plen - used, "%.*s/?.lua;%.*s/?/init.lua;",
							 n, l, n, l);
				lused += (size_t)snprintf(list + lused, llen - lused, "%.*s;", n, l);
			}
			l = end != NULL ? end + 1 : NULL;
		}
	}
}

/* package.path: $SURGE_LUA_PATH, surge's library (installed or source tree),
 * the generated cdefs, the user folders, the script's own folder so scripts
 * can require their neighbours, then LuaJIT's default path (its jit.* tools:
 * jit.dump, jit.v). package.surge_dirs lists the user folders for scenario
 * look-up by name. */
static void
set_path(lua_State *L, const char *script)
{
	const char *env = getenv("SURGE_LUA_PATH");
	char dir[1024] = ".", lua[PATH_MAX], gen[PATH_MAX], paths[4096], list[4096];
	const char *slash = script != NULL ? strrchr(script, '/') : NULL;

	lua_dirs(lua, gen, sizeof(lua));
	if (slash != NULL)
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - script), script);
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "path");     /* LuaJIT's own: jit.dump, jit.v, jit.p */
	user_folders(paths, sizeof(paths), list, sizeof(list));
	lua_pushfstring(L, "%s%s%s/?.lua;%s/?/init.lua;%s/?.lua;%s%s/?.lua;%s",
			env != NULL ? env : "", env != NULL ? ";" : "", lua, lua, gen, paths, dir,
			lua_tostring(L, -1));
	lua_setfield(L, -3, "path");
	lua_pushstring(L, list);
	lua_setfield(L, -3, "surge_dirs");
	lua_pop(L, 2);
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
	const char *args[3] = { rt()->opts.script != NULL ? rt()->opts.script : "", s->fn, s->args };
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
	/* a failed task ends the run, except at a prompt, which reports it */
	if (failed && !rt()->interactive)
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
		s->stop_req = 0;
		if (r->start_tsc == 0)
			r->start_tsc = rte_rdtsc();
		r->end_tsc = 0;           /* a later phase: scenario trials, tasks a prompt starts */
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
	uint64_t hz = rte_get_tsc_hz(), until = rte_rdtsc() + hz / 1000 * wait_ms;
	int n;

	for (;;) {
		n = running_tasks();
		if (r->opts.duration > 0 && r->start_tsc != 0 &&
		    rte_rdtsc() - r->start_tsc >= (uint64_t)(r->opts.duration * (double)hz))
			surge_stop();
		if (!r->at_prompt)
			stats_tick(0);
		if (n == 0 || rte_rdtsc() >= until)
			break;
		rte_delay_us_sleep(1000);
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
surge_task_stop(int task)
{
	struct lcore_slot *s;

	if (task < 0 || task >= RTE_MAX_LCORE || task == (int)rte_get_main_lcore())
		return rt_error(-EINVAL, "no task %d", task);
	s = &rt()->lcore[task];
	if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != TASK_RUNNING)
		return rt_error(-ESRCH, "task %d is not running", task);
	__atomic_store_n(&s->stop_req, 1, __ATOMIC_RELAXED);
	return 0;
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

static int
master_call(const char *cmd, const char *script, int argc, char **argv)
{
	lua_State *L = vm_new(script);
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
	repl_register(L);
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
	repl_free();
	lua_close(L);
	return rc;
}

int
scenario_check(const char *name)
{
	lua_State *L = vm_new(name);
	const char *args[1] = { name };
	int rc = 2;

	if (L == NULL) {
		fprintf(stderr, "surge: out of memory for a LuaJIT VM\n");
		return 1;
	}
	if (call_entry(L, "surge.scenario.check", 1, args, 1) != 0)
		fprintf(stderr, "surge: %s\n", lua_tostring(L, -1));
	else if (lua_isnil(L, -1))
		rc = 0;
	else
		fprintf(stderr, "surge: %s\n", lua_tostring(L, -1));
	lua_close(L);
	return rc;
}

int
master_run(const char *script, int argc, char **argv)
{
	static const char *names[] = { [CMD_TEST] = "test", [CMD_SHOW] = "show", [CMD_PLOT] = "plot",
				       [CMD_REPL] = "repl", [CMD_SCENARIOS] = "scenarios" };
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

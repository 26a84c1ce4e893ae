/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_vm.c - Lua VMs (core/run/vm.c): the memory budget and the script text.
 *
 * Proves that Debian's LuaJIT (GC64 on x86-64) accepts surge's allocator,
 * that a JIT-compiled loop that allocates without bound gets "not enough
 * memory" at the budget (not an OOM kill; raised by a hook at the next
 * bytecode, not inside the trace, and caught again after the memory is
 * freed), that the VM still runs code and
 * closes afterwards with every byte given back, and that a script read
 * once from a pipe reaches the VM as package.loaded["surge.script"], and
 * that the VMs together stay inside the shared budget sized from the
 * memory cgroup (v1, v2, hybrid; every ancestor) or MemAvailable.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>

#include "run.h"

static struct surge_opts opts;

/* luaL_dostring's result is 0 or 1; this keeps lua_pcall's code */
static int
run(lua_State *L, const char *code)
{
	int rc = luaL_loadstring(L, code);

	return rc != 0 ? rc : lua_pcall(L, 0, LUA_MULTRET, 0);
}

static int
setup(void **state)
{
	(void)state;
	opts.cmd = CMD_TEST;
	opts.vm_memory = 32ULL << 20;
	return rt_create(&opts);
}

static int
teardown(void **state)
{
	(void)state;
	rt_destroy();
	return 0;
}

static void
count_hook(lua_State *L, lua_Debug *ar)
{
	(void)L;
	(void)ar;
}

static void
test_budget_stops_a_jit_loop(void **state)
{
	struct vm_mem mem;
	lua_State *L = vm_new(NULL, &mem);

	(void)state;
	assert_non_null(L);
	assert_true(mem.limit == 32u << 20);
	assert_true(mem.used > 0 && mem.used < (1u << 20));
	lua_sethook(L, count_hook, LUA_MASKCOUNT, 100000);   /* as the prompt's */
	/* hot enough to be compiled; allocates tables forever: the error
	 * comes from the hook at the next bytecode (a runtime error, so a
	 * message handler runs), not from LuaJIT inside the trace */
	assert_int_equal(run(L, "local t, i = {}, 0 while true do i = i + 1 t[i] = { i } end"), LUA_ERRRUN);
	assert_string_equal(lua_tostring(L, -1), "not enough memory");
	assert_int_equal(mem.over, 1);
	assert_int_equal(mem.pending, 0);
	/* the hook it replaced is back */
	assert_true(lua_gethook(L) == count_hook);
	assert_int_equal(lua_gethookcount(L), 100000);
	lua_sethook(L, NULL, 0, 0);
	assert_true(mem.used <= (32u << 20) + (32u << 20));
	lua_pop(L, 1);
	/* the VM still works: the garbage is collected, code runs again */
	assert_int_equal(run(L, "collectgarbage() return 6 * 7"), 0);
	assert_int_equal(lua_tointeger(L, -1), 42);
	assert_true(mem.used < (4u << 20));
	lua_close(L);
	assert_true(mem.used == 0);
}

static void
test_strings_and_cdata_count(void **state)
{
	struct vm_mem mem;
	lua_State *L = vm_new(NULL, &mem);

	(void)state;
	/* a string that doubles: its buffer grows by doubling too, so the
	 * allocation that crosses the budget fits the reserve: the hook's error */
	assert_int_equal(run(L, "local s = 'x' for i = 1, 40 do s = s .. s end"), LUA_ERRRUN);
	assert_string_equal(lua_tostring(L, -1), "not enough memory");
	lua_pop(L, 1);
	/* caught again once the memory is freed, as at the prompt */
	assert_int_equal(run(L, "collectgarbage() local ffi = require 'ffi' local t = {} "
				       "for i = 1, 1e9 do t[i] = ffi.new('char[4096]') end"), LUA_ERRRUN);
	assert_string_equal(lua_tostring(L, -1), "not enough memory");
	lua_close(L);
	assert_true(mem.used == 0);
}

static void
test_script_from_a_pipe(void **state)
{
	const char *text = "return 'from the pipe', ...";
	int fds[2];
	char path[64];
	char *got = NULL;
	size_t len = 0;
	struct vm_mem mem;
	lua_State *L;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
	close(fds[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
	assert_int_equal(script_read(path, &got, &len), 0);
	close(fds[0]);
	assert_int_equal(len, strlen(text));
	assert_memory_equal(got, text, len);
	assert_int_equal(script_read("/nonexistent/x.lua", &got, &len) == -ENOENT ? 0 : 1, 0);
	rt()->script_text = got;
	rt()->script_len = len;
	L = vm_new("/dev/fd/63", &mem);
	assert_int_equal(run(L, "local s = package.loaded['surge.script'] "
				       "return s.name, loadstring(s.text, s.name)()"), 0);
	assert_string_equal(lua_tostring(L, -2), "@/dev/fd/63");
	assert_string_equal(lua_tostring(L, -1), "from the pipe");
	lua_close(L);
	rt()->script_text = NULL;
	free(got);
}

/* Two VMs with 32 MB each but 40 MB between them: the second one gets
 * "not enough memory" at the shared budget, and every chunk goes back when
 * both close. */
static void
test_shared_budget(void **state)
{
	struct vm_mem a, b;
	lua_State *La, *Lb;
	char hint[200];

	(void)state;
	rt()->vm_total.limit = 40u << 20;
	La = vm_new(NULL, &a);
	Lb = vm_new(NULL, &b);
	assert_int_equal(run(La, "keep = {} for i = 1, 25 do keep[i] = string.rep('a', 1048576) .. i end"), 0);
	assert_int_equal(run(Lb, "local t = {} for i = 1, 1e9 do t[i] = string.rep('b', 1048576) .. i end"),
			 LUA_ERRRUN);
	assert_string_equal(lua_tostring(Lb, -1), "not enough memory");
	assert_int_equal(b.over, VM_OVER_SHARED);
	assert_int_equal(a.over, 0);
	assert_true(rt()->vm_total.used <= (40u << 20));
	vm_budget_hint(&b, hint, sizeof(hint));
	assert_non_null(strstr(hint, "the VMs together used the 40 MB"));
	vm_budget_hint(&a, hint, sizeof(hint));
	assert_non_null(strstr(hint, "budget of 32 MB (--vm-memory)"));
	lua_close(Lb);
	lua_close(La);
	assert_true(a.granted == 0 && b.granted == 0);
	assert_true(rt()->vm_total.used == 0);
	rt()->vm_total.limit = 0;
}

static void
put(const char *root, const char *rel, const char *file, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s%s'", root, rel);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s%s/%s", root, rel, file);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* a cgroup folder with its limit and usage files, as version 1 or 2 names them */
static void
group(const char *root, const char *rel, int version, const char *limit, const char *usage)
{
	char l[32], u[32];

	snprintf(l, sizeof(l), "%s\n", limit);
	snprintf(u, sizeof(u), "%s\n", usage);
	put(root, rel, version == 1 ? "memory.limit_in_bytes" : "memory.max", l);
	put(root, rel, version == 1 ? "memory.usage_in_bytes" : "memory.current", u);
}

/* limit less usage, the smallest up the tree; "no limit" in either version
 * counts as none; a /proc/self/cgroup that names no memory cgroup: none */
static void
test_cgroup_room(void **state)
{
	char root[] = "/tmp/surge-cg-XXXXXX", cmd[64];

	(void)state;
	assert_non_null(mkdtemp(root));
	/* v1: the job's own group is unlimited, its parent has 512M, 100M used */
	group(root, "/memory/lab", 1, "536870912", "104857600");
	group(root, "/memory/lab/job", 1, "9223372036854771712", "104857600");
	group(root, "/memory", 1, "9223372036854771712", "0");
	assert_true(vm_budget_cgroup_room(root, "5:memory:/lab/job\n0::/\n") == (412ull << 20));
	/* controllers mounted together: the mount is named after both */
	group(root, "/cpu,memory/j", 1, "209715200", "0");
	assert_true(vm_budget_cgroup_room(root, "4:cpu,memory:/j\n") == (200ull << 20));
	/* v2 (pure): memory.max "max" in the leaf, 256M in the parent */
	group(root, "/svc", 2, "268435456", "1048576");
	group(root, "/svc/run", 2, "max", "1048576");
	assert_true(vm_budget_cgroup_room(root, "0::/svc/run\n") == (255ull << 20));
	/* v2 in a hybrid set-up: under root/unified */
	group(root, "/unified/box", 2, "134217728", "0");
	assert_true(vm_budget_cgroup_room(root, "1:name=systemd:/\n0::/box\n") == (128ull << 20));
	/* usage above the limit: no room at all */
	group(root, "/tight", 2, "1048576", "2097152");
	assert_true(vm_budget_cgroup_room(root, "0::/tight\n") == 0);
	/* nothing limits */
	assert_true(vm_budget_cgroup_room(root, "3:pids:/x\n") == UINT64_MAX);
	assert_true(vm_budget_cgroup_room(root, "") == UINT64_MAX);
	assert_true(vm_budget_cgroup_room(root, "garbage without colons") == UINT64_MAX);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_stops_a_jit_loop),
		cmocka_unit_test(test_strings_and_cdata_count),
		cmocka_unit_test(test_script_from_a_pipe),
		cmocka_unit_test(test_shared_budget),
		cmocka_unit_test(test_cgroup_room),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

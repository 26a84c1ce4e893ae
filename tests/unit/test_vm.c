/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_vm.c - Lua VMs (core/run/vm.c): the memory budget and the script text.
 *
 * Proves that Debian's LuaJIT (GC64 on x86-64) accepts surge's allocator,
 * that a JIT-compiled loop that allocates without bound gets "not enough
 * memory" at the budget (not an OOM kill), that the VM still runs code and
 * closes afterwards with every byte given back, and that a script read
 * once from a pipe reaches the VM as package.loaded["surge.script"].
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
test_budget_stops_a_jit_loop(void **state)
{
	struct vm_mem mem;
	lua_State *L = vm_new(NULL, &mem);

	(void)state;
	assert_non_null(L);
	assert_true(mem.limit == 32u << 20);
	assert_true(mem.used > 0 && mem.used < (1u << 20));
	/* hot enough to be compiled; allocates tables forever */
	assert_int_equal(run(L, "local t, i = {}, 0 while true do i = i + 1 t[i] = { i } end"), LUA_ERRMEM);
	assert_string_equal(lua_tostring(L, -1), "not enough memory");
	assert_int_equal(mem.over, 1);
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
	assert_int_equal(run(L, "local s = 'x' for i = 1, 40 do s = s .. s end"), LUA_ERRMEM);
	lua_pop(L, 1);
	assert_int_equal(run(L, "collectgarbage() local ffi = require 'ffi' local t = {} "
				       "for i = 1, 1e9 do t[i] = ffi.new('char[4096]') end"), LUA_ERRMEM);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_stops_a_jit_loop),
		cmocka_unit_test(test_strings_and_cdata_count),
		cmocka_unit_test(test_script_from_a_pipe),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

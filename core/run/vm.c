/* SPDX-License-Identifier: BSD-3-Clause
 *
 * vm.c - making a LuaJIT VM: its memory budget, its module path and the
 * script text it runs.
 *
 * Each VM allocates through vm_alloc, which counts its bytes against the
 * --vm-memory budget. Past it, the VM gets "not enough memory" at its next
 * bytecode (vm_run_out: not from inside a compiled trace, where LuaJIT's
 * own memory error is not safe), from interpreted and from JIT-compiled
 * code alike, so a loop that allocates without bound ends as an ordinary
 * Lua error of its task (or of master) and the run ends normally. (On
 * x86-64 this needs LuaJIT built with GC64, as Debian's is: non-GC64 builds
 * refuse lua_newstate with a custom allocator; tests/unit/test_vm.c proves
 * it works here.)
 *
 * The script is read once by main() (it may be a pipe: `surge run <(cmd)`
 * or `-` for standard input) and every VM loads that text, from
 * package.loaded["surge.script"].
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "run.h"

#ifndef SURGE_LUA_DIR
#define SURGE_LUA_DIR "lua"
#endif
#ifndef SURGE_GEN_DIR
#define SURGE_GEN_DIR "lua"
#endif

#define VM_RESERVE (32u << 20)      /* past a budget: until the error is raised, the handler, cleanup */
#define SCRIPT_MAX (64u << 20)
#define VM_GIVE_SLACK (8u << 20)  /* freed past this below its grant: a VM gives chunks back */

/* Runs at the VM's first bytecode after a budget ran out: the interpreter's
 * state is whole there, so the error unwinds like any other. It puts back
 * the hook it replaced (the prompt's, master's pre-pass's) and the GC's
 * pace, then raises "not enough memory" (no position: its message handler
 * and the traceback say where, as for LuaJIT's own memory error). */
static void
vm_memory_hook(lua_State *L, lua_Debug *ar)
{
	void *ud;
	struct vm_mem *m;

	(void)ar;
	lua_getallocf(L, &ud);
	m = ud;
	if (!m->pending)
		return;
	m->pending = 0;
	/* its handler, the unwinding and the report get half of what is left
	 * of the reserve; a VM that allocates on past that (the prompt's next
	 * line before the GC freed the last one's, a caught error) gets the
	 * error again, until the reserve is gone */
	m->rearm_at = m->used + (m->ceiling - m->used) / 2;
	lua_sethook(L, m->saved_hook, m->saved_mask, m->saved_count);
	lua_gc(L, LUA_GCSETSTEPMUL, m->stepmul);
	lua_pushliteral(L, "not enough memory");
	lua_error(L);
}

/* A budget ran out at an allocation of `after` bytes in all. Refusing it
 * (LuaJIT's own memory error) is not survivable everywhere: Debian's LuaJIT
 * 2.1 (2022) raises it from a compiled trace with the trace's stack frame
 * not written back (fixed upstream in 2022-11 and 2023-06), and unwinding
 * from there may crash. So the allocation is granted from a reserve and
 * the error waits for a safe point: a count hook, which runs at the next
 * bytecode the interpreter runs. A trace does not run the interpreter, but
 * it leaves to it when its GC step reaches the atomic phase; the GC is made
 * to step at once (threshold = total) and to the end of its marking in one
 * step (stepmul 0), so a loop that allocates gets there at its next turn.
 * lua_sethook and lua_gc here only write fields of the global state: both
 * are safe from inside an allocation, as lua_sethook is from a signal
 * handler. */
static void
vm_hook_arm(struct vm_mem *m)
{
	m->pending = 1;
	m->saved_hook = lua_gethook(m->L);
	m->saved_mask = lua_gethookmask(m->L);
	m->saved_count = lua_gethookcount(m->L);
	m->stepmul = lua_gc(m->L, LUA_GCSETSTEPMUL, 0);
	lua_sethook(m->L, vm_memory_hook, LUA_MASKCOUNT, 1);
}

/* LuaJIT raises its own error now: the hook's would come a second time,
 * in the handler or the report. */
static void
vm_hook_cancel(struct vm_mem *m)
{
	m->pending = 0;
	lua_sethook(m->L, m->saved_hook, m->saved_mask, m->saved_count);
	lua_gc(m->L, LUA_GCSETSTEPMUL, m->stepmul);
}

/* Returns 0, or -1 to refuse this allocation (no hook: too big for the
 * reserve, or no VM yet). */
static int
vm_run_out(struct vm_mem *m, int which, size_t after)
{
	size_t from = m->L == NULL || after > m->used + VM_RESERVE ? m->used : after;

	m->over = which;
	m->ran_out_at = m->used;
	/* the reserve counts from what is granted: the unwinding has it whole */
	m->ceiling = from + VM_RESERVE;
	m->rearm_at = from + VM_RESERVE / 2;
	if (from != after)
		return -1;      /* LuaJIT's error now */
	vm_hook_arm(m);
	return 0;
}

/* What malloc takes for n bytes: glibc adds an 8-byte header and rounds to
 * 16, 32 at least. A VM's strings and small tables are 30 to 60 bytes, so
 * counting what LuaJIT asked for let a VM at its budget take half as much
 * again: in a 512 MiB cgroup, past the limit. */
static size_t
footprint(size_t n)
{
	return n == 0 ? 0 : n <= 24 ? 32 : (n + 8 + 15) & ~(size_t)15;
}

static void *
vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct vm_mem *m = ud;
	size_t old = ptr != NULL ? footprint(osize) : 0, after;
	void *p;

	if (nsize == 0) {
		free(ptr);
		m->used -= old;
		if (m->used == 0 || m->granted > m->used + VM_GIVE_SLACK)
			vm_budget_give(m);
		/* the error was raised and half the memory freed (a prompt goes
		 * on, a caught error): the next one is caught the same way */
		if (m->ceiling != 0 && !m->pending && m->used < m->ran_out_at / 2)
			m->ceiling = 0;
		return NULL;
	}
	after = m->used - old + footprint(nsize);
	if (after > m->used) {
		if (m->ceiling != 0) {
			/* the reserve: a VM that goes on allocating gets the
			 * error again, and LuaJIT's when the reserve is gone */
			if (after > m->ceiling) {
				/* (a loop whose trace never steps the GC: a
				 * table of numbers only, doubling) */
				if (m->pending)
					vm_hook_cancel(m);
				return NULL;
			}
			if (!m->pending && after > m->rearm_at)
				vm_hook_arm(m);
		} else if (after > m->limit) {
			if (vm_run_out(m, VM_OVER_OWN, after) != 0)
				return NULL;
		} else if (after > m->granted && vm_budget_take(m, after) != 0) {
			if (vm_run_out(m, VM_OVER_SHARED, after) != 0)
				return NULL;
		}
		/* until the hook runs: a GC step at the trace's next check
		 * (a step ending a cycle sets the threshold far again) */
		if (m->pending)
			lua_gc(m->L, LUA_GCRESTART, 0);
	}
	p = realloc(ptr, nsize);
	if (p != NULL)
		m->used = after;
	return p;
}

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

/* Appends folder dir (n bytes) to the loader's list at the top of the
 * stack: { dir = ..., init = 1 if DIR/NAME/init.lua counts }. */
static void
folder_add(lua_State *L, const char *dir, size_t n, int init)
{
	lua_createtable(L, 0, 2);
	lua_pushlstring(L, dir, n);
	lua_setfield(L, -2, "dir");
	lua_pushboolean(L, init);
	lua_setfield(L, -2, "init");
	lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
}

/* The user's folders ($SURGE_PATH, then each --path; ':'-separated lists)
 * into the loader's list at the top of the stack (-2) and the list of
 * scenario folders (-1). */
static void
user_folders(lua_State *L)
{
	const char *srcs[SURGE_MAX_DEVS + 1];
	int ns = 0;

	srcs[ns++] = getenv("SURGE_PATH");
	for (int i = 0; i < rt()->opts.npath; i++)
		srcs[ns++] = rt()->opts.path[i];
	for (int i = 0; i < ns; i++) {
		const char *l = srcs[i];

		while (l != NULL && *l != '\0') {
			const char *end = strchr(l, ':');
			size_t n = end != NULL ? (size_t)(end - l) : strlen(l);

			if (n > 0) {
				lua_pushvalue(L, -2);
				folder_add(L, l, n, 1);
				lua_pop(L, 1);
				lua_pushlstring(L, l, n);
				lua_rawseti(L, -2, (int)lua_objlen(L, -2) + 1);
			}
			l = end != NULL ? end + 1 : NULL;
		}
	}
}

static int
is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && access(path, R_OK) == 0;
}

/* package.loaders[2], before package.path's searcher: $SURGE_LUA_PATH's
 * templates (upvalue 2, searched with package.searchpath, upvalue 3), then
 * surge's library,
 * the generated cdefs, the user's folders and the script's own folder, each
 * a folder name joined to the module's path, never a path template: in a
 * template ';' separates and '?' stands for the module, so an install
 * prefix, a --path folder or a script's folder holding either could not be
 * searched. Upvalue 1: the folder list (folder_add). Returns the loaded
 * chunk, or the files it tried for require's message. */
static int
folder_loader(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	char rel[PATH_MAX], path[2 * PATH_MAX + 16];
	size_t n = strlen(name);
	int misses = 0;

	if (n >= sizeof(rel)) {
		lua_pushstring(L, "\n\tno file for a module name this long");
		return 1;
	}
	for (size_t i = 0; i <= n; i++)
		rel[i] = name[i] == '.' ? '/' : name[i];
	if (!lua_isnil(L, lua_upvalueindex(2))) {
		/* $SURGE_LUA_PATH first: the user's own templates */
		lua_pushvalue(L, lua_upvalueindex(3));
		lua_pushvalue(L, 1);
		lua_pushvalue(L, lua_upvalueindex(2));
		lua_call(L, 2, 2);
		if (lua_isstring(L, -2)) {
			snprintf(path, sizeof(path), "%s", lua_tostring(L, -2));
			if (luaL_loadfile(L, path) != 0)
				return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, path,
						  lua_tostring(L, -1));
			return 1;
		}
		lua_remove(L, -2);
		misses++;
	}
	for (int i = 1;; i++) {
		char dir[PATH_MAX];
		int init;

		lua_rawgeti(L, lua_upvalueindex(1), i);
		if (lua_isnil(L, -1)) {
			lua_pop(L, 1);
			break;
		}
		lua_getfield(L, -1, "dir");
		snprintf(dir, sizeof(dir), "%s", lua_tostring(L, -1));
		lua_getfield(L, -2, "init");
		init = lua_toboolean(L, -1);
		lua_pop(L, 3);
		for (int k = 0; k < 1 + init; k++) {
			snprintf(path, sizeof(path), k == 0 ? "%s/%s.lua" : "%s/%s/init.lua", dir, rel);
			if (!is_file(path)) {
				lua_pushfstring(L, "\n\tno file '%s'", path);
				misses++;
				continue;
			}
			if (luaL_loadfile(L, path) != 0)
				return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, path,
						  lua_tostring(L, -1));
			return 1;
		}
	}
	lua_concat(L, misses);
	return 1;
}

/* Where modules come from, in this order: $SURGE_LUA_PATH, surge's library
 * (installed or source tree), the generated cdefs, the user folders, the
 * script's own folder (scripts require their neighbours): folder_loader;
 * then package.path, LuaJIT's default path (its jit.* tools: jit.dump,
 * jit.v), after $SURGE_LUA_PATH as before. package.surge_dirs lists the user
 * folders for scenario look-up by name; package.surge_lua is the library's
 * folder. */
static void
set_path(lua_State *L, const char *script)
{
	const char *env = getenv("SURGE_LUA_PATH");
	char lua[PATH_MAX], gen[PATH_MAX];
	const char *slash = script != NULL ? strrchr(script, '/') : NULL;

	lua_dirs(lua, gen, sizeof(lua));
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "path");     /* LuaJIT's own: jit.dump, jit.v, jit.p */
	lua_pushfstring(L, "%s%s%s", env != NULL ? env : "", env != NULL ? ";" : "", lua_tostring(L, -1));
	lua_setfield(L, -3, "path");
	lua_pop(L, 1);
	lua_pushstring(L, lua);
	lua_setfield(L, -2, "surge_lua");
	lua_getfield(L, -1, "loaders");
	lua_createtable(L, 8, 0);        /* the folder list */
	folder_add(L, lua, strlen(lua), 1);
	if (strcmp(gen, lua) != 0)      /* installed: the cdefs are in the library's folder */
		folder_add(L, gen, strlen(gen), 0);
	lua_createtable(L, 4, 0);        /* package.surge_dirs */
	user_folders(L);
	lua_setfield(L, -4, "surge_dirs");
	if (slash != NULL)
		folder_add(L, script, (size_t)(slash - script), 0);
	else
		folder_add(L, ".", 1, 0);
	if (env != NULL)
		lua_pushstring(L, env);
	else
		lua_pushnil(L);
	lua_getfield(L, -4, "searchpath");
	lua_pushcclosure(L, folder_loader, 3);
	/* loaders: preload, [this], path, cpath, all-in-one */
	for (int i = (int)lua_objlen(L, -2); i >= 2; i--) {
		lua_rawgeti(L, -2, i);
		lua_rawseti(L, -3, i + 1);
	}
	lua_rawseti(L, -2, 2);
	lua_pop(L, 2);
}

/* package.loaded["surge.script"] = { name = "@path", text = "..." } */
static void
set_script(lua_State *L, const char *script)
{
	struct runtime *r = rt();

	if (r == NULL || r->script_text == NULL)
		return;
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "loaded");
	lua_createtable(L, 0, 2);
	lua_pushlstring(L, r->script_text, r->script_len);
	lua_setfield(L, -2, "text");
	lua_pushfstring(L, "@%s", strcmp(script, "-") == 0 ? "stdin" : script);
	lua_setfield(L, -2, "name");
	lua_setfield(L, -2, "surge.script");
	lua_pop(L, 2);
}

lua_State *
vm_new(const char *script, struct vm_mem *mem)
{
	struct runtime *r = rt();
	lua_State *L;

	memset(mem, 0, sizeof(*mem));
	mem->limit = r != NULL && r->opts.vm_memory > 0 ? (size_t)r->opts.vm_memory : vm_budget_default();
	L = lua_newstate(vm_alloc, mem);
	if (L == NULL)
		return NULL;
	mem->L = L;
	luaL_openlibs(L);
	set_path(L, script);
	if (script != NULL)
		set_script(L, script);
	return L;
}

/* Reads the whole script once: a file, a pipe (<(cmd)) or "-" (stdin). */
int
script_read(const char *path, char **text, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *buf;
	int e = 0;

	if (f == NULL)
		return -errno;
	buf = malloc(cap);
	while (buf != NULL) {
		size_t got;

		if (n == cap) {
			char *b2 = cap >= SCRIPT_MAX ? NULL : realloc(buf, cap * 2);

			if (b2 == NULL) {
				e = cap >= SCRIPT_MAX ? EFBIG : ENOMEM;
				break;
			}
			buf = b2;
			cap *= 2;
		}
		errno = 0;
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				e = errno != 0 ? errno : EIO;   /* EISDIR for a folder */
			break;
		}
	}
	if (f != stdin)
		fclose(f);
	if (buf == NULL)
		return -ENOMEM;
	if (e != 0) {
		free(buf);
		return -e;
	}
	*text = buf;
	*len = n;
	return 0;
}

/* Calls require(module).main(...) with string arguments; on return the top
 * holds `nret` results, or the error text when it returns non-zero. */
int
vm_call_entry(lua_State *L, const char *module, int nargs, const char **args, int nret)
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


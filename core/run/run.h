/* SPDX-License-Identifier: BSD-3-Clause
 *
 * run.h - the top of the core: boot and finish (the one composition root),
 * EAL, the Lua VMs and their tasks, the monitor and its watchdog. The front
 * end (front/) calls in here and registers the hooks below.
 */
#ifndef SURGE_RUN_H
#define SURGE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "report.h"

struct lua_State;

/* What the front end does at points of a run the core cannot know about
 * (the prompt and the --control socket live above the core): set once with
 * run_hooks_set() before the run starts; every hook may be NULL. */
struct run_hooks {
	void (*master_vm_open)(struct lua_State *L);  /* master's VM is made: add modules */
	void (*master_vm_close)(void);                 /* master returned: undo what it left */
	int (*evaluating)(void);      /* code typed at the prompt runs: 1, 2 once interrupted */
	void (*watchdog_exit)(void);  /* the watchdog ends the process: remove what it owns */
};
/* hooks.c */
void run_hooks_set(const struct run_hooks *h);
const struct run_hooks *run_hooks(void);   /* never NULL: no hooks are empty ones */

/* boot.c: start-up and tear-down, in one place */
int boot_listen(void);           /* before EAL: --metrics binds (an error is the option's, exit 2) */
int boot_start(const struct surge_opts *o, const char *prog);  /* EAL and all it brings */
int boot_run(const struct surge_opts *o);  /* master() (or `devices`) with the monitor */
int boot_finish(int rc);         /* closes, checks the pools, EAL down; the exit status */
void boot_abandon(void);         /* failed start-up: undo what came up */

/* eal.c */
int eal_start(const struct surge_opts *opts, const char *prog);
int eal_default_port(const struct surge_opts *o);   /* none found: the virtual sink */
void eal_stop(void);
long eal_hugepages_free_mb(const char *meminfo, const char *mounts);   /* for the unit tests */
void eal_repl_lcores(char *buf, size_t len, const char *cpus, int ncpus);   /* surge repl's default map */
/* `want` lcores floating over the CPUs `cpus` (ncpus of them) when they are
 * fewer, else "" (EAL's one lcore per CPU); surge repl's and surge otg's */
void eal_floating_lcores(char *buf, size_t len, const char *cpus, int ncpus, int want);

/* run_dir.c */
void eal_forget(void);           /* the watchdog's exit: remove surge's own runtime folder */
/* the runtime folder surge made and must remove, "" when it is not surge's */
void eal_own_runtime_dir(char *dir, size_t len);
void eal_remove_runtime_dir(const char *dir);
/* removes the runtime folders (surge-PID) of earlier runs that were killed;
 * base NULL: EAL's (/var/run/dpdk for root). How many it removed. */
int eal_sweep_dead_runs(const char *base);

/* vm.c */
struct lua_State *vm_new(const char *script, struct vm_mem *mem);
int script_read(const char *path, char **text, size_t *len);
/* require(module).main(args...): nret results, or the error on top (-1) */
int vm_call_entry(struct lua_State *L, const char *module, int nargs, const char **args, int nret);

/* vm_budget.c: the VMs' shared budget, sized from the cgroup / MemAvailable */
uint64_t vm_budget_limit(void);
size_t vm_budget_default(void);          /* a VM's budget without --vm-memory */
int vm_budget_take(struct vm_mem *m, size_t need);
void vm_budget_give(struct vm_mem *m);
void vm_budget_hint(const struct vm_mem *m, char *buf, size_t len);
/* limit less usage of the memory cgroups named in self_cgroup (text of
 * /proc/self/cgroup) under root, UINT64_MAX when none limits */
uint64_t vm_budget_cgroup_room(const char *root, const char *self_cgroup);

/* task.c */
int tasks_stop_and_wait(void);
int tasks_running(void);         /* counts, and reaps finished ones (main lcore) */
/* the "(give more with --lcores ...)" of a launch with no free lcore */
void task_lcore_hint(char *buf, size_t len, unsigned lcores, unsigned max, const char *cpus);

/* master.c */
int master_run(const char *script, int argc, char **argv);
int master_options(const char *script, int argc, char **argv);
/* 0 when `name` is a scenario; else prints why (with the known ones) and returns 2 */
int scenario_check(const char *name, int argc, char **argv);

/* monitor.c: --duration, the stats lines and the watchdog (a plain thread) */
int monitor_start(void);
void monitor_stop(void);

#endif /* SURGE_RUN_H */

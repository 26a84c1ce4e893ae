/* SPDX-License-Identifier: BSD-3-Clause
 *
 * vm_budget.c - how much memory the Lua VMs may take together.
 *
 * Each VM has its own budget (--vm-memory), but a process in a cgroup of
 * 512 MiB, or on a machine with little memory free, is killed by the kernel
 * (SIGKILL: no summary, no error) long before 1 GiB per VM is reached. So
 * the VMs also draw from one shared budget, sized once, before the first VM,
 * from what this process may still get: the smallest of its memory cgroup's
 * limit less usage (v1 or v2, up every ancestor) and MemAvailable. The VMs
 * get three quarters of it; the rest stays for the C core (mbuf pools of
 * --no-huge runs, pcap buffers, thread stacks). A VM past either budget gets
 * "not enough memory" (vm.c: at its next bytecode, its reserve granted
 * until then, outside this budget).
 *
 * A VM draws from the shared budget in chunks (vm_alloc calls
 * vm_budget_take/give only when its own total crosses a chunk), so VMs that
 * allocate often do not share one atomic counter per allocation.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

#define CHUNK (4u << 20)

static int
read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	char buf[64];
	int rc = -ENOENT;

	if (f == NULL)
		return -errno;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		char *end;
		unsigned long long x;

		errno = 0;
		x = strtoull(buf, &end, 10);
		if (end != buf && errno == 0 && (*end == '\n' || *end == '\0')) {
			*v = x;
			rc = 0;
		} else if (strncmp(buf, "max", 3) == 0) {   /* v2: no limit */
			*v = UINT64_MAX;
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* limit less usage of the cgroup folder dir and each ancestor up to root */
static uint64_t
cgroup_room(const char *root, const char *rel, const char *limit_file, const char *usage_file)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	uint64_t room = UINT64_MAX;

	if (snprintf(dir, sizeof(dir), "%s%s", root, rel) >= (int)sizeof(dir))
		return UINT64_MAX;
	for (;;) {
		uint64_t limit, usage;
		char *slash;

		snprintf(path, sizeof(path), "%s/%s", dir, limit_file);
		if (read_u64(path, &limit) == 0 && limit != UINT64_MAX) {
			snprintf(path, sizeof(path), "%s/%s", dir, usage_file);
			if (read_u64(path, &usage) != 0)
				usage = 0;
			/* v1 writes "no limit" as a page-rounded INT64_MAX */
			if (limit < (UINT64_MAX >> 2)) {
				uint64_t r = usage < limit ? limit - usage : 0;

				if (r < room)
					room = r;
			}
		}
		if (strlen(dir) <= strlen(root))
			break;
		if ((slash = strrchr(dir, '/')) == NULL)
			break;
		*slash = '\0';
	}
	return room;
}

uint64_t
vm_budget_cgroup_room(const char *root, const char *self_cgroup)
{
	uint64_t room = UINT64_MAX;
	const char *line = self_cgroup;

	/* /proc/self/cgroup: "ID:CONTROLLERS:PATH" per hierarchy; v2 is "0::PATH" */
	while (line != NULL && *line != '\0') {
		const char *nl = strchr(line, '\n');
		size_t len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		char buf[PATH_MAX + 64], *ctl, *rel, base[PATH_MAX];
		uint64_t r = UINT64_MAX;

		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			ctl = strchr(buf, ':');
			rel = ctl != NULL ? strchr(ctl + 1, ':') : NULL;
			if (rel != NULL) {
				*rel++ = '\0';
				ctl++;
				if (*ctl == '\0') {
					/* v2: mounted at root (pure) or root/unified (hybrid) */
					snprintf(base, sizeof(base), "%s", root);
					r = cgroup_room(base, rel, "memory.max", "memory.current");
					snprintf(base, sizeof(base), "%s/unified", root);
					uint64_t h = cgroup_room(base, rel, "memory.max", "memory.current");
					if (h < r)
						r = h;
				} else if (strstr(ctl, "memory") != NULL) {
					snprintf(base, sizeof(base), "%s/%s", root, ctl);
					r = cgroup_room(base, rel, "memory.limit_in_bytes",
							"memory.usage_in_bytes");
				}
			}
		}
		if (r < room)
			room = r;
		line = nl != NULL ? nl + 1 : NULL;
	}
	return room;
}

static uint64_t
mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb;
	uint64_t v = UINT64_MAX;

	if (f == NULL)
		return v;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			v = (uint64_t)kb << 10;
			break;
		}
	fclose(f);
	return v;
}

/* What this process may still allocate, UINT64_MAX when nothing says. */
static uint64_t
process_room(void)
{
	char text[4096];
	FILE *f = fopen("/proc/self/cgroup", "r");
	size_t n = 0;
	uint64_t room = mem_available(), cg;

	if (f != NULL) {
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[n] = '\0';
	cg = vm_budget_cgroup_room("/sys/fs/cgroup", text);
	return cg < room ? cg : room;
}

uint64_t
vm_budget_limit(void)
{
	struct runtime *r = rt();

	if (r == NULL)
		return UINT64_MAX;
	if (r->vm_total.limit == 0) {         /* first VM, on the main lcore */
		uint64_t room = process_room();

		r->vm_total.limit = room == UINT64_MAX ? UINT64_MAX : room / 4 * 3;
		if (r->vm_total.limit == 0)
			r->vm_total.limit = 1;
	}
	return r->vm_total.limit;
}

size_t
vm_budget_default(void)
{
	uint64_t total = vm_budget_limit();

	return total < SURGE_VM_MEMORY_DEFAULT ? (size_t)total : (size_t)SURGE_VM_MEMORY_DEFAULT;
}

int
vm_budget_take(struct vm_mem *m, size_t need)
{
	struct runtime *r = rt();
	uint64_t add, now;

	if (r == NULL)
		return 0;
	add = ((need - m->granted) + CHUNK - 1) / CHUNK * CHUNK;
	now = __atomic_add_fetch(&r->vm_total.used, add, __ATOMIC_RELAXED);
	if (now > vm_budget_limit()) {
		__atomic_sub_fetch(&r->vm_total.used, add, __ATOMIC_RELAXED);
		return -ENOMEM;
	}
	m->granted += add;
	return 0;
}

void
vm_budget_give(struct vm_mem *m)
{
	struct runtime *r = rt();
	size_t keep = m->used == 0 ? 0 : (m->used + CHUNK - 1) / CHUNK * CHUNK;

	if (r == NULL || m->granted <= keep)
		return;
	__atomic_sub_fetch(&r->vm_total.used, m->granted - keep, __ATOMIC_RELAXED);
	m->granted = keep;
}

/* The line after "not enough memory (...)": which budget ran out. */
void
vm_budget_hint(const struct vm_mem *m, char *buf, size_t len)
{
	if (m->over == VM_OVER_SHARED)
		snprintf(buf, len, "the VMs together used the %" PRIu64 " MB this process may give them "
			 "(3/4 of what its memory cgroup or MemAvailable left at start)",
			 vm_budget_limit() >> 20);
	else
		snprintf(buf, len, "the VM used its whole memory budget of %zu MB (--vm-memory)",
			 m->limit >> 20);
}

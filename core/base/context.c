/* SPDX-License-Identifier: BSD-3-Clause
 *
 * context.c - the one run context, and each lcore's error string.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "base.h"

#ifndef SURGE_VERSION
#define SURGE_VERSION "0.0.0"
#endif

/* The single run context (see rt() in base.h). */
struct runtime *rt_current;

int
rt_create(const struct surge_opts *opts)
{
	struct runtime *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	r->opts = *opts;
	r->exit_status = -1;
	rte_spinlock_init(&r->registry_lock);
	pthread_mutex_init(&r->stats_lock, NULL);
	rt_current = r;
	return 0;
}

void
rt_destroy(void)
{
	struct runtime *r = rt_current;

	if (r == NULL)
		return;
	for (unsigned i = 0; i < RTE_MAX_LCORE; i++) {
		free(r->lcore[i].args);
		free(r->lcore[i].result);
	}
	for (int i = 0; i < r->nvdev_lock; i++)
		if (r->vdev_lock_fd[i] >= 0)
			close(r->vdev_lock_fd[i]);
	free(r->prev_tx);
	free(r->prev_rx);
	free(r->prev_txb);
	free(r->prev_rxb);
	free(r->series.rows);
	rt_current = NULL;
	free(r);
}

static struct lcore_slot *
my_slot(void)
{
	return rt_current != NULL ? &rt_current->lcore[lcore_self()] : NULL;
}

int
rt_error(int err, const char *fmt, ...)
{
	struct lcore_slot *s = my_slot();
	va_list ap;

	if (s != NULL) {
		va_start(ap, fmt);
		vsnprintf(s->err, sizeof(s->err), fmt, ap);
		va_end(ap);
	}
	return err < 0 ? err : -err;
}

void
rt_info(const char *fmt, ...)
{
	va_list ap;

	if (rt_current != NULL && rt_current->opts.quiet)
		return;
	va_start(ap, fmt);
	fputs("surge: ", stdout);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

const char *
surge_version(void)
{
	return SURGE_VERSION;
}

const char *
surge_last_error(void)
{
	struct lcore_slot *s = my_slot();

	return s != NULL && s->err[0] != '\0' ? s->err : "no error";
}

int
surge_lcore_id(void)
{
	return (int)rte_lcore_id();
}

int
surge_is_main(void)
{
	return rte_lcore_id() == rte_get_main_lcore();
}

int
surge_quiet(void)
{
	return rt_current != NULL && rt_current->opts.quiet;
}

double
surge_duration(void)
{
	return rt_current != NULL ? rt_current->opts.duration : 0.0;
}


void
registry_lock(void)
{
	rte_spinlock_lock(&rt_current->registry_lock);
}

void
registry_unlock(void)
{
	rte_spinlock_unlock(&rt_current->registry_lock);
}

int
owner_only(const void *entry, int32_t owner, const char *what, int id)
{
	if (entry == NULL)
		return rt_error(-EINVAL, "no %s %d", what, id);
	if (owner != (int32_t)lcore_self())
		return rt_error(-EPERM, "%s %d belongs to lcore %d: poll it there", what, id, owner);
	return 0;
}

int
registry_clear(int *count, void *slots, size_t size, int (*drop)(void *slot))
{
	int sum = 0;

	for (int i = 0; i < *count; i++) {
		void *slot = (char *)slots + (size_t)i * size;

		if (drop != NULL) {
			sum += drop(slot);
		} else {          /* an entry that is one malloc'd block: its pointer */
			void *p;

			memcpy(&p, slot, sizeof(p));
			free(p);
		}
		memset(slot, 0, size);
	}
	registry_publish(count, 0);
	return sum;
}

int
registry_add(int *count, int max, void *slots, size_t size, const void *entry, const char *what)
{
	int id;

	registry_lock();
	id = *count;
	if (id < max) {
		memcpy((char *)slots + (size_t)id * size, entry, size);
		registry_publish(count, id + 1);
	}
	registry_unlock();
	if (id >= max)
		return rt_error(-ENOSPC, "too many %s (at most %d)", what, max);
	return id;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * pcap_reg.c - pcap handles: ids, ownership, closing.
 *
 * Readers and writers are registered in the runtime by id, like pools, so a
 * handle crosses between lcores as a number. Like a queue, a file belongs to
 * the first lcore that fills from it or writes to it, until that lcore's task
 * ends; another lcore gets an error naming the owner. Settings (replay,
 * rewind) and close borrow the file for the call, so master can neither
 * change nor free a file under a task that uses it.
 *
 * An id is slot + SURGE_PCAP_MAX * generation. Closing frees the file's
 * memory and its slot for the next open; the small struct itself stays until
 * the end of the run, so a call through a stale id reads valid memory, sees
 * another generation and is refused. Whatever a script leaves open is closed
 * (writers flushed) by main() after the last task ended.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "io.h"
#include "pcap_file.h"

#define GEN_MAX (INT32_MAX / SURGE_PCAP_MAX)

struct pcap_file *
pcap_file_new(const char *path, int writer)
{
	struct pcap_file *f = calloc(1, sizeof(*f));

	if (f == NULL || (f->path = strdup(path)) == NULL) {
		free(f);
		rt_error(-ENOMEM, "pcap file '%s': out of memory", path);
		return NULL;
	}
	f->writer = writer;
	f->lock_fd = -1;
	snprintf(f->name, sizeof(f->name), "%s", path);
	return f;
}

void
pcap_file_release(struct pcap_file *f)
{
	if (f->dump != NULL)
		pcap_dump_close(f->dump);
	if (f->dead != NULL)
		pcap_close(f->dead);
	if (f->lock_fd >= 0)
		close(f->lock_fd);   /* drops the flock */
	free(f->data);
	free(f->off);
	free(f->len);
	free(f->ts);
	free(f->path);
	f->dump = NULL;
	f->dead = NULL;
	f->lock_fd = -1;
	f->data = NULL;
	f->off = NULL;
	f->len = NULL;
	f->ts = NULL;
	f->path = NULL;
}

/* Moves f (a new, unregistered file) into a free slot; on failure frees f. */
int
pcap_reg_add(struct pcap_file *f)
{
	struct runtime *r = rt();
	int slot = -1, id = -ENOSPC;

	if (r == NULL) {
		pcap_file_release(f);
		free(f);
		return -ENODEV;
	}
	registry_lock();
	for (int i = 0; i < SURGE_PCAP_MAX && slot < 0; i++) {
		struct pcap_file *s = r->pcap[i];

		if (s == NULL) {
			slot = i;
			f->gen = 0;
			f->owner = -1;
			f->open = 1;
			r->pcap[i] = f;
			f = NULL;
			if (i >= r->npcap)
				registry_publish(&r->npcap, i + 1);
		} else if (!s->open && s->gen < GEN_MAX) {
			int32_t none = -1;

			/* held while it is refilled: a stale caller that claims it
			 * now is refused, one that claims it after sees the new gen */
			if (!__atomic_compare_exchange_n(&s->owner, &none, (int32_t)lcore_self(), 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				continue;
			slot = i;
			f->gen = s->gen + 1;
			f->owner = s->owner;
			f->open = 1;
			*s = *f;
			__atomic_store_n(&s->owner, -1, __ATOMIC_RELEASE);
		}
	}
	registry_unlock();
	if (slot < 0) {
		rt_error(-ENOSPC, "pcap file '%s': %d pcap files are open, the most one run holds "
			 "(close the ones you are done with)", f->path, SURGE_PCAP_MAX);
		pcap_file_release(f);
	} else {
		id = slot + SURGE_PCAP_MAX * (int)r->pcap[slot]->gen;
	}
	free(f);   /* its contents moved into the slot, or were released */
	return id;
}

struct pcap_file *
pcap_get(int id, int want, enum pcap_access *how, int *rc)
{
	struct runtime *r = rt();
	struct pcap_file *f;
	int slot = id >= 0 ? id % SURGE_PCAP_MAX : -1;
	uint32_t gen = id >= 0 ? (uint32_t)(id / SURGE_PCAP_MAX) : 0;
	int32_t mine = (int32_t)lcore_self(), owner = -1;
	int claimed = 0;

	/* fills and writes are calls into surge: a loop around them ends once
	 * the run stopped (base/run_state.c) */
	if (*how == PCAP_USE && unlikely(!surge_running()) && (*rc = run_stop_expired()) != 0)
		return NULL;
	if (r == NULL || !registry_holds(registry_count(&r->npcap), slot) ||
	    (f = r->pcap[slot]) == NULL || f->gen < gen) {
		*rc = rt_error(-EINVAL, "no pcap file %d", id);
		return NULL;
	}
	if (*how != PCAP_PEEK && __atomic_load_n(&f->owner, __ATOMIC_ACQUIRE) != mine) {
		if (owner_claim(&f->owner, mine, &owner) != 0) {
			*rc = rt_error(-EBUSY, "pcap file '%s' is in use by lcore %d (a file belongs to "
				       "the task that first uses it, until that task ends)", f->name, owner);
			return NULL;
		}
		claimed = 1;
	} else if (*how == PCAP_BORROW) {
		*how = PCAP_USE;     /* it was this lcore's before the call: it stays so */
	}
	if (f->gen != gen || !f->open) {
		*rc = f->gen != gen ? rt_error(-EBADF, "pcap file %d is closed", id)
				    : rt_error(-EBADF, "pcap file '%s' is closed", f->name);
		goto refuse;
	}
	if (want >= 0 && f->writer != want) {
		*rc = rt_error(-EINVAL, "pcap file '%s' (%d) is open for %s, not %s", f->name, id,
			       f->writer ? "writing" : "reading", want ? "writing" : "reading");
		goto refuse;
	}
	return f;
refuse:
	if (claimed)
		__atomic_store_n(&f->owner, -1, __ATOMIC_RELEASE);
	return NULL;
}

/* Ends a borrow: the file is free again unless this lcore already used it. */
void
pcap_put(struct pcap_file *f, enum pcap_access how)
{
	if (how == PCAP_BORROW && f->owner == (int32_t)lcore_self())
		__atomic_store_n(&f->owner, -1, __ATOMIC_RELEASE);
}

/* Closes f and frees its slot for the next open. Returns what it held or
 * wrote, or -EIO when the last flush failed. The caller owns f. */
int64_t
pcap_file_close(struct pcap_file *f)
{
	int64_t count = f->writer ? (int64_t)f->written : (int64_t)f->n;
	int bad = 0;
	char path[256];

	if (f->writer && f->dump != NULL)
		bad = pcap_dump_flush(f->dump) != 0 || ferror(pcap_dump_file(f->dump));
	snprintf(path, sizeof(path), "%s", f->path != NULL ? f->path : "?");
	f->open = 0;
	pcap_file_release(f);
	if (bad)
		return rt_error(-EIO, "pcap file '%s': writing the last packets failed (disk full?)", path);
	return count;
}

int64_t
surge_pcap_close(int id)
{
	int rc = 0;
	enum pcap_access how = PCAP_BORROW;
	struct pcap_file *f = pcap_get(id, -1, &how, &rc);
	int64_t n;

	if (f == NULL)
		return rc;
	n = pcap_file_close(f);
	__atomic_store_n(&f->owner, -1, __ATOMIC_RELEASE);   /* the slot is free */
	return n;
}

int
surge_pcap_info(int id, struct surge_pcap_info *out)
{
	int rc = 0;
	enum pcap_access how = PCAP_PEEK;
	struct pcap_file *f = pcap_get(id, -1, &how, &rc);

	if (f == NULL)
		return rc;
	/* counters only, no pointers: the owner may be filling or writing */
	memset(out, 0, sizeof(*out));
	out->writer = (uint8_t)f->writer;
	out->snaplen = f->snaplen;
	out->nano = (uint8_t)f->nano;
	out->linktype = DLT_EN10MB;
	if (f->writer) {
		out->records = f->written;
		out->bytes = f->wbytes;
		return 0;
	}
	out->records = f->n;
	out->bytes = f->bytes;
	out->next = f->next;
	out->duration_ns = f->duration_ns;
	out->speed = f->speed;
	out->loops = f->loops;
	out->pass = f->pass;
	out->max_len = f->max_len;
	return 0;
}

/* A finished task's files become free for another lcore. */
void
pcap_release(unsigned lcore)
{
	struct runtime *r = rt();
	int n = RT_REGISTRY_SIZE(npcap);

	for (int i = 0; i < n; i++) {
		struct pcap_file *f = r->pcap[i];

		if (f != NULL && f->owner == (int32_t)lcore)
			__atomic_store_n(&f->owner, -1, __ATOMIC_RELEASE);
	}
}

static int
close_left_open(struct pcap_file *f)
{
	char path[256];
	int64_t n;

	if (!f->open)
		return 0;
	if (!f->writer) {
		pcap_file_close(f);
		return 0;
	}
	snprintf(path, sizeof(path), "%s", f->path);
	n = pcap_file_close(f);
	if (n < 0) {
		fprintf(stderr, "surge: error: %s\n", surge_last_error());
		return 1;
	}
	rt_info("pcap file '%s': %" PRId64 " packets written (closed at the end of the run)", path, n);
	return 0;
}

/* 1 when a writer left open failed to close */
static int
close_and_free(void *slot)
{
	struct pcap_file *f = *(struct pcap_file **)slot;
	int failed;

	if (f == NULL)
		return 0;
	failed = close_left_open(f);
	pcap_file_release(f);
	free(f);
	return failed;
}

int
pcap_close_all(void)
{
	return RT_REGISTRY_CLEAR(npcap, pcap, close_and_free);
}

/* The watchdog's: flushes and closes the writers that no stuck lcore holds
 * (one that is stuck may be inside pcap_dump right now). */
void
pcap_close_all_abandoned(int master_stuck)
{
	struct runtime *r = rt();
	int n = RT_REGISTRY_SIZE(npcap);

	for (int i = 0; i < n; i++) {
		struct pcap_file *f = r->pcap[i];
		int32_t holder = -1, main = (int32_t)rte_get_main_lcore();

		if (f == NULL || !f->open || !f->writer)
			continue;
		/* master that is not stuck waits inside surge: its files are still */
		if ((!master_stuck && __atomic_load_n(&f->owner, __ATOMIC_ACQUIRE) == main) ||
		    owner_claim(&f->owner, (int32_t)RTE_MAX_LCORE, &holder) == 0)
			close_left_open(f);
		else
			fprintf(stderr, "surge: pcap writer '%s' is held by stuck lcore %d: not closed\n",
				f->name, holder);
	}
}

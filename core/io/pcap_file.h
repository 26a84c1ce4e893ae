/* SPDX-License-Identifier: BSD-3-Clause
 *
 * pcap_file.h - what pcap_reg.c (handles, ownership), pcap_read.c and
 * pcap_write.c share. Not part of the FFI ABI.
 */
#ifndef SURGE_PCAP_FILE_H
#define SURGE_PCAP_FILE_H

#include <stdint.h>
#include <pcap/pcap.h>

struct pcap_file {
	/* registry (pcap_reg.c): the struct lives until the end of the run, so
	 * a late call through a stale handle reads valid memory and is refused */
	uint32_t gen;                 /* bumped each time the slot is reused */
	volatile int32_t owner;       /* lcore using it, -1 = free to claim */
	volatile int open;
	int writer;
	char *path;
	char name[128];               /* path, possibly shortened: for messages, never freed */
	/* writer */
	pcap_t *dead;
	pcap_dumper_t *dump;
	int lock_fd;                  /* flock held while writing: no two writers per file */
	uint32_t snaplen;
	int nano;
	uint64_t base_tsc;            /* TSC and wall clock at open: tsc -> time */
	int64_t base_ns;
	double ns_per_cyc;            /* 0 without a TSC frequency (no EAL): use the clock */
	uint64_t written, wbytes;
	/* reader */
	uint8_t *data;                /* every record's bytes, back to back */
	uint64_t *off;
	uint16_t *len;
	int64_t *ts;                  /* ns since the epoch */
	uint64_t n, bytes;
	uint64_t duration_ns;         /* last record's time - first record's */
	uint16_t max_len;
	uint64_t next;                /* record the next fill starts at */
	uint32_t pass, loops;
	double speed;
};

enum pcap_access {
	PCAP_PEEK,      /* read counters only: any lcore, no claim */
	PCAP_BORROW,    /* claim for one call (settings, close), release with pcap_put */
	PCAP_USE        /* claim for good: fill, write (released when the task ends) */
};

/* want: 1 writer, 0 reader, -1 either. */
struct pcap_file *pcap_get(int id, int want, enum pcap_access *how, int *rc);
void pcap_put(struct pcap_file *f, enum pcap_access how);
int pcap_reg_add(struct pcap_file *f);
struct pcap_file *pcap_file_new(const char *path, int writer);
void pcap_file_release(struct pcap_file *f);     /* frees what it holds, keeps the struct */
int64_t pcap_file_close(struct pcap_file *f);    /* writer: flush; returns count or -EIO */


#endif

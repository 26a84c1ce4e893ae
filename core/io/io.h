/* SPDX-License-Identifier: BSD-3-Clause
 *
 * io.h - pcap files: the registry of readers and writers, replay, capture.
 * Calls dataplane and base.
 */
#ifndef SURGE_IO_H
#define SURGE_IO_H

#include "dataplane.h"

/* pcap_reg.c: closes what scripts left open; returns the writers that failed */
int pcap_close_all(void);
/* pcap_reg.c: the watchdog flushes the writers no running code holds */
void pcap_close_all_abandoned(int master_stuck);
void pcap_release(unsigned lcore);
/* pcap_write.c: the writers' flock on a file (also net_pcap's tx_pcap=) */
int pcap_lock_path(const char *path, int *fd_out);

#endif /* SURGE_IO_H */

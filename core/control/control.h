/* SPDX-License-Identifier: BSD-3-Clause
 *
 * control.h - the device layer: ports (open, info, stats, close), adding
 * and removing devices, rate requests and the NIC's limiter, custom
 * counters. Calls dataplane and base.
 */
#ifndef SURGE_CONTROL_H
#define SURGE_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "dataplane.h"

/* port.c */
int port_check(uint16_t port);     /* 0 when the port exists */
void queues_release(unsigned lcore);
int port_open_default(uint16_t port);
void port_print_devices(void);
int rx_pool_settle(uint16_t port, struct port_state *ps);

/* counters.c: the key a counter has on DPDK's telemetry socket, whose dict
 * keys may hold only letters, digits and '_' (and '/'; DPDK 22.11
 * telemetry_data.c valid_name): every other byte becomes '_'. Two names with
 * the same key are refused at creation, so the key names one counter. */
void counter_tel_key(const char *name, char *key, size_t len);
/* The sample's name on the metrics endpoint (report/metrics.c): counters
 * surge_script_KEY_total, gauges surge_script_KEY; also refused at
 * creation when another counter or gauge has it. */
void counter_metric_name(const char *name, int kind, char *out, size_t len);

/* port_close.c */
int ports_close_all(void);

#endif /* SURGE_CONTROL_H */

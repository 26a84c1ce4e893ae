/* SPDX-License-Identifier: BSD-3-Clause
 *
 * control.h - the device layer: ports (open, info, stats, close), adding
 * and removing devices, rate requests and the NIC's limiter, custom
 * counters. Calls dataplane and base.
 */
#ifndef SURGE_CONTROL_H
#define SURGE_CONTROL_H

#include <stdint.h>

#include "dataplane.h"

/* port.c */
int port_check(uint16_t port);     /* 0 when the port exists */
void queues_release(unsigned lcore);
int port_open_default(uint16_t port);
void port_print_devices(void);
int rx_pool_settle(uint16_t port, struct port_state *ps);

/* port_close.c */
int ports_close_all(void);

#endif /* SURGE_CONTROL_H */

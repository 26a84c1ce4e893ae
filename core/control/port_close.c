/* SPDX-License-Identifier: BSD-3-Clause
 *
 * port_close.c - closing ports (at exit, all of them; from master, one while
 * the others keep running, port:close()) and adding or removing devices
 * while running (surge.vdev, port:close{ remove = true }). Exit and
 * port:close() share the per-port steps below.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "control.h"

#define DRAIN_ROUNDS 1024    /* bound on rx bursts read when a port closes */

/* net_ring keeps its rings past a close and a remove: probed again, it
 * first fails to create them ("RING: Cannot reserve memory") and then takes
 * the old ones. That expected failure is not printed: returns the ring log
 * level to put back. */
static int
ring_log_quiet(const char *name)
{
	int level = rte_log_get_level(RTE_LOGTYPE_RING);

	if (strncmp(name, "net_ring", 8) == 0)
		rte_log_set_level(RTE_LOGTYPE_RING, RTE_LOG_CRIT);
	return level;
}

/* Adds a virtual device while running (master only); returns its port. */
int
surge_vdev_add(const char *spec)
{
	char name[RTE_DEV_NAME_MAX_LEN];
	int rc, level;

	if (!surge_is_main())
		return rt_error(-EPERM, "virtual devices are added in master(), not in a task");
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(spec, ","), spec);
	if (surge_port_find(name) >= 0)
		return rt_error(-EEXIST, "cannot add virtual device '%s': a device named '%s' exists "
				"already (give each its own number, e.g. net_ring1)", spec, name);
	level = ring_log_quiet(name);
	rc = rte_dev_probe(spec);
	rte_log_set_level(RTE_LOGTYPE_RING, (uint32_t)level);
	if (rc < 0)
		return rt_error(rc, "cannot add virtual device '%s': no driver is named '%.*s', its "
				"arguments are wrong, or it failed to start (DPDK's reason is printed above)",
				spec, (int)strcspn(name, "0123456789"), name);
	rc = surge_port_find(name);
	if (rc < 0)
		return rt_error(-ENODEV, "virtual device '%s' started but is not a network port", spec);
	return rc;
}

/* Packets still in an rx ring (a loopback whose receiver stopped first) go
 * back to their pools so the leak check sees full pools. */
static unsigned
drain_rx(uint16_t port, uint16_t nq)
{
	struct rte_mbuf *m[64];
	unsigned total = 0;

	for (uint16_t q = 0; q < nq; q++) {
		for (int round = 0; round < DRAIN_ROUNDS; round++) {
			uint16_t n = rte_eth_rx_burst(port, q, m, 64);

			if (n == 0)
				break;
			rte_pktmbuf_free_bulk(m, n);
			total += n;
		}
	}
	return total;
}

/* Per-port teardown, in three steps that exit runs for all ports at once
 * and port:close() for one: a port's rings may hold mbufs of another port's
 * rx pool (a reflector), so exit drains and stops every port, closes every
 * port, and only then checks the rx pools. */

/* Step 1: no more traffic. The stats line and the series read the queue
 * slots while started is set: clearing it under their lock means no
 * monitor read is in progress when step 2 frees them. */
static void
port_quiesce(uint16_t port, struct port_state *ps)
{
	unsigned drained;

	if (!ps->opened || !ps->started)
		return;
	drained = drain_rx(port, ps->conf.rxq);
	if (drained > 0)
		rt_info("port %u: %u packets were still queued for receive, freed", port, drained);
	rte_eth_dev_stop(port);
	pthread_mutex_lock(&rt()->stats_lock);
	__atomic_store_n(&ps->started, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rt()->stats_lock);
}

/* Queue slots of a closed port stay allocated (and ps->txq/rxq point at
 * them until the port opens again) until every port closes at exit: a task
 * between claim()'s look at `opened` and its look at a slot (dataplane/burst.h) then
 * reads a slot master took, never freed memory. Master alone opens and
 * closes ports, so the list needs no lock of its own. */
struct retired_slots {
	struct retired_slots *next;
	struct queue_slot *slots;
};

static void
slots_retire(struct runtime *r, struct queue_slot *slots)
{
	struct retired_slots *x;

	if (slots == NULL || (x = malloc(sizeof(*x))) == NULL)
		return;   /* without a node the slots are never freed: safe */
	x->slots = slots;
	x->next = r->retired;
	r->retired = x;
}

static void
slots_free_retired(struct runtime *r)
{
	while (r->retired != NULL) {
		struct retired_slots *x = r->retired;

		r->retired = x->next;
		rte_free(x->slots);
		free(x);
	}
}

/* Step 2: DPDK closes the port (and releases its port id); surge retires
 * the queue slots. The rx pool stays for step 3 (rx_pool_settle, port.c). */
static void
port_release(uint16_t port, struct port_state *ps)
{
	struct runtime *r = rt();

	if (!ps->opened)
		return;
	for (uint16_t q = 0; q < ps->conf.rxq; q++)
		if (ps->rxq[q].st.lcore == (int32_t)lcore_self())
			rx_intr_forget(port, q);
	rte_eth_dev_close(port);
	pthread_mutex_lock(&r->stats_lock);
	ps->opened = 0;
	slots_retire(r, ps->txq);
	slots_retire(r, ps->rxq);
	if (r->prev_tx != NULL)   /* a port opened again starts its interval rates from 0 */
		r->prev_tx[port] = r->prev_txb[port] = r->prev_rx[port] = r->prev_rxb[port] = 0;
	pthread_mutex_unlock(&r->stats_lock);
}

/* Returns the number of leaking pools. */
int
ports_close_all(void)
{
	uint16_t port;
	int leaks = 0;

	RTE_ETH_FOREACH_DEV(port)
		port_quiesce(port, &rt()->port[port]);
	RTE_ETH_FOREACH_DEV(port)
		port_release(port, &rt()->port[port]);
	slots_free_retired(rt());   /* every task has ended (or the process is ending) */
	for (port = 0; port < RTE_MAX_ETHPORTS; port++) {
		if (rx_pool_settle(port, &rt()->port[port]) != 0) {
			fprintf(stderr, "surge: error: %s\n", surge_last_error());
			leaks++;
		}
	}
	return leaks;
}

/* The lcore of a running task (not master) that still uses one of the
 * port's queues, or -1. Master takes every free queue for itself, so a task
 * that sends on one later is refused (claim() in dataplane/burst.h: "already used",
 * then "not open"), and reads retired slots, not freed ones. */
static int
take_queues(struct port_state *ps, int32_t me, uint16_t *q_out, int *tx_out)
{
	for (int tx = 0; tx <= 1; tx++) {
		struct queue_slot *slots = tx ? ps->txq : ps->rxq;
		uint16_t n = tx ? ps->conf.txq : ps->conf.rxq;

		for (uint16_t q = 0; q < n; q++) {
			int32_t holder;

			if (owner_claim(&slots[q].st.lcore, me, &holder) == 0)
				continue;
			*q_out = q;
			*tx_out = tx;
			return holder;
		}
	}
	return -1;
}

/* Gives back what take_queues took when the close is refused. */
static void
untake_queues(struct port_state *ps, int32_t me, const int32_t *had, uint32_t nhad)
{
	for (uint32_t i = 0; i < (uint32_t)ps->conf.txq + ps->conf.rxq && i < nhad; i++) {
		struct queue_slot *s = i < ps->conf.txq ? &ps->txq[i] : &ps->rxq[i - ps->conf.txq];

		if (had[i] == -1 && s->st.lcore == me)
			__atomic_store_n(&s->st.lcore, -1, __ATOMIC_RELEASE);
	}
}

/* The device of a port, for hotplug: bus, name and arguments, copied
 * because removing the device frees its devargs. */
struct dev_spec {
	char bus[32];
	char name[RTE_DEV_NAME_MAX_LEN];
	char args[256];
	unsigned ports;   /* ethdev ports on the device */
};

static int
dev_spec_get(uint16_t port, struct dev_spec *d)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	uint16_t p;

	memset(d, 0, sizeof(*d));
	if (rte_eth_dev_info_get(port, &info) != 0 || info.device == NULL)
		return rt_error(-ENODEV, "port %u: no device behind it", port);
	snprintf(d->bus, sizeof(d->bus), "%s", rte_bus_name(rte_dev_bus(info.device)));
	snprintf(d->name, sizeof(d->name), "%s", rte_dev_name(info.device));
	da = rte_dev_devargs(info.device);
	if (da != NULL && da->args != NULL)
		snprintf(d->args, sizeof(d->args), "%s", da->args);
	RTE_ETH_FOREACH_DEV_OF(p, info.device)
		d->ports++;
	return 0;
}

/* Closes an open port from master while other ports keep running: refused
 * while a running task uses one of its queues. The port goes through the
 * same three steps as at exit; DPDK then has released the port, so its
 * device is removed and, unless `remove`, attached again: the port is
 * back, unopened, for surge.port() (possibly under another number when
 * other ports were added meanwhile). Returns the port's number after that
 * (0 after a remove). */
int
surge_port_close(uint16_t port, int remove)
{
	struct runtime *r = rt();
	struct port_state *ps;
	struct dev_spec dev;
	int32_t me = (int32_t)lcore_self(), *had;
	uint16_t q = 0, id;
	uint32_t n = 0;
	int rc, leak, level, tx = 0, owner;

	if ((rc = port_check(port)) != 0)
		return rc;
	if (!surge_is_main())
		return rt_error(-EPERM, "port %u: ports are closed in master(), not in a task", port);
	ps = &r->port[port];
	if (!ps->opened)
		return rt_error(-EINVAL, "port %u is not open", port);
	if ((rc = dev_spec_get(port, &dev)) != 0)
		return rc;
	if (remove && dev.ports > 1)
		return rt_error(-EBUSY, "port %u: its device %s has %u ports: it cannot be removed with one "
				"of them", port, dev.name, dev.ports);
	/* who held each queue before, to give them back if the close is
	 * refused: one entry per queue, however many the port has */
	had = malloc(((size_t)ps->conf.txq + ps->conf.rxq) * sizeof(*had) + 1);
	if (had == NULL)
		return rt_error(-ENOMEM, "port %u: out of memory to close it", port);
	for (uint16_t i = 0; i < ps->conf.txq; i++)
		had[n++] = ps->txq[i].st.lcore;
	for (uint16_t i = 0; i < ps->conf.rxq; i++)
		had[n++] = ps->rxq[i].st.lcore;
	owner = take_queues(ps, me, &q, &tx);
	if (owner >= 0)
		untake_queues(ps, me, had, n);
	free(had);
	if (owner >= 0)
		return rt_error(-EBUSY, "port %u cannot close: its %s queue %u is used by task '%s' on lcore "
				"%d (stop that task first)", port, tx ? "tx" : "rx", q, r->lcore[owner].fn,
				owner);
	if (r->port_closing != NULL)
		r->port_closing();   /* the results keep the port's counts up to its close */
	port_quiesce(port, ps);
	port_release(port, ps);
	leak = rx_pool_settle(port, ps);   /* kept for a later check if it leaks */
	if (dev.ports > 1) {
		rt_info("port %u closed; its device %s has other ports, so it is not attached again", port,
			dev.name);
		return leak != 0 ? leak : port;
	}
	if (rte_eal_hotplug_remove(dev.bus, dev.name) != 0)
		return rt_error(-EIO, "port %u closed, but its device %s could not be removed", port, dev.name);
	if (remove)
		return leak;
	level = ring_log_quiet(dev.name);
	rc = rte_eal_hotplug_add(dev.bus, dev.name, dev.args);
	rte_log_set_level(RTE_LOGTYPE_RING, (uint32_t)level);
	if (rc != 0 || rte_eth_dev_get_port_by_name(dev.name, &id) != 0)
		return rt_error(-EIO, "port %u closed, but its device %s could not be attached again "
				"(DPDK's reason is printed above)", port, dev.name);
	if (leak != 0)
		return rt_error(leak, "port %u closed with a leak: %u of its rx pool's mbufs are still out "
				"(in another port's ring or a task's burst)", port,
				ps->rx_pool->size - rte_mempool_avail_count(ps->rx_pool));
	return id;
}

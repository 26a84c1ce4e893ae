/* SPDX-License-Identifier: BSD-3-Clause
 *
 * port.c - open ports and their queues, report what they can do (closing
 * them, and adding devices while running: port_close.c).
 *
 * Offloads are chosen from the port's reported capabilities. MBUF_FAST_FREE
 * is requested only for ports opened without clones: fast free assumes every
 * mbuf has refcount 1 and comes from one pool, which clone sends break.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "control.h"

#define RX_POOL_EXTRA 1024   /* mbufs beyond the rx rings: per-lcore caches, bursts in flight */

int
port_check(uint16_t port)
{
	if (rt() == NULL || !rte_eth_dev_is_valid_port(port))
		return rt_error(-ENODEV, "port %u does not exist (%u ports: see 'surge devices')",
				port, rte_eth_dev_count_avail());
	return 0;
}

static struct queue_slot *
new_slots(uint16_t n, int socket)
{
	struct queue_slot *q = rte_zmalloc_socket("surge_q", sizeof(*q) * (n ? n : 1),
						  RTE_CACHE_LINE_SIZE, socket);

	for (uint16_t i = 0; q != NULL && i < n; i++) {
		q[i].st.lcore = -1;
	}
	return q;
}

/* The last step of a close (port_close.c), and the first of an open: every
 * mbuf of the rx pool is back, then it goes. A pool with
 * mbufs out (in another port's ring, in a task's burst) is a leak: it is
 * kept, since freeing it would let those mbufs come back to freed memory,
 * and checked again when the port opens again or surge exits. */
int
rx_pool_settle(uint16_t port, struct port_state *ps)
{
	unsigned avail;

	if (ps->rx_pool == NULL)
		return 0;
	avail = rte_mempool_avail_count(ps->rx_pool);
	if (avail != ps->rx_pool->size)
		return rt_error(-EBUSY, "port %u rx pool: %u of %u mbufs not returned", port,
				ps->rx_pool->size - avail, ps->rx_pool->size);
	rte_mempool_free(ps->rx_pool);
	ps->rx_pool = NULL;
	return 0;
}

/*
 * The kernel's view of a port that is a kernel interface (af_packet, tap,
 * af_xdp: dev_info.if_index names it): 1 up, 0 down, -1 no interface or no
 * answer. Such PMDs may never update their link status (DPDK 22.11's
 * af_packet says "up" from start to stop whatever the interface does), so
 * the interface's operstate is read as well; "unknown" (a driver that does
 * not report it) trusts the PMD.
 */
static int
kernel_link_up(uint16_t port)
{
	struct rte_eth_dev_info info;
	char name[IF_NAMESIZE], path[64], state[32] = "";
	FILE *f;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.if_index == 0)
		return -1;
	if (if_indextoname(info.if_index, name) == NULL)
		return 0;              /* the interface is gone */
	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", name);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(state, sizeof(state), f) == NULL)
		state[0] = '\0';
	fclose(f);
	state[strcspn(state, "\n")] = '\0';
	if (strcmp(state, "up") == 0 || strcmp(state, "unknown") == 0 || state[0] == '\0')
		return state[0] == '\0' ? -1 : 1;
	return 0;                      /* down, lowerlayerdown, dormant, notpresent, testing */
}

/* The one reading of a port's link (port:info(), the trials' link check,
 * wait_link): the PMD's status, and for a kernel interface the kernel's. */
static int
port_link(uint16_t port, struct rte_eth_link *link)
{
	int rc;

	memset(link, 0, sizeof(*link));
	if ((rc = rte_eth_link_get_nowait(port, link)) != 0)
		return rc;
	if (link->link_status && kernel_link_up(port) == 0)
		link->link_status = RTE_ETH_LINK_DOWN;
	return 0;
}

static int
wait_link(uint16_t port, uint32_t timeout_ms)
{
	struct rte_eth_link link;
	uint32_t waited = 0;

	for (;;) {
		if (port_link(port, &link) == 0 && link.link_status)
			return 0;
		if (waited >= timeout_ms || !surge_running())
			break;
		sleep_ns(10 * 1000000ull);
		waited += 10;
	}
	return timeout_ms ? rt_error(-ETIMEDOUT, "port %u: link still down after %u ms", port, timeout_ms) : 0;
}

static int
setup_queues(uint16_t port, struct port_state *ps, const struct rte_eth_dev_info *info,
	     uint16_t rxd, uint16_t txd, int socket)
{
	struct rte_eth_txconf txc = info->default_txconf;
	int rc;

	for (uint16_t q = 0; q < ps->conf.rxq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, rxd, socket, NULL, ps->rx_pool);
		if (rc < 0)
			return rt_error(rc, "port %u: rx queue %u setup failed: %s", port, q, rte_strerror(-rc));
	}
	txc.offloads = ps->tx_offloads;
	for (uint16_t q = 0; q < ps->conf.txq; q++) {
		rc = rte_eth_tx_queue_setup(port, q, txd, socket, &txc);
		if (rc < 0)
			return rt_error(rc, "port %u: tx queue %u setup failed: %s", port, q, rte_strerror(-rc));
	}
	return 0;
}

/* The MTU bounds what a send accepts. Drivers without an MTU setting
 * (net_ring, net_pcap) take the one asked for as surge's own limit. */
static int
set_mtu(uint16_t port, struct port_state *ps, const struct rte_eth_dev_info *info, uint16_t want)
{
	uint16_t mtu = 1500;
	int rc;

	if (want != 0) {
		rc = rte_eth_dev_set_mtu(port, want);
		if (rc != 0 && rc != -ENOTSUP)
			return rt_error(rc, "port %u (%s): MTU %u refused: %s (the port allows %u..%u)",
					port, info->driver_name, want, rte_strerror(-rc), info->min_mtu,
					info->max_mtu);
		mtu = want;
	} else if (rte_eth_dev_get_mtu(port, &mtu) != 0) {
		mtu = 1500;
	}
	ps->mtu = mtu;
	ps->max_len = (uint32_t)mtu + RTE_ETHER_HDR_LEN + 2 * RTE_VLAN_HLEN;
	return 0;
}

int
surge_port_open(uint16_t port, const struct surge_port_conf *conf)
{
	struct rte_eth_conf ec;
	struct rte_eth_dev_info info;
	struct port_state *ps;
	uint16_t rxd, txd;
	char name[RTE_MEMPOOL_NAMESIZE];
	int rc, socket;

	if ((rc = port_check(port)) != 0)
		return rc;
	if (!surge_is_main())
		return rt_error(-EPERM, "port %u: ports are opened in master(), not in a task", port);
	ps = &rt()->port[port];
	if (ps->opened)
		return rt_error(-EBUSY, "port %u is already open", port);
	if ((rc = rx_pool_settle(port, ps)) != 0) {   /* left by an earlier close */
		char why[160];

		snprintf(why, sizeof(why), "%s", surge_last_error());
		return rt_error(rc, "port %u cannot open again: %s (still held by another port or a "
				"burst)", port, why);
	}
	if ((rc = rte_eth_dev_info_get(port, &info)) != 0)
		return rt_error(rc, "port %u: cannot read device info", port);
	if (conf->rxq > info.max_rx_queues || conf->txq > info.max_tx_queues)
		return rt_error(-EINVAL, "port %u (%s): asked for %u rx / %u tx queues, it has at most %u / %u",
				port, info.driver_name, conf->rxq, conf->txq,
				info.max_rx_queues, info.max_tx_queues);
	if (conf->rxq == 0 && conf->txq == 0)
		return rt_error(-EINVAL, "port %u: open it with at least one rx or tx queue", port);

	memset(ps, 0, sizeof(*ps));
	ps->conf = *conf;
	snprintf(ps->driver, sizeof(ps->driver), "%s", info.driver_name);
	ps->handover = strcmp(info.driver_name, "net_ring") == 0;
	ps->fast_free = !conf->clones && (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE);
	ps->csum = conf->csum_offload ? offload_csum_pick(info.tx_offload_capa) : 0;
	ps->tx_offloads = ps->csum | (ps->fast_free ? RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE : 0);
	socket = rte_eth_dev_socket_id(port);
	if (socket < 0)
		socket = (int)rte_socket_id();

	memset(&ec, 0, sizeof(ec));
	ec.txmode.offloads = ps->tx_offloads;
	ps->rx_intr = conf->rxq > 0 && rx_intr_capable(info.driver_name);
	ec.intr_conf.rxq = ps->rx_intr;   /* idle pollers may block on it (rxintr.c) */
	rc = rte_eth_dev_configure(port, conf->rxq, conf->txq, &ec);
	if (rc < 0)
		return rt_error(rc, "port %u (%s): configure failed: %s", port, info.driver_name, rte_strerror(-rc));
	if ((rc = set_mtu(port, ps, &info, conf->mtu)) != 0)
		return rc;
	rxd = conf->rxd ? conf->rxd : 1024;
	txd = conf->txd ? conf->txd : 1024;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd);
	if (rc < 0)
		return rt_error(rc, "port %u: descriptor counts %u/%u refused", port, rxd, txd);
	ps->conf.rxd = rxd;   /* what the queues get: surge_port_conf reports it */
	ps->conf.txd = txd;

	snprintf(name, sizeof(name), "surge_rx%u", port);
	ps->rx_pool = rte_pktmbuf_pool_create(name, conf->rxq * rxd + RX_POOL_EXTRA, 256, 0,
					      RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (ps->rx_pool == NULL)
		return rt_error(-rte_errno, "port %u: rx pool: %s", port, rte_strerror(rte_errno));
	ps->txq = new_slots(conf->txq, socket);
	ps->rxq = new_slots(conf->rxq, socket);
	if (ps->txq == NULL || ps->rxq == NULL) {
		rte_free(ps->txq);
		rte_free(ps->rxq);
		ps->txq = ps->rxq = NULL;
		return rt_error(-ENOMEM, "port %u: out of memory for queue counters", port);
	}
	ps->opened = 1;   /* from here on ports_close_all releases what we made */

	if ((rc = setup_queues(port, ps, &info, rxd, txd, socket)) != 0)
		return rc;
	if ((rc = rte_eth_dev_start(port)) < 0)
		return rt_error(rc, "port %u (%s): start failed: %s", port, info.driver_name, rte_strerror(-rc));
	__atomic_store_n(&ps->started, 1, __ATOMIC_RELEASE);   /* the stats line reads it */
	if (conf->promisc && (rc = rte_eth_promiscuous_enable(port)) != 0 && rc != -ENOTSUP)
		return rt_error(rc, "port %u: promiscuous mode: %s", port, rte_strerror(-rc));
	return wait_link(port, conf->link_timeout_ms);
}

/* A device operation on an open port, on or off (OTG's port.link and
 * layer1 promiscuous): a device without it is -ENOTSUP with its driver
 * named, never a silent no-op. get, when given, reads the state back (a
 * driver may take the call and not change it). */
static int
set_mode(uint16_t port, int on, int (*op_on)(uint16_t), int (*op_off)(uint16_t), int (*get)(uint16_t),
	 const char *what, const char *on_name, const char *off_name)
{
	struct rte_eth_dev_info info;
	int rc;

	if ((rc = port_check(port)) != 0)
		return rc;
	if (!rt()->port[port].opened)
		return rt_error(-EINVAL, "port %u: not open (its %s is set on an open port)", port, what);
	if ((rc = rte_eth_dev_info_get(port, &info)) != 0)
		return rt_error(rc, "port %u: cannot read device info", port);
	rc = on ? op_on(port) : op_off(port);
	if (rc == 0 && get != NULL && get(port) != (on ? 1 : 0))
		rc = -ENOTSUP;
	if (rc != 0)
		return rt_error(rc, "port %u (%s): %s %s: %s", port, info.driver_name, what, on ? on_name : off_name,
				rc == -ENOTSUP ? "the device cannot change it" : rte_strerror(-rc));
	return 0;
}

int
surge_port_set_link(uint16_t port, int up)
{
	return set_mode(port, up, rte_eth_dev_set_link_up, rte_eth_dev_set_link_down, NULL, "link", "up", "down");
}

int
surge_port_set_promisc(uint16_t port, int on)
{
	return set_mode(port, on, rte_eth_promiscuous_enable, rte_eth_promiscuous_disable, rte_eth_promiscuous_get,
			"promiscuous mode", "on", "off");
}

/* An open port's settings, so that surge.port() on it (the prompt, an
 * attached client, a second call in a script) can hand back its handle when
 * the options asked agree, and say which differ when not. Only the main
 * lcore opens and closes ports, and only it asks. */
int
surge_port_conf(uint16_t port, struct surge_port_conf *out)
{
	struct port_state *ps;
	int rc;

	if ((rc = port_check(port)) != 0)
		return rc;
	ps = &rt()->port[port];
	if (!ps->opened || !__atomic_load_n(&ps->started, __ATOMIC_ACQUIRE))
		return 0;
	*out = ps->conf;
	out->mtu = ps->mtu;
	return 1;
}

/* One past the highest port number: callers walk 0..n-1, and a port removed
 * with port:close{ remove = true } leaves a gap there that a count of the
 * ports would hide the last port behind. */
int
surge_port_count(void)
{
	uint16_t port;
	int n = 0;

	RTE_ETH_FOREACH_DEV(port)
		n = port + 1;
	return n;
}

int
surge_port_find(const char *name)
{
	uint16_t id;

	if (rte_eth_dev_get_port_by_name(name, &id) != 0)
		return rt_error(-ENODEV, "no port named '%s' (see 'surge devices')", name);
	return id;
}

int
surge_port_info(uint16_t port, struct surge_port_info *out)
{
	struct rte_eth_dev_info info;
	struct rte_eth_link link;
	struct rte_ether_addr mac;
	struct port_state *ps;
	int rc;

	if ((rc = port_check(port)) != 0)
		return rc;
	if ((rc = rte_eth_dev_info_get(port, &info)) != 0)
		return rt_error(rc, "port %u: cannot read device info", port);
	ps = &rt()->port[port];
	memset(out, 0, sizeof(*out));
	rte_eth_dev_get_name_by_port(port, out->name);
	snprintf(out->driver, sizeof(out->driver), "%s", info.driver_name);
	if (rte_eth_macaddr_get(port, &mac) == 0)
		memcpy(out->mac, mac.addr_bytes, 6);
	if (port_link(port, &link) == 0) {
		out->link_up = link.link_status;
		out->link_speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : link.link_speed;
	}
	out->started = ps->opened;
	out->socket = rte_eth_dev_socket_id(port);
	out->max_rxq = info.max_rx_queues;
	out->max_txq = info.max_tx_queues;
	out->rxq = ps->opened ? ps->conf.rxq : 0;
	out->txq = ps->opened ? ps->conf.txq : 0;
	out->fast_free = ps->fast_free;
	out->clones = ps->opened && ps->conf.clones;
	if (ps->opened)
		out->mtu = ps->mtu;
	else
		rte_eth_dev_get_mtu(port, &out->mtu);
	out->rx_offload_capa = info.rx_offload_capa;
	out->tx_offload_capa = info.tx_offload_capa;
	out->tx_offloads = ps->opened ? ps->tx_offloads : 0;
	return 0;
}

int
surge_port_stats(uint16_t port, struct surge_port_stats *out)
{
	struct rte_eth_stats s;
	int rc;

	if ((rc = port_check(port)) != 0)
		return rc;
	if ((rc = rte_eth_stats_get(port, &s)) != 0)
		return rt_error(rc, "port %u: cannot read stats", port);
	out->ipackets = s.ipackets;
	out->opackets = s.opackets;
	out->ibytes = s.ibytes;
	out->obytes = s.obytes;
	out->imissed = s.imissed;
	out->ierrors = s.ierrors;
	out->oerrors = s.oerrors;
	out->rx_nombuf = s.rx_nombuf;
	return 0;
}

static int
queue_stats(uint16_t port, uint16_t q, int tx, struct surge_queue_stats *out)
{
	struct port_state *ps;
	int rc;

	if ((rc = port_check(port)) != 0)
		return rc;
	ps = &rt()->port[port];
	if (!ps->opened || q >= (tx ? ps->conf.txq : ps->conf.rxq))
		return rt_error(-EINVAL, "port %u has no open %s queue %u", port, tx ? "tx" : "rx", q);
	*out = (tx ? ps->txq : ps->rxq)[q].st;
	return 0;
}

int
surge_txq_stats(uint16_t port, uint16_t queue, struct surge_queue_stats *out)
{
	return queue_stats(port, queue, 1, out);
}

int
surge_rxq_stats(uint16_t port, uint16_t queue, struct surge_queue_stats *out)
{
	return queue_stats(port, queue, 0, out);
}

/* A finished task's queues become free for another lcore (master draining
 * a loopback, a later task). */
void
queues_release(unsigned lcore)
{
	uint16_t port;

	RTE_ETH_FOREACH_DEV(port) {
		struct port_state *ps = &rt()->port[port];

		if (!ps->opened)
			continue;
		for (uint16_t q = 0; q < ps->conf.txq; q++)
			if (ps->txq[q].st.lcore == (int32_t)lcore)
				__atomic_store_n(&ps->txq[q].st.lcore, -1, __ATOMIC_RELEASE);
		for (uint16_t q = 0; q < ps->conf.rxq; q++)
			if (ps->rxq[q].st.lcore == (int32_t)lcore) {
				rx_intr_forget(port, q);
				__atomic_store_n(&ps->rxq[q].st.lcore, -1, __ATOMIC_RELEASE);
			}
	}
}

static void
print_offloads(const char *what, uint64_t capa, const char *(*name)(uint64_t))
{
	printf("    %s offloads:", what);
	if (capa == 0)
		printf(" none");
	for (int bit = 0; bit < 64; bit++)
		if (capa & (1ULL << bit))
			printf(" %s", name(1ULL << bit));
	printf("\n");
}

void
port_print_devices(void)
{
	uint16_t port;

	printf("%u port(s)\n", rte_eth_dev_count_avail());
	RTE_ETH_FOREACH_DEV(port) {
		struct surge_port_info pi;

		if (surge_port_info(port, &pi) != 0)
			continue;
		printf("port %u: %s  driver %s  mac %02x:%02x:%02x:%02x:%02x:%02x  link %s",
		       port, pi.name, pi.driver, pi.mac[0], pi.mac[1], pi.mac[2], pi.mac[3],
		       pi.mac[4], pi.mac[5], pi.link_up ? "up" : "down");
		if (pi.link_speed_mbps)
			printf(" %u Mbit/s", pi.link_speed_mbps);
		printf("  socket %d  queues rx %u tx %u  mtu %u\n", pi.socket, pi.max_rxq, pi.max_txq, pi.mtu);
		print_offloads("rx", pi.rx_offload_capa, rte_eth_dev_rx_offload_name);
		print_offloads("tx", pi.tx_offload_capa, rte_eth_dev_tx_offload_name);
	}
}

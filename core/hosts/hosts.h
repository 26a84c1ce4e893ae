/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts.h - the emulated hosts' internal header (docs/hosts.md).
 *
 * A table of N hosts belongs to the lcore that made it and is driven by
 * surge_hosts_poll() once per burst; everything it needs is allocated when
 * it is made (the hosts, the DHCP address index, the event ring), nothing
 * per packet. core/hosts/ is a layer of its own above the data plane
 * (docs/architecture.md); its files are a ladder, each calling only those
 * before it:
 *   hosts_parse.c  a received frame read (pure: fuzzed alone)
 *   hosts_table.c  the table: hosts, lookups by MAC and address, the two
 *                  ordered timer lists, the event ring
 *   hosts_proto.c  frames written (ARP, ICMP echo replies, DHCP) and the
 *                  protocols' state machines: a frame in, a timer due
 *   hosts_mcast.c  group memberships: IGMP and MLD reports, leaves,
 *                  queries answered (its parser hosts_mcast_parse.c)
 *   hosts_server.c a table in server mode: a DHCPv4 server's pool
 *   hosts_poll.c   the FFI entry points
 */
#ifndef HOSTS_H
#define HOSTS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dataplane.h"
#include "hosts_parse.h"

#define HOST_NIL UINT32_MAX

/* host.list: the timer list a host is on */
enum { HL_NONE = 0, HL_SHORT = 1, HL_LONG = 2 };
/* host.flags */
enum { HF_OWE_RELEASE = 1 };

/* One host: 40 bytes (docs/hosts.md, "Memory"). Its MAC is the table's
 * base plus its index and its VLAN the table's, so neither is stored. One
 * timer: a host waits on one thing at a time (a probe, a retransmission,
 * T1, T2, the lease's end). Times are milliseconds of the table's clock. */
struct host {
	uint32_t ip;            /* host order: the static address, or the offered / leased one */
	uint32_t server;        /* DHCP: the server identifier (option 54) */
	uint32_t xid;           /* DHCP: the transaction's id */
	uint32_t due;           /* its timer */
	uint32_t next, prev;    /* its timer list's links */
	uint32_t lease_s;       /* DHCP: the lease's length, UINT32_MAX infinite */
	uint32_t bound_ms;      /* when the address became the host's (renewals: the last ACK) */
	uint8_t state;          /* enum surge_hosts_state */
	uint8_t list;           /* HL_* */
	uint8_t tries;          /* transmissions of the current message (or probes, announcements) */
	uint8_t renewals;       /* DHCP renewals acknowledged, saturating at 255 */
	uint8_t flags;          /* HF_OWE_RELEASE */
	uint8_t naks;           /* DHCP NAKs since the last binding: `retries` of them end it */
	uint8_t pad[2];
};
_Static_assert(sizeof(struct host) == 40, "struct host is 40 bytes (docs/hosts.md)");

/* A timer list, ordered by due time: an insertion walks back from the
 * tail, so one made with the list's usual delay costs one step. Two lists
 * keep the walks short: SHORT (probes, retransmissions: seconds) and LONG
 * (T1, T2, the lease's end: minutes to days). */
struct hlist {
	uint32_t head, tail;
};

struct hosts_table {
	struct surge_hosts_conf conf;
	struct host *h;
	uint32_t *ipidx;          /* DHCP: host + 1 by (address - net4), 0 none */
	uint32_t ipidx_n;
	uint64_t mac0;            /* conf.mac as a 48-bit number */
	struct hlist lists[3];    /* [HL_SHORT], [HL_LONG] */
	uint32_t started;         /* hosts started (in index order) */
	uint32_t open;            /* DHCP transactions outstanding (SELECTING, REQUESTING) */
	uint32_t now;             /* ms since tsc0, set by each poll */
	uint64_t tsc0;
	double ms_per_cyc;
	uint32_t rng;
	int32_t owner;
	struct surge_hosts_stats st;
	uint8_t server_mac[6];    /* the DHCP server's (from its ACK): renewals and releases are unicast */
	uint8_t has_server_mac;
	struct surge_hosts_event *ev;
	uint32_t ev_cap, ev_head, ev_tail;   /* a ring: ev_tail - ev_head events held */
	size_t bytes;             /* the table's memory */
	struct mcast *mc;         /* memberships (hosts_mcast.c), from the first join; NULL before */
	/* the poll's transmit state */
	struct surge_burst *tx;
	uint16_t port, txq;
	uint32_t tx_used, tx_got;
	int tx_err;
	uint32_t room;            /* the tx pool's data room */
	/* server mode (hosts_server.c): host i is the pool's address ip4 + i */
	uint32_t *midx;           /* the clients' MACs: slot + 1 by hash, linear probing, 0 empty */
	uint32_t midx_mask;
	uint32_t free_head;       /* addresses given back, linked through host.lease_s */
	uint32_t handed;          /* slots handed out so far, in index order */
};

static inline void p16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void p32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* DPDK's sums are of native 16-bit words: stored as they are, they read big-endian */
static inline void
csum_put(uint8_t *p, uint16_t sum)
{
	memcpy(p, &sum, 2);
}

static inline void
mac_put(uint8_t *p, uint64_t v)
{
	for (int k = 5; k >= 0; k--, v >>= 8)
		p[k] = (uint8_t)v;
}

static inline uint64_t
mac_get(const uint8_t *p)
{
	uint64_t v = 0;

	for (int k = 0; k < 6; k++)
		v = v << 8 | p[k];
	return v;
}

/* hosts_table.c */
int ht_alloc(struct hosts_table *t);
void ht_free(struct hosts_table *t);
void ht_timer_set(struct hosts_table *t, uint32_t i, int list, uint32_t due);
void ht_timer_stop(struct hosts_table *t, uint32_t i);
uint32_t ht_by_ip(const struct hosts_table *t, uint32_t ip);
uint32_t ht_by_mac(const struct hosts_table *t, const uint8_t *mac);
void ht_mac(const struct hosts_table *t, uint32_t i, uint8_t *out);
void ht_ipidx_set(struct hosts_table *t, uint32_t i, uint32_t ip);
void ht_ipidx_clear(struct hosts_table *t, uint32_t i);
void ht_state(struct hosts_table *t, uint32_t i, uint8_t state);
void ht_event(struct hosts_table *t, uint32_t i, uint8_t kind);
uint32_t ht_rand(struct hosts_table *t);

/* hosts_proto.c */
int proto_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *frame);
void proto_start(struct hosts_table *t, uint32_t i);
void proto_timer(struct hosts_table *t, uint32_t i);
int proto_flush(struct hosts_table *t);
uint8_t *proto_tx(struct hosts_table *t, uint32_t len);
uint8_t *proto_bootp(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t op, uint32_t xid);
uint8_t *proto_tx_eth(struct hosts_table *t, uint8_t *p, const uint8_t *dst, uint32_t i, uint16_t type);

/* hosts_mcast.c */
int mcast_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *frame, uint32_t len);
void mcast_timers(struct hosts_table *t);
int mcast_busy(const struct hosts_table *t);
int mcast_join(struct hosts_table *t, const struct surge_hosts_join *j);
int mcast_leave(struct hosts_table *t, int m, uint32_t first, uint32_t n, int32_t *rest);
int mcast_mship(const struct hosts_table *t, int m, struct surge_hosts_mship *out);

/* hosts_server.c */
int server_alloc(struct hosts_table *t);
void server_free(struct hosts_table *t);
int server_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *in);
void server_timer(struct hosts_table *t, uint32_t i);
uint64_t server_client_mac(const struct host *h);

/* hosts_poll.c: the run's end (core/run/boot.c) */
void hosts_free_all(void);

#endif

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
 *   hosts_nd.c     IPv6 (RFC 4861/4862): link-local, DAD, NS/NA, RS,
 *                  SLAAC, ICMPv6 echo; writes through hosts_proto.c's frames
 *   hosts_dhcp6.c  the DHCPv6 client (RFC 8415): IA_NA, IA_PD, rapid commit
 *   hosts_mcast.c  group memberships: IGMP and MLD reports, leaves,
 *                  queries answered (its parser hosts_mcast_parse.c)
 *   hosts_dhcp_opts.c the DHCPv4 client's scripted options out (12, 60,
 *                  61, 55, 82, raw) and those it keeps from an ACK
 *   hosts_ping.c   echo requests the hosts originate (ICMP, ICMPv6), the
 *                  next hop resolved by ARP or ND, replies matched
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

/* host.list (host6.list): the timer list a host is on; HL6 holds the
 * hosts' IPv6 timers (struct host6), apart from their IPv4 one */
enum { HL_NONE = 0, HL_SHORT = 1, HL_LONG = 2, HL6 = 3, HL_D6 = 4, HL_LISTS = 5 };

/* a timer: its due time and the two links of its list */
struct htimer {
	uint32_t due;
	uint32_t next, prev;
};
/* host.flags */
enum { HF_OWE_RELEASE = 1, HF_OWE_DECLINE = 2 };

/* One host: 40 bytes (docs/hosts.md, "Memory"). Its MAC is the table's
 * base plus its index and its VLAN the table's, so neither is stored. One
 * timer: a host waits on one thing at a time (a probe, a retransmission,
 * T1, T2, the lease's end). Times are milliseconds of the table's clock. */
struct host {
	uint32_t ip;            /* host order: the static address, or the offered / leased one */
	uint32_t server;        /* DHCP: the server identifier (option 54) */
	uint32_t xid;           /* DHCP: the transaction's id */
	struct htimer tm;       /* its timer */
	uint32_t lease_s;       /* DHCP: the lease's length, UINT32_MAX infinite */
	uint32_t bound_ms;      /* when the address became the host's (renewals: the last ACK) */
	uint8_t state;          /* enum surge_hosts_state */
	uint8_t list;           /* HL_* */
	uint8_t tries;          /* transmissions of the current message (or probes, announcements) */
	uint8_t renewals;       /* DHCP renewals acknowledged, saturating at 255 */
	uint8_t flags;          /* HF_OWE_RELEASE, HF_OWE_DECLINE */
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

/* A host's IPv6 side (hosts_nd.c, docs/hosts.md "IPv6"): 16 bytes, only
 * in a table with IPv6. Its addresses are derived, not stored: the
 * link-local fe80::EUI-64(MAC), the static one (ip6 + i) and the SLAAC one
 * (the table's prefix + EUI-64); flags say which are tentative (DAD) and
 * which are the host's. */
enum { H6_LL = 1, H6_STATIC = 2, H6_SLAAC = 4 };          /* an address kind, a bit */
struct host6 {
	struct htimer tm;
	uint8_t tent;           /* H6_*: in DAD */
	uint8_t ok;             /* H6_*: assigned (answered for) */
	uint8_t list;           /* HL_NONE or HL6 */
	uint8_t tries;          /* DAD rounds, or RSs, sent */
};
_Static_assert(sizeof(struct host6) == 16, "struct host6 is 16 bytes (docs/hosts.md)");

/* A host's DHCPv6 client (hosts_dhcp6.c): 68 bytes, only in a table with
 * dhcp6, with a timer of its own (list HL_D6) */
enum { D6_IDLE = 0, D6_SOLICIT, D6_REQUEST, D6_BOUND, D6_RENEW, D6_REBIND, D6_GAVE_UP, D6_RELEASED };
struct hd6 {
	struct htimer tm;
	uint32_t xid;           /* 24 bits */
	uint32_t since_ms;      /* the exchange's start (elapsed time), once bound the binding's */
	uint32_t t1_s, t2_s, valid_s;
	uint8_t addr[16];       /* IA_NA's address */
	uint8_t pd[16];         /* IA_PD's prefix */
	uint8_t pd_len;
	uint8_t state;          /* D6_* */
	uint8_t list;
	uint8_t tries;          /* transmissions of this exchange */
};
_Static_assert(sizeof(struct hd6) == 68, "struct hd6 is 68 bytes (docs/hosts.md)");

/* The table's IPv6 state: one router's prefix for every host (SLAAC) */
struct hosts6 {
	uint8_t prefix[8];        /* the /64 from the last RA's prefix with the A flag */
	uint8_t has_prefix;
	uint8_t ra_seen;          /* an RA came: the hosts stop soliciting */
	uint8_t static6[16];      /* host 0's static address (conf.ip6), host i's + i */
	uint32_t valid_s, pref_s; /* the prefix's lifetimes (UINT32_MAX infinite) */
	uint32_t ra_ms;           /* when they were last set */
	uint32_t busy;            /* hosts with an address in DAD */
	uint8_t sid[130];         /* DHCPv6: the server's DUID (the last to advertise) */
	uint8_t sid_len;
	uint32_t d6_open;         /* DHCPv6 hosts soliciting or requesting */
	uint32_t d6_owe;          /* DHCPv6 releases not sent yet */
};

/* A DHCPv4 host's options from its last ACK and its first binding's time
 * (hosts_dhcp_opts.c): 28 bytes, only in a DHCP client table */
struct hin {
	uint32_t mask, router, dns[2];
	uint32_t t1_s, t2_s;    /* options 58 and 59, 0 absent */
	uint32_t since_ms;      /* its first ACK (leave_after_ms counts from it) */
};

struct hosts_table {
	struct surge_hosts_conf conf;
	struct surge_hosts_dhcp4 *dopt;   /* DHCPv4: the script's options out and behaviour, NULL none */
	uint8_t dopt_own;         /* bits: 1 the script's options hold a 61, 2 a 55 (the client's own not sent) */
	uint16_t dopt_room;       /* the longest DHCP frame the script's options make (tagged), 0 none */
	struct hin *in;           /* DHCPv4: a host's options in, NULL without dhcp */
	struct host *h;
	uint32_t *ipidx;          /* DHCP: host + 1 by (address - net4), 0 none */
	uint32_t ipidx_n;
	uint64_t mac0;            /* conf.mac as a 48-bit number */
	struct hlist lists[HL_LISTS];   /* [HL_SHORT], [HL_LONG], [HL6] */
	struct host6 *h6;         /* IPv6: a host's IPv6 side, NULL without */
	struct hd6 *d6;           /* DHCPv6: a host's client, NULL without */
	struct hosts6 v6;
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
	struct tx_writer tx;      /* what a host's timer sends again the ring may refuse */
	uint32_t room;            /* the tx pool's data room */
	/* server mode (hosts_server.c): host i is the pool's address ip4 + i */
	uint32_t *midx;           /* the clients' MACs: slot + 1 by hash, linear probing, 0 empty */
	uint32_t midx_mask;
	uint32_t free_head;       /* addresses given back, linked through host.lease_s */
	uint32_t handed;          /* slots handed out so far, in index order */
	struct ping *ping;        /* the hosts' echo requests (hosts_ping.c), from the first; NULL before */
	/* DHCP relay (hosts_proto.c, dopt->relay4): the next hop's MAC towards the server */
	uint8_t relay_nh[6];
	uint8_t relay_nh_ok;      /* relay_nh known: given (relay_gw_mac) or ARP's answer */
	uint8_t relay_arped;      /* an ARP request for the server sent, at relay_arp_ms */
	uint32_t relay_arp_ms, relay_arp0_ms;   /* the last one's time, the first's */
};

/* the table's DHCP messages leave as a relay agent's (docs/hosts.md "DHCP relay") */
static inline int
ht_relay(const struct hosts_table *t)
{
	return t->dopt != NULL && t->dopt->relay4 != 0;
}

/* Why IPv4 address a is no station's, NULL when it is one: a host there
 * would answer ARP for a group or send from it (a ping's target, a
 * server's offer) */
static inline const char *
ht_not_station4(uint32_t a)
{
	return a == 0 ? "0.0.0.0 is no station's address" : a >> 28 == 14 ? "a multicast address" :
	       a == UINT32_MAX ? "the broadcast address" : NULL;
}

/* The table's tags' bytes: 0, 4 (802.1Q) or 8 (QinQ: an outer tag of
 * conf.outer_tpid, then the 802.1Q one) */
static inline uint32_t
ht_tags_len(const struct hosts_table *t)
{
	return t->conf.outer_vlan != 0 ? 8 : t->conf.vlan != 0 ? 4 : 0;
}

/* The table's tags written at p (where the EtherType would be): past them */
static inline uint8_t *
ht_tags_put(const struct hosts_table *t, uint8_t *p)
{
	if (t->conf.outer_vlan != 0) {
		put16(p, t->conf.outer_tpid);
		put16(p + 2, t->conf.outer_vlan);
		p += 4;
	}
	if (t->conf.vlan != 0) {
		put16(p, 0x8100);
		put16(p + 2, t->conf.vlan);
		p += 4;
	}
	return p;
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
struct htimer *ht_tnode(struct hosts_table *t, int which, uint32_t i);
void ht_side_timer_set(struct hosts_table *t, int which, uint32_t i, uint32_t due);
void ht_side_timer_stop(struct hosts_table *t, int which, uint32_t i);
#define ht6_timer_set(t, i, due) ht_side_timer_set(t, 1, i, due)
#define ht6_timer_stop(t, i) ht_side_timer_stop(t, 1, i)
#define ht_d6_timer_set(t, i, due) ht_side_timer_set(t, 2, i, due)
#define ht_d6_timer_stop(t, i) ht_side_timer_stop(t, 2, i)
uint32_t ht_by_ip(const struct hosts_table *t, uint32_t ip);
uint32_t ht_by_mac(const struct hosts_table *t, const uint8_t *mac);
void ht_mac(const struct hosts_table *t, uint32_t i, uint8_t *out);
void ht_link_local(const struct hosts_table *t, uint32_t i, uint8_t *a);
void ht_ipidx_set(struct hosts_table *t, uint32_t i, uint32_t ip);
void ht_ipidx_clear(struct hosts_table *t, uint32_t i);
void ht_state(struct hosts_table *t, uint32_t i, uint8_t state);
void ht_event(struct hosts_table *t, uint32_t i, uint8_t kind);
uint32_t ht_rand(struct hosts_table *t);

/* Each protocol's X_frame(t, f, ...) is handed only frames on the
 * table's tags (hosts_poll.c checks them once): 1 when the frame was the
 * hosts' (the caller frees it), 0 to leave it. */

/* hosts_proto.c */
int proto_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *frame);
void proto_start(struct hosts_table *t, uint32_t i);
void proto_timer(struct hosts_table *t, uint32_t i);
uint8_t *proto_tx(struct hosts_table *t, uint32_t len);
uint8_t *proto_bootp(uint8_t *ip, uint32_t src, uint32_t dst, uint8_t op, uint32_t xid, uint32_t blen);
uint8_t *proto_tx_eth(struct hosts_table *t, uint8_t *p, const uint8_t *dst, uint32_t i, uint16_t type);
int proto_relay_hold(struct hosts_table *t);

/* hosts_mcast.c */
int mcast_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *frame, uint32_t len);
void mcast_timers(struct hosts_table *t);
int mcast_busy(const struct hosts_table *t);
int mcast_join(struct hosts_table *t, const struct surge_hosts_join *j);
int mcast_leave(struct hosts_table *t, int m, uint32_t first, uint32_t n, int32_t *rest);
int mcast_mship(const struct hosts_table *t, int m, struct surge_hosts_mship *out);
uint32_t proto_backoff(struct hosts_table *t, uint32_t tries);

/* hosts_nd.c */
int nd_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *frame);
void nd_start(struct hosts_table *t, uint32_t i);
void nd_timer(struct hosts_table *t, uint32_t i);
int nd_addr(const struct hosts_table *t, uint32_t i, int kind, uint8_t *out);
uint8_t *nd_frame6(struct hosts_table *t, uint32_t i, const uint8_t *dmac, const uint8_t *src, const uint8_t *dst,
		   uint32_t plen, uint8_t hlim, uint8_t proto);
void nd_sum6(uint8_t *l4, uint32_t at);
uint32_t nd_host(const struct hosts_table *t, const uint8_t *a, int *kind);
void nd_solicited(const uint8_t *a, uint8_t *group, uint8_t *mac);

/* hosts_dhcp6.c */
int d6_frame(struct hosts_table *t, const struct hframe *f);
void d6_start(struct hosts_table *t, uint32_t i);
void d6_timer(struct hosts_table *t, uint32_t i);
int d6_release(struct hosts_table *t, uint32_t i);

/* hosts_dhcp_opts.c */
int dopt_alloc(struct hosts_table *t);
void dopt_free(struct hosts_table *t);
int dopt_check(const struct surge_hosts_conf *c, const struct surge_hosts_dhcp4 *o, uint32_t *total, uint8_t *own);
int dopt_set(struct hosts_table *t, const struct surge_hosts_dhcp4 *o);
uint8_t *dopt_write(const struct hosts_table *t, uint32_t i, uint8_t *o, uint8_t msg);
int dopt_agent_echoed(const struct hosts_table *t, uint32_t i, const struct hframe *f);
void dopt_record(struct hosts_table *t, uint32_t i, const struct hframe *f, int first);
/* hosts_ping.c */
int ping_start(struct hosts_table *t, const struct surge_hosts_ping *p);
int ping_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *in);
void ping_poll(struct hosts_table *t);
int ping_busy(const struct hosts_table *t);
void ping_free(struct hosts_table *t);

/* hosts_server.c */
int server_alloc(struct hosts_table *t);
void server_free(struct hosts_table *t);
int server_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *in);
void server_timer(struct hosts_table *t, uint32_t i);
uint64_t server_client_mac(const struct host *h);

/* hosts_poll.c: the run's end (core/run/boot.c) */
void hosts_free_all(void);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_mcast.c - the emulated hosts' group memberships: IGMPv2 (RFC
 * 2236), IGMPv3 (RFC 3376), MLDv1 (RFC 2710), MLDv2 (RFC 3810).
 *
 * A membership is a range of hosts times a range of groups, at most
 * SURGE_HOSTS_MSHIPS a table, allocated on the first join: no memory per
 * host. What the hosts of a membership owe (the unsolicited reports of a
 * join, the answers to a query, the leaves) is a sweep: its items (a host,
 * or a host and one group for v2 and MLDv1, whose reports name one group)
 * go out in a random order (an affine permutation of the items, its
 * multiplier prime to their count) spread evenly over the sweep's span, so
 * each host's delay is uniform over [0, span) as the RFCs' random timers
 * are, with one timer a membership instead of one a host and group. A
 * query that comes while a sweep is under way is answered by it when it
 * ends soon enough (RFC 3376 5.2 rule 1), or the rest of it is compressed
 * into the query's maximum response time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ip.h>

#include "hosts.h"
#include "hosts_mcast_parse.h"

#define MCAST_PER_POLL 1024       /* most reports one poll writes: the rest at the next */
#define OLD_QUERIER_MS 260000     /* RFC 3376 8.12 / RFC 3810 9.12 with the default variables */
#define V3_RECS 183               /* IGMPv3 records in a 1500-byte packet: (1500 - 24 - 8) / 8 */
#define MLD2_RECS 72              /* MLDv2 records: (1500 - 40 - 8 - 8) / 20 */

enum { MS_FREE = 0, MS_JOINING = 1, MS_JOINED = 2, MS_LEAVING = 3 };
enum { SW_NONE = 0, SW_ALL, SW_GROUP };
enum { REC_IS_EX = 2, REC_TO_IN = 3, REC_TO_EX = 4 };   /* RFC 3376 4.2.12 */

struct sweep {
	uint8_t kind;             /* SW_*: all the membership's groups, or group gidx */
	uint8_t pg;               /* its items are one-group messages (v2, MLDv1) */
	uint32_t gidx;
	uint32_t start, span;     /* item k0 + j of the rest is due at start + span * (j + phase) / (total - k0) */
	uint32_t per;             /* items a host: ngroups (SW_ALL in v2 or MLDv1), else 1 */
	uint32_t total, done, k0; /* items: at most 2^32 - 1 (surge_hosts_join refuses more) */
	double phase;             /* 0..1, at random: no item is due at the start of a span but a round's first */
	uint64_t mul, add;        /* the order: item x is (mul * x + add) % total, mul prime to total */
};

struct mship {
	struct surge_hosts_join j;
	uint8_t state;            /* MS_* */
	uint8_t rounds;           /* join or leave rounds still to send after the current sweep */
	uint8_t round1;           /* the current sweep is the first of a join or leave: events */
	struct sweep sw;
	uint64_t reports, leaves, queries;
};

struct mcast {
	struct mship m[SURGE_HOSTS_MSHIPS];
	uint32_t old_until[2];    /* [0] IGMP, [1] MLD: an older querier heard, until (ms) */
	uint8_t old_version[2];   /* the version it spoke */
};
_Static_assert(sizeof(struct mcast) <= 8192, "a table's memberships are 8 KB (docs/hosts.md)");

/* the group's last 32 bits: 12 for IPv4 (bytes 0..3), 12..15 for IPv6 */
static inline int
low_at(uint8_t af)
{
	return af == 4 ? 0 : 12;
}

/* group gidx of membership m into out (4 or 16 bytes) */
static void
group_at(const struct mship *m, uint32_t gidx, uint8_t *out)
{
	int at = low_at(m->j.af);

	memcpy(out, m->j.group, 16);
	put32(out + at, get32(m->j.group + at) + gidx);
}

/* the version a membership speaks now: an older querier heard makes it older (RFC 3376 7.2.1, RFC 3810 8.2.1) */
static uint8_t
version_now(const struct hosts_table *t, const struct mship *m)
{
	int k = m->j.af == 6;

	if (t->mc->old_until[k] != 0 && (int32_t)(t->mc->old_until[k] - t->now) > 0 &&
	    t->mc->old_version[k] < m->j.version)
		return t->mc->old_version[k];
	return m->j.version;
}

/* a membership's items speak one group each (IGMPv2, MLDv1) */
static int
per_group(const struct hosts_table *t, const struct mship *m)
{
	return version_now(t, m) == (m->j.af == 4 ? 2 : 1);
}

static uint64_t
gcd(uint64_t a, uint64_t b)
{
	while (b != 0) {
		uint64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

static void
sweep_start(struct hosts_table *t, struct mship *m, uint8_t kind, uint32_t gidx, uint32_t span)
{
	struct sweep *s = &m->sw;

	s->kind = kind;
	s->gidx = gidx;
	s->pg = (uint8_t)per_group(t, m);
	s->per = kind == SW_ALL && s->pg ? m->j.ngroups : 1;
	s->total = m->j.nhosts * s->per;   /* within 32 bits: surge_hosts_join */
	s->done = s->k0 = 0;
	s->start = t->now;
	s->span = span;
	s->phase = span == 0 ? 0 : (double)ht_rand(t) / 4294967296.0;
	s->add = ht_rand(t) % s->total;
	s->mul = (ht_rand(t) % s->total) | 1;
	while (gcd(s->mul, s->total) != 1)   /* a few steps: the totient is dense */
		s->mul++;
}

/* the rest of a sweep due within span from now (a query's answer that must come sooner) */
static void
sweep_hasten(struct hosts_table *t, struct sweep *s, uint32_t span)
{
	uint32_t end = s->start + s->span;

	if ((int32_t)(end - (t->now + span)) <= 0)
		return;                     /* it ends soon enough: RFC 3376 5.2 rule 1 */
	s->k0 = s->done;
	s->start = t->now;
	s->span = span;
}

/* --- frames ---------------------------------------------------------------- */

/* Ethernet and an IPv4 header with the router alert option (RFC 2113), TTL
 * 1, to dst; returns the message's place */
static uint8_t *
ip4_head(struct hosts_table *t, uint32_t i, uint32_t dst, uint8_t tos, uint32_t msglen)
{
	uint32_t l2 = 14 + ht_tags_len(t), len = l2 + 24 + msglen;
	uint8_t *p = proto_tx(t, len < 60 + l2 - 14 ? 60 + l2 - 14 : len);

	if (p == NULL)
		return NULL;
	uint8_t mac[6] = { 0x01, 0x00, 0x5e, (uint8_t)(dst >> 16 & 0x7f), (uint8_t)(dst >> 8), (uint8_t)dst };
	uint8_t *ip = proto_tx_eth(t, p, mac, i, 0x0800);

	ip[0] = 0x46;
	ip[1] = tos;
	put16(ip + 2, (uint16_t)(24 + msglen));
	ip[8] = 1;
	ip[9] = 2;
	put32(ip + 12, t->h[i].ip);
	put32(ip + 16, dst);
	ip[20] = 0x94;                     /* router alert, 4 bytes, value 0 */
	ip[21] = 4;
	put16(ip + 10, (uint16_t)~csum_add(ip, 24, 0));
	return ip + 24;
}

/* Ethernet, IPv6 (hop limit 1) and a hop-by-hop header with the router
 * alert option (RFC 2711, value 0: MLD) and PadN, to dst; returns the
 * ICMPv6 message's place (its checksum is mld_sum's) */
static uint8_t *
ip6_head(struct hosts_table *t, uint32_t i, const uint8_t *dst, uint32_t msglen)
{
	uint32_t l2 = 14 + ht_tags_len(t);
	uint8_t *p = proto_tx(t, l2 + 48 + msglen);

	if (p == NULL)
		return NULL;
	uint8_t mac[6] = { 0x33, 0x33, dst[12], dst[13], dst[14], dst[15] };
	uint8_t *ip = proto_tx_eth(t, p, mac, i, 0x86dd);

	ip[0] = 0x60;
	put16(ip + 4, (uint16_t)(8 + msglen));
	ip[6] = 0;                         /* hop-by-hop options */
	ip[7] = 1;
	ht_link_local(t, i, ip + 8);
	memcpy(ip + 24, dst, 16);
	uint8_t *h = ip + 40;

	h[0] = 58;                         /* ICMPv6 next, 8 bytes in all */
	h[2] = 5;                          /* router alert, 2 bytes, 0: MLD */
	h[3] = 2;
	h[6] = 1;                          /* PadN, 0 bytes */
	return h + 8;
}

/* the ICMPv6 checksum of msg (n bytes) after ip6_head: the IPv6 header
 * is 48 bytes before it (40, and the 8 of the hop-by-hop header) */
static void
mld_sum(uint8_t *msg, uint32_t n)
{
	put16(msg + 2, (uint16_t)~csum6(msg - 48, msg, n, 58));
}

/* IGMPv2 report or leave, MLDv1 report or done: one group */
static int
send_one(struct hosts_table *t, struct mship *m, uint32_t i, uint32_t gidx, int leave)
{
	uint8_t g[16];

	group_at(m, gidx, g);
	if (m->j.af == 4) {
		uint32_t dst = leave ? 0xe0000002u : get32(g);   /* leaves to all routers (RFC 2236 3) */
		uint8_t *msg = ip4_head(t, i, dst, 0, 8);

		if (msg == NULL)
			return -1;
		msg[0] = leave ? 0x17 : 0x16;
		memcpy(msg + 4, g, 4);
		put16(msg + 2, (uint16_t)~csum_add(msg, 8, 0));
		if (leave)
			t->st.igmp_leave_tx++;
		else
			t->st.igmp_v2_report_tx++;
	} else {
		static const uint8_t routers[16] = { 0xff, 2, [15] = 2 };   /* done to all routers (RFC 2710 4) */
		uint8_t *msg = ip6_head(t, i, leave ? routers : g, 24);

		if (msg == NULL)
			return -1;
		msg[0] = leave ? 132 : 131;
		memcpy(msg + 8, g, 16);
		mld_sum(msg, 24);
		if (leave)
			t->st.mld_done_tx++;
		else
			t->st.mld_v1_report_tx++;
	}
	return 0;
}

/* IGMPv3 or MLDv2 report: records of type rec for groups from..from+n-1,
 * as many frames as they need; -1 when the pool ran dry (the host's item
 * is tried again whole) */
static int
send_records(struct hosts_table *t, struct mship *m, uint32_t i, uint8_t rec, uint32_t from, uint32_t n)
{
	uint32_t rl = m->j.af == 4 ? 8 : 20, head = 14 + ht_tags_len(t) + (m->j.af == 4 ? 24 : 48) + 8;
	/* records a frame: what 1500 bytes hold, fewer when the pool's mbufs
	 * are smaller (at least 37 and 13: the hosts' pools hold 346 bytes) */
	uint32_t most = (t->room - head) / rl;

	if (most > (m->j.af == 4 ? V3_RECS : MLD2_RECS))
		most = m->j.af == 4 ? V3_RECS : MLD2_RECS;
	while (n > 0) {
		uint32_t k = n < most ? n : most, len = 8 + k * rl;
		uint8_t *msg;

		if (m->j.af == 4) {
			msg = ip4_head(t, i, 0xe0000016u, 0xc0, len);   /* 224.0.0.22, TOS 0xc0 (RFC 3376 4.2.13) */
			if (msg == NULL)
				return -1;
			msg[0] = 0x22;
		} else {
			static const uint8_t v2routers[16] = { 0xff, 2, [15] = 0x16 };

			msg = ip6_head(t, i, v2routers, len);
			if (msg == NULL)
				return -1;
			msg[0] = 143;
		}
		put16(msg + 6, (uint16_t)k);
		for (uint32_t r = 0; r < k; r++) {
			uint8_t *rp = msg + 8 + r * rl, g[16];

			rp[0] = rec;               /* no auxiliary data, no sources: EXCLUDE {} or INCLUDE {} */
			group_at(m, from + r, g);
			memcpy(rp + 4, g, rl - 4);
		}
		if (m->j.af == 4) {
			put16(msg + 2, (uint16_t)~csum_add(msg, len, 0));
			t->st.igmp_v3_report_tx++;
		} else {
			mld_sum(msg, len);
			t->st.mld_v2_report_tx++;
		}
		from += k;
		n -= k;
	}
	return 0;
}

static void
event(struct hosts_table *t, struct mship *m, uint32_t i, uint8_t kind)
{
	uint64_t lost = t->st.events_lost;

	ht_event(t, i, kind);
	if (t->st.events_lost != lost)
		return;
	struct surge_hosts_event *e = &t->ev[(t->ev_tail - 1) & (t->ev_cap - 1)];

	e->ip4 = m->j.af == 4 ? get32(m->j.group) : 0;
	e->membership = (uint8_t)(m - t->mc->m);
}

/* item x of m's sweep: 0, or -1 when the pool ran dry */
static int
item(struct hosts_table *t, struct mship *m, uint64_t x)
{
	struct sweep *s = &m->sw;
	int leave = m->state == MS_LEAVING, pg = s->pg;
	uint64_t per = s->per;
	uint32_t i = m->j.first + (uint32_t)(x / per);
	uint32_t gidx = s->kind == SW_GROUP ? s->gidx : (uint32_t)(x % per);
	int rc;

	if (pg)
		rc = send_one(t, m, i, gidx, leave);
	else if (s->kind == SW_GROUP)
		rc = send_records(t, m, i, REC_IS_EX, gidx, 1);
	else
		rc = send_records(t, m, i, leave ? REC_TO_IN : m->state == MS_JOINING ? REC_TO_EX : REC_IS_EX, 0,
				  m->j.ngroups);
	if (rc != 0)
		return rc;
	if (leave)
		m->leaves++;
	else
		m->reports++;
	/* a host's event once a round: its first item (v2: group 0) of the first round */
	if (m->round1 && (x % per) == 0)
		event(t, m, i, leave ? SURGE_HOSTS_EV_LEFT : SURGE_HOSTS_EV_JOINED);
	return 0;
}

/* a sweep ended: the next round of a join or a leave, or the end */
static void
sweep_done(struct hosts_table *t, struct mship *m)
{
	m->sw.kind = SW_NONE;
	m->round1 = 0;
	if (m->state == MS_JOINING || m->state == MS_LEAVING) {
		if (m->rounds > 0) {
			m->rounds--;
			sweep_start(t, m, SW_ALL, 0, m->j.unsolicited_ms);
			return;
		}
		m->state = m->state == MS_JOINING ? MS_JOINED : MS_FREE;
	}
}

void
mcast_timers(struct hosts_table *t)
{
	uint32_t budget = MCAST_PER_POLL;

	if (t->mc == NULL)
		return;
	for (int k = 0; k < SURGE_HOSTS_MSHIPS && budget > 0; k++) {
		struct mship *m = &t->mc->m[k];
		struct sweep *s = &m->sw;

		while (s->kind != SW_NONE && budget > 0) {
			if (s->done == s->total) {
				sweep_done(t, m);
				continue;
			}
			double j = (double)(s->done - s->k0), left = (double)(s->total - s->k0);
			uint32_t due = s->start + (uint32_t)((double)s->span * (j + s->phase) / left);

			if ((int32_t)(t->now - due) < 0)
				break;
			if (item(t, m, (s->mul * s->done + s->add) % s->total) != 0)
				return;             /* the pool is empty: the next poll goes on */
			s->done++;
			budget--;
		}
	}
}

/* 1 while a membership joins or leaves (its reports or leaves still to send) */
int
mcast_busy(const struct hosts_table *t)
{
	for (int k = 0; t->mc != NULL && k < SURGE_HOSTS_MSHIPS; k++)
		if (t->mc->m[k].state == MS_JOINING || t->mc->m[k].state == MS_LEAVING)
			return 1;
	return 0;
}

/* --- queries --------------------------------------------------------------- */

/* the index of group g in m, or UINT32_MAX */
static uint32_t
gidx_of(const struct mship *m, const uint8_t *g)
{
	int at = low_at(m->j.af);

	if (m->j.af == 6 && memcmp(g, m->j.group, 12) != 0)
		return UINT32_MAX;
	uint32_t d = get32(g + at) - get32(m->j.group + at);

	return d < m->j.ngroups ? d : UINT32_MAX;
}

static void
query(struct hosts_table *t, const struct mquery *q)
{
	static const uint8_t zero[16];
	int general = memcmp(q->group, zero, q->af == 4 ? 4 : 16) == 0, k6 = q->af == 6;
	/* a max response time of 0 (a malformed v2 query): answered within a poll's time */
	uint32_t span = q->max_resp_ms;

	if (q->af == 4)
		t->st.igmp_query_rx++;
	else
		t->st.mld_query_rx++;
	/* IGMPv1 and v2, MLDv1 queriers: the hosts speak their version a while (RFC 3376 7.2.1, RFC 3810 8.2.1) */
	if (q->version < (q->af == 4 ? 3 : 2)) {
		t->mc->old_until[k6] = (t->now + OLD_QUERIER_MS) | 1;
		t->mc->old_version[k6] = q->af == 4 ? 2 : 1;   /* IGMPv1 reports are not sent: v2's instead */
	}
	for (int k = 0; k < SURGE_HOSTS_MSHIPS; k++) {
		struct mship *m = &t->mc->m[k];
		struct sweep *s = &m->sw;
		uint32_t gi = 0;

		if (m->j.af != q->af || (m->state != MS_JOINING && m->state != MS_JOINED))
			continue;
		if (!general && (gi = gidx_of(m, q->group)) == UINT32_MAX)
			continue;
		m->queries++;
		if (s->kind == SW_NONE || s->pg != per_group(t, m))
			sweep_start(t, m, general ? SW_ALL : SW_GROUP, gi, span);
		else if (s->kind == SW_ALL || (s->kind == SW_GROUP && !general && s->gidx == gi))
			sweep_hasten(t, s, span);
		else
			sweep_start(t, m, SW_ALL, 0, span);   /* a wider question: every group answered */
	}
}

int
mcast_frame(struct hosts_table *t, const struct hframe *f, const uint8_t *in, uint32_t len)
{
	struct mquery q;

	if (t->mc == NULL || f->l2 == 0 || !(in[0] & 1))
		return 0;
	uint16_t type = get16(in + f->l2 - 2);

	switch (mquery_parse(type, in + f->l2, len - f->l2, &q)) {
	case MQ_BAD:
		t->st.mcast_bad++;
		return 1;
	case MQ_QUERY:
		query(t, &q);
		return 1;
	default:
		return 0;
	}
}

/* --- memberships ----------------------------------------------------------- */

static int
group_check(const struct surge_hosts_join *j)
{
	const uint8_t *g = j->group;
	int at = low_at(j->af);
	uint64_t last = (uint64_t)get32(g + at) + j->ngroups - 1;

	if (j->af == 4) {
		if ((g[0] & 0xf0) != 0xe0 || last >> 28 != 0xe)
			return rt_error(-EINVAL, "surge_hosts_join: %u groups from %u.%u.%u.%u: not all in 224.0.0.0/4",
					j->ngroups, g[0], g[1], g[2], g[3]);
		if (g[0] == 224 && g[1] == 0 && g[2] == 0)
			return rt_error(-EINVAL, "surge_hosts_join: 224.0.0.%u: the local network control block is "
					"never reported (RFC 4541 2.1.2)", g[3]);
	} else {
		if (g[0] != 0xff || last > 0xffffffffu)
			return rt_error(-EINVAL, "surge_hosts_join: the groups are not all IPv6 multicast (ff00::/8)");
		if ((g[1] & 15) <= 1 || ((g[1] & 15) == 2 && memcmp(g + 2, "\0\0\0\0\0\0\0\0\0\0\0\0\0", 13) == 0 &&
					  g[15] == 1))
			return rt_error(-EINVAL, "surge_hosts_join: a reserved or interface-local scope, or ff02::1, "
					"is never reported (RFC 3810 6)");
	}
	if (last > 0xffffffffu)
		return rt_error(-EINVAL, "surge_hosts_join: %u groups: the last 32 bits of the group overflow",
				j->ngroups);
	return 0;
}

int
mcast_join(struct hosts_table *t, const struct surge_hosts_join *j)
{
	int rc, slot = -1;

	if (j == NULL)
		return rt_error(-EINVAL, "surge_hosts_join: no membership");
	if (j->af != 4 && j->af != 6)
		return rt_error(-EINVAL, "surge_hosts_join: af %u: 4 (IGMP) or 6 (MLD)", j->af);
	if (j->af == 4 ? (j->version != 2 && j->version != 3) : (j->version != 1 && j->version != 2))
		return rt_error(-EINVAL, "surge_hosts_join: version %u: IGMP 2 or 3, MLD 1 or 2", j->version);
	if (j->ngroups == 0 || j->nhosts == 0 || j->first >= t->conf.count || j->nhosts > t->conf.count - j->first)
		return rt_error(-EINVAL, "surge_hosts_join: hosts %u..+%u, %u groups: the hosts within 0..%u, "
				"one group at least", j->first, j->nhosts, j->ngroups, t->conf.count - 1);
	/* the order's products (multiplier times item) stay within 64 bits */
	if ((uint64_t)j->nhosts * j->ngroups > 0xffffffffu)
		return rt_error(-EINVAL, "surge_hosts_join: %u hosts times %u groups: at most 2^32 - 1 pairs a "
				"membership", j->nhosts, j->ngroups);
	if (j->robustness < 1 || j->robustness > 7 || j->unsolicited_ms > 3600000)
		return rt_error(-EINVAL, "surge_hosts_join: robustness %u (1..7), unsolicited_ms %u (0..3600000)",
				j->robustness, j->unsolicited_ms);
	if ((rc = group_check(j)) != 0)
		return rc;
	if (t->mc == NULL) {
		t->mc = calloc(1, sizeof(*t->mc));
		if (t->mc == NULL)
			return rt_error(-ENOMEM, "out of memory for a table's memberships");
		t->bytes += sizeof(*t->mc);
		t->st.bytes_per_host = (t->bytes + t->conf.count - 1) / t->conf.count;
	}
	for (int k = 0; k < SURGE_HOSTS_MSHIPS; k++) {
		const struct mship *o = &t->mc->m[k];
		int at = low_at(j->af);

		if (o->state == MS_FREE) {
			if (slot < 0)
				slot = k;
			continue;
		}
		if (o->j.af != j->af || (j->af == 6 && memcmp(o->j.group, j->group, 12) != 0))
			continue;
		uint32_t g0 = get32(j->group + at), o0 = get32(o->j.group + at);

		/* a host in a group twice would report it for two memberships: refused */
		if (j->first < o->j.first + o->j.nhosts && o->j.first < j->first + j->nhosts &&
		    g0 <= o0 + (o->j.ngroups - 1) && o0 <= g0 + (j->ngroups - 1))
			return rt_error(-EEXIST, "surge_hosts_join: hosts %u..%u already joined some of these groups "
					"(membership %d)", o->j.first, o->j.first + o->j.nhosts - 1, k);
	}
	if (slot < 0)
		return rt_error(-ENOSPC, "surge_hosts_join: a table has at most %d memberships", SURGE_HOSTS_MSHIPS);
	struct mship *m = &t->mc->m[slot];

	memset(m, 0, sizeof(*m));
	m->j = *j;
	m->state = MS_JOINING;
	m->rounds = (uint8_t)(j->robustness - 1);
	m->round1 = 1;
	sweep_start(t, m, SW_ALL, 0, 0);   /* the first reports at the next poll */
	return slot;
}

/* a free membership's index, or -1 */
static int
free_slot(const struct hosts_table *t, int skip)
{
	for (int k = 0; k < SURGE_HOSTS_MSHIPS; k++)
		if (k != skip && t->mc->m[k].state == MS_FREE)
			return k;
	return -1;
}

/* hosts first..first+n-1 of membership k go on in a membership of their
 * own (slot r): joined, their answers still due within the same time */
static void
split_off(struct hosts_table *t, const struct mship *m, int r, uint32_t first, uint32_t n)
{
	struct mship *o = &t->mc->m[r];
	uint32_t end = m->sw.start + m->sw.span;

	memset(o, 0, sizeof(*o));
	o->j = m->j;
	o->j.first = first;
	o->j.nhosts = n;
	o->state = MS_JOINED;
	if (m->sw.kind != SW_NONE)
		sweep_start(t, o, m->sw.kind, m->sw.gidx, (int32_t)(end - t->now) > 0 ? end - t->now : 0);
}

int
mcast_leave(struct hosts_table *t, int k, uint32_t first, uint32_t n, int32_t *rest)
{
	struct mship *m = t->mc != NULL && k >= 0 && k < SURGE_HOSTS_MSHIPS ? &t->mc->m[k] : NULL;
	int lo = -1, hi = -1;

	if (rest == NULL)
		return rt_error(-EINVAL, "surge_hosts_leave: no room for the memberships that stay");
	rest[0] = rest[1] = -1;
	if (m == NULL || (m->state != MS_JOINING && m->state != MS_JOINED))
		return rt_error(-EINVAL, "surge_hosts_leave: no membership %d joined", k);
	if (n == 0)
		n = m->j.first + m->j.nhosts - first;
	if (first < m->j.first || first - m->j.first >= m->j.nhosts || n > m->j.first + m->j.nhosts - first)
		return rt_error(-EINVAL, "surge_hosts_leave: hosts %u..+%u are not all in membership %d (hosts %u..%u)",
				first, n, k, m->j.first, m->j.first + m->j.nhosts - 1);
	if (n != m->j.nhosts) {
		/* a part leaves: the hosts before and after it stay, each in a membership of its own */
		if (m->state == MS_JOINING)
			return rt_error(-EBUSY, "surge_hosts_leave: membership %d is still joining: leave it whole or "
					"once it is joined", k);
		if ((first > m->j.first && (lo = free_slot(t, k)) < 0) ||
		    (first + n < m->j.first + m->j.nhosts && (hi = free_slot(t, lo)) < 0))
			return rt_error(-ENOSPC, "surge_hosts_leave: the hosts that stay need a membership of their "
					"own: a table has at most %d", SURGE_HOSTS_MSHIPS);
		if (lo >= 0) {
			split_off(t, m, lo, m->j.first, first - m->j.first);
			rest[0] = lo;
		}
		if (hi >= 0) {
			split_off(t, m, hi, first + n, m->j.first + m->j.nhosts - first - n);
			rest[1] = hi;
		}
		m->j.first = first;
		m->j.nhosts = n;
	}
	m->state = MS_LEAVING;
	/* v2 leaves and MLDv1 dones are sent once (RFC 2236 3, RFC 2710 4);
	 * v3 and MLDv2 state changes `robustness` times (RFC 3376 5.1) */
	m->rounds = per_group(t, m) ? 0 : (uint8_t)(m->j.robustness - 1);
	m->round1 = 1;
	sweep_start(t, m, SW_ALL, 0, 0);
	return 0;
}

int
mcast_mship(const struct hosts_table *t, int k, struct surge_hosts_mship *out)
{
	if (k < 0 || k >= SURGE_HOSTS_MSHIPS)
		return rt_error(-EINVAL, "membership %d: 0..%d", k, SURGE_HOSTS_MSHIPS - 1);
	memset(out, 0, sizeof(*out));
	if (t->mc == NULL)
		return 0;
	const struct mship *m = &t->mc->m[k];

	out->state = m->state;
	out->af = m->j.af;
	out->version = m->j.version;
	out->version_now = m->state != MS_FREE ? version_now(t, m) : 0;
	out->ngroups = m->j.ngroups;
	out->first = m->j.first;
	out->nhosts = m->j.nhosts;
	out->reports = m->reports;
	out->leaves = m->leaves;
	out->queries = m->queries;
	return 0;
}

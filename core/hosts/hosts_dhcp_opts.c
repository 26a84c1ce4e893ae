/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_dhcp_opts.c - the DHCPv4 client's options chosen by the script
 * (docs/hosts.md "DHCP options"): a host name (12) and relay agent
 * information (82, RFC 3046: circuit-id and remote-id) from per-host
 * patterns, and options sent as given (60 vendor class, 61 client
 * identifier, 55 parameter request list, any other); and the options a
 * host keeps from its ACK (mask, router, DNS servers). Checked whole when
 * set: a message never outgrows RFC 2131's 576-byte datagram, whatever
 * host writes it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"

/* RFC 2131 2: a client's message fits a 576-byte datagram (no option 57
 * asked), 28 of IPv4 and UDP, 240 of BOOTP and the cookie */
#define OPTS_ROOM (576 - 28 - 240)
/* what dhcp_send writes at most besides the script's: 53 (3), 61 (9), 50
 * (6), 54 (6), 55 (8), the end (1) */
#define OPTS_OWN 33

int
dopt_alloc(struct hosts_table *t)
{
	if (!t->conf.dhcp || t->conf.server)
		return 0;
	t->in = calloc(t->conf.count, sizeof(*t->in));
	if (t->in == NULL)
		return -ENOMEM;
	t->bytes += (size_t)t->conf.count * sizeof(*t->in);
	t->st.bytes_per_host = (t->bytes + t->conf.count - 1) / t->conf.count;
	return 0;
}

void
dopt_free(struct hosts_table *t)
{
	free(t->in);
	free(t->dopt);
	t->in = NULL;
	t->dopt = NULL;
}

/* pattern p with "%d" as n into out (NULL: only measured): its length, or
 * -1 when it holds a % other than %d and %% or is not terminated */
static int
expand(const char *p, uint32_t n, uint8_t *out)
{
	char num[12];
	int nl = snprintf(num, sizeof(num), "%u", n), len = 0;

	for (int k = 0; k < SURGE_HOSTS_PATTERN; k++) {
		if (p[k] == 0)
			return len;
		if (p[k] != '%') {
			if (out != NULL)
				out[len] = (uint8_t)p[k];
			len++;
			continue;
		}
		k++;
		if (p[k] == '%') {
			if (out != NULL)
				out[len] = '%';
			len++;
		} else if (p[k] == 'd') {
			if (out != NULL)
				memcpy(out + len, num, (size_t)nl);
			len += nl;
		} else {
			return -1;
		}
	}
	return -1;                      /* no NUL */
}

/* a pattern's longest expansion over the table's numbers (the widest is the last's) */
static int
pattern_check(const char *p, uint32_t last, const char *what, int *out)
{
	int n = expand(p, last, NULL);

	if (n < 0)
		return rt_error(-EINVAL, "surge_hosts_dhcp4: %s: '%.*s' is no pattern ('%%d' the host's number, "
				"'%%%%' a %%, at most %d bytes)", what, SURGE_HOSTS_PATTERN - 1, p,
				SURGE_HOSTS_PATTERN - 1);
	if (n > 255)
		return rt_error(-EINVAL, "surge_hosts_dhcp4: %s: '%s' makes %d bytes for host number %u: an option "
				"holds 255", what, p, n, last);
	*out = n;
	return 0;
}

/* What dopt_set refuses for a table of conf c (no table needed:
 * surge_hosts_check); the options' bytes (*total) and which of 61 and 55
 * the script gives (*own) */
int
dopt_check(const struct surge_hosts_conf *c, const struct surge_hosts_dhcp4 *o, uint32_t *total_out, uint8_t *own_out)
{
	int hn, ci, ri, rc;
	uint32_t last, own = 0;

	if (o == NULL)
		return rt_error(-EINVAL, "surge_hosts_dhcp4: no options");
	last = o->first + c->count - 1;
	if (!c->dhcp || c->server)
		return rt_error(-EINVAL, "surge_hosts_dhcp4: for a table of DHCPv4 clients (dhcp)");
	if (last < o->first)
		return rt_error(-EINVAL, "surge_hosts_dhcp4: first %u: host numbers past %u", o->first, UINT32_MAX);
	if ((rc = pattern_check(o->hostname, last, "hostname (option 12)", &hn)) != 0 ||
	    (rc = pattern_check(o->circuit_id, last, "circuit_id (option 82.1)", &ci)) != 0 ||
	    (rc = pattern_check(o->remote_id, last, "remote_id (option 82.2)", &ri)) != 0)
		return rc;
	if (o->opts_len > SURGE_HOSTS_DHCP_OPTS)
		return rt_error(-EINVAL, "surge_hosts_dhcp4: options of %u bytes: at most %u", o->opts_len,
				SURGE_HOSTS_DHCP_OPTS);
	/* the options as sent: whole, none the client writes itself */
	for (uint32_t k = 0; k < o->opts_len; k += 2u + o->opts[k + 1]) {
		uint8_t c = o->opts[k];

		if (c == 0 || c == 255 || k + 1 >= o->opts_len || k + 2u + o->opts[k + 1] > o->opts_len)
			return rt_error(-EINVAL, "surge_hosts_dhcp4: options: byte %u: not a whole option (code 1..254, "
					"its length, its bytes)", k);
		if (c == 12 || c == 50 || c == 52 || c == 53 || c == 54 || c == 82)
			return rt_error(-EINVAL, "surge_hosts_dhcp4: options: option %u is the client's own (12 and "
					"82 are patterns: hostname, circuit_id, remote_id)", c);
		own |= c == 61 ? 1u : c == 55 ? 2u : 0u;
	}
	uint32_t total = OPTS_OWN + o->opts_len + (hn > 0 ? 2u + (uint32_t)hn : 0) +
			 (ci + ri > 0 ? 2u + (ci > 0 ? 2u + (uint32_t)ci : 0) + (ri > 0 ? 2u + (uint32_t)ri : 0) : 0);

	if (ci + ri > 0 && (ci > 0 ? 2 + ci : 0) + (ri > 0 ? 2 + ri : 0) > 255)
		return rt_error(-EINVAL, "surge_hosts_dhcp4: circuit_id and remote_id make %d bytes of option 82 "
				"for host number %u: it holds 255", (ci > 0 ? 2 + ci : 0) + (ri > 0 ? 2 + ri : 0), last);
	if (total > OPTS_ROOM)
		return rt_error(-EINVAL, "surge_hosts_dhcp4: the options make %u bytes for host number %u (with the "
				"client's own %u): a message's 576-byte datagram holds %u", total, last, OPTS_OWN,
				OPTS_ROOM);
	if (o->arp_check && (o->decline_wait_ms < 10 || o->decline_wait_ms > 3600000))
		return rt_error(-EINVAL, "surge_hosts_dhcp4: decline_wait_ms %u: 10..3600000 (RFC 2131: 10 s)",
				o->decline_wait_ms);
	if (o->relay4 != 0 || o->relay_server4 != 0) {
		static const uint8_t zero[6];

		/* a relay needs a server to send to and a MAC of its own (unicast) */
		if (o->relay4 == 0 || o->relay_server4 == 0 || o->relay4 == o->relay_server4 ||
		    o->relay4 == UINT32_MAX || o->relay_server4 == UINT32_MAX || o->relay4 >> 28 >= 14 ||
		    o->relay_server4 >> 28 >= 14)
			return rt_error(-EINVAL, "surge_hosts_dhcp4: relay: address %u.%u.%u.%u and server %u.%u.%u.%u: "
					"two unicast addresses, both set and not the same", o->relay4 >> 24,
					o->relay4 >> 16 & 255, o->relay4 >> 8 & 255, o->relay4 & 255,
					o->relay_server4 >> 24, o->relay_server4 >> 16 & 255,
					o->relay_server4 >> 8 & 255, o->relay_server4 & 255);
		if (memcmp(o->relay_mac, zero, 6) == 0 || (o->relay_mac[0] & 1))
			return rt_error(-EINVAL, "surge_hosts_dhcp4: relay: mac: the relay's own unicast MAC");
		if (o->relay_gw_mac[0] & 1)
			return rt_error(-EINVAL, "surge_hosts_dhcp4: relay: gateway_mac: a unicast MAC (or none: ARP)");
	}
	*total_out = total;
	*own_out = (uint8_t)own;
	return 0;
}

int
dopt_set(struct hosts_table *t, const struct surge_hosts_dhcp4 *o)
{
	static const uint8_t zero[6];
	uint32_t total;
	uint8_t own;
	int rc;

	if ((rc = dopt_check(&t->conf, o, &total, &own)) != 0)
		return rc;
	if (t->started > 0)
		return rt_error(-EBUSY, "surge_hosts_dhcp4: the hosts already started (set it before the first poll)");
	if (o->relay4 != 0) {
		t->relay_nh_ok = memcmp(o->relay_gw_mac, zero, 6) != 0;
		memcpy(t->relay_nh, o->relay_gw_mac, 6);
	}
	if (t->dopt == NULL && (t->dopt = malloc(sizeof(*t->dopt))) == NULL)
		return rt_error(-ENOMEM, "out of memory for a table's DHCP options");
	*t->dopt = *o;
	t->dopt_own = own;
	t->dopt_room = (uint16_t)(18 + 28 + (240 + total > 300 ? 240 + total : 300));
	return 0;
}

/* option 82's value for host number n at o (dopt_set bounds it to 255 bytes): its length */
static uint32_t
agent(const struct surge_hosts_dhcp4 *d, uint32_t n, uint8_t *o)
{
	uint8_t *r = o;

	if (d->circuit_id[0] != 0) {
		o[0] = 1;
		o[1] = (uint8_t)expand(d->circuit_id, n, o + 2);
		o += 2 + o[1];
	}
	if (d->remote_id[0] != 0) {
		o[0] = 2;
		o[1] = (uint8_t)expand(d->remote_id, n, o + 2);
		o += 2 + o[1];
	}
	return (uint32_t)(o - r);
}

/* The script's options for host i's message msg at o: its end. DISCOVER
 * and REQUEST carry them all; DECLINE and RELEASE the client identifier
 * and the relay agent information only (RFC 2131 table 5). */
uint8_t *
dopt_write(const struct hosts_table *t, uint32_t i, uint8_t *o, uint8_t msg)
{
	const struct surge_hosts_dhcp4 *d = t->dopt;
	uint32_t n = d->first + i;
	int full = msg == DHCP_DISCOVER || msg == DHCP_REQUEST;

	if (full && d->hostname[0] != 0) {
		o[0] = 12;
		o[1] = (uint8_t)expand(d->hostname, n, o + 2);
		o += 2 + o[1];
	}
	for (uint32_t k = 0; k < d->opts_len; k += 2u + d->opts[k + 1]) {
		if (!full && d->opts[k] != 61)
			continue;
		memcpy(o, d->opts + k, 2u + d->opts[k + 1]);
		o += 2 + d->opts[k + 1];
	}
	if (d->circuit_id[0] != 0 || d->remote_id[0] != 0) {
		/* RFC 3046: the last option but the end (a relay's too) */
		o[0] = 82;
		o[1] = (uint8_t)agent(d, n, o + 2);
		o += 2 + o[1];
	}
	return o;
}

/* RFC 3046 2.2: a relayed reply to host i echoes the option 82 its
 * messages carried (none when they carried none): 1 when it does */
int
dopt_agent_echoed(const struct hosts_table *t, uint32_t i, const struct hframe *f)
{
	const struct surge_hosts_dhcp4 *d = t->dopt;
	uint8_t want[255];
	uint32_t n = d->circuit_id[0] != 0 || d->remote_id[0] != 0 ? agent(d, d->first + i, want) : 0;

	if (n == 0)
		return f->opt82 == NULL;
	return f->opt82 != NULL && f->opt82_len == n && memcmp(f->opt82, want, n) == 0;
}

/* host i's options from an ACK; first: its first binding (not a renewal) */
void
dopt_record(struct hosts_table *t, uint32_t i, const struct hframe *f, int first)
{
	struct hin *h = &t->in[i];

	h->mask = f->mask;
	h->router = f->router;
	h->dns[0] = f->dns[0];
	h->dns[1] = f->dns[1];
	h->t1_s = f->t1_s;
	h->t2_s = f->t2_s;
	if (first)
		h->since_ms = t->now;
}

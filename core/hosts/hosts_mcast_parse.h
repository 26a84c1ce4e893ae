/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_mcast_parse.h - the multicast queries emulated hosts answer, read
 * (hosts_mcast_parse.c): pure, bytes in, a struct mquery out; fuzzed by
 * tests/unit/test_hosts_mcast_fuzz.c.
 */
#ifndef HOSTS_MCAST_PARSE_H
#define HOSTS_MCAST_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "csum.h"

enum mquery_kind {
	MQ_NONE = 0,     /* no IGMP or MLD query (left to the caller) */
	MQ_BAD,          /* an IGMP or MLD query, malformed or with a bad checksum */
	MQ_QUERY         /* a membership query, read */
};

struct mquery {
	uint8_t kind;         /* enum mquery_kind */
	uint8_t af;           /* 4: IGMP, 6: MLD */
	uint8_t version;      /* IGMP 1, 2 or 3; MLD 1 or 2 (from the query's length, RFC 3376 7.1, RFC 3810 8.1) */
	uint8_t qrv;          /* v3 / MLDv2: the querier's robustness variable, 0 none */
	uint32_t max_resp_ms; /* the maximum response time (IGMPv1: 10 s) */
	uint8_t group[16];    /* the queried group, all zero for a general query; IPv4 in the first 4 bytes */
	uint16_t nsrc;        /* v3 / MLDv2: sources in the query (a group-and-source-specific query) */
};

/* Reads the L3 payload (n bytes at l3) of a frame whose Ethernet type is
 * ethertype. Never reads outside them. */
enum mquery_kind mquery_parse(uint16_t ethertype, const uint8_t *l3, size_t n, struct mquery *q);

#endif

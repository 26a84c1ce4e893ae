/* SPDX-License-Identifier: BSD-3-Clause
 *
 * csum.h - the Internet checksum (RFC 1071) the core sums by hand: the
 * fold of a 32-bit sum (the TCP engine's segments, the latency probe's
 * rewrite), the sum of bytes and IPv6's pseudo-header (the hosts' parsers
 * check it, their builders write it: IGMP, MLD, ICMPv6, DHCPv6 over UDP).
 * Header only, so the pure parsers (and their fuzz targets) need no other
 * file.
 */
#ifndef SURGE_CSUM_H
#define SURGE_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* A 32-bit one's complement sum folded to 16 bits (two folds are enough
 * for any 32-bit value) */
static inline uint16_t
csum_fold(uint32_t s)
{
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)((s & 0xffff) + (s >> 16));
}

/* The one's complement sum of n bytes read big-endian, folded, added to
 * acc (0 to start): the Internet checksum is its complement. */
static inline uint32_t
csum_add(const uint8_t *p, size_t n, uint32_t acc)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	return csum_fold(acc);
}

/* The sum of an upper-layer message m (n bytes, next header proto) of the
 * IPv6 packet whose header is at ip, with its pseudo-header (RFC 8200 8.1:
 * source, destination, length, next header): 0xffff when the message's
 * checksum is right; its complement is the checksum to write. */
static inline uint32_t
csum6(const uint8_t *ip, const uint8_t *m, size_t n, uint8_t proto)
{
	return csum_add(m, n, csum_add(ip + 8, 32, 0) + (uint32_t)(n >> 16) + (uint32_t)(n & 0xffff) + proto);
}

#endif /* SURGE_CSUM_H */

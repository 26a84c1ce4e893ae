/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_csum.h - the Internet checksum (RFC 1071) the hosts' parsers check
 * and their builders write: one sum for IGMP, MLD, ICMPv6 and DHCPv6 over
 * UDP, inline so the pure parsers (and their fuzz targets) need no other
 * file.
 */
#ifndef HOSTS_CSUM_H
#define HOSTS_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* The one's complement sum of n bytes read big-endian, folded, added to
 * acc (0 to start): the Internet checksum is its complement. */
static inline uint32_t
csum_add(const uint8_t *p, size_t n, uint32_t acc)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		acc += (uint32_t)p[n - 1] << 8;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return acc;
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

#endif /* HOSTS_CSUM_H */

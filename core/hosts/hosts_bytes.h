/* SPDX-License-Identifier: BSD-3-Clause
 *
 * hosts_bytes.h - the wire's big-endian fields, read (g16, g32) and
 * written (p16, p32): one definition for every file of the folder, the
 * pure parsers included (header only: it belongs to no .c file).
 */
#ifndef HOSTS_BYTES_H
#define HOSTS_BYTES_H

#include <stdint.h>

static inline uint16_t g16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t g32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void p16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void p32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

#endif /* HOSTS_BYTES_H */

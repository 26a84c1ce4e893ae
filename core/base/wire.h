/* SPDX-License-Identifier: BSD-3-Clause
 *
 * wire.h - the wire's big-endian fields, read (get16, get32) and written
 * (put16, put32): one definition for every layer that parses or writes
 * frames byte by byte (conn, hosts), the pure parsers and their fuzz
 * targets included (header only, nothing else needed).
 */
#ifndef SURGE_WIRE_H
#define SURGE_WIRE_H

#include <stdint.h>

static inline uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

#endif /* SURGE_WIRE_H */

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * probe.h - the probe format both sides of the data plane read (probe.c
 * writes it, latency.c matches it). Internal to the data plane.
 */
#ifndef SURGE_PROBE_H
#define SURGE_PROBE_H

#define PROBE_MAGIC 0x50475253u   /* "SRGP" in memory on little-endian: format version 1 */
#define PROBE_LEN SURGE_PROBE_LEN /* magic 4, seq 4, tsc 8 (surge.h) */

#endif /* SURGE_PROBE_H */

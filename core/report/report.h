/* SPDX-License-Identifier: BSD-3-Clause
 *
 * report.h - what a run tells: queue totals, the stats line and summary,
 * the results series, run metadata, DPDK telemetry. Reads control, io and
 * below; writes only its own state.
 */
#ifndef SURGE_REPORT_H
#define SURGE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "control.h"
#include "io.h"

/* totals.c: one walk over a port's queues */
struct queue_totals {
	uint64_t tx_packets, tx_bytes, rx_packets, rx_bytes, drops, unsent;
};
void queue_totals(uint16_t port, struct queue_totals *t);

/* series.c: samples when due (force: now); the stats line's clock */
void series_tick(uint64_t now, int force);
void series_record_now(void);    /* a row now (master): before a port closes */

/* stats.c */
void stats_tick(int force);
void stats_summary(void);

/* telemetry.c */
int telemetry_register(void);
void telemetry_close(void);  /* tear-down begins: /surge commands answer -EINVAL */

/* metrics.c: --metrics, Prometheus over HTTP (libmicrohttpd). start binds
 * and serves 503 (before EAL: a bad address or a port in use is the
 * option's error); open: EAL is up, scrapes read the run; stop: joined,
 * nothing of the run is read after it. */
int metrics_start(void);
void metrics_open(void);
void metrics_stop(void);
/* metrics.c: a name or path (bytes) as text for a reader that takes only
 * UTF-8, the one way one is written: read to a NUL or max bytes; each piece
 * that is not well-formed UTF-8 (a stray byte, an overlong form, a
 * surrogate, beyond U+10FFFF, a character cut short) becomes U+FFFD, cut
 * before the character that would not fit in cap bytes with the NUL (never
 * inside one, nor inside an escape). Returns the length. TEXT_LABEL: a
 * label value (\ " newline escaped); TEXT_HELP: the text format's help (no
 * " escaped: promtool refuses \"); TEXT_ASCII: for DPDK telemetry, whose
 * JSON writer (22.11) mangles every byte above 0x7f: each character not
 * printable ASCII is '?', nothing escaped (DPDK escapes " and \). */
enum text_mode { TEXT_LABEL, TEXT_HELP, TEXT_ASCII };
size_t report_text(char *out, size_t cap, const char *in, size_t max, enum text_mode mode);

#endif /* SURGE_REPORT_H */

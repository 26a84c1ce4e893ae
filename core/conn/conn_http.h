/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_http.h - the connection engine's HTTP/1.1 parsing (conn_http.c):
 * pure functions of the bytes a peer sent (no engine, no state), the
 * bottom of the engine's ladder, fuzzed by tests/unit/test_http_fuzz.c.
 */
#ifndef SURGE_CONN_HTTP_H
#define SURGE_CONN_HTTP_H

#include <stdint.h>

/* The status code of the status line p[0..n) starts with, strictly as RFC
 * 9112 section 4 writes it: "HTTP/1." DIGIT SP 3DIGIT SP reason CR LF, the
 * reason of HTAB, SP, visible and obs-text bytes; -1 when p does not start
 * with such a line, whole ("HTTP/1.1 2000 OK" is not a 200). */
int http_status(const uint8_t *p, uint32_t n);

/* A response whose header is whole in p[0..n): its length (header and
 * Content-Length body), 0 when its status line is not valid (http_status)
 * or not expect_status (0: any), it has no valid Content-Length, or its
 * header does not end in p. *hdr_out: the header's length (0: no end seen). */
uint32_t http_response_length(const uint8_t *p, uint32_t n, uint32_t expect_status, uint32_t *hdr_out);

/* Does the request in p[0..n) ask the server to close after its answer:
 * HTTP/1.0 without "keep-alive", or "Connection: close"? */
int http_wants_close(const uint8_t *p, uint32_t n);

/* The request line's second word in p[0..n) ("GET /a HTTP/1.1": /a), to a
 * space, '?', CR or the end: its offset and length (both 0: none). */
void http_path(const uint8_t *p, uint32_t n, uint32_t *off, uint32_t *len);

#endif

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * conn_http.c - HTTP/1.1 as the connection engine reads it (conn_http.h):
 * a response's status line and length (a client), whether a request asks
 * to close and its path (a server). Bytes in, numbers out: no engine, no
 * state, so the fuzzer (tests/unit/test_http_fuzz.c) calls it as the
 * engine does. Lines are found with memchr, not a compare at every byte
 * (the per-byte scans were most of a server's cycles per request, issue 21).
 */
#include <string.h>

#include "conn_http.h"

/* p[0..n) is s (lower case) in any case: letters folded, nothing else
 * (an OR of 0x20 would take CR for '-' and 0x1a for ':') */
static int
lower_eq(const uint8_t *p, const char *s, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint8_t c = p[i];

		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c + 32);
		if (c != (uint8_t)s[i])
			return 0;
	}
	return 1;
}

static inline int
digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

int
http_status(const uint8_t *p, uint32_t n)
{
	/* "HTTP/1.x NNN " is 13 bytes, then the reason, CR LF */
	if (n < 15 || memcmp(p, "HTTP/1.", 7) != 0 || !digit(p[7]) || p[8] != ' ' || !digit(p[9]) ||
	    !digit(p[10]) || !digit(p[11]) || p[12] != ' ')
		return -1;
	for (uint32_t i = 13; i + 1 < n; i++) {
		uint8_t c = p[i];

		if (c == '\r')
			return p[i + 1] == '\n' ? (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0') : -1;
		if (c != '\t' && (c < ' ' || c == 0x7f))
			return -1;      /* a control byte in the reason */
	}
	return -1;                      /* no line end */
}

uint32_t
http_response_length(const uint8_t *p, uint32_t n, uint32_t expect_status, uint32_t *hdr_out)
{
	uint32_t hdr = 0, clen = UINT32_MAX;
	int status;

	for (const uint8_t *q = p; (q = memchr(q, '\n', n - (uint32_t)(q - p))) != NULL; q++) {
		uint32_t i = (uint32_t)(q - p);

		if (i >= 3 && p[i - 3] == '\r' && p[i - 2] == '\n' && p[i - 1] == '\r') {
			hdr = i + 1;
			break;
		}
		if (i + 1 >= n)
			break;
	}
	*hdr_out = hdr;
	if (hdr == 0 || (status = http_status(p, hdr)) < 0)
		return 0;
	if (expect_status != 0 && (uint32_t)status != expect_status)
		return 0;
	for (const uint8_t *q = p; (q = memchr(q, '\n', hdr - (uint32_t)(q - p))) != NULL; q++) {
		uint32_t i = (uint32_t)(q - p);

		if (i + 16 >= hdr)
			break;
		if (!lower_eq(p + i + 1, "content-length:", 15))
			continue;
		uint32_t j = i + 16;
		uint64_t v = 0;

		while (j < hdr && (p[j] == ' ' || p[j] == '\t'))
			j++;
		if (j >= hdr || !digit(p[j]))
			return 0;
		while (j < hdr && digit(p[j]) && v < UINT32_MAX)
			v = v * 10 + (uint64_t)(p[j++] - '0');
		while (j < hdr && (p[j] == ' ' || p[j] == '\t'))
			j++;
		if (j + 1 >= hdr || p[j] != '\r' || p[j + 1] != '\n')
			return 0;       /* "Content-Length: 12abc", "1 2": not a length */
		clen = v < UINT32_MAX - hdr ? (uint32_t)v : UINT32_MAX;
		break;
	}
	if (clen == UINT32_MAX)
		return 0;                       /* no length: not supported (no chunked, no close-delimited) */
	return hdr + clen;
}

int
http_wants_close(const uint8_t *p, uint32_t n)
{
	int v10 = 0, keep = 0, close = 0;
	const uint8_t *end = p + n, *l = memchr(p, '\n', n);

	/* the request line's version; then only the header lines that start
	 * with "Connection:" are read, a line at a time */
	if (l == NULL)
		return 0;
	v10 = l - p >= 9 && l[-1] == '\r' && memcmp(l - 9, "HTTP/1.0", 8) == 0;
	for (l++; l < end; l++) {
		const uint8_t *eol = memchr(l, '\n', (size_t)(end - l));
		uint32_t len = (uint32_t)((eol != NULL ? eol : end) - l);

		if (len >= 11 && lower_eq(l, "connection:", 11)) {
			for (uint32_t i = 11; i + 5 <= len; i++) {
				if (lower_eq(l + i, "close", 5))
					close = 1;
				else if (i + 10 <= len && lower_eq(l + i, "keep-alive", 10))
					keep = 1;
			}
		}
		if (eol == NULL)
			break;
		l = eol;
	}
	return close || (v10 && !keep);
}

void
http_path(const uint8_t *p, uint32_t n, uint32_t *off, uint32_t *len)
{
	const uint8_t *sp = memchr(p, ' ', n);
	uint32_t a, b;

	*off = *len = 0;
	if (sp == NULL)
		return;
	a = b = (uint32_t)(sp - p) + 1;
	while (b < n && p[b] != ' ' && p[b] != '?' && p[b] != '\r')
		b++;
	*off = a;
	*len = b - a;
}

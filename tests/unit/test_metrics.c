/* SPDX-License-Identifier: BSD-3-Clause
 *
 * test_metrics.c - report_text (core/report/metrics.c), the one way a label
 * value or help text reaches the Prometheus exposition (and a task's name
 * DPDK telemetry): what is not UTF-8 (stray bytes, overlong forms,
 * surrogates, beyond U+10FFFF, characters cut short) reads as U+FFFD,
 * \ " and newline are escaped, and a cut falls before a character or
 * escape, never inside. A label that is not UTF-8
 * makes Prometheus refuse the whole scrape (issue 31 item 7). The outputs
 * are checked against a decoder of this file's own, by code point
 * arithmetic, not metrics.c's table of byte ranges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report.h"

#define FFFD "\xef\xbf\xbd"

/* 1 when s (n bytes) is well-formed UTF-8: every sequence decodes to a code
 * point in the range its length is for, no surrogate, at most U+10FFFF. */
static int
valid_utf8(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < n;) {
		unsigned len = s[i] < 0x80 ? 1 : (s[i] & 0xe0) == 0xc0 ? 2 : (s[i] & 0xf0) == 0xe0 ? 3 :
			       (s[i] & 0xf8) == 0xf0 ? 4 : 0;
		static const uint32_t least[] = { 0, 0, 0x80, 0x800, 0x10000 };
		uint32_t cp;

		if (len == 0 || i + len > n)
			return 0;
		cp = len == 1 ? s[i] : s[i] & (0x7fu >> len);
		for (unsigned k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3fu);
		}
		if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

/* report_text of in (to its NUL) in mode, into a buffer of cap bytes */
static void
expect(const char *in, size_t cap, enum text_mode mode, const char *want)
{
	char out[1024];
	size_t n;

	assert_true(cap <= sizeof(out));
	memset(out, 'Z', sizeof(out));
	n = report_text(out, cap, in, SIZE_MAX, mode);
	if (strcmp(out, want) != 0)
		fail_msg("'%s' (cap %zu): got '%s', want '%s'", in, cap, out, want);
	assert_int_equal(n, strlen(want));
	assert_true(valid_utf8(out, n));
	assert_true(cap == 0 || n < cap);
}

static void
ascii_and_escapes(void **state)
{
	(void)state;
	expect("/home/u/run.lua", 64, TEXT_LABEL, "/home/u/run.lua");
	expect("a\\b\"c\nd", 64, TEXT_LABEL, "a\\\\b\\\"c\\nd");
	/* the text format's help text escapes no quote */
	expect("a\\b\"c\nd", 64, TEXT_HELP, "a\\\\b\"c\\nd");
	expect("", 64, TEXT_LABEL, "");
	expect("tab\tcr\r", 64, TEXT_LABEL, "tab\tcr\r");
}

static void
well_formed_kept(void **state)
{
	(void)state;
	/* U+00E9, U+20AC, U+1F600, U+10FFFF, U+FFFD itself, U+D7FF, U+E000 */
	expect("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf", 64, TEXT_LABEL,
	       "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");
	expect(FFFD "\xed\x9f\xbf\xee\x80\x80", 64, TEXT_LABEL, FFFD "\xed\x9f\xbf\xee\x80\x80");
}

static void
invalid_bytes(void **state)
{
	(void)state;
	expect("a\xff" "b", 64, TEXT_LABEL, "a" FFFD "b");
	expect("\xfe\xfe", 64, TEXT_LABEL, FFFD FFFD);
	expect("\x80" "x", 64, TEXT_LABEL, FFFD "x");             /* a continuation alone */
	expect("\xbf\x80", 64, TEXT_LABEL, FFFD FFFD);
	expect("\xf5\x80\x80\x80", 64, TEXT_LABEL, FFFD FFFD FFFD FFFD);
	/* latin-1 as a path might be: caf\xe9.lua */
	expect("caf\xe9.lua", 64, TEXT_LABEL, "caf" FFFD ".lua");
}

static void
overlong_forms(void **state)
{
	(void)state;
	expect("\xc0\xaf", 64, TEXT_LABEL, FFFD FFFD);             /* '/' in 2 bytes */
	expect("\xc1\xbf", 64, TEXT_LABEL, FFFD FFFD);
	expect("\xe0\x80\xaf", 64, TEXT_LABEL, FFFD FFFD FFFD);    /* in 3 */
	expect("\xe0\x9f\xbf", 64, TEXT_LABEL, FFFD FFFD FFFD);
	expect("\xf0\x80\x80\xaf", 64, TEXT_LABEL, FFFD FFFD FFFD FFFD);   /* in 4 */
	expect("\xf0\x8f\xbf\xbf", 64, TEXT_LABEL, FFFD FFFD FFFD FFFD);
	expect("\xc0\x80", 64, TEXT_LABEL, FFFD FFFD);             /* a NUL in 2 bytes */
}

static void
surrogates_and_beyond(void **state)
{
	(void)state;
	expect("\xed\xa0\x80", 64, TEXT_LABEL, FFFD FFFD FFFD);    /* U+D800 */
	expect("\xed\xbf\xbf", 64, TEXT_LABEL, FFFD FFFD FFFD);    /* U+DFFF */
	expect("\xed\xa0\xbd\xed\xb8\x80", 64, TEXT_LABEL, FFFD FFFD FFFD FFFD FFFD FFFD);   /* CESU-8 */
	expect("\xf4\x90\x80\x80", 64, TEXT_LABEL, FFFD FFFD FFFD FFFD);  /* U+110000 */
}

static void
characters_cut_short(void **state)
{
	(void)state;
	/* the longest well-formed start of a character is one U+FFFD */
	expect("\xc3", 64, TEXT_LABEL, FFFD);
	expect("\xe2\x82", 64, TEXT_LABEL, FFFD);
	expect("\xe2\x82" "A", 64, TEXT_LABEL, FFFD "A");
	expect("\xf0\x9f\x98", 64, TEXT_LABEL, FFFD);
	expect("\xf0\x9f\x98\"", 64, TEXT_LABEL, FFFD "\\\"");
	expect("\xf0\x9f" "\xc3\xa9", 64, TEXT_LABEL, FFFD "\xc3\xa9");
}

/* DPDK telemetry's strings: printable ASCII, '?' for each character
 * (well-formed or not) beyond it, nothing escaped (DPDK escapes " and \) */
static void
ascii_for_telemetry(void **state)
{
	(void)state;
	expect("tx_1-a.b \"q\" \\", 64, TEXT_ASCII, "tx_1-a.b \"q\" \\");
	expect("t\xc3\xa2" "che\xf0\x9f\x98\x80", 64, TEXT_ASCII, "t?che?");
	expect("t\xff\xc0\xaf\xe2\x82", 64, TEXT_ASCII, "t????");
	expect("a\nb\tc\x7f", 64, TEXT_ASCII, "a?b?c?");
	expect("abcdef", 4, TEXT_ASCII, "abc");
}

/* A buffer too small: the cut is before the character (or escape) that
 * does not fit, at every capacity, for characters of 1 to 4 bytes. */
static void
cut_on_a_boundary(void **state)
{
	static const struct {
		const char *ch, *out;
	} chars[] = {
		{ "x", "x" }, { "\"", "\\\"" }, { "\xc3\xa9", "\xc3\xa9" }, { "\xe2\x82\xac", "\xe2\x82\xac" },
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" }, { "\xff", FFFD },
	};

	(void)state;
	for (size_t c = 0; c < sizeof(chars) / sizeof(chars[0]); c++) {
		char in[64], full[64];
		size_t w = strlen(chars[c].out);

		/* "ab" then the character three times */
		snprintf(in, sizeof(in), "ab%s%s%s", chars[c].ch, chars[c].ch, chars[c].ch);
		snprintf(full, sizeof(full), "ab%s%s%s", chars[c].out, chars[c].out, chars[c].out);
		for (size_t cap = 1; cap <= strlen(full) + 2; cap++) {
			char want[64];
			size_t keep = cap - 1 < 2 ? cap - 1 : 2 + (cap - 1 - 2) / w * w;

			if (keep > strlen(full))
				keep = strlen(full);
			memcpy(want, full, keep);
			want[keep] = '\0';
			expect(in, cap, TEXT_LABEL, want);
		}
	}
	{
		char out[2] = "Z";

		/* no room at all: nothing written, not even a NUL */
		assert_int_equal(report_text(out, 0, "abc", SIZE_MAX, TEXT_LABEL), 0);
		assert_int_equal(out[0], 'Z');
	}
}

/* A 300-byte UTF-8 path in 256 bytes, as surge_run_info's script: cut
 * between characters (each "é" two bytes, after one ASCII byte: odd). */
static void
long_path(void **state)
{
	char in[512], out[257];
	size_t n;

	(void)state;
	in[0] = '/';
	for (size_t i = 1; i + 2 < 302; i += 2)
		memcpy(in + i, "\xc3\xa9", 2);
	in[301] = '\0';
	n = report_text(out, sizeof(out), in, SIZE_MAX, TEXT_LABEL);
	assert_int_equal(n, 255);    /* '/' and 127 of them: a 128th would need 257 */
	assert_true(valid_utf8(out, n));
	assert_memory_equal(out, in, n);
}

/* max bounds the read: a field not NUL-terminated, a character it cuts */
static void
read_bound(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(report_text(out, sizeof(out), "abcdef", 3, TEXT_LABEL), 3);
	assert_string_equal(out, "abc");
	report_text(out, sizeof(out), "a\xc3\xa9", 2, TEXT_LABEL);
	assert_string_equal(out, "a" FFFD);
	report_text(out, sizeof(out), "a\0b", 3, TEXT_LABEL);
	assert_string_equal(out, "a");
}

/* Any bytes at all: always well-formed, never past cap, no lone escape. */
static void
random_bytes(void **state)
{
	(void)state;
	srand(31);
	for (int t = 0; t < 20000; t++) {
		unsigned char in[40];
		char out[48];
		size_t len = (size_t)(rand() % 40), cap = (size_t)(1 + rand() % 48), n;

		for (size_t i = 0; i < len; i++) {
			/* bias to the bytes that matter */
			static const unsigned char pick[] = { 0x80, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed, 0xef,
							      0xf0, 0xf4, 0xf5, 0xff, '\\', '"', '\n', 'a' };
			in[i] = rand() % 2 ? pick[rand() % sizeof(pick)] : (unsigned char)(1 + rand() % 255);
		}
		in[len] = '\0';
		n = report_text(out, cap, (const char *)in, SIZE_MAX, TEXT_LABEL);
		assert_true(n < cap);
		assert_int_equal(strlen(out), n);
		assert_true(valid_utf8(out, n));
		/* every backslash begins an escape of the three; no bare " or newline */
		for (size_t i = 0; i < n; i++) {
			if (out[i] == '\\') {
				assert_true(i + 1 < n && strchr("\\\"n", out[i + 1]) != NULL);
				i++;
			} else {
				assert_true(out[i] != '"' && out[i] != '\n');
			}
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ascii_and_escapes),
		cmocka_unit_test(well_formed_kept),
		cmocka_unit_test(invalid_bytes),
		cmocka_unit_test(overlong_forms),
		cmocka_unit_test(surrogates_and_beyond),
		cmocka_unit_test(characters_cut_short),
		cmocka_unit_test(ascii_for_telemetry),
		cmocka_unit_test(cut_on_a_boundary),
		cmocka_unit_test(long_path),
		cmocka_unit_test(read_bound),
		cmocka_unit_test(random_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

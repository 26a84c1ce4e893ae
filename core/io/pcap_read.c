/* SPDX-License-Identifier: BSD-3-Clause
 *
 * pcap_read.c - a reader that holds a capture in memory and replays it into
 * bursts.
 *
 * libpcap reads the formats (pcap in micro- or nanoseconds, and pcapng);
 * surge only keeps records and timestamps. The reader loads the whole file
 * when it is opened, so a damaged file fails then, naming the file and the
 * record, and replay touches no disk. A fill copies the next records into
 * fresh mbufs of the burst's pool and gives each packet the original time to
 * the record after it in gap_ns[] (divided by the replay speed), which is
 * what the SURGE_PACE_GAPS pacer waits after that packet.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "io.h"
#include "pcap_file.h"

/* the largest record any pool's mbuf holds (data room 65535 less headroom):
 * a longer one is refused when the file is read, naming the record */
#define FRAME_MAX (65535 - RTE_PKTMBUF_HEADROOM)
#define TS_SEC_MAX 9223372035LL      /* INT64_MAX ns, in seconds, less one */

static int
grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t c = *cap;
	void *q;

	if (need <= c)
		return 0;
	while (c < need)
		c = c ? c * 2 : 1024;
	if ((q = realloc(*p, c * elem)) == NULL)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int
load(struct pcap_file *f, pcap_t *p, size_t data_cap)
{
	struct pcap_pkthdr *h;
	const u_char *bytes;
	size_t rec_cap = 0, dcap = 0;
	int rc;

	if (grow((void **)&f->data, &dcap, data_cap, 1) != 0)
		return rt_error(-ENOMEM, "pcap file '%s': no memory for %zu bytes of records",
				f->path, data_cap);
	for (;;) {
		uint64_t rec = f->n + 1;     /* 1-based, as tshark numbers frames */

		rc = pcap_next_ex(p, &h, &bytes);
		if (rc == PCAP_ERROR_BREAK)
			return 0;            /* end of file */
		if (rc != 1)
			return rt_error(-EINVAL, "pcap file '%s': record %" PRIu64 ": %s (truncated or "
					"damaged file)", f->path, rec, pcap_geterr(p));
		if (h->caplen > FRAME_MAX)
			return rt_error(-EMSGSIZE, "pcap file '%s': record %" PRIu64 " holds %u bytes, "
					"more than the %d bytes an mbuf of any pool holds", f->path, rec, h->caplen,
					FRAME_MAX);
		if (h->caplen < RTE_ETHER_HDR_LEN)
			return rt_error(-EINVAL, "pcap file '%s': record %" PRIu64 " holds %u bytes, "
					"less than an Ethernet header", f->path, rec, h->caplen);
		/* ns since 1970 in 64 bits reach the year 2262; a damaged
		 * timestamp beyond (or before 1970) would overflow the gaps */
		if (h->ts.tv_sec < 0 || h->ts.tv_sec >= TS_SEC_MAX || h->ts.tv_usec < 0 ||
		    h->ts.tv_usec >= 1000000000)
			return rt_error(-EINVAL, "pcap file '%s': record %" PRIu64 " has the timestamp %lld.%09ld "
					"s, outside 1970..2262 (damaged file?)", f->path, rec,
					(long long)h->ts.tv_sec, (long)h->ts.tv_usec);
		if (grow((void **)&f->data, &dcap, f->bytes + h->caplen, 1) != 0)
			goto nomem;
		if (f->n == rec_cap) {
			size_t c = rec_cap, c2 = rec_cap, c3 = rec_cap;

			if (grow((void **)&f->off, &c, f->n + 1, sizeof(*f->off)) != 0 ||
			    grow((void **)&f->len, &c2, f->n + 1, sizeof(*f->len)) != 0 ||
			    grow((void **)&f->ts, &c3, f->n + 1, sizeof(*f->ts)) != 0)
				goto nomem;
			rec_cap = c;
		}
		memcpy(f->data + f->bytes, bytes, h->caplen);
		f->off[f->n] = f->bytes;
		f->len[f->n] = (uint16_t)h->caplen;
		/* opened with nanosecond precision: tv_usec holds nanoseconds */
		f->ts[f->n] = (int64_t)h->ts.tv_sec * 1000000000 + h->ts.tv_usec;
		f->bytes += h->caplen;
		if (h->caplen > f->max_len)
			f->max_len = (uint16_t)h->caplen;
		f->n++;
	}
nomem:
	return rt_error(-ENOMEM, "pcap file '%s': out of memory at record %" PRIu64, f->path, f->n + 1);
}

int
surge_pcap_open_read(const char *path)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct pcap_file *f;
	struct stat st;
	pcap_t *p;
	int rc;

	if (path == NULL || *path == '\0')
		return rt_error(-EINVAL, "pcap reader: empty file name");
	if (stat(path, &st) != 0)
		return rt_error(-errno, "pcap file '%s': %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return rt_error(-EISDIR, "pcap file '%s' is a directory", path);
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	if (p == NULL)
		return rt_error(-EINVAL, "pcap file '%s': %s", path, err);
	if (pcap_datalink(p) != DLT_EN10MB) {
		int dlt = pcap_datalink(p);
		const char *name = pcap_datalink_val_to_name(dlt);

		pcap_close(p);
		return rt_error(-ENOTSUP, "pcap file '%s': link type %s (%d); surge replays Ethernet "
				"(EN10MB) captures only", path, name != NULL ? name : "?", dlt);
	}
	if ((f = pcap_file_new(path, 0)) == NULL) {
		pcap_close(p);
		return -ENOMEM;
	}
	f->snaplen = (uint32_t)pcap_snapshot(p);
	f->nano = 1;
	f->loops = 1;
	f->speed = 1;
	rc = load(f, p, S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 1 << 20);
	pcap_close(p);
	if (rc != 0) {
		pcap_file_release(f);
		free(f);
		return rc;
	}
	f->duration_ns = f->n > 1 && f->ts[f->n - 1] > f->ts[0] ? (uint64_t)(f->ts[f->n - 1] - f->ts[0]) : 0;
	return pcap_reg_add(f);
}

int
surge_pcap_replay(int id, uint32_t loops, double speed)
{
	int rc = 0;
	enum pcap_access how = PCAP_BORROW;
	struct pcap_file *f = pcap_get(id, 0, &how, &rc);

	if (f == NULL)
		return rc;
	if (!(speed >= 0) || !isfinite(speed))
		rc = rt_error(-EINVAL, "pcap file '%s': replay speed %g must be 0 (no gaps) or "
			      "positive", f->path, speed);
	else {
		f->loops = loops;
		f->speed = speed;
	}
	pcap_put(f, how);
	return rc;
}

int
surge_pcap_rewind(int id)
{
	int rc = 0;
	enum pcap_access how = PCAP_BORROW;
	struct pcap_file *f = pcap_get(id, 0, &how, &rc);

	if (f == NULL)
		return rc;
	f->next = 0;
	f->pass = 0;
	pcap_put(f, how);
	return 0;
}

/* Time after record i until the one after it, divided by speed. The last
 * record of the file has none (a following pass starts right away). */
static inline uint32_t
gap_after(const struct pcap_file *f, uint64_t i)
{
	double g;

	if (f->speed <= 0 || i + 1 >= f->n || f->ts[i + 1] <= f->ts[i])
		return 0;
	g = (double)(f->ts[i + 1] - f->ts[i]) / f->speed;
	return g >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)(g + 0.5);
}

int
surge_pcap_fill(int id, struct surge_burst *b, uint32_t max)
{
	int rc = burst_check(b);
	enum pcap_access how = PCAP_USE;
	struct pcap_file *f;
	uint64_t cur, want;
	uint32_t pass, got;

	if (unlikely(rc != 0))
		return rc;
	f = pcap_get(id, 0, &how, &rc);
	if (unlikely(f == NULL))
		return rc;
	if (unlikely(b->pool < 0 || pool_get(b->pool) == NULL))
		return rt_error(-EINVAL, "pcap file '%s': the burst has no pool to fill from", f->path);
	want = max == 0 || max > b->cap ? b->cap : max;
	if (f->loops != 0) {
		uint64_t left = f->pass < f->loops ?
			(uint64_t)(f->loops - 1 - f->pass) * f->n + (f->n - f->next) : 0;

		want = RTE_MIN(want, left);
	} else if (f->n == 0) {
		want = 0;
	}
	if (want == 0) {
		surge_burst_free(b);
		return 0;                    /* the last pass is done */
	}
	got = surge_burst_alloc(b, (uint32_t)want);
	if (unlikely(got == 0))
		return rt_error(-EAGAIN, "pcap file '%s': pool %d has no free mbuf", f->path, b->pool);
	cur = f->next;
	pass = f->pass;
	for (uint32_t i = 0; i < got; i++) {
		struct rte_mbuf *m = b->mbuf[i];
		uint16_t len;

		if (cur >= f->n) {
			cur = 0;
			pass++;
		}
		len = f->len[cur];
		if (unlikely(len > m->buf_len - m->data_off)) {
			uint32_t room = m->buf_len - m->data_off;

			surge_burst_free(b);
			return rt_error(-EMSGSIZE, "pcap file '%s': record %" PRIu64 " holds %u bytes, more "
					"than pool %d's %u-byte mbufs (make the pool with data_room = %u "
					"or more)", f->path, cur + 1, len, b->pool, room, f->max_len);
		}
		rte_memcpy(b->data[i], f->data + f->off[cur], len);
		b->len[i] = len;
		b->gap_ns[i] = gap_after(f, cur);
		cur++;
	}
	f->next = cur;
	f->pass = pass;
	b->timed = f->speed > 0;      /* whatever sends it paces by these gaps */
	return (int)got;
}


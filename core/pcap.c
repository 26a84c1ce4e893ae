/* SPDX-License-Identifier: BSD-3-Clause
 *
 * pcap.c - pcap files: a writer the hot loop feeds with whole bursts, and a
 * reader that holds a capture in memory and replays it into bursts.
 *
 * libpcap does the file formats (pcap in micro- or nanoseconds, and pcapng
 * when reading); surge only keeps records and timestamps. The reader loads
 * the whole file when it is opened, so a damaged file fails then, naming the
 * file and the record, and replay touches no disk. A fill copies the next
 * records into fresh mbufs of the burst's pool and gives each packet the
 * original time to the record after it in gap_ns[] (divided by the replay
 * speed), which is what the SURGE_PACE_GAPS pacer waits after that packet.
 *
 * Readers and writers are registered in the runtime by id, like pools, so a
 * handle crosses between lcores as a number; one lcore at a time may use
 * one. Whatever a script leaves open is closed (writers flushed) by main()
 * after the last task ended.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <pcap/pcap.h>

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "runtime.h"

#define SNAPLEN_DEFAULT 65535
#define SNAPLEN_MAX 262144           /* libpcap's own limit */
#define FRAME_MAX 65535              /* burst.len[] is 16 bit */

struct pcap_file {
	char *path;
	int writer;
	int closed;
	/* writer */
	pcap_t *dead;
	pcap_dumper_t *dump;
	uint32_t snaplen;
	int nano;
	uint64_t base_tsc;            /* TSC and wall clock at open: tsc -> time */
	int64_t base_ns;
	double ns_per_cyc;            /* 0 without a TSC frequency (no EAL): use the clock */
	uint64_t written, wbytes;
	/* reader */
	uint8_t *data;                /* every record's bytes, back to back */
	uint64_t *off;
	uint16_t *len;
	int64_t *ts;                  /* ns since the epoch */
	uint64_t n, bytes;
	uint16_t max_len;
	int linktype;
	uint64_t next;                /* record the next fill starts at */
	uint32_t pass, loops;
	double speed;
};

static int64_t
wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void
file_free(struct pcap_file *f)
{
	if (f == NULL)
		return;
	if (f->dump != NULL)
		pcap_dump_close(f->dump);
	if (f->dead != NULL)
		pcap_close(f->dead);
	free(f->data);
	free(f->off);
	free(f->len);
	free(f->ts);
	free(f->path);
	free(f);
}

/* Gives f an id; on failure frees f. */
static int
reg_add(struct pcap_file *f)
{
	struct runtime *r = rt();
	int id;

	if (r == NULL) {
		file_free(f);
		return -ENODEV;
	}
	rte_spinlock_lock(&r->pool_lock);
	id = r->npcap;
	if (id < SURGE_PCAP_MAX) {
		r->pcap[id] = f;
		__atomic_store_n(&r->npcap, id + 1, __ATOMIC_RELEASE);
	}
	rte_spinlock_unlock(&r->pool_lock);
	if (id >= SURGE_PCAP_MAX) {
		rt_error(-ENOSPC, "pcap file '%s': too many pcap files in one run (at most %d)",
			 f->path, SURGE_PCAP_MAX);
		file_free(f);
		return -ENOSPC;
	}
	return id;
}

/* want: 1 writer, 0 reader, -1 either. */
static struct pcap_file *
reg_get(int id, int want, int *rc)
{
	struct runtime *r = rt();
	struct pcap_file *f;

	if (r == NULL || id < 0 || id >= __atomic_load_n(&r->npcap, __ATOMIC_ACQUIRE) ||
	    r->pcap[id] == NULL) {
		*rc = rt_error(-EINVAL, "no pcap file %d", id);
		return NULL;
	}
	f = r->pcap[id];
	if (f->closed) {
		*rc = rt_error(-EBADF, "pcap file '%s' (%d) is closed", f->path, id);
		return NULL;
	}
	if (want >= 0 && f->writer != want) {
		*rc = rt_error(-EINVAL, "pcap file '%s' (%d) is open for %s, not %s", f->path, id,
			       f->writer ? "writing" : "reading", want ? "writing" : "reading");
		return NULL;
	}
	return f;
}

static struct pcap_file *
file_new(const char *path, int writer)
{
	struct pcap_file *f = calloc(1, sizeof(*f));

	if (f == NULL || (f->path = strdup(path)) == NULL) {
		free(f);
		rt_error(-ENOMEM, "pcap file '%s': out of memory", path);
		return NULL;
	}
	f->writer = writer;
	return f;
}

/* --- writing ------------------------------------------------------------ */

int
surge_pcap_open_write(const char *path, uint32_t snaplen, int nano)
{
	struct pcap_file *f;
	uint64_t hz;

	if (path == NULL || *path == '\0')
		return rt_error(-EINVAL, "pcap writer: empty file name");
	if (snaplen == 0)
		snaplen = SNAPLEN_DEFAULT;
	if (snaplen > SNAPLEN_MAX)
		return rt_error(-EINVAL, "pcap file '%s': snaplen %u above %d", path, snaplen, SNAPLEN_MAX);
	if ((f = file_new(path, 1)) == NULL)
		return -ENOMEM;
	f->snaplen = snaplen;
	f->nano = nano != 0;
	f->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
						       f->nano ? PCAP_TSTAMP_PRECISION_NANO
							       : PCAP_TSTAMP_PRECISION_MICRO);
	if (f->dead == NULL) {
		file_free(f);
		return rt_error(-ENOMEM, "pcap file '%s': out of memory", path);
	}
	errno = 0;
	f->dump = pcap_dump_open(f->dead, path);
	if (f->dump == NULL) {
		int e = errno != 0 ? errno : EIO;

		rt_error(-e, "pcap file '%s': cannot write: %s", path, pcap_geterr(f->dead));
		file_free(f);
		return -e;
	}
	hz = rt_hz();
	f->base_tsc = rte_rdtsc();
	f->base_ns = wall_ns();
	f->ns_per_cyc = hz > 0 ? 1e9 / (double)hz : 0;
	return reg_add(f);
}

int
surge_pcap_write(int id, const struct surge_burst *b)
{
	struct pcap_pkthdr h;
	int rc = 0;
	struct pcap_file *f = reg_get(id, 1, &rc);
	int64_t ns;
	uint64_t bytes = 0;

	if (unlikely(f == NULL))
		return rc;
	if (b->n == 0)
		return 0;
	if (f->ns_per_cyc == 0)
		ns = wall_ns();
	else
		ns = f->base_ns + llround((double)(int64_t)((b->tsc != 0 ? b->tsc : rte_rdtsc()) -
							   f->base_tsc) * f->ns_per_cyc);
	h.ts.tv_sec = (time_t)(ns / 1000000000);
	h.ts.tv_usec = (suseconds_t)(ns % 1000000000);
	if (!f->nano)
		h.ts.tv_usec /= 1000;
	for (uint32_t i = 0; i < b->n && i < SURGE_BURST_MAX; i++) {
		const struct rte_mbuf *m = b->mbuf[i];

		/* len[i] is the script's to set: never read past the mbuf (bursts
		 * a caller filled by hand may have no mbuf behind data[i]) */
		h.len = m != NULL ? RTE_MIN((uint32_t)b->len[i], (uint32_t)(m->buf_len - m->data_off))
				  : b->len[i];
		h.caplen = RTE_MIN(h.len, f->snaplen);
		pcap_dump((u_char *)f->dump, &h, b->data[i]);
		bytes += h.caplen;
	}
	if (unlikely(ferror(pcap_dump_file(f->dump))))
		return rt_error(-EIO, "pcap file '%s': write failed (disk full?)", f->path);
	f->written += b->n;
	f->wbytes += bytes;
	return (int)b->n;
}

/* --- reading ------------------------------------------------------------ */

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
					"above surge's %d-byte frames", f->path, rec, h->caplen, FRAME_MAX);
		if (h->caplen < RTE_ETHER_HDR_LEN)
			return rt_error(-EINVAL, "pcap file '%s': record %" PRIu64 " holds %u bytes, "
					"less than an Ethernet header", f->path, rec, h->caplen);
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
	if ((f = file_new(path, 0)) == NULL) {
		pcap_close(p);
		return -ENOMEM;
	}
	f->linktype = DLT_EN10MB;
	f->snaplen = (uint32_t)pcap_snapshot(p);
	f->nano = 1;
	f->loops = 1;
	f->speed = 1;
	rc = load(f, p, S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size : 1 << 20);
	pcap_close(p);
	if (rc != 0) {
		file_free(f);
		return rc;
	}
	return reg_add(f);
}

int
surge_pcap_replay(int id, uint32_t loops, double speed)
{
	int rc = 0;
	struct pcap_file *f = reg_get(id, 0, &rc);

	if (f == NULL)
		return rc;
	if (!(speed >= 0) || !isfinite(speed))
		return rt_error(-EINVAL, "pcap file '%s': replay speed %g must be 0 (no gaps) or "
				"positive", f->path, speed);
	f->loops = loops;
	f->speed = speed;
	return 0;
}

int
surge_pcap_rewind(int id)
{
	int rc = 0;
	struct pcap_file *f = reg_get(id, 0, &rc);

	if (f == NULL)
		return rc;
	f->next = 0;
	f->pass = 0;
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
	int rc = 0;
	struct pcap_file *f = reg_get(id, 0, &rc);
	uint64_t cur, want;
	uint32_t pass, got;

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

/* --- both --------------------------------------------------------------- */

int
surge_pcap_info(int id, struct surge_pcap_info *out)
{
	int rc = 0;
	struct pcap_file *f = reg_get(id, -1, &rc);

	if (f == NULL)
		return rc;
	memset(out, 0, sizeof(*out));
	out->writer = (uint8_t)f->writer;
	out->snaplen = f->snaplen;
	out->nano = (uint8_t)f->nano;
	out->linktype = DLT_EN10MB;
	if (f->writer) {
		out->records = f->written;
		out->bytes = f->wbytes;
		return 0;
	}
	out->records = f->n;
	out->bytes = f->bytes;
	out->next = f->next;
	out->duration_ns = f->n > 1 && f->ts[f->n - 1] > f->ts[0] ? (uint64_t)(f->ts[f->n - 1] - f->ts[0]) : 0;
	out->speed = f->speed;
	out->loops = f->loops;
	out->pass = f->pass;
	out->max_len = f->max_len;
	return 0;
}

/* Closes f and keeps its slot (ids are not reused). Returns what it held or
 * wrote, or -EIO when the last flush failed. */
static int64_t
file_close(struct pcap_file *f)
{
	int64_t count = f->writer ? (int64_t)f->written : (int64_t)f->n;
	int bad = 0;

	if (f->writer) {
		bad = pcap_dump_flush(f->dump) != 0 || ferror(pcap_dump_file(f->dump));
		pcap_dump_close(f->dump);
		pcap_close(f->dead);
		f->dump = NULL;
		f->dead = NULL;
	}
	free(f->data);
	free(f->off);
	free(f->len);
	free(f->ts);
	f->data = NULL;
	f->off = NULL;
	f->len = NULL;
	f->ts = NULL;
	f->closed = 1;
	if (bad)
		return rt_error(-EIO, "pcap file '%s': writing the last packets failed (disk full?)", f->path);
	return count;
}

int64_t
surge_pcap_close(int id)
{
	int rc = 0;
	struct pcap_file *f = reg_get(id, -1, &rc);

	if (f == NULL)
		return rc;
	return file_close(f);
}

int
pcap_close_all(void)
{
	struct runtime *r = rt();
	int failed = 0;

	if (r == NULL)
		return 0;
	for (int i = 0; i < r->npcap; i++) {
		struct pcap_file *f = r->pcap[i];

		if (f == NULL)
			continue;
		if (!f->closed && f->writer) {
			int64_t n = file_close(f);

			if (n < 0) {
				fprintf(stderr, "surge: error: %s\n", surge_last_error());
				failed++;
			} else {
				rt_info("pcap file '%s': %" PRId64 " packets written (closed at the end of the run)",
					f->path, n);
			}
		}
		file_free(f);
		r->pcap[i] = NULL;
	}
	r->npcap = 0;
	return failed;
}

/* SPDX-License-Identifier: BSD-3-Clause
 *
 * pcap_write.c - a pcap writer the hot loop feeds with whole bursts.
 *
 * libpcap writes the format (micro- or nanosecond timestamps). A writer holds
 * an exclusive flock on its file for as long as it is open, so a second
 * writer of the same file - in this run, through a net_pcap tx_pcap= device
 * or in another surge process - is refused instead of clobbering it.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/file.h>
#include <unistd.h>
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

#include "io.h"
#include "pcap_file.h"

#define SNAPLEN_DEFAULT 65535
#define SNAPLEN_MAX 262144           /* libpcap's own limit */

static int64_t
wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Takes an exclusive flock on the file before anything truncates it. The
 * lock is per open file, so it also stops a second writer of this process
 * (and surge takes the same lock for --vdev net_pcap tx_pcap= files). */
int
pcap_lock_path(const char *path, int *fd_out)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	struct stat st;

	if (fd < 0)
		return rt_error(-errno, "pcap file '%s': cannot write: %s", path, strerror(errno));
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);           /* /dev/null, a FIFO: nothing to clobber */
		*fd_out = -1;
		return 0;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		close(fd);
		if (e == EWOULDBLOCK)
			return rt_error(-EBUSY, "pcap file '%s' is being written by another writer (in this "
					"run or another surge process): refusing to clobber it", path);
		return rt_error(-e, "pcap file '%s': cannot lock: %s", path, strerror(e));
	}
	*fd_out = fd;
	return 0;
}

static int
lock_for_writing(struct pcap_file *f)
{
	return pcap_lock_path(f->path, &f->lock_fd);
}

int
surge_pcap_open_write(const char *path, uint32_t snaplen, int nano)
{
	struct pcap_file *f;
	uint64_t hz;
	int rc;

	if (path == NULL || *path == '\0')
		return rt_error(-EINVAL, "pcap writer: empty file name");
	if (snaplen == 0)
		snaplen = SNAPLEN_DEFAULT;
	if (snaplen > SNAPLEN_MAX)
		return rt_error(-EINVAL, "pcap file '%s': snaplen %u above %d", path, snaplen, SNAPLEN_MAX);
	if ((f = pcap_file_new(path, 1)) == NULL)
		return -ENOMEM;
	if ((rc = lock_for_writing(f)) != 0) {
		pcap_file_release(f);
		free(f);
		return rc;
	}
	f->snaplen = snaplen;
	f->nano = nano != 0;
	f->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)snaplen,
						       f->nano ? PCAP_TSTAMP_PRECISION_NANO
							       : PCAP_TSTAMP_PRECISION_MICRO);
	if (f->dead == NULL) {
		pcap_file_release(f);
		free(f);
		return rt_error(-ENOMEM, "pcap file '%s': out of memory", path);
	}
	errno = 0;
	f->dump = pcap_dump_open(f->dead, path);
	if (f->dump == NULL) {
		int e = errno != 0 ? errno : EIO;

		rt_error(-e, "pcap file '%s': cannot write: %s", path, pcap_geterr(f->dead));
		pcap_file_release(f);
		free(f);
		return -e;
	}
	hz = rt_hz();
	f->base_tsc = rte_rdtsc();
	f->base_ns = wall_ns();
	f->ns_per_cyc = hz > 0 ? 1e9 / (double)hz : 0;
	return pcap_reg_add(f);
}

int
surge_pcap_write(int id, const struct surge_burst *b)
{
	struct pcap_pkthdr h;
	int rc = burst_check(b);
	enum pcap_access how = PCAP_USE;
	struct pcap_file *f;
	int64_t ns;
	uint64_t bytes = 0;

	if (unlikely(rc != 0))
		return rc;
	f = pcap_get(id, 1, &how, &rc);
	if (unlikely(f == NULL))
		return rc;
	if (b->n == 0)
		return 0;
	/* a frame a send would refuse is refused here too, before any record
	 * is written: never past the mbuf, never shorter than a header */
	for (uint32_t i = 0; i < b->n; i++)
		if ((rc = burst_frame_len_ok(b, i)) != 0)
			return rc;
	if (f->ns_per_cyc == 0)
		ns = wall_ns();
	else
		ns = f->base_ns + llround((double)(int64_t)((b->tsc != 0 ? b->tsc : rte_rdtsc()) -
							   f->base_tsc) * f->ns_per_cyc);
	h.ts.tv_sec = (time_t)(ns / 1000000000);
	h.ts.tv_usec = (suseconds_t)(ns % 1000000000);
	if (!f->nano)
		h.ts.tv_usec /= 1000;
	for (uint32_t i = 0; i < b->n; i++) {
		h.len = b->len[i];
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


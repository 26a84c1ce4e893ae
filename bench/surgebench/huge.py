"""surgebench.huge - hugepages for the benches: removing what the peers
leave on the hugepage mount, and the pre-flight check that the hugepages a
bench measures with are there (issue 31 item 18).

A DPDK process keeps its hugepage files (PREFIXmap_N on the hugetlbfs
mount) after it ends, unless it ran --in-memory (surge) or --huge-unlink
(scripts/bench's testpmd); only a later process of the same --file-prefix
reclaims them. dperf's prefix holds its PID, so each dperf run leaves its
socket_mem (1 GB) that nobody reclaims, and every later bench finds that
much less. DPDK holds a shared flock(2) on every file it maps and, at
start-up, removes the files of its prefix that no process holds: the same
rule here, for the peers' prefixes, so a file a live process uses stays.
The rules: a bench refuses (one line, exit 1) when the hugepages it
measures with cannot be had, and puts vm.nr_hugepages back as it found it.
"""
from __future__ import annotations

import fcntl
import glob
import os
from typing import List, Optional

NR = "/proc/sys/vm/nr_hugepages"


def mount() -> str:
    """The first hugetlbfs mount ("" when none)."""
    with open("/proc/mounts") as f:
        for line in f:
            p = line.split()
            if len(p) > 2 and p[2] == "hugetlbfs":
                return p[1]
    return ""


def _meminfo(key: str) -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def page_kb() -> int:
    return _meminfo("Hugepagesize")


def free_pages() -> int:
    return _meminfo("HugePages_Free")


def free_mb() -> int:
    return _meminfo("HugePages_Free") * page_kb() // 1024


def _unused(path: str) -> bool:
    """No process holds the file: an exclusive lock at once (DPDK's own test)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _mb(path: str) -> int:
    try:
        return os.stat(path).st_blocks * 512 // 1024 // 1024
    except OSError:
        return 0


def sweep(*globs: str) -> List[str]:
    """Removes the files on the mount whose names match a glob and that no
    process holds; "NAME N MB" for each file removed. A file that could not
    go is named by preflight's refusal."""
    m = mount()
    out: List[str] = []
    if not m:
        return out
    for g in globs:
        for f in sorted(glob.glob(os.path.join(m, g))):
            if not os.path.isfile(f) or not _unused(f):
                continue
            mb = _mb(f)
            try:
                os.remove(f)
            except OSError:
                continue
            out.append("%s %d MB" % (os.path.basename(f), mb))
    return out


def listing() -> str:
    """The files on the mount, "NAME N MB (in use|unused)", ", "-separated."""
    m = mount()
    if not m:
        return "no hugetlbfs mounted"
    items = []
    for f in sorted(glob.glob(os.path.join(m, "*"))):
        if os.path.isfile(f):
            items.append("%s %d MB (%s)" % (os.path.basename(f), _mb(f), "unused" if _unused(f) else "in use"))
    return ", ".join(items) or "no files"


class Pages:
    """The pages a bench added to vm.nr_hugepages, taken back by restore()."""

    def __init__(self) -> None:
        self.added = 0

    def preflight(self, who: str, need: int, max_add: int) -> Optional[str]:
        """need MB of hugepages free on a mounted hugetlbfs, raising
        vm.nr_hugepages by what is missing (at most max_add pages). None when
        they are there; otherwise the one line of the refusal,
        "WHO: refusing to measure: ..."."""
        if not mount():
            return "%s: refusing to measure: no hugetlbfs mounted (mount -t hugetlbfs nodev /dev/hugepages)" % who
        free, pkb = free_mb(), page_kb() or 2048
        if free < need:
            short = ((need - free) * 1024 + pkb - 1) // pkb
            if short <= max_add and os.access(NR, os.W_OK):
                cur = int(open(NR).read())
                try:
                    with open(NR, "w") as f:
                        f.write("%d\n" % (cur + short))
                except OSError:
                    pass
                # the kernel may give fewer than asked (memory too fragmented)
                self.added += int(open(NR).read()) - cur
                free = free_mb()
        if free < need:
            return ("%s: refusing to measure: %d MB of hugepages free, %d MB needed (figures without them are"
                    " not comparable); on %s: %s" % (who, free, need, mount(), listing()))
        return None

    def restore(self) -> None:
        """Takes back the pages preflight added, from the value now (others
        may have changed it meanwhile: the machine is shared). Call it after
        the peers' files are removed: pages a file holds cannot go."""
        if self.added <= 0:
            return
        try:
            now = int(open(NR).read())
            with open(NR, "w") as f:
                f.write("%d\n" % max(0, now - self.added))
        except OSError:
            pass
        self.added = 0

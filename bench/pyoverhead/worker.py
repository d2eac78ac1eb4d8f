# A python3 worker for bench/pyoverhead/run.sh: hashes 4 KiB blocks for the
# given seconds, then prints W, its work units per second, its CPU seconds,
# its wall seconds and the CPU seconds its grandparent (the profiler that
# started the shell that started it) used meanwhile, all that a profiler can
# take from it (what it does before and after takes nothing).
import hashlib
import os
import resource
import sys
import time

def grandparent_cpu():
    """CPU seconds of the grandparent's threads so far (schedstat), or 0."""
    try:
        with open("/proc/%d/stat" % os.getppid()) as f:
            gp = int(f.read().rsplit(")", 1)[1].split()[1])
        total = 0
        for tid in os.listdir("/proc/%d/task" % gp):
            try:
                with open("/proc/%d/task/%s/schedstat" % (gp, tid)) as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass  # a thread that ended meanwhile
        return total / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


dur = float(sys.argv[1])
gp0 = grandparent_cpu()
data = os.urandom(4096)
t0 = time.time()
n = 0
while time.time() - t0 < dur:
    for _ in range(50):
        hashlib.sha256(data).digest()
        hashlib.md5(data).digest()
    n += 1
wall = time.time() - t0
gp1 = grandparent_cpu()
ru = resource.getrusage(resource.RUSAGE_SELF)
# One write of the whole line: the two workers share their standard
# output, and print's separate writes came out interleaved.
os.write(1, ("W %s %s %s %s\n" % (n / wall, ru.ru_utime + ru.ru_stime, wall, gp1 - gp0)).encode())

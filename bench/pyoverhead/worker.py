# A python3 worker for bench/pyoverhead/run.sh: hashes 4 KiB blocks for the
# given seconds, then prints W, its work units per second, its CPU seconds
# and its wall seconds.
import hashlib
import os
import resource
import sys
import time

dur = float(sys.argv[1])
data = os.urandom(4096)
t0 = time.time()
n = 0
while time.time() - t0 < dur:
    for _ in range(50):
        hashlib.sha256(data).digest()
        hashlib.md5(data).digest()
    n += 1
wall = time.time() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
# One write of the whole line: the two workers share their standard
# output, and print's separate writes came out interleaved.
os.write(1, ("W %s %s %s\n" % (n / wall, ru.ru_utime + ru.ru_stime, wall)).encode())

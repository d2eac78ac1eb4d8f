"""Shares in folded profiles (issue 28): for each, the samples ending in a
lone truncated frame ([truncated];f), the [lost] share, and, given a base
profile first (--base), the largest gain of a stack of the program's over it.
usage: python3 bench/lost/shares.py [--base BASE.folded] PROFILE.folded..."""
import collections
import sys


def load(path):
    c = collections.Counter()
    for line in open(path):
        line = line.rstrip("\n")
        if line:
            stack, n = line.rsplit(" ", 1)
            c[stack] += int(n)
    return c, sum(c.values())


args = sys.argv[1:]
base = None
if args[:1] == ["--base"]:
    base, args = load(args[1]), args[2:]
for path in args:
    c, total = load(path)
    lone = sum(n for s, n in c.items() if s.startswith("[truncated];") and s.count(";") == 1)
    lost = sum(n for s, n in c.items() if s.split(";")[-1].startswith("[lost"))
    line = f"{path}: {total} samples, {100 * lone / total:.2f}% end in a lone truncated frame, {100 * lost / total:.1f}% lost"
    if base:
        b, bt = base
        gain, stack = max((100 * (n / total - b.get(s, 0) / bt), s) for s, n in c.items() if not s.split(";")[-1].startswith("["))
        line += f", largest gain of a stack over the base {gain:+.1f} points ({stack[-60:]})"
    print(line)

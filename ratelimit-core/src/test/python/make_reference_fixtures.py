"""Writes the reference decisions that the Java contract tests compare against.

Replays the article's two scenarios and a set of seeded random traces through the reference
implementations (seed_algorithms.py) on exact fractions, the way replay_reference.py does, and writes one
CSV per case into ../resources/reference/.  Beyond replay_reference.py it also covers a burst that differs
from the limit for the token bucket, the leaky bucket and GCRA, whose reference classes take it as an
argument.

usage: python3 make_reference_fixtures.py /path/to/seed   (the folder holding seed_algorithms.py)

Each file starts with '# limit=L window=W burst=B' and has the columns
algorithm,time,key,allowed,delay_ns: time is the exact decimal of the trace, delay_ns the leaky-bucket wait
rounded up to a whole nanosecond (0 for the other algorithms).
"""
import math
import os
import random
import sys
from fractions import Fraction as F

sys.path.insert(0, sys.argv[1])
import seed_algorithms as S  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "resources", "reference")
ALGORITHMS = ["FIXED_WINDOW", "SLIDING_LOG", "SLIDING_WINDOW_COUNTER", "TOKEN_BUCKET", "LEAKY_BUCKET", "GCRA"]


def make(name, limit, window, burst):
    S.LIMIT, S.WINDOW = limit, window  # the window algorithms read these at call time
    if name == "TOKEN_BUCKET":
        lim = S.TokenBucket(capacity=F(burst), rate=F(limit) / window)
        lim.tokens, lim.ts = F(burst), F(0)
    elif name == "LEAKY_BUCKET":
        lim = S.LeakyBucketQueue(capacity=burst, interval=window / limit)
        lim.next_free = F(0)
    elif name == "GCRA":
        lim = S.GCRA(T=window / limit, burst=burst)
        lim.tat = F(0)
    else:
        lim = {"FIXED_WINDOW": S.FixedWindow, "SLIDING_LOG": S.SlidingLog,
               "SLIDING_WINDOW_COUNTER": S.SlidingWindowCounter}[name]()
    return lim


def replay(trace, limit, window, burst):
    rows = []
    for name in ALGORITHMS:
        limiters = {}
        for text, key in trace:
            t = F(text)
            lim = limiters.get(key)
            if lim is None:
                lim = limiters[key] = make(name, limit, window, burst)
            S.LIMIT, S.WINDOW = limit, window
            ok = lim.allow(t)
            delay = (lim.done_at[-1] - t) if (ok and name == "LEAKY_BUCKET") else 0
            rows.append(f"{name},{text},{key},{'true' if ok else 'false'},{math.ceil(delay * 10**9)}")
    return rows


def write(case, trace, limit, window, burst):
    with open(os.path.join(OUT, case + ".csv"), "w") as out:
        out.write(f"# limit={limit} window={window} burst={burst}\n")
        out.write("algorithm,time,key,allowed,delay_ns\n")
        out.write("\n".join(replay(trace, limit, F(window), burst)) + "\n")


def decimal(t, places):
    return f"{t:.{places}f}".rstrip("0").rstrip(".") if "." in f"{t:.{places}f}" else f"{t:.{places}f}"


def random_trace(rng, window, keys, length):
    """Bursts, gaps, and times on or next to window boundaries, for a few keys."""
    trace, t = [], F(0)
    w = F(window)
    while len(trace) < length:
        move = rng.random()
        if move < 0.3:
            t += F(rng.randint(0, 400), 1000) * w / 4          # small step
        elif move < 0.45:
            t += w * rng.randint(1, 3) / 2                       # long gap
        elif move < 0.7:
            boundary = (t // w + 1) * w                          # on or next to the next boundary
            t = max(t, boundary + F(rng.choice([-2, -1, 0, 0, 1, 2]), 1000))
        # else: same instant again (a burst)
        for _ in range(rng.choice([1, 1, 1, 2, 3, 5, 8])):
            trace.append((decimal(float(t), 3) if t.denominator != 1 else str(t.numerator), rng.choice(keys)))
    # times must be exact decimals of at most 3 places: re-read each as written
    return [(text, key) for text, key in trace]


def main():
    os.makedirs(OUT, exist_ok=True)
    scen_a = [("9.9", "-")] * 10 + [("10.1", "-")] * 10
    scen_b = [(decimal(i * 0.5, 1), "-") for i in range(16)] + [("9.9", "-")] * 10 + [("10.1", "-")] * 10 \
        + [(decimal(15 + i * 0.5, 1), "-") for i in range(10)]
    write("scenario-a", scen_a, 10, "10", 10)
    write("scenario-b", scen_b, 10, "10", 10)
    cases = [(10, "10", 10), (3, "10", 3), (5, "1", 5), (7, "2.5", 7), (10, "10", 4), (4, "10", 12),
             (1, "0.5", 1), (100, "60", 100), (6, "0.9", 2), (9, "7", 9)]
    rng = random.Random(20261129)
    for i, (limit, window, burst) in enumerate(cases):
        trace = random_trace(rng, F(window), ["-"] if i % 3 == 0 else ["a", "b", "c"], 240)
        write(f"random-{i:02d}", trace, limit, window, burst)


if __name__ == "__main__":
    main()

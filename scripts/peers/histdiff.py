"""Growth of vLLM's latency histograms between two /metrics scrapes, as percentiles.

usage: histdiff.py BEFORE AFTER  -> one Markdown table row per histogram.
Percentiles are linearly interpolated inside the bucket they fall in (as Prometheus'
histogram_quantile does), so each is only known to lie between the bucket's bounds,
which the table prints beside it.
"""
import re
import sys

NAMES = ["vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
         "vllm:time_per_output_token_seconds", "vllm:request_time_per_output_token_seconds",
         "vllm:e2e_request_latency_seconds"]
LINE = re.compile(r'^(\S+?)_bucket\{(.*)\}\s+(\S+)$')


def buckets(path):
    out = {}
    for line in open(path):
        m = LINE.match(line.strip())
        if not m or m.group(1) not in NAMES:
            continue
        le = re.search(r'le="([^"]+)"', m.group(2)).group(1)
        key = (m.group(1), float("inf") if le == "+Inf" else float(le))
        out[key] = out.get(key, 0.0) + float(m.group(3))
    return out


def quantile(bs, q):
    total = bs[-1][1]
    rank, lo, prev = q * total, 0.0, 0.0
    for le, c in bs:
        if c >= rank and c > prev:
            if le == float("inf"):
                return lo, lo, le
            return lo + (le - lo) * (rank - prev) / (c - prev), lo, le
        lo, prev = le, c
    return float("nan"), 0, 0


def main():
    a, b = buckets(sys.argv[1]), buckets(sys.argv[2])
    print("| histogram | count | p50 (s) [bucket] | p99 (s) [bucket] |")
    print("|---|---:|---|---|")
    for name in NAMES:
        bs = sorted((le, b[(n, le)] - a.get((n, le), 0.0)) for (n, le) in b if n == name)
        if not bs or bs[-1][1] == 0:
            continue
        cells = ["%.4f [%g, %g]" % quantile(bs, q) for q in (0.5, 0.99)]
        print("| %s | %d | %s | %s |" % (name, bs[-1][1], cells[0], cells[1]))


main()

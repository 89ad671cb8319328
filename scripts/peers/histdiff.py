"""Growth of vLLM's latency histograms and token counters between two /metrics scrapes.

usage: histdiff.py BEFORE AFTER  -> a Markdown table, one row per histogram, and a line of counters.
A histogram's mean over the window is exact (growth of _sum / growth of _count). Its percentiles
are linearly interpolated inside the bucket they fall in (as Prometheus' histogram_quantile does),
so each is only known to lie between the bucket's bounds, which the table prints beside it.
"""
import re
import sys

NAMES = ["vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds",
         "vllm:request_time_per_output_token_seconds", "vllm:e2e_request_latency_seconds"]
COUNTERS = ["vllm:request_success_total", "vllm:prompt_tokens_total", "vllm:generation_tokens_total"]
SAMPLE = re.compile(r'^([^\s{]+)(?:\{(.*)\})?\s+(\S+)$')


def scrape(path):
    """Sums every sample by (name, le) over the other labels (engine, finish reason, ...)."""
    out = {}
    for line in open(path):
        m = SAMPLE.match(line.strip())
        if not m or line.startswith("#"):
            continue
        name, labels, value = m.group(1), m.group(2) or "", float(m.group(3))
        le = re.search(r'le="([^"]+)"', labels)
        key = (name, float("inf") if le and le.group(1) == "+Inf" else float(le.group(1)) if le else None)
        out[key] = out.get(key, 0.0) + value
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
    a, b = scrape(sys.argv[1]), scrape(sys.argv[2])
    grow = lambda key: b.get(key, 0.0) - a.get(key, 0.0)
    print("| histogram | count | mean (s), exact | p50 (s) [bucket] | p99 (s) [bucket] |")
    print("|---|---:|---|---|---|")
    for name in NAMES:
        bs = sorted((le, grow((n, le))) for (n, le) in b if n == name + "_bucket")
        if not bs or bs[-1][1] == 0:
            continue
        count = grow((name + "_count", None))
        mean = grow((name + "_sum", None)) / count if count else float("nan")
        cells = ["%.4f [%g, %g]" % quantile(bs, q) for q in (0.5, 0.99)]
        print("| %s | %d | %.5f | %s | %s |" % (name, bs[-1][1], mean, cells[0], cells[1]))
    print()
    print("Counters: " + ", ".join("%s +%d" % (n, grow((n, None))) for n in COUNTERS))


if __name__ == "__main__":
    main()

"""One table from scripts/peers.sh's output directory: each tool's own figures per level, beside
vLLM's exact server-side means over that tool's run (growth of each histogram's _sum / _count).

usage: summary.py OUT LEVEL...   (OUT holds planrun-cN/, vllm-bench-cN.json, guidellm-cN.json,
aiperf-cN/ and the TOOL.before / TOOL.after /metrics scrapes)
"""
import csv
import glob
import json
import sys

from histdiff import scrape

HIST = {"ttft": "vllm:time_to_first_token_seconds", "tpot": "vllm:request_time_per_output_token_seconds",
        "e2e": "vllm:e2e_request_latency_seconds"}


def server(out, tool):
    """vLLM's means over the tool's run (ms), and the requests it counted."""
    try:
        a, b = scrape(f"{out}/{tool}.before"), scrape(f"{out}/{tool}.after")
    except OSError:
        return {}
    grow = lambda n: b.get((n, None), 0.0) - a.get((n, None), 0.0)
    res = {"n": grow(HIST["ttft"] + "_count")}
    for k, n in HIST.items():
        c = grow(n + "_count")
        res[k] = 1000 * grow(n + "_sum") / c if c else None
    res["prompt"] = grow("vllm:prompt_tokens_total") / res["n"] if res["n"] else None
    return res


def planrun(out, c):
    rows = glob.glob(f"{out}/planrun-c{c}/*/results.csv")
    if not rows:
        return None
    r = next(csv.DictReader(open(rows[0])))
    f = lambda k, s=1000: float(r[k]) * s if r.get(k) else None
    return {"n": int(r["requests"]) - int(r["failed"] or 0), "ttft50": f("ttft_p50_s"), "ttft99": f("ttft_p99_s"),
            "ttftmean": f("ttft_mean_s"),
            "tpot50": f("tpot_p50_ms", 1), "tpotmean": f("tpot_mean_ms", 1), "e2emean": f("e2e_mean_s"),
            "toks": f("output_tok_s", 1), "token": "server usage (include_usage)" if r.get("token_source") == "usage" else r.get("token_source"),
            # planrun's own window: its calibration probes are outside it, unlike the scrape's.
            "srv": {"n": r.get("requests"), "ttft": f("server_ttft_mean_s"), "tpot": f("server_tpot_mean_ms", 1),
                    "e2e": f("server_e2e_mean_s"), "prompt": float(r["prompt_tokens_actual"] or 0) or None}}


def vllm_bench(out, c):
    try:
        d = json.load(open(f"{out}/vllm-bench-c{c}.json"))
    except OSError:
        return None
    return {"n": d["completed"], "ttft50": d["median_ttft_ms"], "ttft99": d["p99_ttft_ms"],
            "ttftmean": d["mean_ttft_ms"], "tpot50": d["median_tpot_ms"], "tpotmean": d["mean_tpot_ms"],
            "e2emean": d.get("mean_e2el_ms"), "toks": d["output_throughput"],
            "token": "server usage (completion_tokens)"}


def guidellm(out, c):
    try:
        d = json.load(open(f"{out}/guidellm-c{c}.json"))
    except OSError:
        return None
    for b in d["benchmarks"]:
        m = b["metrics"]
        s = lambda k: m[k]["successful"]
        return {"n": s("time_to_first_token_ms")["count"], "ttft50": s("time_to_first_token_ms")["median"],
                "ttft99": s("time_to_first_token_ms")["percentiles"]["p99"],
                "ttftmean": s("time_to_first_token_ms")["mean"],
                # GuideLLM's ITL is (latency - TTFT) / (tokens - 1): vLLM's TPOT. Its own "TPOT" includes the TTFT.
                "tpot50": s("inter_token_latency_ms")["median"], "tpotmean": s("inter_token_latency_ms")["mean"],
                "e2emean": 1000 * s("request_latency")["mean"], "toks": s("output_tokens_per_second")["mean"],
                "token": "server usage (continuous_usage_stats)"}
    return None


def aiperf(out, c):
    try:
        d = json.load(open(f"{out}/aiperf-c{c}/profile_export_aiperf.json"))
    except OSError:
        return None
    return {"n": int(d["request_count"]["avg"]), "ttft50": d["time_to_first_token"]["p50"],
            "ttft99": d["time_to_first_token"]["p99"], "ttftmean": d["time_to_first_token"]["avg"],
            "tpot50": d["inter_token_latency"]["p50"], "tpotmean": d["inter_token_latency"]["avg"],
            "e2emean": d["request_latency"]["avg"], "toks": d["output_token_throughput"]["avg"],
            "token": "server usage (--use-server-token-count)"}


def fmt(v, p=2):
    return "–" if v is None else ("%.*f" % (p, v))


def main():
    out, levels = sys.argv[1], sys.argv[2:]
    print("| tool | c | req | TTFT p50 / p99 (ms) | TTFT mean (ms) | vLLM TTFT mean | TPOT p50 / mean (ms) "
          "| vLLM TPOT mean | E2E mean (ms) | vLLM E2E mean | out tok/s | vLLM prompt tok/req | token counted |")
    print("|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---|")
    tools = [("planrun", "planrun-c{}", planrun), ("vllm bench serve", "vllm-bench-c{}", vllm_bench),
             ("GuideLLM", "guidellm-c{}", guidellm), ("AIPerf", "aiperf-c{}", aiperf)]
    for c in levels:
        for name, scrape_name, read in tools:
            r = read(out, c)
            if r is None:
                continue
            srv = r.get("srv") or server(out, scrape_name.format(c))
            print(f"| {name} | {c} | {r['n']} | {fmt(r['ttft50'])} / {fmt(r['ttft99'])} | {fmt(r['ttftmean'])} "
                  f"| {fmt(srv.get('ttft'))} | {fmt(r['tpot50'])} / {fmt(r['tpotmean'])} | {fmt(srv.get('tpot'))} "
                  f"| {fmt(r['e2emean'], 1)} | {fmt(srv.get('e2e'), 1)} | {fmt(r['toks'], 1)} "
                  f"| {fmt(srv.get('prompt'), 1)} | {r['token']} |")
    print()
    print("vLLM columns: exact means over the tool's run (growth of _sum / _count of vLLM's histograms); for")
    print("planrun, its row's own window (server_*_mean columns), which leaves its calibration probes out.")


main()

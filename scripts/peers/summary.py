"""One table from scripts/peers.sh's output directory: each tool's own figures per level, beside
vLLM's exact server-side means over that tool's run (growth of each histogram's _sum / _count).

usage: summary.py OUT LEVEL...   (OUT holds planrun-cN/, vllm-bench-cN.json, guidellm-cN.json,
aiperf-cN/ and the TOOL.before / TOOL.after /metrics scrapes)
"""
import csv
import glob
import json
import re
import sys

from histdiff import scrape

HIST = {"ttft": "vllm:time_to_first_token_seconds", "tpot": "vllm:request_time_per_output_token_seconds",
        "e2e": "vllm:e2e_request_latency_seconds"}


# vLLM's HTTP layer: the Prometheus instrumentator's time per request, from its arrival to the
# response's last byte, by handler. Its excess over the engine's E2E is the front end (parsing,
# chat template, tokenization, SSE encoding), which the engine's histograms leave out.
HTTP = re.compile(r'^http_request_duration_seconds_(sum|count)\{handler="/v1/chat/completions",method="POST"\}\s+(\S+)$')


def http_layer(path):
    got = {}
    for line in open(path):
        m = HTTP.match(line.strip())
        if m:
            got[m.group(1)] = float(m.group(2))
    return got


def server(out, tool):
    """vLLM's means over the tool's run (ms), and the requests it counted."""
    try:
        a, b = scrape(f"{out}/{tool}.before"), scrape(f"{out}/{tool}.after")
        ha, hb = http_layer(f"{out}/{tool}.before"), http_layer(f"{out}/{tool}.after")
    except OSError:
        return {}
    grow = lambda n: b.get((n, None), 0.0) - a.get((n, None), 0.0)
    res = {"n": grow(HIST["ttft"] + "_count")}
    for k, n in HIST.items():
        c = grow(n + "_count")
        res[k] = 1000 * grow(n + "_sum") / c if c else None
    c = hb.get("count", 0.0) - ha.get("count", 0.0)
    res["http"] = 1000 * (hb.get("sum", 0.0) - ha.get("sum", 0.0)) / c if c else None
    res["prompt"] = grow("vllm:prompt_tokens_total") / res["n"] if res["n"] else None
    return res


# The tolerance docs/peers.md states, judged on the server's own figures (ms):
#   TTFT: at or above vLLM's engine TTFT, by no more than the front end (HTTP − engine E2E) + 3 ms;
#   TPOT: within 5% of vLLM's mean;
#   E2E: within 5% (or 3 ms) of the HTTP layer's mean.
def verdict(r, srv):
    need = [srv.get(k) for k in ("ttft", "tpot", "e2e", "http")] + [r.get("ttftmean"), r.get("tpotmean"), r.get("e2emean")]
    if any(v is None for v in need):
        return "–"
    front = srv["http"] - srv["e2e"]
    gap = r["ttftmean"] - srv["ttft"]
    miss = []
    if not -0.5 <= gap <= front + 3:
        miss.append("TTFT %+.1f ms vs front end %.1f" % (gap, front))
    if abs(r["tpotmean"] / srv["tpot"] - 1) > 0.05:
        miss.append("TPOT %+.1f%%" % (100 * (r["tpotmean"] / srv["tpot"] - 1)))
    if abs(r["e2emean"] - srv["http"]) > max(3, 0.05 * srv["http"]):
        miss.append("E2E %+.1f%% vs HTTP" % (100 * (r["e2emean"] / srv["http"] - 1)))
    return "yes" if not miss else "no: " + "; ".join(miss)


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
                    "e2e": f("server_e2e_mean_s"), "http": f("server_http_mean_s"),
                    "prompt": float(r["prompt_tokens_actual"] or 0) or None}}


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
          "| vLLM TPOT mean | E2E mean (ms) | vLLM E2E mean | vLLM HTTP mean | out tok/s | vLLM prompt tok/req "
          "| token counted | within tolerance |")
    print("|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
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
                  f"| {fmt(r['e2emean'], 1)} | {fmt(srv.get('e2e'), 1)} | {fmt(srv.get('http'), 1)} | {fmt(r['toks'], 1)} "
                  f"| {fmt(srv.get('prompt'), 1)} | {r['token']} | {verdict(r, srv)} |")
    print()
    print("vLLM columns: exact means over the tool's run (growth of _sum / _count of vLLM's histograms); for")
    print("planrun, its row's own window (server_*_mean columns), which leaves its calibration probes out.")
    print("vLLM HTTP mean: its HTTP layer's time for the same POSTs (http_request_duration_seconds), arrival to last")
    print("byte; HTTP − E2E is the front end that vLLM's engine clocks leave out. Tolerance: TTFT mean at or above")
    print("vLLM's TTFT by at most the front end + 3 ms; TPOT mean within 5% of vLLM's; E2E mean within 5% (or 3 ms)")
    print("of the HTTP layer's.")


main()

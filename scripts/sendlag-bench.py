#!/usr/bin/env python3
"""How close paced sends come to their schedule, for two planrun binaries, interleaved.

    scripts/sendlag-bench.py BEFORE AFTER [MORE...] [-runs 8] [-mock BIN]

Serves the mock in a process of its own (AFTER selfbench -serve-mock, or -mock BIN's:
TTFT 5 ms, TPOT 1 ms, truth recorded), then for each run and each binary in turn (the
order rotated from run to run, so each goes first as often) applies three plans
against it: a bursty trace (20 bursts of 10 rows within 3 ms, 100 ms apart), a Poisson
trace at about 150 requests/s (300 rows) and a constant 1,000 requests/s open loop
(2,000 requests, at most 128 in flight). Per plan and binary it prints, as medians over
the runs (and the worst run):
  - the client's own send lag (send_lag_ns in requests.jsonl): p50, p99, max;
  - arrivals at the server against the schedule: each request's (arrival - scheduled)
    less the run's median of that, absolute: p50, p99, max. An arrival is the kernel's
    software receive stamp of the request's first bytes on the mock's socket (the mock's
    truth "arrived", with "arrived_kernel"), so the mock's own lateness in reading its
    connections is not counted against the client; "by user stamp" is the same from the
    mock handler's own clock reading ("received"), which is what it was before;
  - arrival-order inversions, by kernel stamp and by user stamp: pairs of requests due in
    one order that arrived in the other (requests due at the same instant are not
    counted);
  - the client's own time from a request's start stamp to its bytes written (wrote_ns),
    p99, and how late the mock's handler read each request after its kernel stamp, p99;
  - the client's CPU: client_cpu_pct over the measured window, and the apply process's
    user+system CPU seconds in all (plan loading and calibration included).
The load average before each run is printed, since this is a timing benchmark.
"""
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import csv
import glob
import urllib.request

PLAN = """
variable "url" {{ type = string }}
backend "openai" "mock" {{ url = "${{var.url}}/v1" }}
{dataset}
workload "w" {{
  warmup_runs   = 0
  repeat_runs   = 1
  {load}
}}
matrix "m" {{
  model    = ["mock"]
  tool     = [backend.openai.mock]
  workload = [workload.w]
  model_id = "mock"
}}
"""
TRACE_DATASET = 'dataset "trace" {\n  format = "mooncake"\n  path = "trace.jsonl"\n}'
TRACE_LOAD = "dataset = dataset.trace\n  replay {\n    speedup = 10\n  }"


def bursty_trace(rng):
    # Trace milliseconds at speedup 10: 10 distinct offsets within 30 ms (3 ms sent),
    # bursts 1,000 ms apart (100 ms sent).
    rows = []
    for k in range(20):
        for off in sorted(rng.sample(range(30), 10)):
            rows.append(k * 1000 + off)
    return rows


def poisson_trace(rng):
    t, rows = 0.0, []
    for _ in range(300):
        t += rng.expovariate(15 / 1000)  # 15/s of trace time, 150/s sent
        rows.append(int(t))
    return rows


def write_trace(path, stamps):
    with open(path, "w") as f:
        for i, ts in enumerate(stamps):
            f.write(json.dumps({"timestamp": ts, "input_length": 8, "output_length": 4, "hash_ids": [100 + i]}) + "\n")


SCENARIOS = {
    "bursty": lambda d, rng: (write_trace(os.path.join(d, "trace.jsonl"), bursty_trace(rng)), (TRACE_DATASET, TRACE_LOAD))[1],
    "poisson150": lambda d, rng: (write_trace(os.path.join(d, "trace.jsonl"), poisson_trace(rng)), (TRACE_DATASET, TRACE_LOAD))[1],
    "const1000": lambda d, rng: ("", 'prompt_tokens = 8\n  max_tokens = 4\n  concurrency = [128]\n  requests = 2000\n  request_rate = 1000\n  arrival = "constant"'),
}


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    i = q * (len(xs) - 1)
    lo = int(i)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (i - lo)


def truth(url, reset=True):
    with urllib.request.urlopen(url + "/mock/truth" + ("?reset=1" if reset else ""), timeout=60) as r:
        return json.load(r)


def run_one(binary, scenario, url, seed):
    d = tempfile.mkdtemp(prefix="sendlag-")
    dataset, load = SCENARIOS[scenario](d, random.Random(seed))
    with open(os.path.join(d, "plan.hcl"), "w") as f:
        f.write(PLAN.format(dataset=dataset, load=load))
    truth(url)  # forget what came before
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([binary, "apply", "-quiet", "-gpu=false", "-results", os.path.join(d, "results"),
                        "-var", "url=" + url, os.path.join(d, "plan.hcl")], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{binary} apply {scenario}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    arrived = {t["id"]: t for t in truth(url)}
    (jsonl,) = glob.glob(os.path.join(d, "results", "*", "requests.jsonl"))
    recs = [json.loads(l) for l in open(jsonl) if l.strip()]
    recs = [r for r in recs if not r.get("warmup") and r.get("scheduled_ns") is not None]
    with open(glob.glob(os.path.join(d, "results", "*", "results.csv"))[0]) as f:
        row = next(csv.DictReader(f))
    lag = [r["send_lag_ns"] / 1e6 for r in recs]
    kernel, user = [], []
    for r in recs:
        t = arrived.get(r.get("x_request_id"))
        if t is None:
            sys.exit(f"{scenario}: the server has no arrival for {r['id']}")
        if not t.get("arrived_kernel"):
            sys.exit(f"{scenario}: the server has no kernel receive stamp for {r['id']} (an older mock, or not Linux TCP)")
        kernel.append((r["scheduled_ns"], parse_ns(t["arrived"])))
        user.append((r["scheduled_ns"], parse_ns(t["received"])))
    subprocess.run(["rm", "-rf", d])
    out = {"lag_p50": pct(lag, .5), "lag_p99": pct(lag, .99), "lag_max": max(lag),
           "client_cpu_pct": float(row["client_cpu_pct"] or "nan"), "cpu_s": cpu_s,
           "n": len(recs), "fidelity": row.get("fidelity", "")}
    for tag, pairs in (("", kernel), ("user_", user)):
        err = arrival_errors(pairs)
        out.update({tag + "arr_p50": pct(err, .5), tag + "arr_p99": pct(err, .99), tag + "arr_max": max(err),
                    tag + "inversions": inversions(pairs)})
    # From the start stamp to the request's bytes written (wrote_ns: the client's own
    # path after the stamp, which the next request due waits on).
    out["write_p99"] = pct([r.get("wrote_ns", 0) / 1e6 for r in recs], .99)
    # How much later the mock's handler read each request than the kernel had it.
    out["read_late_p99"] = pct([(u - k) / 1e6 for (_, k), (_, u) in zip(kernel, user)], .99)
    return out


def arrival_errors(pairs):
    shifts = [a - s for s, a in pairs]
    m = statistics.median(shifts)
    return [abs(x - m) / 1e6 for x in shifts]


def inversions(pairs):
    pairs = sorted(pairs)
    n = 0
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            if pairs[j][0] > pairs[i][0] and pairs[j][1] < pairs[i][1]:
                n += 1
    return n


def parse_ns(rfc3339):
    # Go's RFC 3339 with nanoseconds: 2026-12-02T01:23:45.123456789Z (or +hh:mm).
    from datetime import datetime
    s = rfc3339
    tz = "+00:00"
    if s.endswith("Z"):
        s = s[:-1]
    else:
        s, tz = s[:-6], s[-6:]
    base, _, frac = s.partition(".")
    dt = datetime.fromisoformat(base + tz)
    return int(dt.timestamp()) * 10**9 + int((frac + "000000000")[:9])


def main():
    args = sys.argv[1:]
    runs = 8
    if "-runs" in args:
        i = args.index("-runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    mock_bin = None
    if "-mock" in args:
        i = args.index("-mock")
        mock_bin = args[i + 1]
        del args[i:i + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    bins = {"before": args[0], "after": args[1]}
    for i, b in enumerate(args[2:]):
        bins[os.path.basename(b) or f"bin{i + 3}"] = b
    mock = subprocess.Popen([mock_bin or args[1], "selfbench", "-serve-mock", "-ttft", "5ms", "-tpot", "1ms", "-tokens", "4"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = mock.stdout.readline().strip()
    results = {(b, s): [] for b in bins for s in SCENARIOS}
    try:
        for run in range(runs):
            names = list(bins)
            k = run % len(names)
            for name in names[k:] + names[:k]:
                for s in SCENARIOS:
                    load = os.getloadavg()[0]
                    r = run_one(bins[name], s, url, seed=run)
                    r["load"] = load
                    results[(name, s)].append(r)
                    print(f"run {run + 1} {name:10} {s:10} load {load:5.1f}  lag p50/p99/max {r['lag_p50']:.3f}/{r['lag_p99']:.3f}/{r['lag_max']:.3f} ms"
                          f"  arrival p50/p99/max {r['arr_p50']:.3f}/{r['arr_p99']:.3f}/{r['arr_max']:.3f} ms"
                          f" (user {r['user_arr_p99']:.3f} p99)  inversions {r['inversions']} (user {r['user_inversions']})"
                          f"  write p99 {r['write_p99']:.3f} ms  mock read late p99 {r['read_late_p99']:.3f} ms  client CPU {r['client_cpu_pct']:.0f}%  apply CPU {r['cpu_s']:.2f}s"
                          f"  fidelity {r['fidelity'] or '-'}", flush=True)
    finally:
        mock.stdin.close()
        mock.wait(timeout=10)
    print("\n| scenario | binary | send lag p50 / p99 / max (ms) | arrival error p50 / p99 / max (ms), kernel stamp | arrival error p99 (ms), user stamp | inversions, kernel | inversions, user | stamp to written p99 (ms) | mock read late p99 (ms) | client CPU % | apply CPU s | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in SCENARIOS:
        for b in bins:
            rs = results[(b, s)]
            med = lambda k: statistics.median(r[k] for r in rs)
            worst = lambda k: max(r[k] for r in rs)
            print(f"| {s} | {b} | {med('lag_p50'):.3f} / {med('lag_p99'):.3f} / {med('lag_max'):.3f} (worst p99 {worst('lag_p99'):.3f}) "
                  f"| {med('arr_p50'):.3f} / {med('arr_p99'):.3f} / {med('arr_max'):.3f} (worst p99 {worst('arr_p99'):.3f}) "
                  f"| {med('user_arr_p99'):.3f} (worst {worst('user_arr_p99'):.3f}) "
                  f"| {med('inversions'):.0f} (max {worst('inversions')}) | {med('user_inversions'):.0f} (max {worst('user_inversions')}) "
                  f"| {med('write_p99'):.3f} | {med('read_late_p99'):.3f} | {med('client_cpu_pct'):.0f} | {med('cpu_s'):.2f} | {med('load'):.1f} |")


if __name__ == "__main__":
    main()

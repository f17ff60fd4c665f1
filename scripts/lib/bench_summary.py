#!/usr/bin/python3
"""The table of scripts/bench-compare: reads a run's reports (OUT/<target>-<workload>.json, rados-*.txt and
OUT/run.json, the run's parameters) and prints Depot/radosgw and Depot/RADOS ratios with their targets,
writing them to OUT/summary.json.

    scripts/lib/bench_summary.py OUT     (what `scripts/bench-compare --summarize OUT` runs)

Separate from the run so that a kept run can be summarised again (new rows or targets) without repeating
25 minutes of workloads."""
import json, os, re, sys, platform, datetime

out = sys.argv[1]
params = json.load(open(os.path.join(out, "run.json")))
total_s, store, duration = params["total_s"], params["store"], params["duration"]
list_keys, large_count, large_size = params["list_keys"], params["large_count"], params["large_size"]
commit, run_date = params["commit"], params["date"]

def load(target, name):
    try:
        return json.load(open(os.path.join(out, f"{target}-{name}.json")))
    except (OSError, ValueError):
        return None

def op(r, name):
    return (r or {}).get("ops", {}).get(name, {})

def rados(name):
    """rados bench's bandwidth (it prints MiB/s as 'MB/sec') in 10^6 bytes/s, and IOPS."""
    try:
        text = open(os.path.join(out, f"rados-{name}.txt")).read()
    except OSError:
        return None, None
    bw = re.search(r"Bandwidth \(MB/sec\):\s*([\d.]+)", text)
    iops = re.search(r"Average IOPS:\s*([\d.]+)", text)
    return (float(bw.group(1)) * 1.048576 if bw else None), (float(iops.group(1)) if iops else None)

def ratio(a, b):
    return a / b if a and b else None

rows = []  # (metric, depot, radosgw or rados, ratio, target text, met)

def add(metric, d, other, r, target, met):
    rows.append({"metric": metric, "depot": d, "other": other, "ratio": r, "target": target, "met": met})

def errors(r):
    return sum(v.get("errors", 0) for v in (r or {}).get("ops", {}).values())

D, G = {}, {}
for name in ["large", "get64m", "put4m", "get4m", "put4k", "get4k", "list"]:
    D[name], G[name] = load("depot", name), load("radosgw", name)

# Targets: issue 28 for the upload rows (4 MiB PUT >= 1.2x, 4 KiB PUT >= 2x, multipart >= 1.2x, CPU per GB
# below radosgw's), the first benchmark issue for the others.
for name, opname, label, want in [("put4m", "put", "4 MiB PUT x8, MB/s", 1.2), ("get4m", "get", "4 MiB GET x8, MB/s", 1.0)]:
    d, g = op(D[name], opname).get("mb_per_s"), op(G[name], opname).get("mb_per_s")
    r = ratio(d, g)
    add(label + " vs radosgw", d, g, r, f">= {want}x", r is not None and r >= want)
for name, opname, label, want in [("put4k", "put", "4 KiB PUT x32", 2.0), ("get4k", "get", "4 KiB GET x32", 1.5)]:
    d, g = op(D[name], opname).get("ops_per_s"), op(G[name], opname).get("ops_per_s")
    r = ratio(d, g)
    add(label + ", ops/s vs radosgw", d, g, r, f">= {want}x", r is not None and r >= want)
    d99 = op(D[name], opname).get("latency_ms", {}).get("p99")
    g99 = op(G[name], opname).get("latency_ms", {}).get("p99")
    r = ratio(d99, g99)
    add(label + ", p99 ms vs radosgw", d99, g99, r, "<= 1.0x", r is not None and r <= 1.0)
d, g = (D["list"] or {}).get("keys_per_s"), (G["list"] or {}).get("keys_per_s")
r = ratio(d, g)
add(f"ListObjectsV2 of {list_keys} keys, keys/s vs radosgw", d, g, r, ">= 3x", r is not None and r >= 3)
d, g = op(D["get64m"], "get").get("mb_per_s"), op(G["get64m"], "get").get("mb_per_s")
add("64 MiB GET x4, MB/s vs radosgw", d, g, ratio(d, g), "", None)
seq64, _ = rados("seq64m")
r = ratio(d, seq64)
add("64 MiB GET x4, MB/s vs rados bench seq", d, seq64, r, ">= 0.8x", r is not None and r >= 0.8)
g64 = op(G["get64m"], "get").get("mb_per_s")
add("  radosgw: 64 MiB GET x4 vs rados bench seq", g64, seq64, ratio(g64, seq64), "", None)
w64, _ = rados("write64m")
w4, _ = rados("write4m")
s4, _ = rados("seq4m")
d = op(D["put4m"], "put").get("mb_per_s")
add("4 MiB PUT x8, MB/s vs rados bench write", d, w4, ratio(d, w4), "", None)
d = op(D["get4m"], "get").get("mb_per_s")
add("4 MiB GET x8, MB/s vs rados bench seq", d, s4, ratio(d, s4), "", None)
d, g = op(D["large"], "multipart").get("mb_per_s"), op(G["large"], "multipart").get("mb_per_s")
r = ratio(d, g)
add(f"{large_count} x {large_size} multipart, MB/s vs radosgw", d, g, r, ">= 1.2x", r is not None and r >= 1.2)
d = (D["large"] or {}).get("server", {}).get("peak_rss_mib")
g = (G["large"] or {}).get("server", {}).get("peak_rss_mib")
add(f"peak RSS MiB during {large_count} x {large_size} uploads", d, g, ratio(d, g), "depot <= 256 MiB",
    d is not None and d <= 256)

def cpu_per_gb(r, opname):
    if not r:
        return None
    moved = op(r, opname).get("bytes", 0)
    return r["server"]["cpu_s"] / (moved / 1e9) if moved else None

for name, opname, label in [("large", "multipart", "multipart upload"), ("put4m", "put", "4 MiB PUT"),
                            ("get4m", "get", "4 MiB GET"), ("get64m", "get", "64 MiB GET")]:
    d, g = cpu_per_gb(D[name], opname), cpu_per_gb(G[name], opname)
    r = ratio(d, g)
    below = name in ("large", "put4m")  # issue 28: uploads spend less CPU per byte than radosgw
    add(f"CPU s per GB, {label}", d, g, r, "< 1.0x" if below else "", (r is not None and r < 1.0) if below else None)
for name, opname, label in [("put4k", "put", "4 KiB PUT"), ("get4k", "get", "4 KiB GET")]:
    vals = []
    for r in (D[name], G[name]):
        n = op(r, opname).get("count", 0)
        vals.append(r["server"]["cpu_s"] * 1e6 / n if r and n else None)
    add(f"CPU us per op, {label}", vals[0], vals[1], ratio(*vals), "", None)

# The scale-out storm: N replicas pull one version (8 files) at once.
S = {n: load("depot", n) for n in ("storm-nocache", "storm-cold", "storm-warm")}
S["radosgw"] = load("radosgw", "storm")
def seconds(ms):
    return ms / 1e3 if ms else None
def pull(r, what):
    p = op(r, "pull")
    return p.get("mb_per_s") if what == "mb_per_s" else p.get("latency_ms", {}).get(what)
model_bytes = None
for r in S.values():
    if r and op(r, "pull").get("count"):
        model_bytes = op(r, "pull")["bytes"] / op(r, "pull")["count"]
        break
g_mb, g_p50, g_p99 = pull(S["radosgw"], "mb_per_s"), pull(S["radosgw"], "p50"), pull(S["radosgw"], "p99")
for name, label in (("storm-nocache", "no cache"), ("storm-cold", "cold cache"), ("storm-warm", "warm cache")):
    r = S[name]
    d = pull(r, "mb_per_s")
    q = ratio(d, g_mb)
    warm = name == "storm-warm"
    add(f"storm, {label}: aggregate MB/s vs radosgw", d, g_mb, q, ">= 3x" if warm else "",
        (q is not None and q >= 3) if warm else None)
    for p, g in (("p50", g_p50), ("p99", g_p99)):
        d = pull(r, p)
        q = ratio(d, g)
        target = "<= 0.33x" if warm and p == "p99" else ""
        add(f"storm, {label}: {p} s per replica pull vs radosgw", seconds(d), seconds(g), q, target,
            (q is not None and q <= 1 / 3) if target else None)
    osd = (r or {}).get("osd_read_bytes")
    q = ratio(osd, model_bytes)
    cold = name == "storm-cold"
    add(f"storm, {label}: RADOS bytes read / model size", osd / 1e6 if osd is not None else None,
        model_bytes / 1e6 if model_bytes else None, q, "~1x" if cold else "",
        (q is not None and q <= 1.1) if cold else None)
d, g = pull(S["storm-cold"], "p99"), pull(S["storm-nocache"], "p99")
q = ratio(d, g)
add("storm: cold-cache p99 pull vs no cache", seconds(d), seconds(g), q, "<= 1.0x", q is not None and q <= 1.0)
osd = (S["radosgw"] or {}).get("osd_read_bytes")
add("  radosgw storm: RADOS bytes read / model size", osd / 1e6 if osd is not None else None,
    model_bytes / 1e6 if model_bytes else None, ratio(osd, model_bytes), "", None)

def fmt(v, digits=1):
    return "-" if v is None else f"{v:,.{digits}f}"

print()
print(f"Depot vs radosgw vs RADOS, {run_date} UTC, commit {commit}, "
      f"{os.cpu_count()} cores, {store} OSD, {duration} per workload, total {total_s} s")
print(f"{'metric':<52} {'depot':>10} {'other':>10} {'ratio':>7}  target")
for row in rows:
    met = "" if row["met"] is None else ("  met" if row["met"] else "  MISSED")
    print(f"{row['metric']:<52} {fmt(row['depot']):>10} {fmt(row['other']):>10} {fmt(row['ratio'], 2):>7}  "
          f"{row['target']}{met}")
errs = {f"{t}-{n}": errors(r) for t, m in (("depot", D), ("radosgw", G)) for n, r in m.items() if errors(r)}
if errs:
    print("errors in workloads:", ", ".join(f"{k}: {v}" for k, v in errs.items()))
missing = [f"{t}-{n}" for t, m in (("depot", D), ("radosgw", G)) for n, r in m.items() if r is None]
if missing:
    print("no report from:", ", ".join(missing))
print(f"reports: {out}")
json.dump({"date": run_date, "summarised": datetime.datetime.utcnow().isoformat() + "Z", "commit": commit, "cores": os.cpu_count(),
           "kernel": platform.release(), "store": store, "duration": duration, "list_keys": int(list_keys),
           "large_count": int(large_count), "large_size": large_size, "total_s": int(total_s),
           "storm": params.get("storm"), "rows": rows,
           "errors": errs}, open(os.path.join(out, "summary.json"), "w"), indent=2)

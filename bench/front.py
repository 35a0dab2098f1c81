"""The fronts' own cost, from bench/run.sh's raw results (JSON lines).

Prints, as medians over the rounds:
  - ping over Warden's HTTP front against a bare hyper endpoint answering
    the same JSON with the same client (target: p50 <= 1.3x);
  - the added hop (client -> warden -> warden -> fixture against
    client -> warden -> fixture), beside the same hop through a bare hyper
    forwarder, the floor of any hop on this machine;
  - Warden's CPU time per call (user + system of the warden process, all
    threads) for every run that measured it, and for `warden wrap` beside a
    bare stdio relay, the floor of any stdio hop, and for the HTTP front on
    one session beside a bare HTTP-to-stdio bridge, the floor of any HTTP
    front over a stdio server;
  - the core's targets, as ratios to those floors measured in the same run
    (the hop, CPU per call over HTTP and over stdio, a 2026-07-28 call
    against a 2025 one, the TypeScript pair through warden against the same
    pair through the bare relay; for the last two also each round's ratio
    against the floor's run beside it, to show how far they move), the
    allocations per forwarded call when
    bench/allocations.sh counted them, and the user-space instructions per
    call (none, sequential, metrics, traces, the bare relay) when bench/instructions.sh
    counted them;
  - the official TypeScript SDK client against server-everything, directly
    and through `warden wrap` (targets: p50 <= 1.05x, calls/s with 16 in
    flight >= 0.95x), beside the same pair through a bare stdio relay, the
    floor of any stdio hop for it;
  - joshrotenberg/mcp-proxy beside Warden's HTTP front, when it was run.
"""
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
groups = {}
for row in rows:
    if row.get("phase") in ("sequential", "concurrent"):
        groups.setdefault((row["label"], row["phase"]), []).append(row)


def median(label, phase, field):
    values = [r[field] for r in groups.get((label, phase), []) if r.get(field) is not None]
    return statistics.median(values) if values else None


def verdict(ok):
    return "met" if ok else "NOT met"


def against_floor(what, group, floor, target=None):
    """Warden's CPU per call in `group/warden` beside the floor's in
    `group/bare`, each split into user space and kernel; with a `target`
    (us), whether Warden and the floor itself meet it."""
    for phase in ("sequential", "concurrent"):
        ours, bare = median(f"{group}/warden", phase, "cpu_us_per_call"), median(f"{group}/bare", phase, "cpu_us_per_call")
        if not (ours and bare):
            continue
        against = ""
        if target is not None:
            against = (f"; target <= {target} us: warden {verdict(ours <= target)}, "
                       f"the floor alone {verdict(bare <= target)}")
        print(f"{what}, {phase}: warden {ours:.1f} us, {floor} {bare:.1f} us ({ours / bare:.1f}x){against}")
        ours_user = median(f"{group}/warden", phase, "cpu_user_us_per_call")
        bare_user = median(f"{group}/bare", phase, "cpu_user_us_per_call")
        if ours_user is not None and bare_user is not None:
            print(f"    of which user space: warden {ours_user:.1f} us, {floor} {bare_user:.1f} us; "
                  f"the kernel: {ours - ours_user:.1f} us and {bare - bare_user:.1f} us")


print()
print("The fronts' own cost (medians over the rounds)")
bare, ping = median("ping/bare", "sequential", "p50_us"), median("ping/warden", "sequential", "p50_us")
if bare and ping:
    ratio = ping / bare
    print(f"ping, HTTP, sequential p50: bare hyper {bare:.1f} us, warden {ping:.1f} us: "
          f"{ratio:.2f}x (target <= 1.3x: {verdict(ratio <= 1.3)})")
direct, hop = median("hop/direct", "sequential", "p50_us"), median("hop/warden", "sequential", "p50_us")
if direct and hop:
    print(f"an added warden HTTP hop, sequential p50: {direct:.1f} -> {hop:.1f} us, {hop - direct:+.1f} us")
    floor = median("hop/bare", "sequential", "p50_us")
    if floor:
        print(f"  the floor, a bare hyper forwarder in the same place: {direct:.1f} -> {floor:.1f} us, "
              f"{floor - direct:+.1f} us; warden's hop costs {hop - floor:+.1f} us over it")
    against_floor("  CPU per call of the process in the middle", "hop", "bare forwarder")

against_floor("a stdio hop (warden wrap), CPU per call", "fixture", "bare relay")
against_floor("the HTTP front over the stdio fixture (one session), CPU per call", "http1", "bare bridge")

print()
print(f"{'run':<24} {'phase':<11} {'calls/s':>10} {'p50 us':>8} {'warden cpu us/call':>19}")
for (label, phase) in sorted(groups):
    if label.endswith(("/direct", "/bare")) and not label.startswith("hop/direct") or label.startswith("ts"):
        continue
    cpu = median(label, phase, "cpu_us_per_call")
    if cpu is None:
        continue
    print(f"{label:<24} {phase:<11} {median(label, phase, 'calls_per_sec'):>10.0f} "
          f"{median(label, phase, 'p50_us'):>8.1f} {cpu:>19.1f}")

ts = {(v, p): (median(f"tseverything/{v}", p, "p50_us"), median(f"tseverything/{v}", p, "calls_per_sec"))
      for v in ("direct", "warden") for p in ("sequential", "concurrent")}
if all(p50 for p50, _ in ts.values()):
    print()
    print("server-everything with the official TypeScript SDK client (stdio):")
    (d50, _), (w50, _) = ts[("direct", "sequential")], ts[("warden", "sequential")]
    (_, drate), (_, wrate) = ts[("direct", "concurrent")], ts[("warden", "concurrent")]
    print(f"  sequential p50 {d50:.1f} -> {w50:.1f} us: {w50 / d50:.2f}x (target <= 1.05x: {verdict(w50 / d50 <= 1.05)})")
    print(f"  16 in flight {drate:.0f} -> {wrate:.0f} calls/s: {wrate / drate:.2f}x "
          f"(target >= 0.95x: {verdict(wrate / drate >= 0.95)})")
    b50 = median("tseverything/bare", "sequential", "p50_us")
    brate = median("tseverything/bare", "concurrent", "calls_per_sec")
    if b50 and brate:
        print(f"  through a bare relay (the floor of any stdio hop): {b50:.1f} us, {b50 / d50:.2f}x; "
              f"{brate:.0f} calls/s, {brate / drate:.2f}x (the floor alone: "
              f"{verdict(b50 / d50 <= 1.05)} and {verdict(brate / drate >= 0.95)}); "
              f"warden against it: {w50 / b50:.2f}x and {wrate / brate:.2f}x")

for sessions in ("http1", "http16"):
    peer = median(f"{sessions}/mcp-proxy", "concurrent", "calls_per_sec")
    ours = median(f"{sessions}/warden", "concurrent", "calls_per_sec")
    if peer and ours:
        print(f"{sessions}, 16 in flight: warden {ours:.0f} calls/s, mcp-proxy 0.6.0 {peer:.0f} calls/s: {ours / peer:.2f}x")


def ratio_target(what, ours, floor, limit, unit="x"):
    """One target stated as a ratio to a floor of the same run."""
    if ours is None or floor is None or not floor:
        print(f"{what}: not measured")
        return
    ratio = ours / floor
    print(f"{what}: {ratio:.2f}{unit} (target <= {limit}{unit}: {verdict(ratio <= limit)})")


print()
print("The core's targets, as ratios to the floors of this run (medians):")
direct, hop, floor = (median(f"hop/{v}", "sequential", "p50_us") for v in ("direct", "warden", "bare"))
if direct and hop and floor:
    print(f"  added HTTP hop +{hop - direct:.1f} us, the bare forwarder's +{floor - direct:.1f} us")
    ratio_target("  added HTTP hop vs the bare forwarder's", hop - direct, floor - direct, 2)
ratio_target("  CPU per sequential HTTP call vs the bare HTTP-to-stdio bridge",
             median("http1/warden", "sequential", "cpu_us_per_call"),
             median("http1/bare", "sequential", "cpu_us_per_call"), 1.25)
ratio_target("  CPU per sequential stdio call vs the bare relay",
             median("fixture/warden", "sequential", "cpu_us_per_call"),
             median("fixture/bare", "sequential", "cpu_us_per_call"), 1.25)


def paired(label, floor, phase, field):
    """Each run of `label` against the run of `floor` nearest to it in the
    results (the same round's pair, run back to back): the per-round ratios,
    which a slow phase of the VM moves together rather than apart."""
    runs = [(i, r) for i, r in enumerate(rows) if r.get("phase") == phase and r.get(field)]
    ratios = []
    for i, run in runs:
        if run["label"] != label:
            continue
        floors = [(abs(i - j), other[field]) for j, other in runs if other["label"] == floor]
        if floors:
            ratios.append(run[field] / min(floors)[1])
    return sorted(ratios)


def spread(what, ratios):
    """How far the per-round ratios of a target move: for reading a median
    near its limit."""
    if len(ratios) > 1:
        listed = ", ".join(f"{r:.2f}" for r in ratios)
        print(f"    {what}, per round: {listed} (median {statistics.median(ratios):.2f})")


for phase in ("sequential", "concurrent"):
    ratio_target(f"  CPU of a 2026-07-28 call vs a 2025 call, {phase}",
                 median("modern/warden", phase, "cpu_us_per_call"),
                 median("http1/warden", phase, "cpu_us_per_call"), 1.1)
    spread("against the 2025 run beside it", paired("modern/warden", "http1/warden", phase, "cpu_us_per_call"))
ratio_target("  the TypeScript SDK pair through warden wrap vs through the bare relay, p50",
             median("tseverything/warden", "sequential", "p50_us"),
             median("tseverything/bare", "sequential", "p50_us"), 1.03)
spread("against the relay's run beside it", paired("tseverything/warden", "tseverything/bare", "sequential", "p50_us"))
allocs = {r["label"]: r["allocs_per_call"] for r in rows if r.get("phase") == "allocations"}
if allocs:
    for label, limit in (("alloc/http2025", 30), ("alloc/http2026", 35), ("alloc/stdio", None)):
        if label in allocs:
            target = f" (target <= {limit}: {verdict(allocs[label] <= limit)})" if limit else ""
            print(f"  allocations per forwarded call, {label[6:]}: {allocs[label]:.1f}{target}")
else:
    print("  allocations per forwarded call: not counted (bench/allocations.sh needs heaptrack)")
# Deterministic where the CPU times are not: user-space instructions per call.
instructions = {r["label"][13:]: r["instructions_per_call"] for r in rows if r.get("phase") == "instructions"}
if "none" in instructions:
    cases = ("none", "sequential", "metrics", "traces", "relay")
    line = ", ".join(f"{case} {instructions[case]:,}" for case in cases if case in instructions)
    print(f"  user-space instructions per forwarded call (callgrind): {line}")
    for case in ("metrics", "traces"):
        if case in instructions:
            print(f"    {case} on vs off: {instructions[case] / instructions['none']:.3f}x")
    if "relay" in instructions:
        print(f"    stdio vs the bare relay: {instructions['none'] / instructions['relay']:.1f}x")
if "http2025" in instructions:
    line = ", ".join(f"{case} {instructions[case]:,}" for case in ("http2025", "http2026", "bridge") if case in instructions)
    print(f"  user-space instructions per forwarded call over HTTP (callgrind): {line}")
    if "http2026" in instructions:
        print(f"    2026-07-28 vs 2025: {instructions['http2026'] / instructions['http2025']:.3f}x")
    if "bridge" in instructions:
        print(f"    2025 vs the bare bridge: {instructions['http2025'] / instructions['bridge']:.2f}x")
else:
    print("  instructions per forwarded call: not counted (bench/instructions.sh needs valgrind)")

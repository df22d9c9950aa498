#!/usr/bin/env bash
# Regenerates the measured tables of docs/performance.md: throughput and peak
# memory of every preset scenario (release build, `perf.json` and
# `/usr/bin/time -v`), and the criterion benches (engine, one tick of every
# policy at 1k/10k/100k waiting tickets, one split of every team former).
#
#   scripts/bench.sh [output folder]
#
# Default output: target/bench. Environment:
#   BENCH_SKIP_PRESETS=1   keep the preset table as it is
#   BENCH_SKIP_CRITERION=1 reuse the results already in target/criterion
#   BENCH_FILTER=regex     passed to criterion (e.g. 'tick/widening')
#   BENCH_PROFILE=name     cargo profile of the benches (default: bench, the
#                          release settings); `dev` reuses a test build
# Needs bash, cargo, python3 (standard library only) and GNU time at
# /usr/bin/time. Run it on a quiet machine: the figures are wall-clock.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/bench}
doc=docs/performance.md
mkdir -p "$out"

if [[ ! -x /usr/bin/time ]]; then
    echo "bench.sh: /usr/bin/time (GNU time) is needed for peak memory; install the 'time' package" >&2
    exit 2
fi

if [[ -z ${BENCH_SKIP_PRESETS:-} ]]; then
    cargo build --release --quiet
    bin=target/release/mmsim
    : > "$out/presets.list"
    for f in scenarios/*.toml scenarios/ci/*.toml scenarios/gamedev-policies/*.toml scenarios/rulesets/*.toml; do
        # Sweep files (`[sweep.grid]`, `[sweep]`, `[[sweep.variant]]`) are run by `mmsim sweep`.
        grep -q '^\[\[\?sweep' "$f" && continue
        # The Dota-scale day is hours of simulation with today's quality
        # policy (issue: live-service scale); BENCH_DAY=1 includes it.
        case "$f" in *dota2-day*) [ "${BENCH_DAY:-0}" = 1 ] || continue ;; esac
        name=$(echo "$f" | sed 's|scenarios/||; s|\.toml$||; s|/|-|g')
        rm -rf "${out:?}/$name"
        echo "bench.sh: $f" >&2
        /usr/bin/time -v "$bin" run "$f" --out "$out/$name" --quiet \
            > "$out/$name.stdout" 2> "$out/$name.time.txt"
        echo "$name $f" >> "$out/presets.list"
    done
fi

if [[ -z ${BENCH_SKIP_CRITERION:-} ]]; then
    # `--noplot`: criterion's plots are not needed and cost minutes.
    cargo bench --profile "${BENCH_PROFILE:-bench}" --bench engine --bench policy_tick --bench team_formers -- \
        --noplot ${BENCH_FILTER:+"$BENCH_FILTER"}
fi

python3 - "$out" "$doc" "$(nproc)" "${BENCH_PROFILE:-bench}" <<'PY'
import json, math, pathlib, re, sys

out, doc, cores, profile = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4]
text = doc.read_text()

def replace_or_keep(text, key, rows):
    """A criterion table with no results (BENCH_SKIP_CRITERION without
    them, or a BENCH_FILTER that left it out) keeps what the doc had."""
    if len(rows) <= 2:
        print(f"bench.sh: no criterion results for '{key}'; its table is kept", file=sys.stderr)
        return text
    return replace(text, key, "\n".join(rows))

def replace(text, key, body):
    begin, end = f"<!-- bench:{key}:begin -->", f"<!-- bench:{key}:end -->"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        sys.exit(f"bench.sh: {doc} has no '{begin}' ... '{end}' markers")
    return pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text)

def human_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"

def si(x):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"

# Presets: perf.json written by the run, peak memory and wall clock of the
# whole process (writing included) from GNU time.
listing = out / "presets.list"
if listing.exists():
    rows = ["| preset | tickets | events | sim wall s | events/s | tickets/s | process wall s | peak RSS MB | searches (found the same) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for line in listing.read_text().split("\n"):
        if not line.strip():
            continue
        name, path = line.split()
        perf_file = out / name / "perf.json"
        if not perf_file.exists():
            rows.append(f"| `{path}` | failed: see {out / name}.time.txt | | | | | | | |")
            continue
        perf = json.loads(perf_file.read_text())
        timing = (out / f"{name}.time.txt").read_text()
        rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing).group(1))
        elapsed = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", timing).group(1)
        secs = 0.0
        for part in elapsed.split(":"):
            secs = secs * 60 + float(part)
        # The quality policy's searches, and the share that found what the
        # seed had (perf.json `search`); other policies keep none.
        work = perf.get("search")
        searches = (f"{work['searches']:,} ({work['searches_unchanged'] / max(work['searches'], 1):.0%})"
                    if work else "")
        rows.append(
            f"| `{path}` | {perf['tickets']:,} | {perf['events']:,} | {perf['wall_s']:.2f} "
            f"| {si(perf['events_per_s'])} | {si(perf['tickets_per_s'])} | {secs:.2f} | {rss_kb / 1024:.0f} | {searches} |")
    text = replace(text, "presets", "\n".join(rows))

# Criterion: every benchmark's mean from target/criterion/**/new/.
results = {}
for bench in pathlib.Path("target/criterion").glob("**/new/benchmark.json"):
    meta = json.loads(bench.read_text())
    est = json.loads((bench.parent / "estimates.json").read_text())
    group, param = meta["group_id"], meta.get("value_str") or meta.get("function_id")
    if group == "engine":
        param = meta["full_id"][len("engine/"):]
    results.setdefault(group, {})[param] = est["mean"]["point_estimate"]

def num(p):
    m = re.match(r"\d+", p)
    return int(m.group()) if m else 0

def group_rows(prefix, sizes_fixed):
    rows = []
    for group in sorted(g for g in results if g.startswith(prefix)):
        r = results[group]
        sizes = sizes_fixed or sorted(r, key=num)
        cells = [human_time(r[s]) if s in r else "–" for s in sizes]
        rows.append((group[len(prefix):], sizes, r, cells))
    return rows

# Policy ticks: growth per 10x against n log n's (13.3x from 1k to 10k,
# 12.5x from 10k to 100k; n^2 would be 100x); a factor above 35, halfway
# between the two on a log scale, is flagged as worse than n log n.
nlogn = {("1000", "10000"): 10 * math.log(1e4) / math.log(1e3),
         ("10000", "100000"): 10 * math.log(1e5) / math.log(1e4)}
rows = ["| policy | 1k | 10k | 100k | ×, 1k→10k | ×, 10k→100k | per ticket at 100k | worse than n log n? |",
        "|---|---:|---:|---:|---:|---:|---:|---|"]
order = ["fixed-limit", "widening", "percent-widening", "percentile-window", "adaptive-brackets",
         "batch-weighted", "weighted-score", "sweep-prune", "virtual-decay", "quality"]
ticks = {name: r for name, _, r, _ in group_rows("tick/", None)}
# The formats designers run (`designers_formats`: a 5v5 role queue cold and
# in its steady state, a vendor's ruleset), under their whole group name.
ticks.update({g: r for g, r in results.items() if g.startswith(("tick-", "second-tick-"))})
for name in sorted(ticks, key=lambda n: (order.index(n) if n in order else 99, n)):
    r = ticks[name]
    cells = [human_time(r[s]) if s in r else "–" for s in ("1000", "10000", "100000")]
    growth, flags = [], []
    for a, b in nlogn:
        if a in r and b in r:
            g = r[b] / r[a]
            growth.append(f"{g:.1f}")
            if g > 35:
                flags.append(f"yes ({g:.0f}× vs {nlogn[(a, b)]:.1f}×)")
        else:
            growth.append("–")
    per = human_time(r["100000"] / 1e5) if "100000" in r else "–"
    rows.append(f"| `{name}` | " + " | ".join(cells + growth) + f" | {per} | {'; '.join(flags) or 'no'} |")
text = replace_or_keep(text, "ticks", rows)

# Team formers: one split of one match; n is players per match.
rows = ["| former | n (players per match) → time per split | growth |", "|---|---|---|"]
for name, sizes, r, cells in group_rows("split/", None):
    pairs = ", ".join(f"{s}: {c}" for s, c in zip(sizes, cells))
    growth = ", ".join(f"{r[b] / r[a]:.1f}× for {num(b) / num(a):.3g}× players"
                       for a, b in zip(sizes, sizes[1:]))
    rows.append(f"| `{name}` | {pairs} | {growth} |")
text = replace_or_keep(text, "formers", rows)

# Engine: whole 2-hour runs of a 1v1 queue.
rows = ["| run | time per run | events/s |", "|---|---:|---:|"]
for group in sorted(g for g in results if g.startswith("engine")):
    for param, ns in sorted(results[group].items()):
        events = num(param.split("/")[-1])
        rows.append(f"| `{group}/{param}` | {human_time(ns)} | {si(events / (ns / 1e9)) if events else '–'} |")
text = replace_or_keep(text, "engine", rows)

build = "release build" if profile == "bench" else f"benches in the `{profile}` profile"
text = replace(text, "machine", f"Measured with `scripts/bench.sh` on a {cores}-core machine, {build}.")
doc.write_text(text)
print(f"bench.sh: updated {doc}", file=sys.stderr)
PY

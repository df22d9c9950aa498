#!/usr/bin/env bash
# Runs every scenario in scenarios/gamedev-policies/ (same seed and arrivals)
# and prints the comparison table of docs/policies.md as Markdown.
#
#   scripts/policy-table.sh [mmsim binary] [output folder]
#
# Defaults: target/debug/mmsim (built first) and output/gamedev-policies. The
# nine runs take seconds even unoptimised; summaries do not depend on the build.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/mmsim}
out=${2:-output/gamedev-policies}
if [[ -z ${1:-} ]]; then
    cargo build --quiet
fi
mkdir -p "$out"
for f in scenarios/gamedev-policies/*.toml; do
    name=$(basename "$f" .toml)
    "$bin" run "$f" --out "$out/$name" >/dev/null
done
python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
order = ["fixed-limit", "widening", "percent-widening", "percentile-window",
         "adaptive-brackets", "batch-weighted", "weighted-score", "sweep-prune",
         "virtual-decay"]
names = [n for n in order if (out / n / "summary.json").exists()]
names += sorted(p.name for p in out.iterdir()
                if p.name not in names and (p / "summary.json").exists())
print("| policy | wait p50 s | wait p90 s | wait p99 s | top decile wait p90 s "
      "| spread mean | spread p90 | abandon | matches |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in names:
    s = json.loads((out / n / "summary.json").read_text())
    w = s["wait_s"]
    top = s["wait_s_by_skill_decile"][9]["p90"]
    sp = s["spread_rating"]
    print(f"| {n} | {w['p50']:.1f} | {w['p90']:.1f} | {w['p99']:.1f} | {top:.1f} "
          f"| {sp['mean']:.0f} | {sp['p90']:.0f} | {100 * s['abandon_rate']:.1f}% "
          f"| {s['matches']} |")
PY

#!/usr/bin/env bash
# Measures what the quality policy's search cadence (`research`) costs on
# dota2-one-queue (the Dota matchmaker on one queue; `--explain` needs one):
# each cadence against the exact policy (every pass) on seeds 1..10, the
# same players and arrivals on each seed, and prints the table of
# docs/policies.md as Markdown: per metric the exact policy's mean and each
# cadence's paired difference with its 95% Student-t interval. The quality
# score is the policy's own score of each formed match, read from the
# runs' explain.jsonl (`--explain`); the other figures from summary.json.
# A cadence written `10s+all` also sets `research_early = "all"`; a second
# table pairs each such run with the same cadence under the default rule.
#
#   scripts/quality-cadence.sh [mmsim binary] [output folder]
#
# Defaults: target/release/mmsim (built first) and output/quality-cadence.
# Sixty runs of twelve simulated hours: about three minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/mmsim}
out=${2:-output/quality-cadence}
if [[ -z ${1:-} ]]; then
    cargo build --quiet --release
fi
mkdir -p "$out"
cadences=(every 5s 10s 20s 10s+all 20s+all)
for c in "${cadences[@]}"; do
    for seed in $(seq 1 10); do
        set_args=()
        [[ $c != every ]] && set_args=(--set "policy.research=${c%+all}")
        [[ $c == *+all ]] && set_args+=(--set 'policy.research_early="all"')
        dir="$out/$c/seed-$seed"
        rm -rf "$dir"
        "$bin" run scenarios/dota2-one-queue.toml "${set_args[@]}" --seed "$seed" \
            --explain --tables none --out "$dir" >/dev/null 2>&1
    done
done
python3 - "$out" "${cadences[@]}" <<'PY'
import json, math, pathlib, sys
out, cadences = pathlib.Path(sys.argv[1]), sys.argv[2:]
# Student-t 0.975 quantile for 9 degrees of freedom (10 seeds).
T9 = 2.262157

def figures(d):
    s = json.loads((d / "summary.json").read_text())
    warmup = s.get("warmup_s", 0.0)
    scores = {}
    for line in (d / "explain.jsonl").read_text().splitlines():
        t = json.loads(line)
        if t.get("outcome") == "matched" and t.get("match_score") is not None \
                and t["left_s"] >= warmup:
            scores[t["match_id"]] = t["match_score"]
    return {
        "wait p50 s": s["wait_s"]["p50"],
        "wait p90 s": s["wait_s"]["p90"],
        "abandon rate %": 100 * s["abandon_rate"],
        "quality score": sum(scores.values()) / len(scores),
        "true win-prob. gap": s["win_prob_gap"]["mean"],
        "matches": s["matches"],
    }

runs = {c: [figures(out / c / f"seed-{k}") for k in range(1, 11)] for c in cadences}
metrics = list(runs[cadences[0]][0])

def name(c):
    if c == "every":
        return "every pass"
    cell = f"`research = \"{c.removesuffix('+all')}\"`"
    return cell + (", `research_early = \"all\"`" if c.endswith("+all") else "")

def table(base_c, others):
    print(f"| metric | {name(base_c)} (mean) | " + " | ".join(
        f"{name(c)} minus {name(base_c)}" for c in others) + " |")
    print("|---|---:|" + "---:|" * len(others))
    for m in metrics:
        base = [r[m] for r in runs[base_c]]
        cells = [f"{sum(base) / len(base):.4g}"]
        for c in others:
            d = [r[m] - b for r, b in zip(runs[c], base)]
            mean = sum(d) / len(d)
            sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1))
            half = T9 * sd / math.sqrt(len(d))
            noise = "" if abs(mean) > half else " (noise)"
            cells.append(f"{mean:+.3g} [{mean - half:+.3g}, {mean + half:+.3g}]{noise}")
        print(f"| {m} | " + " | ".join(cells) + " |")

table(cadences[0], cadences[1:])
for c in cadences:
    if c.endswith("+all"):
        print()
        table(c.removesuffix("+all"), [c])
PY

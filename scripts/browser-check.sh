#!/usr/bin/env bash
# Opens each preset's report.html in a real browser (headless Chromium) and
# fails on what an analyst would see broken: an image that did not load,
# "NaN" or a literal "[]" on the page, or a table wider than a 1400 px
# viewport. Keeps a first-screen screenshot (1400x900) of each report.
# Then drives `mmsim serve`'s what-if page (scripts/serve-check.sh).
#
#   bash scripts/browser-check.sh
#
# Installs Debian's chromium with apt-get when it is missing (CI runs as root
# on Debian). Runs are short versions of the presets; runs and screenshots go
# to output/ci-screenshots/ (BROWSER_CHECK_OUT to change it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${BROWSER_CHECK_OUT:-$ROOT/output/ci-screenshots}

die() { echo "browser-check.sh: $*" >&2; exit 1; }

CHROMIUM=${CHROMIUM:-}
if [[ -z $CHROMIUM ]]; then
    CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
fi
if [[ -z $CHROMIUM ]]; then
    echo "chromium: not found, installing Debian's package"
    [[ $(id -u) -eq 0 ]] || die "chromium is missing and this is not root: install it with 'apt-get install chromium'"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    apt-get install -y -qq chromium >/dev/null || die "apt-get install chromium failed"
    CHROMIUM=$(command -v chromium) || die "chromium still not found after installing"
fi
echo "chromium: $CHROMIUM"

# The binary `cargo test` builds (same features, so nothing recompiles).
cargo test --no-run --quiet --locked
MMSIM=${CARGO_TARGET_DIR:-$ROOT/target}/debug/mmsim

rm -rf "$OUT"
mkdir -p "$OUT/runs"
declare -A SETS=(
    [gamedev-1v1]=""
    [armored-warfare-15v15]="--set run.duration=3h --set run.warmup=30m"
    [dota2-5v5]="--set run.duration=6h --set run.warmup=2h"
    [dota2-day]="--set population.size=20000 --set arrivals.rate_per_s=1"
)
PRESETS=(gamedev-1v1 armored-warfare-15v15 dota2-5v5 dota2-day)

# Run in the page after load: what the checks need, as one line of JSON in
# the DOM's title (read back with --dump-dom).
PROBE='<script>addEventListener("load",()=>{const w=innerWidth;'\
'const broken=[...document.images].filter(i=>!i.complete||i.naturalWidth===0).map(i=>i.alt);'\
'const wide=[...document.querySelectorAll("table")].filter(t=>t.getBoundingClientRect().right>w).map(t=>Math.round(t.getBoundingClientRect().right));'\
'const text=document.body.innerText;'\
'document.title="PROBE"+JSON.stringify({w,images:document.images.length,broken,wide,nan:/\bNaN\b/.test(text),empty:text.includes("[]")})+"EBORP";});</script>'

chrome() {
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1400,900 "$@" 2>/dev/null
}

fail=0
for p in "${PRESETS[@]}"; do
    run=$OUT/runs/$p
    # shellcheck disable=SC2086 # SETS holds several words on purpose
    "$MMSIM" run "scenarios/$p.toml" ${SETS[$p]} --tables none --quiet --out "$run" >/dev/null
    # The probe goes into a copy, so the report itself is checked unchanged.
    PROBE=$PROBE python3 -c 'import os, sys; sys.stdout.write(open(sys.argv[1]).read().replace("</body>", os.environ["PROBE"] + "</body>"))' "$run/report.html" > "$run/probe.html"
    chrome --screenshot="$OUT/$p.png" "file://$run/report.html" >/dev/null
    dom=$(chrome --virtual-time-budget=5000 --dump-dom "file://$run/probe.html")
    probe=$(grep -o 'PROBE{[^<]*}EBORP' <<<"$dom" | head -1 | sed 's/^PROBE//; s/EBORP$//' || true)
    [[ -n $probe ]] || { echo "$p: FAIL: the page did not finish loading in the browser"; fail=1; continue; }
    verdict=$(python3 - "$probe" <<'EOF'
import json, sys
p = json.loads(sys.argv[1].replace("&quot;", '"'))
bad = []
if p["broken"]: bad.append(f"broken images: {p['broken']}")
if p["nan"]: bad.append("NaN on the page")
if p["empty"]: bad.append("a literal [] on the page")
if p["wide"]: bad.append(f"tables wider than the {p['w']} px viewport (right edges {p['wide']})")
if p["images"] == 0: bad.append("no images")
print(("FAIL: " + "; ".join(bad)) if bad else f"ok ({p['images']} images, viewport {p['w']} px)")
EOF
)
    echo "$p: $verdict"
    [[ $verdict == ok* ]] || fail=1
    [[ -s $OUT/$p.png ]] || { echo "$p: FAIL: no screenshot"; fail=1; }
done
# Close-ups of what a reader checks by eye, each the one element alone on
# the page (every folded table opened): the by_hour table (its hour column
# is the simulated hour), a role queue's "What held tickets back" with the
# longest wait's story, and a sweep's Pareto plot with its intervals.
shot() { # NAME REPORT SELECTOR
    local page=${2%.html}.$1.html
    SEL=$3 python3 -c 'import os, sys; sel = os.environ["SEL"]; sys.stdout.write(open(sys.argv[1]).read().replace("</body>", "<script>addEventListener(\"load\",()=>{document.querySelectorAll(\"details\").forEach(d=>d.open=true);const e=document.querySelector(" + repr(sel) + ");if(e){document.body.replaceChildren(e);scrollTo(0,0);document.title=\"FOUND\";}});</script></body>"))' "$2" > "$page"
    chrome --virtual-time-budget=3000 --screenshot="$OUT/$1.png" "file://$page" >/dev/null
    chrome --virtual-time-budget=3000 --dump-dom "file://$page" | grep -q '<title>FOUND</title>' \
        || { echo "$1: FAIL: no $3 in $2"; fail=1; return; }
    echo "$1: ok ($OUT/$1.png)"
}
shot dota2-5v5-by_hour "$OUT/runs/dota2-5v5/report.html" '#table-by_hour'
"$MMSIM" run scenarios/ci/regions-roles-fresh.toml --explain --set 'roles.shares=[0.05, 0.25, 0.7]' \
    --tables none --quiet --out "$OUT/runs/roles-explain" >/dev/null
shot roles-held-back "$OUT/runs/roles-explain/report.html" '#held-back'
"$MMSIM" sweep scenarios/gamedev-1v1-sweep.toml --set run.duration=2h --set run.warmup=20m \
    --replications 2 --quiet --out "$OUT/runs/sweep" >/dev/null
shot sweep-pareto "$OUT/runs/sweep/report.html" 'figure'
# The what-if page: `mmsim serve` driven in the browser (scripts/serve-check.sh).
bash scripts/serve-check.sh "$CHROMIUM" "$MMSIM" "$OUT" || fail=1
echo "screenshots: $OUT/*.png"
exit $fail

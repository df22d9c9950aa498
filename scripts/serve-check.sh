#!/usr/bin/env bash
# `mmsim serve` in a real browser: serves a copy of the 1v1 preset, lets
# headless Chromium load the page and drive it as a designer would (the
# page's `?demo=KEY=VALUE` moves the slider, waits for the whole answer,
# pins the setting and saves it), then checks what the page showed against
# `mmsim run` of the same setting on the same seeds, the pin, and the saved
# file. Keeps screenshots of the answer and of the page after the pin.
#
#   bash scripts/serve-check.sh CHROMIUM MMSIM OUT
#
# scripts/browser-check.sh calls it with its Chromium, binary and folder.
set -euo pipefail
cd "$(dirname "$0")/.."
CHROMIUM=$1
MMSIM=$2
OUT=$3
DIR=$OUT/serve
KEY=policy.limit
VALUE=250

die() { echo "serve-check.sh: $*" >&2; exit 1; }

rm -rf "$DIR"
mkdir -p "$DIR"
cp scenarios/gamedev-1v1.toml "$DIR/"
"$MMSIM" serve "$DIR/gamedev-1v1.toml" --port 0 --seeds 4 --out "$DIR/out" >"$DIR/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
addr=
for _ in $(seq 100); do
    addr=$(grep -o 'listening on [0-9.:]*' "$DIR/serve.log" | cut -d' ' -f3 || true)
    [[ -n $addr ]] && break
    kill -0 $pid 2>/dev/null || die "the server stopped: $(cat "$DIR/serve.log")"
    sleep 0.2
done
[[ -n $addr ]] || die "the server printed no address"
URL=http://$addr/

chrome() {
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    # Virtual time stands still while the page waits on the server (a long
    # poll), so the budget is spent only on the page's own timers.
    timeout 300 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --window-size=1400,1000 --virtual-time-budget=120000 "$@" 2>/dev/null
}

# An answer against the served scenario, kept as a screenshot (no pin:
# another value than the checked one, so that one's timing starts cold).
chrome --screenshot="$OUT/serve-answer.png" "${URL}?demo=$KEY=200&pin=0" >/dev/null
# The whole interaction; the page writes what it saw into its title.
dom=$(chrome --dump-dom "${URL}?demo=$KEY=$VALUE")
seen=$(grep -o 'DEMO{.*}OMED' <<<"$dom" | head -1 | sed 's/^DEMO//; s/OMED$//' || true)
[[ -n $seen ]] || die "the page did not finish its demo"
# The page as a designer finds it after the pin: the setting is the baseline.
chrome --screenshot="$OUT/serve-pinned.png" "$URL" >/dev/null
state=$(python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1] + "api/state").read().decode())' "$URL")

SEEN=$seen STATE=$state python3 - "$MMSIM" "$DIR" "$KEY" "$VALUE" <<'EOF'
import html, json, os, subprocess, sys
mmsim, folder, key, value = sys.argv[1:]
seen = json.loads(html.unescape(os.environ["SEEN"]))
state = json.loads(os.environ["STATE"])
bad = []
def expect(ok, what):
    if not ok:
        bad.append(what)

expect(not seen.get("error"), f"the page said: {seen.get('error')}")
expect(seen.get("complete") is True, "the answer never completed")
sets = seen.get("sets") or []
expect(sets == [f"{key}={float(value)}"], f"the setting sent was {sets}")
metrics = ["wait_s.p50", "wait_s.p90", "abandon_rate", "spread_rating.mean", "win_prob_gap.mean", "matches_per_hour"]

def summary(seed, with_sets):
    out = os.path.join(folder, f"run-{seed}-{len(with_sets)}")
    args = [mmsim, "run", os.path.join(folder, "gamedev-1v1.toml"), "--seed", str(seed), "--tables", "none", "--quiet", "--out", out]
    for s in with_sets:
        args += ["--set", s]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return json.load(open(os.path.join(out, "summary.json")))

def at(s, path):
    for k in path.split("."):
        s = s[k]
    return s

# Every seed the page showed is `mmsim run` of the same setting on that seed.
runs = {}
for row in seen.get("per_seed", []):
    seed = row["seed"]
    cur = summary(seed, sets)
    runs[seed] = cur
    for m in metrics:
        expect(row["cur"][m] == at(cur, m), f"seed {seed} {m}: page {row['cur'][m]}, mmsim run {at(cur, m)}")
first = seen["per_seed"][0]["seed"]
base = summary(first, [])
for m in metrics:
    expect(seen["per_seed"][0]["base"][m] == at(base, m), f"baseline seed {first} {m} differs from mmsim run")

# The figures in the table are the means of those runs, as the page prints them.
def fmt(x, unit):
    if unit == "share":
        return f"{100 * x:.2f}%"
    a = abs(x)
    d = 1 if a >= 100 else 2 if a >= 10 else 3 if a >= 1 else 4
    return f"{x:.{d}f}"
units = {"abandon_rate": "share"}
for row in seen.get("shown", []):
    m = row["key"]
    mean = sum(at(r, m) for r in runs.values()) / len(runs)
    want = fmt(mean, units.get(m, ""))
    expect(row["cur"].split(" ")[0] == want, f"{m}: the page shows {row['cur']!r}, the runs' mean is {want}")
    expect(row["verdict"] in ("better", "worse", "same", "differs", "cannot tell from noise"), f"{m}: verdict {row['verdict']!r}")
# A limit of 250 instead of 150 must shorten the p90 wait and widen matches.
verdicts = {r["key"]: r["verdict"] for r in seen.get("shown", [])}
expect(verdicts.get("wait_s.p90") == "better", f"wait p90 verdict {verdicts.get('wait_s.p90')}")
expect(verdicts.get("spread_rating.mean") == "worse", f"spread verdict {verdicts.get('spread_rating.mean')}")

# Pin and save.
expect(seen.get("pinned") == seen.get("current"), f"pinned #{seen.get('pinned')}, current #{seen.get('current')}")
expect(state["baseline"]["id"] == seen.get("current"), "the server's baseline is not the pinned setting")
saved = seen.get("saved")
expect(saved == "gamedev-1v1-serve-1.toml", f"saved as {saved!r}")
if saved:
    path = os.path.join(folder, saved)
    text = open(path).read() if os.path.exists(path) else ""
    expect(f"limit = {float(value)}" in text, f"{saved} does not set the limit")
    r = subprocess.run([mmsim, "run", path, "--seed", str(first), "--tables", "none", "--quiet", "--out", os.path.join(folder, "saved-run")], stdout=subprocess.DEVNULL)
    expect(r.returncode == 0, f"{saved} does not run")
    if r.returncode == 0:
        s = json.load(open(os.path.join(folder, "saved-run", "summary.json")))
        expect(at(s, "wait_s.p90") == at(runs[first], "wait_s.p90"), f"{saved} does not run the setting")

if bad:
    print("serve: FAIL: " + "; ".join(bad))
    sys.exit(1)
print(f"serve: ok ({key}={value} on seeds {', '.join(str(s) for s in runs)}: every figure equals mmsim run's; "
      f"first answer {seen['first_answer_s']:.2f} s, whole {seen['full_answer_s']:.2f} s; pinned #{seen['pinned']}; saved {saved})")
EOF
for shot in serve-answer serve-pinned; do
    [[ -s $OUT/$shot.png ]] || die "no screenshot $shot.png"
done
echo "serve: screenshots $OUT/serve-answer.png, $OUT/serve-pinned.png"

#!/usr/bin/env bash
# Execute the notebooks in notebooks/ headless against fresh, short runs of
# every kind of output: the 1v1 smoke run, Armored Warfare, Dota, a
# replicated run and a sweep (with `mmsim compare` on each pair), so a change
# to the Parquet tables, summary.json or compare.json that breaks a notebook
# fails CI.
#
#   bash scripts/notebooks.sh
#
# Needs python3 (3.11, with venv and pip) and cargo. Sets up a virtual
# environment in notebooks/.venv from notebooks/requirements.txt, reused while
# the requirements and the interpreter stay the same. Runs and executed
# notebooks go to output/notebooks/ (NOTEBOOKS_OUT to change it); the committed
# notebooks carry no outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$ROOT/notebooks/.venv
REQS=$ROOT/notebooks/requirements.txt
OUT=${NOTEBOOKS_OUT:-$ROOT/output/notebooks}

die() { echo "notebooks.sh: $*" >&2; exit 1; }

command -v python3 >/dev/null || die "python3 not found: install Python 3.11 (Debian: apt-get install python3 python3-venv)"
command -v cargo >/dev/null || die "cargo not found"

# --- virtual environment -----------------------------------------------------
# The stamp records what the venv was built from: the requirements and the
# interpreter that made it. Any change rebuilds it from scratch.
stamp="$(sha256sum "$REQS" | cut -d' ' -f1) $(python3 -c 'import sys; print(sys.executable, sys.version.split()[0])')"
if [[ -x $VENV/bin/python && -f $VENV/.mmsim-stamp && "$(cat "$VENV/.mmsim-stamp")" == "$stamp" ]] \
    && "$VENV/bin/python" -c 'import polars, matplotlib, nbclient, nbformat, ipykernel' 2>/dev/null; then
    echo "venv: reusing notebooks/.venv"
else
    echo "venv: creating notebooks/.venv and installing notebooks/requirements.txt"
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV"; then
        rm -rf "$VENV"
        die "'python3 -m venv' failed: this Python lacks venv/ensurepip. On Debian or Ubuntu install it with 'apt-get install python3-venv' (for Debian 12's python3 3.11), then run this script again."
    fi
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$REQS" \
        || { rm -rf "$VENV"; die "pip could not install notebooks/requirements.txt"; }
    echo "$stamp" > "$VENV/.mmsim-stamp"
fi

# --- fresh runs --------------------------------------------------------------
# `cargo test --no-run` builds the binary with the same dependency features
# as the test run, so after `cargo test` (as in CI) nothing is recompiled;
# a plain `cargo build` resolves features without dev-dependencies and would
# rebuild polars.
cargo test --no-run --quiet --locked
MMSIM=$ROOT/target/debug/mmsim
RUNS=$OUT/runs
EXECUTED=$OUT/executed
rm -rf "$RUNS" "$EXECUTED"
mkdir -p "$RUNS" "$EXECUTED"
"$MMSIM" run scenarios/smoke.toml --out "$RUNS/smoke" --quiet
"$MMSIM" run scenarios/smoke.toml --set policy.rate_per_s=1 --out "$RUNS/smoke-slow-widening" --quiet
# Team outputs too (survivors, gold, parties, matches still in the lobby at
# the end): single-run.ipynb runs once more on each, shortened.
"$MMSIM" run scenarios/armored-warfare-15v15.toml --set run.duration=3h --set run.warmup=30m --out "$RUNS/armored-warfare" --quiet
"$MMSIM" run scenarios/dota2-5v5.toml --set run.duration=3h --set run.warmup=30m --out "$RUNS/dota2-5v5" --quiet
# Replicated runs (3 seeds, 40 minutes each) of two settings, and a short sweep
# (2 seeds): compare-runs.ipynb reads them and checks `mmsim compare` agrees.
"$MMSIM" run scenarios/smoke.toml --replications 3 --set 'run.duration="40m"' --tables none --out "$RUNS/smoke-reps" --quiet
"$MMSIM" run scenarios/smoke.toml --replications 3 --set 'run.duration="40m"' --set policy.rate_per_s=1 --tables none --out "$RUNS/smoke-reps-slow" --quiet
"$MMSIM" sweep scenarios/gamedev-1v1-sweep.toml --replications 2 --set 'run.duration="6h"' --out "$RUNS/sweep" --quiet
"$MMSIM" compare "$RUNS/smoke" "$RUNS/smoke-slow-widening" --out "$RUNS/compare-smoke" >/dev/null
"$MMSIM" compare "$RUNS/smoke-reps" "$RUNS/smoke-reps-slow" --out "$RUNS/compare-reps" >/dev/null
"$MMSIM" compare "$RUNS/armored-warfare" "$RUNS/dota2-5v5" --out "$RUNS/compare-aw-dota" >/dev/null

# --- execute the notebooks ---------------------------------------------------
# Keep the kernel away from the user's Jupyter and IPython settings (a user
# kernelspec named python3 could point at another interpreter).
JUPYTER_HOME=$(mktemp -d)
trap 'rm -rf "$JUPYTER_HOME"' EXIT
export JUPYTER_DATA_DIR=$JUPYTER_HOME/data JUPYTER_CONFIG_DIR=$JUPYTER_HOME/config
export JUPYTER_RUNTIME_DIR=$JUPYTER_HOME/runtime IPYTHONDIR=$JUPYTER_HOME/ipython
export MPLCONFIGDIR=$JUPYTER_HOME/matplotlib
export MMSIM_RUN=$RUNS/smoke
unset MMSIM_RUN_A MMSIM_RUN_B MMSIM_COMPARE MMSIM_SWEEP

"$VENV/bin/python" - "$ROOT/notebooks" "$EXECUTED" "$RUNS" <<'PY'
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

src, dst, runs = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
notebooks = sorted(src.glob("*.ipynb"))
if not notebooks:
    sys.exit(f"no notebooks in {src}")
# (notebook, environment it reads, name of the executed copy)
single = src / "single-run.ipynb"
compare = src / "compare-runs.ipynb"
jobs = [(p, {}, p.name) for p in notebooks if p.name not in ("single-run.ipynb", "compare-runs.ipynb")]
jobs += [(single, {"MMSIM_RUN": runs / r}, f"single-run-{r}.ipynb") for r in ("smoke", "armored-warfare", "dota2-5v5")]
jobs += [
    (compare, {"MMSIM_RUN_A": runs / "smoke", "MMSIM_RUN_B": runs / "smoke-slow-widening",
               "MMSIM_COMPARE": runs / "compare-smoke"}, "compare-runs-smoke.ipynb"),
    (compare, {"MMSIM_RUN_A": runs / "smoke-reps", "MMSIM_RUN_B": runs / "smoke-reps-slow",
               "MMSIM_COMPARE": runs / "compare-reps", "MMSIM_SWEEP": runs / "sweep"}, "compare-runs-replicated-and-sweep.ipynb"),
    (compare, {"MMSIM_RUN_A": runs / "armored-warfare", "MMSIM_RUN_B": runs / "dota2-5v5",
               "MMSIM_COMPARE": runs / "compare-aw-dota"}, "compare-runs-armored-warfare-vs-dota.ipynb"),
]
failed = []
for path, env, name in jobs:
    for k in ("MMSIM_RUN", "MMSIM_RUN_A", "MMSIM_RUN_B", "MMSIM_COMPARE", "MMSIM_SWEEP"):
        os.environ.pop(k, None)
    os.environ.update({k: str(v) for k, v in env.items()})
    nb = nbformat.read(path, as_version=4)
    started = time.monotonic()
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(src)}})
    try:
        client.execute()
        status = "ok"
    except CellExecutionError as err:
        status = "FAILED"
        failed.append(name)
        print(err, file=sys.stderr)
    nbformat.write(nb, dst / name)
    print(f"{name}: {status} in {time.monotonic() - started:.1f} s ({len(nb.cells)} cells) -> {dst / name}")
if failed:
    sys.exit(f"notebooks failed: {', '.join(failed)}")
PY

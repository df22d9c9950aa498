#!/usr/bin/env bash
# Execute the notebooks in notebooks/ headless against fresh runs of
# scenarios/smoke.toml, so a change to the Parquet tables or summary.json that
# breaks a notebook fails CI.
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

# --- execute the notebooks ---------------------------------------------------
# Keep the kernel away from the user's Jupyter and IPython settings (a user
# kernelspec named python3 could point at another interpreter).
JUPYTER_HOME=$(mktemp -d)
trap 'rm -rf "$JUPYTER_HOME"' EXIT
export JUPYTER_DATA_DIR=$JUPYTER_HOME/data JUPYTER_CONFIG_DIR=$JUPYTER_HOME/config
export JUPYTER_RUNTIME_DIR=$JUPYTER_HOME/runtime IPYTHONDIR=$JUPYTER_HOME/ipython
export MPLCONFIGDIR=$JUPYTER_HOME/matplotlib
export MMSIM_RUN=$RUNS/smoke
export MMSIM_RUN_A=$RUNS/smoke MMSIM_RUN_B=$RUNS/smoke-slow-widening
unset MMSIM_SWEEP

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
# (notebook, the run it reads, name of the executed copy)
jobs = [(p, None, p.name) for p in notebooks]
jobs += [(src / "single-run.ipynb", runs / r, f"single-run-{r}.ipynb") for r in ("armored-warfare", "dota2-5v5")]
failed = []
for path, run, name in jobs:
    if run is not None:
        os.environ["MMSIM_RUN"] = str(run)
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

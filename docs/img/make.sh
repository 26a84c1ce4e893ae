#!/bin/bash
# make.sh [OUTDIR] - the example figures of docs/results.md: draws
# example_results.py's results file with `surge plot` into OUTDIR (default:
# this folder) as example-rate.svg, example-latency.svg, ... Run it after a
# change to surge plot and commit the SVGs; tests/e2e/test_plot.sh runs it
# into a temporary folder and compares the figures' texts and series.
# SURGE: the surge binary (default: build/surge of this tree).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
surge=${SURGE:-$here/../../build/surge}
mkdir -p "$out"
python3 "$here/example_results.py" "$out/example.json"
"$surge" plot "$out/example.json" -o "$out/example.svg"
rm -f "$out/example.json"

#!/usr/bin/env bash
# Runs the guide's scene, `stress` and `crowd` natively and as wasm32-wasip1
# programs under Node's WASI (tools/wasi_run.mjs), and fails unless they
# print the same: every frame's checksum of the guide's scene (1,500
# frames) and its outcome, the final `results_digest=`, `checksum=` and
# `crowd_digest=` of the others.
#   bash tools/same_on_wasm.sh NATIVE_DIR WASM_DIR
# NATIVE_DIR holds the native examples, WASM_DIR the .wasm ones; the
# MovingAI data is read from $FRONTIER_MOVINGAI_DIR or ../shared/movingai.
set -euo pipefail
native="$1"
wasm="$2"
here="$(cd "$(dirname "$0")" && pwd)"
data="${FRONTIER_MOVINGAI_DIR:-../shared/movingai}"
FRONTIER_MOVINGAI_DIR="$(cd "$data" && pwd)"
export FRONTIER_MOVINGAI_DIR
out="$(mktemp -d)"
failed=0
# The figures both must print alike: wall-clock times left out.
figures() { grep -oE '(frame=[0-9]+ )?(checksum|results_digest|crowd_digest)=[0-9a-f]+|(units|arrived|reached|failed|requests|searches)=[0-9]+' || true; }
compare() {
    local name="$1"
    shift
    local example="$1"
    shift
    "$native/$example" "$@" | figures >"$out/$name.native"
    node --no-warnings "$here/wasi_run.mjs" "$wasm/$example.wasm" "$@" | figures >"$out/$name.wasm"
    local lines
    lines="$(wc -l <"$out/$name.native")"
    if [ "$lines" -eq 0 ]; then
        echo "FAILED: $name printed no figures natively"
        failed=1
    elif cmp -s "$out/$name.native" "$out/$name.wasm"; then
        echo "same: $name ($lines figures; last $(tail -n 1 "$out/$name.native"))"
    else
        echo "FAILED: $name differs on wasm32 (native < > wasm):"
        diff "$out/$name.native" "$out/$name.wasm" | head -n 10
        failed=1
    fi
}
compare guide guide --frames 1500 --checksums
compare "stress --terrain --units 300" stress --terrain --units 300
compare "stress AR0011SR --units 1000" stress --map "$FRONTIER_MOVINGAI_DIR/maps/bg512/AR0011SR.map" --units 1000
compare crowd crowd
compare "crowd --groups" crowd --groups
exit "$failed"

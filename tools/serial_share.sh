#!/bin/bash
# The crowd step's serial share, counted exactly: callgrind runs the crowd
# benchmark twice, one run collecting inside the step's systems, the other
# inside their parallel bodies (each a function of its own), and prints the
# instructions of each and the share outside the parallel bodies.
#
#   cargo build --release --features multi_threaded --example crowd
#   tools/serial_share.sh target/release/examples/crowd /tmp/serial --frames 450
#
# Instructions per mover-frame: step / (movers x frames).
set -e
BIN=$1; OUT=$2; shift 2; mkdir -p "$OUT"
source "$(dirname "$0")/crowd_step.sh"
PAR=()
# Every block of a team's stages runs in `parallel::block` (the snapshot,
# the lists, the plans, the solvers' rounds, the grid's chunks); the passes
# over the movers' tables (`each_mover!`) have bodies of their own. None
# calls another of the list: a nested toggle would stop the collection.
for f in parallel::block walk::walk_one passage::look avoidance::take_velocity \
    prefer::prefer_one; do
    PAR+=("--toggle-collect=$P$f")
done
valgrind --tool=callgrind --collect-atstart=no "${SYS[@]}" --callgrind-out-file="$OUT/step.out" \
    "$BIN" --threads 1 "$@" > "$OUT/step.log" 2>&1 &
valgrind --tool=callgrind --collect-atstart=no "${PAR[@]}" --callgrind-out-file="$OUT/par.out" \
    "$BIN" --threads 1 "$@" > "$OUT/par.log" 2>&1 &
wait
step=$(grep -o "Collected : [0-9]*" "$OUT/step.log" | grep -o "[0-9]*")
par=$(grep -o "Collected : [0-9]*" "$OUT/par.log" | grep -o "[0-9]*")
echo "step=$step parallel=$par serial_share=$(python3 -c "print(f'{($step-$par)/$step*100:.1f}%')")"

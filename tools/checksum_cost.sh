#!/bin/bash
# What the FrontierChecksum costs a crowd frame, counted exactly: callgrind
# runs the crowd benchmark with the checksum on, once collecting inside the
# crowd step's systems and once inside the checksum's own functions, and
# once with it off, collecting inside the checksum's functions (which must
# then run nothing).
#
#   cargo build --release --features multi_threaded --example crowd
#   tools/checksum_cost.sh target/release/examples/crowd /tmp/checksum --frames 300
set -e
BIN=$1; OUT=$2; shift 2; mkdir -p "$OUT"
source "$(dirname "$0")/crowd_step.sh"
SUM=(--toggle-collect=bevy_frontier::movement::plugin::fold_movers
    --toggle-collect=bevy_frontier::checksum::close_frame
    '--toggle-collect=*fold_result*')
valgrind --tool=callgrind --collect-atstart=no "${SYS[@]}" --callgrind-out-file="$OUT/step.out" \
    "$BIN" --threads 1 --checksum "$@" > "$OUT/step.log" 2>&1 &
valgrind --tool=callgrind --collect-atstart=no "${SUM[@]}" --callgrind-out-file="$OUT/sum.out" \
    "$BIN" --threads 1 --checksum "$@" > "$OUT/sum.log" 2>&1 &
wait
valgrind --tool=callgrind --collect-atstart=no "${SUM[@]}" --callgrind-out-file="$OUT/off.out" \
    "$BIN" --threads 1 "$@" > "$OUT/off.log" 2>&1
step=$(grep -o "Collected : [0-9]*" "$OUT/step.log" | grep -o "[0-9]*")
sum=$(grep -o "Collected : [0-9]*" "$OUT/sum.log" | grep -o "[0-9]*")
off=$(grep -o "Collected : [0-9]*" "$OUT/off.log" | grep -o "[0-9]*")
echo "step=$step checksum=$sum checksum_off=$off share=$(python3 -c "print(f'{$sum/$step*100:.2f}%')")"

#!/usr/bin/env bash
# The second GPU command, once benchmarks/gpu_check.sh has passed: the full 5000-step `large`
# run (the write-up's experiment D; targets: under 5 minutes on an H200, best val <= 1.49).
# The checkpoints stay on the machine (runs/large); its log.jsonl, curves.png and the printed
# summary go to $OUT (or ./gpu_full_run).  Extra arguments go to the training script (--tf32).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu_full_run}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
. benchmarks/gpu_data.sh
timeout 560 python3 examples/train_shakespeare.py --backend cupy --preset large --out-dir runs/large "$@" \
    >"$out/train.txt" 2>&1
rc=$?
cp runs/large/log.jsonl runs/large/curves.png "$out/" 2>/dev/null
tail -n 30 "$out/train.txt"
echo "gpu_full_run: exit $rc; log.jsonl, curves.png and train.txt in $out/"
exit "$rc"

#!/usr/bin/env bash
# The one prepared GPU check, for a machine with an NVIDIA GPU, CuPy, PyTorch CUDA, pytest-xdist
# and no network.  It needs only this working tree and the dataset, which is gitignored and so
# must travel with the command (data/tinyshakespeare/input.txt).  In order:
#   0. the dataset (checked first: without it nothing else is worth the GPU time), the GPU, CuPy;
#   1. the gpu-marked tests: CuPy against NumPy on every op of tests/op_table.py, the CuPy
#      backend's own parts (no sync in a step, TF32, the generator's state) and the CUDA kernels;
#   2. a short `large` training run on CuPy (its losses and ms/step);
#   3. the bench against PyTorch CUDA running the lecture's model (one Head module per head),
#      float32, then the `large` step again with TF32 matmuls in both.
# Each step has its own timeout; they add up to 510 s, under the 600 s a command may take
# (tests/test_gpu_check.py holds it to that).  Full logs go to $OUT (or ./gpu_check), a summary
# to stdout.  The exit status is the number of failed steps.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu_check}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
failed=0

step() {  # step NAME SECONDS COMMAND...: run with a timeout, full log to $out/NAME.txt, its tail here
    local name=$1 seconds=$2
    shift 2
    echo "== $name (timeout ${seconds}s): $*"
    local t0=$SECONDS
    timeout "$seconds" "$@" >"$out/$name.txt" 2>&1
    local rc=$?
    tail -n 25 "$out/$name.txt"
    echo "== $name: exit $rc after $((SECONDS - t0))s"
    [ "$rc" = 0 ] || failed=$((failed + 1))
}

# 0. the dataset first, loudly
. benchmarks/gpu_data.sh
step env 20 bash -c 'nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv;
    python3 -c "import cupy, torch; print(\"cupy\", cupy.__version__, \"CUDA runtime\", cupy.cuda.runtime.runtimeGetVersion(),
    \"torch\", torch.__version__, torch.cuda.is_available()); import tensorgrad as tg; print(\"tg.cuda.is_available()\", tg.cuda.is_available())"'

# 1. every gpu-marked test, over 8 workers (CuPy's kernel cache is shared on disk); only the files
#    that mark some, so that the workers do not each collect the whole suite
gpu_files=$(grep -l "mark.gpu" tests/test_*.py)
step gpu_tests 170 python3 -m pytest -m gpu -n 8 -q -p no:cacheprovider $gpu_files

# 2. a short large run: 200 steps, evaluations at 0, 100 and 199
step large_200 130 python3 examples/train_shakespeare.py --backend cupy --preset large --max-iters 200 \
    --eval-interval 100 --eval-iters 20 --sample-tokens 200

# 3. the bench against PyTorch CUDA: float32, then large with TF32 in both
step bench_fp32 120 python3 benchmarks/bench.py --backend cupy --presets small large --steps 20 --repeats 1 \
    --skip generate
step bench_tf32 70 python3 benchmarks/bench.py --backend cupy --presets large --steps 20 --repeats 1 --tf32 \
    --skip ops generate

echo "gpu_check: $failed step(s) failed; logs in $out/"
exit "$failed"

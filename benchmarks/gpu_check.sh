#!/usr/bin/env bash
# The one prepared GPU check: run it in a single call where an NVIDIA GPU and CuPy exist.
#   1. the GPU tests (CuPy against NumPy on every op of tests/helpers.py, float32 and float64);
#   2. a short `large` training run on CuPy (its losses and ms/step);
#   3. the benchmark table on CuPy against PyTorch CUDA (when torch with CUDA is importable),
#      timed with CUDA events, then the `large` step again with TF32 matmuls in both.
# Output goes to $OUT (or ./gpu_check) so it can be pasted into the README and the closing note.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu_check}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
mkdir -p data/tinyshakespeare
[ -f data/tinyshakespeare/input.txt ] || cp ../shared/data/tinyshakespeare/input.txt data/tinyshakespeare/ 2>/dev/null || true
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 | tee "$out/gpu.txt"
python3 -c "import cupy; print('cupy', cupy.__version__, cupy.cuda.runtime.runtimeGetVersion())" 2>&1 | tee -a "$out/gpu.txt"
timeout 180 python3 -m pytest -q -m gpu tests/test_gpu.py -p no:cacheprovider 2>&1 | tail -15 | tee "$out/gpu_tests.txt"
timeout 180 python3 -m pytest -q -m gpu tests/test_cuda_kernels_gpu.py -p no:cacheprovider 2>&1 | tail -15 \
    | tee "$out/cuda_kernel_tests.txt"  # the CUDA kernels against the reference ops
timeout 200 python3 examples/train_shakespeare.py --backend cupy --preset large --max-iters 300 --eval-interval 100 \
    --eval-iters 20 --sample-tokens 200 2>&1 | tee "$out/large_300.txt"
timeout 200 python3 benchmarks/bench.py --backend cupy --presets small large --steps 20 2>&1 | tee "$out/bench_cupy.txt"
timeout 120 python3 benchmarks/bench.py --backend cupy --presets large --steps 20 --tf32 --skip ops generate 2>&1 \
    | tee "$out/bench_cupy_tf32.txt"

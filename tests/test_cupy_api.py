"""The CuPy code path held against the real CuPy package, on a machine without a GPU.

CuPy imports without a GPU (cupy.cuda.is_available() is False), and its functions keep their
signatures: Python ones for inspect.signature, Cython ones in the first line of their docstring
(CuPy is built with embedded signatures).  So what the engine asks of an array namespace can be
checked here against cupy and cupy.ndarray: every attribute it takes, and every function, method
and keyword the strict device records during a training step, an evaluation and a generation.
The GPU-only parts of the backend (the random generator, TF32, the smoke test at load time) run
here against the real classes and functions where CuPy allows it without a GPU, and against
stand-ins that bind every call to CuPy's real signatures where it does not.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import tensorgrad as tg
from gpt import build_model, get_config
from gpt.data import ShakespeareData
from gpt.train import estimate_loss
from tensorgrad import backend
from tensorgrad.backend import cuda_setup
from tensorgrad.backend import random as backend_random
from tensorgrad.backend import strict as backend_strict
from tensorgrad.ops.dropout import keep_mask

cupy = pytest.importorskip("cupy")  # in the test extra; imports without a GPU

ROOT = Path(__file__).resolve().parent.parent
TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n" * 20

# CuPy 14's ufunc.__call__ (cupy/_core/_kernel.pyx) pops these keywords and refuses any other
# (it takes *args, **kwargs, so no signature shows them).
UFUNC_KEYWORDS = {"out", "dtype", "casting"}


def real_signature(fn) -> inspect.Signature:
    """inspect.signature, or the signature CuPy embeds in a Cython function's docstring."""
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        pass
    first = (fn.__doc__ or "").strip().splitlines()[0] if fn.__doc__ else ""
    m = re.match(r"^[\w.]+\((.*)\)(\s*->.*)?$", first)
    if not m:
        raise AssertionError(f"no signature for {fn!r}: docstring starts {first!r}")
    tree = ast.parse(f"def f({m.group(1)}): pass")
    namespace = {}
    exec(compile(ast.Module([tree.body[0]], []), "<signature>", "exec"), {}, namespace)  # defaults as literals
    return inspect.signature(namespace["f"])


def accepts_keywords(fn, keywords) -> bool:
    if isinstance(fn, cupy.ufunc):
        return set(keywords) <= UFUNC_KEYWORDS
    params = real_signature(fn).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return True
    named = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return set(keywords) <= named


def resolve(root, dotted):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


# ----------------------------------------------------------------------------- namespace attributes
def _is_namespace(node) -> bool:
    """`xp`, or a call of `namespace(...)` / `backend.namespace(...)`."""
    if isinstance(node, ast.Name):
        return node.id == "xp"
    if isinstance(node, ast.Call):
        f = node.func
        return getattr(f, "id", None) == "namespace" or getattr(f, "attr", None) == "namespace"
    return False


def _namespace_attributes():
    """Every `xp.NAME` and `namespace(device).NAME` in the engine's and the GPT's source."""
    found = set()
    for path in list((ROOT / "tensorgrad").rglob("*.py")) + list((ROOT / "gpt").rglob("*.py")):
        # the stand-in; device-specific kernels
        if path.parts[-2:] == ("backend", "strict.py") or "kernels" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and _is_namespace(node.value):
                found.add(node.attr)
    return found


def test_every_attribute_the_engine_takes_from_an_array_namespace_exists_in_cupy():
    names = _namespace_attributes()
    assert {"empty", "where", "exp", "sqrt"} <= names  # (the scan finds them)
    missing = sorted(n for n in names if not hasattr(cupy, n))
    assert missing == []
    assert hasattr(cupy.add, "at") and hasattr(cupy, "ndarray")


# ----------------------------------------------------------------------------- recorded calls
def _record_a_training_step_an_evaluation_and_a_generation(preset):
    tg.manual_seed(0)
    overrides = {"n_layer": 1, "n_embd": 12, "n_head": 2, "block_size": 8} if preset == "large" else {}
    model = build_model(preset, vocab_size=65, **overrides).to("strict")
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
    data = ShakespeareData(TEXT, device="strict")
    config = get_config(preset).replace(block_size=8, batch_size=4, eval_iters=2)
    with backend_strict.recording() as rec:
        xb, yb = data.get_batch("train", 8, 4)
        _, loss = model(xb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        estimate_loss(model, data, config)
        model.generate(xb[:1, :2], 4)
    return set(rec.calls)


@pytest.mark.parametrize("preset", ["small", "large"])
def test_every_call_of_a_step_an_evaluation_and_a_generation_exists_in_cupy_with_its_keywords(preset):
    calls = _record_a_training_step_an_evaluation_and_a_generation(preset)
    assert ("xp", "matmul", ("out",)) in calls or ("ndarray", "__matmul__", ()) in calls  # (it records)
    problems = []
    for kind, name, keywords in sorted(calls):
        root = cupy if kind == "xp" else cupy.ndarray
        try:
            fn = resolve(root, name)
        except AttributeError:
            problems.append(f"cupy{'' if kind == 'xp' else '.ndarray'} has no {name}")
            continue
        if keywords and not accepts_keywords(fn, keywords):
            problems.append(f"{kind} {name} does not take {keywords}")
    assert problems == []


def test_the_signature_check_catches_a_wrong_keyword():
    assert accepts_keywords(cupy.ndarray.sum, ("axis", "keepdims"))  # a Cython method (docstring)
    assert not accepts_keywords(cupy.ndarray.max, ("dtype",))  # CuPy's max takes no dtype
    assert accepts_keywords(cupy.where, ())
    assert not accepts_keywords(cupy.cumsum, ("keepdims",))  # a Python function
    assert not accepts_keywords(cupy.exp, ("where",))  # NumPy's ufuncs take where=, CuPy's do not
    assert accepts_keywords(cupy.add.at, ())


def test_index_add_calls_add_at_as_cupy_takes_it():
    target = backend_strict.xp.zeros(3)
    with backend_strict.recording() as rec:
        backend.add_at(backend_strict.xp, target, backend_strict.xp.asarray([0, 0, 2]), 1.0)
    assert ("xp", "add.at", ()) in rec.calls
    np.testing.assert_array_equal(backend.to_numpy(target), [2.0, 0.0, 1.0])  # repeats accumulate
    real_signature(cupy.add.at).bind(None, target, [0], 1.0)  # (self, a, indices, b=None)


@pytest.fixture
def as_strided_calls(monkeypatch):
    """cupy.lib.stride_tricks.as_strided bound to its real signature and run by NumPy's on host
    arrays; the list of the arguments it was called with."""
    import cupy.lib.stride_tricks as tricks

    signature, calls = real_signature(tricks.as_strided), []

    def as_strided(*args, **kwargs):
        signature.bind(*args, **kwargs)
        calls.append(args)
        return np.lib.stride_tricks.as_strided(*args, **kwargs)

    monkeypatch.setattr(tricks, "as_strided", as_strided)
    return calls


def test_unfold_views_by_cupys_as_strided_as_it_takes_it(as_strided_calls):
    """backend.windows (Tensor.unfold's view) on the GPU: cupy.lib.stride_tricks.as_strided, bound to
    its real signature, with the strides NumPy's gives on the host."""
    x = np.arange(24.0).reshape(4, 6)
    gpu, host = backend.windows(cupy, x, 1, 3, 2), backend.windows(np, x, 1, 3, 2)
    assert [call[1:] for call in as_strided_calls] == [((4, 2, 3), (48, 16, 8))]  # rows, windows 2 apart, then 1
    assert gpu.strides == host.strides == (48, 16, 8)
    np.testing.assert_array_equal(gpu, [[row[0:3], row[2:5]] for row in x])


def test_diagonal_views_by_cupys_as_strided_as_it_takes_it(as_strided_calls):
    """backend.diagonal (Tensor.diagonal's view) on the GPU: cupy.lib.stride_tricks.as_strided, bound
    to its real signature, on the same transposed start as on the host."""
    x = np.arange(60.0).reshape(3, 4, 5)
    gpu, host = backend.diagonal(cupy, x, 1, 2, 0), backend.diagonal(np, x, 1, 2, 0)
    assert [call[1:] for call in as_strided_calls] == [((4, 2), (40, 168))]  # dim 1, then 8 * (1 + 20) apart
    assert gpu.strides == host.strides == (40, 168)
    np.testing.assert_array_equal(gpu, np.diagonal(x, 1, 2, 0))


# ----------------------------------------------------------------------------- random numbers
class _HostState(np.ndarray):
    """A host int8 array in the place of CuPy's device array of generator states (`.data.ptr`)."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)


@pytest.fixture
def cupy_without_gpu(monkeypatch):
    """The real cupy module as the backend's, with the few calls that need a GPU replaced:
    device id, device allocation (host arrays instead), transfers and the cuRAND state kernel."""
    import cupy.random._generator_api as generator_api

    inits = []
    monkeypatch.setattr(cupy.cuda, "get_device_id", lambda: 0)
    monkeypatch.setattr(cupy, "zeros", lambda n, dtype: np.zeros(n, dtype).view(_HostState))
    monkeypatch.setattr(cupy, "asnumpy", lambda a: np.array(a))
    monkeypatch.setattr(cupy, "asarray", lambda a: np.asarray(a))
    monkeypatch.setattr(generator_api, "init_curand", lambda *args: inits.append(args))
    monkeypatch.setattr(cuda_setup, "_cupy", cupy)
    monkeypatch.setattr(backend_random, "_rngs", {})
    return inits


class _BindingGenerator:
    """Stands in for cupy.random.Generator's draws: binds each call to the real method's signature
    and returns host arrays of the asked shape and dtype."""

    def __init__(self, bit_generator):
        self.bit_generator, self.calls = bit_generator, []

    def __getattr__(self, name):
        signature = real_signature(getattr(cupy.random.Generator, name))

        def draw(*args, **kwargs):
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            self.calls.append(name)
            size, dtype = bound.arguments["size"], np.dtype(bound.arguments["dtype"])
            return np.zeros(size, dtype)

        return draw


def test_the_gpu_generator_is_philox_with_a_fixed_thread_count(cupy_without_gpu):
    gen = backend.rng("cuda")._gen
    assert isinstance(gen, cupy.random.Generator)
    bits = gen.bit_generator
    assert isinstance(bits, cupy.random.Philox4x3210) and bits._state_size() == backend_random._CUDA_RNG_THREADS
    assert bits._state.size == bits._type_size() * backend_random._CUDA_RNG_THREADS == 64 << 16  # 4 MiB of states
    assert backend_random._CUDA_RNG_THREADS % 256 == 0  # CuPy launches 256-thread blocks over the states
    ((generator, _ptr, _seed, size),) = cupy_without_gpu  # the states were initialised once, on the device
    assert generator == bits.generator and size == backend_random._CUDA_RNG_THREADS


def test_the_gpu_draws_bind_to_cupys_generator(cupy_without_gpu):
    rng = backend.rng("cuda")
    rng._gen = _BindingGenerator(rng._gen.bit_generator)
    assert keep_mask("cuda", (2, 3), 0.2).shape == (2, 3)
    assert rng.uniform((4,), np.float32).dtype == np.float32
    assert rng.normal((4,), np.float64).dtype == np.float64
    ids = rng.integers(0, 65, (8,))
    assert ids.dtype == np.int64 and ids.shape == (8,)
    assert rng._gen.calls == ["random", "random", "standard_normal", "integers"]  # never RandomState.randint


def test_the_gpu_generator_state_round_trips_through_json(cupy_without_gpu):
    import json

    rng = backend.rng("cuda")
    states = rng._gen.bit_generator._state
    advanced = (np.arange(states.size) % 251).astype(np.int8)  # stands for states advanced by draws
    states[:] = advanced
    saved = json.loads(json.dumps(rng.get_state()))
    assert saved["bit_generator"] == "Philox4x3210" and saved["threads"] == backend_random._CUDA_RNG_THREADS
    states[:] = 0
    rng.set_state(saved)
    np.testing.assert_array_equal(states, advanced)
    with pytest.raises(ValueError, match="another device"):
        rng.set_state(backend.rng("cpu").get_state())  # a CPU checkpoint's state


def test_a_gpu_generator_is_the_default_generators_class_and_draws_on_the_device(cupy_without_gpu):
    g = tg.Generator("cuda")
    assert type(g) is type(backend.rng("cuda")) and g.device == "cuda"
    assert g.manual_seed(9) is g and g.initial_seed() == 9
    bits = g._gen.bit_generator
    assert isinstance(bits, cupy.random.Philox4x3210) and bits._state_size() == backend_random._CUDA_RNG_THREADS
    tg.manual_seed(9)  # the default GPU generator is seeded with seed + DEVICES.index("cuda")
    assert backend.rng("cuda").initial_seed() == 9 + backend.DEVICES.index("cuda")
    default_init = cupy_without_gpu[-1][2]  # the states were re-initialised on the device, from CuPy's hash of the seed
    tg.Generator("cuda").manual_seed(10)
    assert cupy_without_gpu[-1][2] == default_init  # the same seed, the same device states
    g._gen = _BindingGenerator(bits)
    perm = g.permutation(5)  # CuPy's Generator has no permutation: the ranks of device uniforms
    assert perm.dtype == np.int64 and sorted(perm.tolist()) == list(range(5))
    assert backend.generator_for("cuda", g, "randn") is g
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        backend.generator_for("cpu", g, "randn")
    assert g._gen.calls == ["random"]


# ----------------------------------------------------------------------------- TF32
class _Calls(list):
    capability: dict


@pytest.fixture
def tf32_calls(monkeypatch):
    """CuPy's compute-type switch and the cuBLAS math mode, bound to their real signatures.

    cupy_backends.cuda.libs.cublas cannot be imported without libcublas; its setMathMode is
    `cpdef setMathMode(intptr_t handle, int mode)` in CuPy 14 (cupy_backends/cuda/libs/cublas.pyx)."""
    import cupy._core._routines_linalg as linalg
    import cupy_backends.cuda.libs as libs

    calls = _Calls()
    set_compute_type = real_signature(linalg.set_compute_type)
    real_signature(cupy.cuda.device.get_cublas_handle).bind()
    monkeypatch.setattr(linalg, "set_compute_type",
                        lambda *a: calls.append(("compute_type", set_compute_type.bind(*a).args)))  # fmt: skip
    monkeypatch.setattr(cupy.cuda.device, "get_cublas_handle", lambda: 1234)
    monkeypatch.setitem(libs.__dict__, "cublas", types.SimpleNamespace(  # (no getattr: it would load libcublas)
        setMathMode=lambda handle, mode: calls.append(("math_mode", (handle, mode)))))  # fmt: skip
    capability = {"cc": "90"}
    descriptor = inspect.getattr_static(cupy.cuda.Device, "compute_capability")
    assert isinstance(descriptor, property | types.GetSetDescriptorType)  # the real Device has it
    monkeypatch.setattr(cupy.cuda, "Device", lambda: types.SimpleNamespace(compute_capability=capability["cc"]))
    monkeypatch.setattr(cuda_setup, "_tf32", None)
    calls.capability = capability
    return calls


def test_allow_tf32_after_cupy_is_loaded_sets_the_compute_type_and_the_math_mode(monkeypatch, tf32_calls):
    import cupy._core._routines_linalg as linalg

    monkeypatch.setattr(cuda_setup, "_cupy", cupy)
    tg.cuda.allow_tf32()
    assert tf32_calls == [("compute_type", (cupy.float32, linalg.COMPUTE_TYPE_TF32)),  # 2-d GEMMs
                          ("math_mode", (1234, 3))]  # batched GEMMs: CUBLAS_TF32_TENSOR_OP_MATH  # fmt: skip
    tf32_calls.clear()
    tg.cuda.allow_tf32(False)
    assert tf32_calls == [("compute_type", (cupy.float32, linalg.COMPUTE_TYPE_DEFAULT)), ("math_mode", (1234, 0))]


def test_allow_tf32_before_cupy_is_loaded_applies_at_load_and_not_below_ampere(monkeypatch, tf32_calls):
    monkeypatch.setattr(cuda_setup, "_cupy", None)
    monkeypatch.setattr(cuda_setup, "_smoke_test", lambda cupy: None)
    monkeypatch.setattr(cupy.cuda, "is_available", lambda: True)
    tg.cuda.allow_tf32()
    assert tf32_calls == []  # nothing to set yet
    cuda_setup.load_cupy()
    assert [name for name, _ in tf32_calls] == ["compute_type", "math_mode"]
    tf32_calls.clear()
    tf32_calls.capability["cc"] = "75"  # Turing: no TF32 tensor cores
    tg.cuda.allow_tf32()
    assert tf32_calls == []


# ----------------------------------------------------------------------------- loading and the smoke test
def _fake_cupy(monkeypatch, **steps):
    """A cupy whose GPU is there, with the smoke test's steps replaced (kernel, gemm, draw)."""

    class Array(np.ndarray):
        pass

    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(is_available=lambda: True)
    fake.float32 = np.float32
    fake.asnumpy = np.asarray
    fake.asarray = np.asarray
    fake.arange = steps.get("arange", np.arange)
    fake.random = types.SimpleNamespace(
        Philox4x3210=lambda seed, size: None,
        Generator=lambda bits: types.SimpleNamespace(random=steps.get("random", lambda n, dtype: np.full(n, 0.5))),
    )
    monkeypatch.setattr(cuda_setup, "_cupy", None)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    return fake


def test_a_missing_nvrtc_is_named_in_one_line(monkeypatch):
    from cuda.pathfinder import DynamicLibNotFoundError

    def arange(*a, **k):  # what CuPy 14 raises at the first kernel without NVRTC
        raise DynamicLibNotFoundError('Failure finding "libnvrtc.so.12": No such file: libnvrtc.so.12')

    _fake_cupy(monkeypatch, arange=arange)
    with pytest.raises(tg.DeviceError) as info:
        tg.zeros(2, device="cuda")
    msg = str(info.value)
    assert "an elementwise kernel" in msg and "NVRTC" in msg and "cupy-cuda12x[ctk]" in msg and "\n" not in msg
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert not tg.cuda.is_available()


def test_a_missing_cublas_is_named_with_cupys_own_error(monkeypatch):
    def gemm_with_the_real_import_error(*a, **k):
        import cupy_backends.cuda.libs as libs

        return libs.cublas  # on a machine without libcublas: CuPy's real ImportError

    try:
        gemm_with_the_real_import_error()
        pytest.skip("libcublas is installed here")
    except ImportError:
        pass

    class Matrix(np.ndarray):
        def __matmul__(self, other):
            return gemm_with_the_real_import_error()

    fake = _fake_cupy(monkeypatch)
    fake.asarray = lambda a: np.asarray(a).view(Matrix)
    with pytest.raises(tg.DeviceError, match=r"a matrix product failed.*cuBLAS.*could not be loaded"):
        cuda_setup.load_cupy()


def test_a_wrong_result_is_refused(monkeypatch):
    _fake_cupy(monkeypatch, random=lambda n, dtype: np.full(n, 1.5))  # outside [0, 1)
    with pytest.raises(tg.DeviceError, match="a random draw wrongly"):
        cuda_setup.load_cupy()


def test_erf_keeps_float16(monkeypatch):
    import cupyx.scipy.special

    monkeypatch.setattr(cupyx.scipy.special, "erf", lambda x: np.asarray(x, np.float64) * 0)  # CuPy 14: float64 out
    out = backend.erf(types.SimpleNamespace(), np.ones(3, np.float16))  # a namespace that is neither NumPy nor strict
    assert out.dtype == np.float16

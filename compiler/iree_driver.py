"""IREE, in process: compile upstream MLIR text into a `.vmfb` for one target."""

from __future__ import annotations

import ctypes
import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass

from iree.compiler import api
from iree.compiler.api import ctypes_dl

from .errors import CompileError
from .iree_fences import fence_host_loops


@dataclass(frozen=True)
class Target:
    """Everything that decides the compiled bytes for a device kind."""

    name: str
    flags: tuple[str, ...]


_KEEP_F64 = "--iree-input-demote-f64-to-f32=false"  # else IREE computes float64 in float32
# Buffers IREE's runtime binds to one dispatch, at most: a module with a dispatch of more
# fails to load ("binding count 41 > 32"), and IREE's dispatch formation does not count them.
MAX_BINDINGS = 32
_SYSTEM_LIBRARY = "--iree-llvmcpu-link-embedded=false"


def _system_linking() -> tuple[str, ...]:
    """CPU code is linked as a system shared library (dlopen'ed at load), by IREE's own lld
    where the wheel has it, not as IREE's embedded ELF: the same machine code (same bits, same
    run time) for 60-80 ms less compile a module (SELU 339 -> 274 ms, `x + 1` 254 -> 205, an
    MLP 959 -> 878, best of 6 in process; LLVM's passes on SELU's kernel 0.12 -> 0.04 s), and
    the library may call libm (IREE approximates float32 `sin`, `tanh`, ... but calls libm
    for float64 ones, which an embedded ELF cannot import). Loading one leaks a descriptor
    and an empty temporary file in IREE 3.x: the runtime takes them back (see
    runtime/executable._context). Without a linker (no iree-lld, ld.lld or ld) CPU code
    stays an embedded ELF, which IREE links itself, and float64 libm calls fail to link."""
    from iree.compiler.tools.binaries import find_tool

    try:
        lld = find_tool("iree-lld")
    except ValueError:  # a wheel without it: IREE looks for ld.lld, then ld
        lld = None
    if lld is not None and sys.platform.startswith("linux"):
        # IREE runs the linker through the shell, this string first
        return (_SYSTEM_LIBRARY,
                f"--iree-llvmcpu-system-linker-path={shlex.quote(lld)} -flavor gnu")
    if shutil.which("ld.lld") or shutil.which("ld"):
        return (_SYSTEM_LIBRARY,)
    return ()


# Data tiling packs a matmul's operands into the CPU's tile layout around the kernel (1024^2
# f32: 6.0 ms vs 8.9 ms untiled). A module whose contractions are all matrix-vector, dot or
# outer products (or products at most pipeline.TILED_MIN_DEPTH deep) has nothing to tile:
# packing costs more than it saves (per-example gradients of a 256-wide linear model, one
# core, best of 15: 24 vs 16 us).
_DATA_TILING = "--iree-opt-data-tiling"
_NO_UKERNELS = "--iree-llvmcpu-enable-ukernels=none"
_CPU_FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=host",
    _DATA_TILING,
    *_system_linking(),
    # Vectorized float reductions (XLA reassociates them too): softmax 7.2 -> 4.1 ms.
    "--iree-llvmcpu-reassociate-fp-reductions",
    _KEEP_F64,
    # LLVM's SLP vectorizer (off in IREE by default) packs the independent scalar chains of
    # an elementwise loop kernel's lanes (lower_regions) into vector ops: 1000 trips on 256
    # floats, 16 lanes, 64 -> 40 us (8 lanes: 67 -> 60); compiles took as long.
    "--iree-llvmcpu-slp-vectorization=true",
    # A dispatch may keep 8 rows of a value it reduces and reads again on its stack (see
    # fuse.py: softmax's exp, 8 x 4 KiB): twice IREE's default limit, half of the 128 KiB
    # each task worker's thread has.
    "--iree-llvmcpu-stack-allocation-limit=65536",
)
TARGETS = {
    # IREE's own code for packed products, not its microkernel: the microkernel has only
    # IREE's tile shapes and computes any other (ember-lower-to-linalg-avx512's 12 x 32) in a
    # scalar fallback (1024^2 f32: 0.9 s against 12-15 ms); its bitcode costs the compile of
    # a matmul module a quarter (the eager shape-polymorphic matmul 0.48-0.52 s against
    # 0.62-0.70), and with IREE's tiles it runs no faster (Zen 4, f32, 16x8x4 to 1024^3:
    # within 3%, both ways; Emerald Rapids, 1024^2 f32 and the einsum row: within noise).
    # Modules that run on the calling thread (small work):
    "cpu": Target("cpu", (*_CPU_FLAGS, _NO_UKERNELS)),
    # Coarse-fences ABI: main(args..., wait_fence, signal_fence) returns before the work is
    # done, and the runtime chains calls on fences without syncing the host. For modules
    # that run on worker threads; inline ones skip the fence bookkeeping (~2.5 us a call).
    "cpu-async": Target("cpu-async", (*_CPU_FLAGS, _NO_UKERNELS,
                                      "--iree-execution-model=async-external")),
}
# IREE's fusion of a reduction into the reductions and elementwise ops that read it (off by
# default "since all backends don't support it yet"): layernorm 4096x1024 becomes one
# dispatch, 3.0 -> 1.1 ms. IREE 3.13 fails to compile some modules with it (loops: solve,
# cholesky; a gather reading another op's result: "operand does not dominate this use"),
# so CPU modules without loops or gathers try it first and fall back to the plain target.
_AGGRESSIVE_FUSION = "--iree-dispatch-creation-enable-aggressive-fusion"
_NOT_FOR_AGGRESSIVE_FUSION = re.compile(r"\bscf\.|tensor\.extract ")


# IREE 3.13's evaluation of constant subexpressions at compile time fails on some modules
# ("jit global source initialization order invalid: global ... has no value", seen on a
# module of a dozen complex constant expressions): the last attempt computes them at load.
_NO_CONST_EVAL = "--iree-opt-const-eval=false"


def is_cpu(target: str) -> bool:
    """Whether a target name ("cpu", "cpu-async", "cuda:sm_80", ...) is a CPU one."""
    return target.partition(":")[0] in TARGETS


# IREE's hoisting of constant expressions into load-time initializers (and their evaluation
# at compile time) computes, once, what depends only on constants: a transposed weight, an
# index table, twiddles from an iota. With no such constant (no dense one that is not a
# splat, no index-based value) there is nothing to hoist, and its analysis still costs
# compile time that grows with the module (benchmarks/scaling.py's unrolled steps).
_NO_HOISTING = ("--iree-opt-const-expr-hoisting=false", "--iree-opt-const-eval=false")
_HOISTABLE = re.compile(r'dense<[\["]|linalg\.index|\biota\b')


def attempts(text: str, tgt: Target) -> tuple[Target, ...]:
    """The targets to compile `text` for, in turn, until one succeeds."""
    if is_cpu(tgt.name) and not _HOISTABLE.search(text):
        tgt = Target(tgt.name, (*tgt.flags, *_NO_HOISTING))
        last = (tgt,)
    else:
        last = (tgt, _with(tgt, _NO_CONST_EVAL))
    if not is_cpu(tgt.name) or _NOT_FOR_AGGRESSIVE_FUSION.search(text):
        return last
    return (_with(tgt, _AGGRESSIVE_FUSION), *last)


@functools.cache
def _with(tgt: Target, flag: str) -> Target:
    return Target(tgt.name, (*tgt.flags, flag))


# GPU targets: "cuda" or "cuda:sm_90" picks the architecture. CUDA modules carry PTX, which
# the driver compiles for the GPU at hand, so sm_80 code also runs on Hopper and later.
GPU_TARGETS = {
    "cuda": ("--iree-hal-target-device=cuda", "--iree-cuda-target={}", "sm_80"),
    "vulkan": ("--iree-hal-target-device=vulkan", "--iree-vulkan-target={}", "ampere"),
    "rocm": ("--iree-hal-target-device=hip", "--iree-rocm-target={}", "gfx942"),
}

# Process-global LLVM options (not accepted per session). IREE masks every vector access by
# default and AMD's masked moves are slow: peeling the tail took a 1M-element elementwise
# kernel from 1.22 ms to 0.23 ms on this machine.
# Command buffers resolve their buffers when they run, not when they are recorded: IREE
# records a one-shot command buffer on the host naming the buffers the queue allocates for
# it, and the local-task driver failed a recording that named one whose allocation was still
# waiting ("transient buffer has not been committed"). Two host loops writing one carried
# buffer in place with a product in their body (a fori_loop of 3 trips, then one of 2;
# ember-unroll-loops' loop of 8 bodies a trip, then the trips left) failed every call; so
# does iree-run-module on the module. Cost: the scan RNN row 12.5 -> 13.2 ms (medians of 5
# processes of 11 rounds), the dispatch rows within noise.
# An operation may hold 2048 native vectors, four times IREE's default: IREE 3.13 tiles the
# unpack after a data-tiled product by its outer dims (fixed upstream in iree-org/iree#24709),
# and with the 8 x 8 register tiles of AVX2 (smaller on SSE) a product whose result has two
# readers fused in (an MLP layer's pre-activation, kept for the backward pass, and its ReLU)
# became a vector<16x4x8x8xf32> transpose: 512 AVX2 registers, 1024 SSE ones, over the
# limit; the MLP training step failed to compile for every CPU without AVX-512. AVX-512's
# 16 x 16 tiles stay within the default. The tiled code is still the faster one, for AVX2
# and for SSE (figures in the commit that raised the limit).
GLOBAL_FLAGS = ("--iree-llvmcpu-vector-pproc-strategy=peel",
                "--iree-hal-force-indirect-command-buffers",
                "--iree-llvmcpu-max-allowed-number-of-native-vectors=2048")

_STDERR_LOCK = threading.Lock()


_INIT_LOCK = threading.Lock()
_initialized = False


def _global_init() -> None:
    """The compiler library's one-time setup, under a lock: two threads' first compiles ran
    it twice, and IREE aborts the process ("ireeCompileParseCL called multiple times")."""
    global _initialized
    if _initialized:
        return
    with _INIT_LOCK:
        if not _initialized:
            api.Session()  # initializes the compiler library once
            ctypes_dl._initializeGlobalCL("ember", *GLOBAL_FLAGS)
            _initialized = True


_local = threading.local()
_forked = False  # this process was forked after the compiler library started


def _after_fork_in_child() -> None:
    """The compiler library's threads do not survive a fork, and a compile in the child
    would wait for them forever: the child compiles in a fresh iree-compile process."""
    global _forked
    _forked = _forked or _initialized


os.register_at_fork(after_in_child=_after_fork_in_child)


def _session(target: Target) -> api.Session:
    """One session per thread and target: sessions are not shared across threads, so
    compiles on different threads run in parallel (the C API releases the GIL)."""
    _global_init()
    sessions = getattr(_local, "sessions", None)
    if sessions is None:
        sessions = _local.sessions = {}
    sess = sessions.get(target)
    if sess is None:
        sess = sessions[target] = api.Session()
        sess.set_flags(*target.flags)
    return sess


# Machines CPU code can be cross-compiled for ("cpu:aarch64:neoverse-n1"), by LLVM triple.
MACHINES = {"x86_64": "x86_64-unknown-linux-gnu", "aarch64": "aarch64-unknown-linux-gnu"}


@functools.cache
def target(name: str) -> Target:
    """A target by name: "cpu", "cpu-async", or a GPU kind, each optionally with the
    architecture to compile for ("cpu:x86-64-v3", "cuda:sm_90"; the CPU default is the host).
    A CPU of another machine names the machine first: "cpu:aarch64:neoverse-v2" (code that
    is compiled, saved and run there, not here)."""
    if name in TARGETS:
        return TARGETS[name]
    kind, colon, arch = name.partition(":")
    machine, _, arch = arch.rpartition(":") if kind in TARGETS else ("", "", arch)
    valid_arch = arch.replace("_", "").replace("-", "").isalnum()
    if not (kind in TARGETS or kind in GPU_TARGETS) or (colon and not valid_arch) or (
            machine and machine not in MACHINES):
        choices = ", ".join([*TARGETS, *GPU_TARGETS])
        raise ValueError(f"compile target requires one of {choices}, optionally with an "
                         f"architecture (cpu:x86-64-v3, cpu:aarch64:neoverse-v2, cuda:sm_90, "
                         f"rocm:gfx90a; machines: {', '.join(MACHINES)}), got {name!r}")
    if kind in TARGETS:
        known = _known_cpus(machine)
        if colon and arch != "host" and arch not in known:
            where = f"{machine} CPUs" if machine else "this machine's architecture"
            raise ValueError(f"compile target {name!r} requires a CPU LLVM knows for {where}: "
                             f"{'' if machine else 'host or '}one of {', '.join(known)}; "
                             f"got {arch!r}")
        if machine and arch == "host":
            raise ValueError(f"compile target {name!r} requires a {machine} CPU by name, "
                             f"not host: one of {', '.join(known)}")
        triple = (f"--iree-llvmcpu-target-triple={MACHINES[machine]}",) if machine else ()
        flags = tuple(f"--iree-llvmcpu-target-cpu={arch}"
                      if f.startswith("--iree-llvmcpu-target-cpu=") else f
                      for f in TARGETS[kind].flags)
        return Target(name, (*flags, *triple))
    device, arch_flag, default_arch = GPU_TARGETS[kind]
    arch = arch or default_arch
    # Vulkan devices seldom have float64; CUDA and ROCm compute it natively.
    f64 = () if kind == "vulkan" else (_KEEP_F64,)
    return Target(f"{kind}:{arch}", (device, arch_flag.format(arch), *f64))


@functools.cache
def _known_cpus(machine: str = "") -> tuple[str, ...]:
    """The CPU names LLVM accepts for `machine` (MACHINES; "": this machine's). Asked of
    iree-compile in a child process: an unknown name makes LLVM exit the process it runs in."""
    from iree.compiler.tools.binaries import find_tool

    flags = [f for f in _CPU_FLAGS if not f.startswith("--iree-llvmcpu-target-cpu=")]
    if machine:
        flags.append(f"--iree-llvmcpu-target-triple={MACHINES[machine]}")
    res = subprocess.run([find_tool("iree-compile"), "--compile-to=preprocessing", *flags,
                          "--iree-llvmcpu-target-cpu=help", "-"], input=_PROBE.encode(),
                         capture_output=True, timeout=120)
    listed = re.search(rb"List of accepted CPUs: (.*)", res.stdout + res.stderr)
    if listed is None:
        raise CompileError("iree-compile did not list the CPUs it accepts",
                           (res.stdout + res.stderr).decode(errors="replace"), "")
    return tuple(listed.group(1).decode().strip().split(", "))


_PROBE = "func.func @probe(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }"


def untiled(tgt: Target) -> Target:
    """`tgt` (a CPU target) without data tiling."""
    return Target(tgt.name, tuple(f"{_DATA_TILING}=false" if f == _DATA_TILING else f
                                  for f in tgt.flags))


@functools.cache
def cpu_features(tgt: Target) -> tuple[str, frozenset[str]]:
    """The CPU a CPU target compiles for, as LLVM resolves it ("host" is this machine's:
    `znver4`), and the instruction-set features its code may use."""
    ir = compile_to_phase(_PROBE, tgt, "preprocessing")
    found = re.search(r'cpu = "([^"]*)", cpu_features = "([^"]*)"', ir)
    if found is None:
        raise CompileError(f"IREE did not say which CPU target {tgt.name} compiles for", ir,
                           "")
    return found.group(1), frozenset(f for f in found.group(2).split(",") if f.startswith("+"))


# What IREE reports of a compile is kept from stderr (where its default handler prints it)
# unless diagnostics are asked for: a failure is compiled again to capture them.
_DIAGNOSTIC = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                               ctypes.c_void_p)
_IGNORED = _DIAGNOSTIC(lambda severity, message, size, user_data: None)


@functools.cache
def _callback_diagnostics():
    enable = ctypes_dl._dylib.ireeCompilerInvocationEnableCallbackDiagnostics
    enable.argtypes = [ctypes.c_void_p, ctypes.c_int, _DIAGNOSTIC, ctypes.c_void_p]
    enable.restype = None
    return enable


def _silence(inv: api.Invocation) -> None:
    """IREE's diagnostics of this invocation go nowhere (not to stderr)."""
    _callback_diagnostics()(inv._inv_p, 0, _IGNORED, None)


def _compile(text: str, tgt: Target, diagnostics: bool) -> api.Invocation | None:
    sess = _session(tgt)
    inv = sess.invocation()
    if diagnostics:
        inv.enable_console_diagnostics()
    else:
        _silence(inv)
    source = api.Source.wrap_buffer(sess, text.encode())
    return inv if inv.parse_source(source) and inv.execute() else None


def compile_text(text: str, tgt: Target, *, name: str = "module") -> bytes:
    """Compile MLIR text to VM bytecode; on failure raise CompileError with diagnostics."""
    vmfb, last = _first_success(text, tgt, lambda attempt: _compiled(text, attempt, name))
    if vmfb is None and ("scf.for" in text or "scf.while" in text):
        fenced = fence_host_loops(text)  # the last attempt (see iree_fences)
        if fenced != text:
            vmfb, last = _first_success(fenced, tgt,
                                        lambda attempt: _compiled(fenced, attempt, name))
    if vmfb is None:
        raise CompileError(f"IREE failed to compile {name} for target {last.name}",
                           _diagnostics(text, last), _save(text, name))
    return vmfb


def _first_success(text: str, tgt: Target, compile_one):
    """(what `compile_one` gives for the first of `attempts` it succeeds on, else None; the
    last target tried). Failures are silent: the next attempt may succeed."""
    for attempt in attempts(text, tgt):
        out = compile_one(attempt)
        if out is not None:
            return out, attempt
    return None, attempt


def _compiled(text: str, tgt: Target, name: str) -> bytes | None:
    if _forked:
        try:
            return _compile_in_a_process(text, tgt, name)
        except CompileError:
            return None
    inv = _compile(text, tgt, diagnostics=False)
    if inv is None:
        return None
    out = api.Output.open_membuffer()
    inv.output_vm_bytecode(out)
    return bytes(out.map_memory())


def _compile_in_a_process(text: str, tgt: Target, name: str, *options: str) -> bytes:
    """iree-compile in a child process: a forked process cannot use the compiler library
    its parent started (its threads are gone)."""
    from iree.compiler.tools.binaries import find_tool

    res = subprocess.run([find_tool("iree-compile"), *tgt.flags, *GLOBAL_FLAGS, *options, "-",
                          "-o", "-"], input=text.encode(), capture_output=True)
    if res.returncode:
        raise CompileError(f"IREE failed to compile {name} for target {tgt.name}",
                           res.stderr.decode(errors="replace"), _save(text, name))
    return res.stdout


def compile_to_phase(text: str, tgt: Target, phase: str) -> str:
    """The module as IREE has it after `phase` ("flow", "stream", ...): where to count
    dispatches, copies and clones."""
    ir, last = _first_success(text, tgt, lambda attempt: _to_phase(text, attempt, phase))
    if ir is None:
        raise CompileError(f"IREE failed to compile to its {phase} phase",
                           _diagnostics(text, last), "")
    return ir


def _to_phase(text: str, tgt: Target, phase: str) -> str | None:
    if _forked:
        try:
            return _compile_in_a_process(text, tgt, f"its {phase} phase",
                                         f"--compile-to={phase}").decode()
        except CompileError:
            return None
    sess = api.Session()
    sess.set_flags(*tgt.flags)
    inv = sess.invocation()
    _silence(inv)
    # `--compile-to=PHASE` of iree-compile; the C API has it, the Python wrapper does not.
    set_phase = ctypes_dl._dylib.ireeCompilerInvocationSetCompileToPhase
    set_phase.argtypes, set_phase.restype = [ctypes.c_void_p, ctypes.c_char_p], None
    set_phase(inv._inv_p, phase.encode())
    if not (inv.parse_source(api.Source.wrap_buffer(sess, text.encode())) and inv.execute()):
        return None
    out = api.Output.open_membuffer()
    inv.output_ir(out)
    return bytes(out.map_memory()).decode()


def dispatch_count(text: str, tgt: Target) -> int:
    """How many dispatches IREE forms for a module (compiled up to its flow phase)."""
    return compile_to_phase(text, tgt, "flow").count("flow.dispatch @")


def _diagnostics(text: str, tgt: Target) -> str:
    """Compile again with diagnostics on, capturing what IREE prints to stderr. Only failures
    pay for this: stderr is process-wide, so capturing serializes."""
    with _STDERR_LOCK, tempfile.TemporaryFile() as captured:
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            _compile(text, tgt, diagnostics=True)
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return captured.read().decode(errors="replace")


def _save(text: str, name: str) -> str:
    fd, path = tempfile.mkstemp(prefix=f"ember-{name}-", suffix=".mlir")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path

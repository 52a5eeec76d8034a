"""The GPU check, in two halves (docs/guide.md, "GPU check").

Here, with the full install: compile a set of modules for a GPU target and put them, this
script, Ember's wheel and the runtime's wheels for the GPU machine's Python in one folder:

    python -m ember.tools.gpu_check build gpu_bundle            # --target cuda:sm_90 ...

There, with nothing but Python (and JAX, to compare with): one command installs the wheels
into a venv, runs every module on the device, checks its values against NumPy and times it
against JAX on the same device, and prints one table:

    python3 gpu_bundle/gpu_check.py run gpu_bundle

The inputs are drawn there from fixed seeds and the expected values computed there with
NumPy: the 4096^2 matmul's inputs alone are 128 MiB, more than may travel. This file is the
runner too, so it imports nothing of Ember at the top.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUNDLE_VERSION = 1


class NumpyLax:
    """The one `lax` function the cases use, for the NumPy reference."""

    @staticmethod
    def scan(f: Callable, init: Any, xs: Any) -> tuple[Any, Any]:
        import numpy as np

        carry, ys = init, []
        for x in xs:
            carry, y = f(carry, x)
            ys.append(y)
        return carry, np.stack(ys)


def selu(xp, lax, x):
    return 1.05 * xp.where(x > 0, x, 1.67 * xp.exp(x) - 1.67)


def softmax(xp, lax, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def matmul(xp, lax, a, b):
    return a @ b


def mlp(xp, lax, x, w1, b1, w2, b2, w3, b3):
    h = xp.maximum(x @ w1 + b1, 0)
    h = xp.maximum(h @ w2 + b2, 0)
    return h @ w3 + b3


def rnn_scan(xp, lax, h, w, xs):
    def step(h, x):
        h = xp.tanh(h @ w + x)
        return h, h

    return lax.scan(step, h, xs)


def sgd_update(xp, lax, p, g):
    return p - 0.01 * g


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable
    args: tuple[tuple[tuple[int, ...], str], ...]  # (shape, dtype) of each argument
    small: tuple[tuple[int, ...], ...]  # the shapes in a --small build (tests on the CPU)
    rtol: float = 1e-5
    atol: float = 1e-5
    donate: tuple[int, ...] = ()

    def bound(self, xp: Any, lax: Any) -> Callable:
        """The case's function over one namespace (ember.numpy, numpy or jax.numpy)."""
        def f(*args):
            return self.fn(xp, lax, *args)

        f.__name__ = f.__qualname__ = self.fn.__name__
        return f


CASES = [
    Case("selu 1M", selu, (((1 << 20,), "float32"),), ((4096,),)),
    Case("softmax 4096x1024", softmax, (((4096, 1024), "float32"),), ((64, 128),)),
    Case("matmul 4096^2 f32", matmul, (((4096, 4096), "float32"),) * 2, ((128, 128),) * 2,
         rtol=1e-3, atol=1e-4),
    Case("matmul 4096^2 bf16", matmul, (((4096, 4096), "bfloat16"),) * 2, ((128, 128),) * 2,
         rtol=2e-2, atol=1e-3),
    Case("mlp 784-512-512-10 b256", mlp,
         (((256, 784), "float32"), ((784, 512), "float32"), ((512,), "float32"),
          ((512, 512), "float32"), ((512,), "float32"), ((512, 10), "float32"),
          ((10,), "float32")),
         ((8, 784), (784, 512), (512,), (512, 512), (512,), (512, 10), (10,)),
         rtol=2e-3, atol=2e-3),
    Case("rnn scan 100x256", rnn_scan,
         (((64, 256), "float32"), ((256, 256), "float32"), ((100, 64, 256), "float32")),
         ((4, 16), (16, 16), (10, 4, 16)), rtol=2e-3, atol=2e-3),
    Case("donated update 16M", sgd_update, (((1 << 24,), "float32"),) * 2, ((4096,),) * 2,
         donate=(0,)),
]


def _shapes(case: Case, small: bool) -> list[tuple[tuple[int, ...], str]]:
    return [(s, dt) for s, (_, dt) in zip(case.small, case.args, strict=True)] if small \
        else list(case.args)


# --- here: compile, and gather what travels -------------------------------------------------

def build(out: Path, target: str, small: bool, wheels: bool, python: str) -> dict:
    """Compile every case for `target` into `out`, with this script and (unless `wheels` is
    False) Ember's wheel and the runtime's for CPython `python` (e.g. "3.12")."""
    import importlib.metadata

    import ember
    import ember.lax
    import ember.numpy as jnp

    root = Path(__file__).resolve().parent.parent
    if (out / "manifest.json").exists():  # an earlier bundle: built again
        shutil.rmtree(out)
    elif out.exists() and any(out.iterdir()):
        raise SystemExit(f"gpu_check build: {out} exists and is not a bundle; name a new or "
                         f"empty folder")
    (out / "modules").mkdir(parents=True)
    cases = []
    for i, case in enumerate(CASES):
        shapes = _shapes(case, small)
        jitted = ember.jit(case.bound(jnp, ember.lax), device=target,
                           donate_argnums=case.donate)
        start = time.perf_counter()
        lowered = jitted.lower(*[ember.ShapeDtypeStruct(s, dt) for s, dt in shapes])
        path = out / "modules" / f"{i}.vmfb"
        lowered.compile().save(path)
        name = f"{case.name.split()[0]} (small)" if small else case.name
        cases.append({"index": i, "name": name, "module": f"modules/{path.name}",
                      "shapes": [list(s) for s, _ in shapes], "dtypes": [d for _, d in shapes],
                      "compile_s": round(time.perf_counter() - start, 2)})
    shutil.copy(__file__, out / "gpu_check.py")
    manifest = {"version": BUNDLE_VERSION, "target": target, "small": small, "cases": cases,
                "built": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "ember": ember.__version__}
    if wheels:
        deps = [f"{d}=={importlib.metadata.version(d)}" for d in _runtime_dependencies()]
        (out / "wheels").mkdir()
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(root),
                        "-w", str(out / "wheels")], check=True, capture_output=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:",
                        "--python-version", python, "--implementation", "cp",
                        "--platform", "manylinux_2_28_x86_64", "--platform",
                        "manylinux_2_17_x86_64", "-d", str(out / "wheels"), *deps],
                       check=True, capture_output=True)
        manifest["requirements"] = deps
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


# Left out of the bundle: the compiler, and SciPy, whose LAPACK only CPU code calls (through
# the runtime's host module; GPU modules never do): 35 MB the bundle's cap has no room for.
_NOT_BUNDLED = ("iree-base-compiler", "scipy")


def _runtime_dependencies() -> list[str]:
    """Ember's dependencies without those _NOT_BUNDLED (and the test extras), by name."""
    import importlib.metadata
    import re

    return [re.match(r"[A-Za-z0-9_.-]+", d)[0]
            for d in importlib.metadata.distribution("ember").requires
            if "extra ==" not in d and not d.startswith(_NOT_BUNDLED)]


# --- there: install, run, check, time ---------------------------------------------------------

def install(bundle: Path) -> Path:
    """A venv in the bundle with Ember's wheel and the runtime's (JAX, where installed, stays
    visible: the venv sees the system's packages)."""
    venv = bundle / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       check=True)
    manifest = json.loads((bundle / "manifest.json").read_text())
    wheels = bundle / "wheels"
    (ember_wheel,) = wheels.glob("ember-*.whl")
    pip = [str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(wheels)]
    subprocess.run([*pip, "--no-deps", "--force-reinstall", str(ember_wheel)], check=True)
    # Requirements the system already satisfies (NumPy beside JAX) are kept, not replaced.
    names = [r.partition("==")[0] for r in manifest["requirements"]]
    subprocess.run([*pip, *names], check=True)
    return python


def _inputs(case: dict, seed: int) -> list[Any]:
    import ml_dtypes
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in zip(case["shapes"], case["dtypes"], strict=True):
        fan_in = shape[0] if len(shape) == 2 else 1  # weights scaled to keep tanh/relu sane
        x = rng.standard_normal(shape, dtype=np.float32) / np.float32(np.sqrt(fan_in))
        out.append(x.astype(ml_dtypes.bfloat16) if dtype == "bfloat16" else x)
    return out


def _expected(case: Case, args: list[Any]) -> Any:
    import numpy as np

    wide = [a.astype(np.float64) for a in args]  # the reference in float64
    return case.bound(np, NumpyLax)(*wide)


def _median_s(call: Callable[[], Any], sync: Callable[[Any], Any], reps: int) -> float:
    sync(call())  # warm-up: loads, first-call work
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        sync(call())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(bundle: Path, platform: str, reps: int, use_jax: bool) -> list[dict]:

    import ember

    manifest = json.loads((bundle / "manifest.json").read_text())
    if not ember.devices(platform):
        raise SystemExit(f"gpu_check: no {platform} device here (devices: {ember.devices()})")
    device = ember.devices(platform)[0]
    jax = _jax(platform) if use_jax else None
    rows = []
    for case in manifest["cases"]:
        spec = CASES[case["index"]]
        row = {"case": case["name"], "module": case["module"]}
        try:
            args = _inputs(case, seed=case["index"])
            expected = _expected(spec, args)
            loaded = ember.load(bundle / case["module"])
            on_device = [ember.device_put(a, device) for a in args]
            got = loaded(*[ember.device_put(a, device) for a in args])
            row.update(_compare(got, expected, spec))
            if spec.donate:  # each call donates the previous result
                state = {"p": on_device[0]}

                def call(state=state, loaded=loaded, rest=on_device[1:]):
                    state["p"] = loaded(state["p"], *rest)
                    return state["p"]
            else:
                def call(loaded=loaded, on_device=on_device):
                    return loaded(*on_device)
            row["ember_ms"] = 1e3 * _median_s(call, ember.block_until_ready, reps)
            if jax is not None:
                row["jax_ms"] = 1e3 * _time_jax(jax, spec, args, reps)
                row["ratio"] = row["ember_ms"] / row["jax_ms"]
        except Exception as e:  # a broken case is a row of the table, not the end of the run
            row.update(ok=False, error=f"{type(e).__name__}: {str(e)[:300]}")
        rows.append(row)
    return rows


def _compare(got: Any, expected: Any, spec: Case) -> dict:
    import numpy as np

    got_leaves = got if isinstance(got, tuple) else (got,)
    want_leaves = expected if isinstance(expected, tuple) else (expected,)
    err, ok = 0.0, len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves, strict=False):
        g = np.asarray(g).astype(np.float64)
        ok = ok and g.shape == w.shape and bool(np.allclose(g, w, spec.rtol, spec.atol))
        err = max(err, float(np.max(np.abs(g - w), initial=0.0)))
    return {"ok": ok, "max_abs_err": err}


def _jax(platform: str) -> Any:
    try:
        import jax
    except ImportError:
        return None
    kind = "gpu" if platform in ("cuda", "rocm") else platform
    try:
        jax.config.update("jax_platforms", kind)
        jax.devices(kind)
    except RuntimeError:
        return None
    return jax


def _time_jax(jax: Any, spec: Case, args: list[Any], reps: int) -> float:
    import jax.numpy as jnp

    f = jax.jit(spec.bound(jnp, jax.lax), donate_argnums=spec.donate)
    on_device = [jax.device_put(a) for a in args]
    if spec.donate:
        state = {"p": on_device[0]}

        def call():
            state["p"] = f(state["p"], *on_device[1:])
            return state["p"]
    else:
        def call():
            return f(*on_device)
    return _median_s(call, jax.block_until_ready, reps)


def table(rows: list[dict], manifest: dict, device: str) -> str:
    lines = [f"Ember GPU check: target {manifest['target']}, built {manifest['built']}, run "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {device}", "",
             "| case | values | max abs err | Ember ms | JAX ms | Ember/JAX |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | FAILED: {r['error']} | | | | |")
            continue
        jax_ms = f"{r['jax_ms']:.3f}" if "jax_ms" in r else "-"
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else "-"
        lines.append(f"| {r['case']} | {'ok' if r['ok'] else 'WRONG'} | "
                     f"{r['max_abs_err']:.2e} | {r['ember_ms']:.3f} | {jax_ms} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu_check", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile the modules and gather the bundle (here)")
    b.add_argument("out", type=Path)
    b.add_argument("--target", default="cuda", help="compile target (default cuda)")
    b.add_argument("--python", default="3.12", help="the GPU machine's Python, for wheels")
    b.add_argument("--small", action="store_true", help="small shapes (a CPU test)")
    b.add_argument("--no-wheels", dest="wheels", action="store_false",
                   help="leave the wheels out (run with --no-install)")
    r = sub.add_parser("run", help="install, run, check and time the bundle (there)")
    r.add_argument("bundle", type=Path)
    r.add_argument("--platform", default="cuda")
    r.add_argument("--reps", type=int, default=20)
    r.add_argument("--no-install", dest="install", action="store_false",
                   help="run in this interpreter, which has Ember already")
    r.add_argument("--no-jax", dest="jax", action="store_false")
    r.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    if args.command == "build":
        manifest = build(args.out, args.target, args.small, args.wheels, args.python)
        for c in manifest["cases"]:
            print(f"{c['name']}: {c['module']} ({c['compile_s']} s)")
        return 0
    if not (args.bundle / "manifest.json").exists():
        parser.error(f"{args.bundle} is not a bundle (it has no manifest.json); make one "
                     f"with `gpu_check build DIR`")
    if args.install:  # into the bundle's venv, then again from there
        python = install(args.bundle)
        rest = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--no-install"]
        return subprocess.run([str(python), str(Path(__file__).resolve()), *rest,
                               "--no-install"]).returncode
    rows = run(args.bundle, args.platform, args.reps, args.jax)
    manifest = json.loads((args.bundle / "manifest.json").read_text())
    import ember

    print(table(rows, manifest, repr(ember.devices(args.platform)[0])))
    if args.json:
        args.json.write_text(json.dumps({"manifest": manifest, "rows": rows}, indent=1))
    return 0 if all(r.get("ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

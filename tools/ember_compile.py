"""ember-compile: compile a Python function ahead of time into a `.vmfb` (or print its IR).

    ember-compile model.py:fn --arg f32[1000] --arg i32[] --static n=20 --target cpu -o fn.vmfb
    iree-run-module --module=fn.vmfb --function=fn --input=1000xf32=1 --input=i32=3

`--arg` gives the positional array arguments in order; `--static name=value` binds a static
argument by name (the value is a Python literal, or else a string). Targets: cpu (the host's
CPU), cpu:<llvm-cpu-name>, cuda[:sm_XX], vulkan[:target], rocm[:gfxXXX].
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from pathlib import Path
from typing import Any

import ember
from ember.dialect.types import parse_short
from ember.errors import CompileError
from ember.tools import require_compiler


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember-compile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("function", help="path/to/file.py:function")
    p.add_argument("--arg", action="append", default=[], metavar="TYPE",
                   help="an array argument's type, e.g. f32[1000] or i32[] (repeat, in order)")
    p.add_argument("--static", action="append", default=[], metavar="NAME=VALUE",
                   help="a static argument (repeatable)")
    p.add_argument("--target", default="cpu", help="cpu, cuda, vulkan or rocm (default cpu)")
    p.add_argument("--emit", choices=("ember", "linalg", "vmfb"), default="vmfb",
                   help="what to write (default vmfb)")
    p.add_argument("-o", dest="output", help="output file (default <function>.vmfb, or "
                                             "stdout for IR)")
    return p


class UsageError(Exception):
    pass


def load_function(spec: str) -> Any:
    """`path/to/file.py:fn` -> the function (a jitted one is unwrapped: options come from
    the command line)."""
    path, colon, name = spec.rpartition(":")
    if not colon or not path or not name:
        raise UsageError(f"the function must be given as path/to/file.py:function, got {spec!r}")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    module_spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(file.parent.resolve()))  # sibling imports, as `python file.py`
    try:
        module_spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    fun = getattr(module, name, None)
    if fun is None:
        public = sorted(n for n, v in vars(module).items() if callable(v) and
                        not n.startswith("_") and getattr(v, "__module__", None) == file.stem)
        raise UsageError(f"{path} has no function {name!r}; it defines: {', '.join(public)}")
    return getattr(fun, "fun", fun) if isinstance(fun, ember.JitFunction) else fun


def parse_static(items: list[str]) -> dict[str, Any]:
    out = {}
    for item in items:
        name, eq, text = item.partition("=")
        if not eq or not name.isidentifier():
            raise UsageError(f"--static requires NAME=VALUE, got {item!r}")
        try:
            out[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            out[name] = text
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    require_compiler("ember-compile")
    try:
        fun = load_function(args.function)
        statics = parse_static(args.static)
        try:
            arrays = [ember.ShapeDtypeStruct(a.shape, a.dtype)
                      for a in map(parse_short, args.arg)]
        except ValueError as e:
            raise UsageError(f"--arg: {e}") from None
        jitted = ember.jit(fun, static_argnames=tuple(statics) or None, device=args.target)
        # a .vmfb for any IREE runtime (iree-run-module, C): no calls of Ember's host module
        ember.config.update("ember_cpu_lapack", False)
        lowered = jitted.lower(*arrays, **statics)
        if args.emit != "vmfb":
            return _write_text(args.output, lowered.as_text(args.emit))
        output = args.output or f"{lowered.name.removeprefix('jit_')}.vmfb"
        lowered.compile().save(output)
    except UsageError as e:
        print(f"ember-compile: error: {e}", file=sys.stderr)
        return 2
    except CompileError as e:
        print(f"ember-compile: error: {e}", file=sys.stderr)
        return 1
    except (TypeError, ValueError) as e:  # incl. tracer errors
        print(f"ember-compile: error: tracing {args.function} failed: {e}", file=sys.stderr)
        return 1
    return 0


def _write_text(path: str | None, text: str) -> int:
    if path is None or path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

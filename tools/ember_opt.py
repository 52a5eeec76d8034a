"""ember-opt: read MLIR, run Ember's and upstream passes by name, print the result.

    ember-opt input.mlir --ember-canonicalize --cse
    ember-opt input.mlir --pass-pipeline='builtin.module(ember-canonicalize,cse)'
    ember-opt input.mlir --ember-lower-to-linalg --mlir-print-ir-before=ember-lower-to-linalg
    ember-opt input.mlir --verify-ember --verify-diagnostics
    ember-opt --list-passes | --emit-irdl

Passes given as flags run in the order given, before a --pass-pipeline. As in mlir-opt, the
IR is verified after parsing and after every pass (ember ops against their rows of the op
table too); `--verify-each=false` turns that off. Diagnostics print as
`file:line:col: error: ...` and make the exit status non-zero; every other failure (a file
that cannot be read or written, an option a pass does not take) is one line naming it.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable

from ember.tools import require_compiler

require_compiler("ember-opt")

from iree.compiler import ir as mlir, passmanager  # noqa: E402

from ember.compiler import passes  # noqa: E402
from ember.dialect import (  # noqa: E402
    VerifyError,
    ir as eir,
    irdl,
)

from . import diagnostics as diag  # noqa: E402

# Upstream passes also accepted as flags (any other runs through --pass-pipeline).
UPSTREAM_FLAGS = ("canonicalize", "cse", "inline", "symbol-dce", "sccp",
                  "loop-invariant-code-motion")


class _Append(argparse.Action):
    """Record a pass flag in command-line order."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.flag_passes = [*(namespace.flag_passes or []), self.const]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember-opt", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", nargs="?", default="-", help="MLIR file, or - for stdin")
    p.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    p.add_argument("--pass-pipeline", default="",
                   help="a textual pipeline, e.g. 'builtin.module(ember-canonicalize,cse)'")
    p.add_argument("-p", "--passes", default="", help="comma-separated pass names")
    for name, pass_ in passes.REGISTRY.items():
        p.add_argument(f"--{name}", action=_Append, const=name, nargs=0, help=pass_.description)
    for name in UPSTREAM_FLAGS:
        p.add_argument(f"--{name}", action=_Append, const=name, nargs=0,
                       help=f"upstream MLIR pass {name}")
    p.add_argument("--mlir-print-ir-after-all", action="store_true",
                   help="print the IR after every pass (to stderr)")
    p.add_argument("--mlir-print-ir-before-all", action="store_true",
                   help="print the IR before every pass (to stderr)")
    p.add_argument("--mlir-print-ir-before", default="", metavar="PASSES",
                   help="print the IR before these passes (comma-separated)")
    p.add_argument("--mlir-print-ir-after", default="", metavar="PASSES",
                   help="print the IR after these passes (comma-separated)")
    p.add_argument("--mlir-timing", action="store_true",
                   help="print the time each pass took (to stderr)")
    p.add_argument("--verify-each", type=_flag, nargs="?", const=True, default=True,
                   metavar="BOOL", help="verify the IR after parsing and after each pass "
                   "(default true; --verify-each=false turns it off)")
    p.add_argument("--verify-ember", action="store_true",
                   help="verify ember ops against the op table even with --verify-each=false")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check diagnostics against expected-error/warning/remark comments")
    p.add_argument("--list-passes", action="store_true", help="list Ember's passes")
    p.add_argument("--emit-irdl", action="store_true", help="print the dialect as IRDL")
    p.set_defaults(flag_passes=None)
    return p


def _flag(text: str) -> bool:
    value = {"true": True, "1": True, "false": False, "0": False}.get(text.strip().lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"requires true or false, got {text!r}")
    return value


class UsageError(Exception):
    """A mistake on the command line or with a file: one line, exit status 1."""


def split_pipeline(text: str) -> list[str]:
    """`builtin.module(a,func.func(b{x=1}),c)` -> ["a", "func.func(b{x=1})", "c"]."""
    text = text.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        text = text[len("builtin.module("):-1]
    items, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "({":
            depth += 1
        elif c in ")}":
            depth -= 1
        elif c == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


class Steps:
    """The passes to run, with IR printing and timing wrapped around each."""

    def __init__(self, names: list[str], args: argparse.Namespace):
        self.names = names
        self.verify = args.verify_each or args.verify_ember
        before = set(args.mlir_print_ir_before.split(",")) - {""}
        after = set(args.mlir_print_ir_after.split(",")) - {""}
        self.before = lambda n: args.mlir_print_ir_before_all or bool(_names(n) & before)
        self.after = lambda n: args.mlir_print_ir_after_all or bool(_names(n) & after)
        self.timing = args.mlir_timing
        self.times: list[tuple[str, float]] = []

    def pass_manager(self) -> passmanager.PassManager:
        pm = passmanager.PassManager("builtin.module")
        for name in self.names:
            if self.before(name):
                self._add(pm, _printer(f"IR Dump Before {name}"), f"print-before-{name}")
            if self.timing:
                self._add(pm, self._clock(name, start=True), f"timing-start-{name}")
            plain = re.fullmatch(r"([\w.-]+)(\{.*\})?", name)  # not a nested pipeline
            bare, options = plain.groups() if plain else (name, None)
            if bare in passes.REGISTRY:
                if options:
                    raise UsageError(f"pass {bare} takes no options, got {options}")
            passes.add(pm, name)
            if self.verify:
                self._add(pm, _verifier, f"verify-ember-after-{bare}")
            if self.timing:
                self._add(pm, self._clock(name, start=False), f"timing-stop-{name}")
            if self.after(name):
                self._add(pm, _printer(f"IR Dump After {name}"), f"print-after-{name}")
        return pm

    @staticmethod
    def _add(pm: passmanager.PassManager, fn: Callable, name: str) -> None:
        pm.add(fn, name=name, argument=name)

    def _clock(self, name: str, start: bool) -> Callable:
        def run(_op, _pass) -> None:
            if start:
                self._started = time.perf_counter()
            else:
                self.times.append((name, time.perf_counter() - self._started))
        return run

    def report(self) -> str:
        total = sum(t for _, t in self.times) or 1e-12
        lines = ["===" + "-" * 72 + "===", "  ... Execution time report ...",
                 "===" + "-" * 72 + "===",
                 f"  Total Execution Time: {total:.4f} seconds", "",
                 "  ----Wall Time----  ----Name----"]
        lines += [f"  {t:.4f} ({100 * t / total:5.1f}%)  {n}" for n, t in self.times]
        lines.append(f"  {total:.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"


def _names(step: str) -> set[str]:
    """The pass names in a pipeline element: `func.func(cse,canonicalize{max-iterations=1})`
    -> {func.func, cse, canonicalize}."""
    return set(re.split(r"[(),]", re.sub(r"\{[^}]*\}", "", step))) - {""}


def _verifier(op, pass_) -> None:
    if not _verify(op):
        pass_.signal_pass_failure()


def _printer(title: str) -> Callable:
    def run(op, _pass) -> None:
        sys.stderr.write(f"// -----// {title} //----- //\n{op}\n\n")
    return run


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.list_passes:
        for name, pass_ in passes.REGISTRY.items():
            print(f"  --{name}  {pass_.description}")
        return 0
    if args.emit_irdl:
        return _write(args.output, irdl.generate())
    source = "<stdin>" if args.input == "-" else args.input
    try:
        text = _read(args.input, source)
        names = (args.flag_passes or []) + split_pipeline(args.passes) \
            + split_pipeline(args.pass_pipeline)
        steps = Steps(names, args)
    except UsageError as e:
        print(f"ember-opt: error: {e}", file=sys.stderr)
        return 1
    collected: list[diag.Diagnostic] = []
    out = None
    with eir.LOCK, eir.context() as ctx:
        handler = ctx.attach_diagnostic_handler(
            lambda d: collected.append(diag.Diagnostic.of(d, source)) or True)
        try:
            out = _run(text, source, steps)
        except UsageError as e:
            print(f"ember-opt: error: {e}", file=sys.stderr)
            return 1
        except mlir.MLIRError as e:
            collected += [diag.Diagnostic.of(d, source) for d in e.error_diagnostics]
            if not collected:
                collected.append(diag.Diagnostic(source, 0, 0, "error", str(e)))
        except ValueError as e:  # an unknown upstream pass name, a malformed pipeline
            collected.append(diag.Diagnostic(source, 0, 0, "error", str(e)))
        except Exception as e:  # a pass that failed on IR it does not handle
            collected.append(diag.Diagnostic(source, 0, 0, "error",
                                             f"a pass failed: {type(e).__name__}: {e}"))
        finally:
            handler.detach()
    if steps.timing:
        sys.stderr.write(steps.report())
    if args.verify_diagnostics:
        problems = diag.check(text, source, collected)
        for p in problems:
            print(p, file=sys.stderr)
        return 1 if problems else 0
    for d in collected:
        print(d, file=sys.stderr)
    if out is None or any(d.severity == "error" for d in collected):
        return 1
    return _write(args.output, out)


def _run(text: str, source: str, steps: Steps) -> str | None:
    op = mlir.Module.parse(text)  # wraps top-level ops in a module, as mlir-opt does
    if steps.verify and not _verify(op.operation):
        return None
    pm = steps.pass_manager()
    pm.enable_verifier(steps.verify)
    pm.run(op.operation)
    return str(op)


def _verify(root: mlir.Operation) -> bool:
    """Check ember ops against the op table; failures are emitted as located diagnostics."""
    ok = True
    for region in root.regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                if eir.is_ember(op):
                    try:
                        eir.verify(op)
                    except VerifyError as e:
                        message = str(e).removeprefix(f"{op.location}: ")
                        op.location.emit_error(f"'{op.name}' op {message}")
                        ok = False
                ok = _verify(op) and ok
    return ok


def _read(path: str, source: str) -> str:
    try:
        data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    except OSError as e:
        raise UsageError(f"cannot read {source}: {e.strerror}") from None
    try:
        return data.decode()
    except UnicodeDecodeError as e:
        raise UsageError(f"{source} is not MLIR text: byte {data[e.start]:#04x} at offset "
                         f"{e.start} is not UTF-8") from None


def _write(path: str, text: str) -> int:
    if path == "-":
        sys.stdout.write(text)
        return 0
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        print(f"ember-opt: error: cannot write {path}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

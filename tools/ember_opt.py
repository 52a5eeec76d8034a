"""ember-opt: read MLIR, run Ember's and upstream passes by name, print the result.

    ember-opt input.mlir --ember-canonicalize
    ember-opt input.mlir -p ember-canonicalize,ember-lower-to-linalg,cse
    ember-opt --list-passes | --emit-irdl
"""

from __future__ import annotations

import argparse
import sys

from iree.compiler import ir as mlir

from ember.compiler import passes
from ember.dialect import VerifyError, irdl
from ember.dialect import ir as eir


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember-opt", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", nargs="?", default="-", help="MLIR file, or - for stdin")
    p.add_argument("-o", dest="output", default="-", help="output file (default stdout)")
    p.add_argument("-p", "--passes", default="",
                   help="comma-separated passes: Ember's by name, or upstream ones "
                        "(canonicalize, cse, ...)")
    for name, pass_ in passes.REGISTRY.items():
        p.add_argument(f"--{name}", dest="flag_passes", action="append_const", const=name,
                       help=pass_.description)
    p.add_argument("--mlir-print-ir-after-all", action="store_true",
                   help="print the IR after every pass (to stderr)")
    p.add_argument("--verify-ember", action="store_true",
                   help="check every ember op against its row of the op table")
    p.add_argument("--list-passes", action="store_true", help="list Ember's passes")
    p.add_argument("--emit-irdl", action="store_true", help="print the dialect as IRDL")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.list_passes:
        for name, pass_ in passes.REGISTRY.items():
            print(f"{name}: {pass_.description}")
        return 0
    if args.emit_irdl:
        return _write(args.output, irdl.generate())
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    names = (args.flag_passes or []) + [n for n in args.passes.split(",") if n]
    try:
        with eir.LOCK, eir.context():
            module = mlir.Module.parse(text)
            if args.verify_ember:
                _verify(module.operation)
            pm = passes.pass_manager(names, print_ir_after_all=args.mlir_print_ir_after_all)
            pm.run(module.operation)
            if args.verify_ember:
                _verify(module.operation)
            out = str(module)
    except (mlir.MLIRError, VerifyError, ValueError) as e:
        print(f"{args.input}: error: {e}", file=sys.stderr)
        return 1
    return _write(args.output, out)


def _verify(root: mlir.Operation) -> None:
    for region in root.regions:
        for block in region.blocks:
            for op in block.operations:
                if eir.is_ember(op.operation):
                    eir.verify(op.operation)
                _verify(op.operation)


def _write(path: str, text: str) -> int:
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

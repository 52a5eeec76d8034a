"""A differential program fuzzer (the approach of NNSmith and YARPGen): random well-typed
programs over ember.numpy and ember.lax, each run under `jit` and eagerly and compared with
JAX's `jit` of the same program (JAX is the oracle: same promotion and weak types). A
failing program shrinks to a minimal one, printed as Python source.

A program is straight-line code over its inputs, each statement one expression of earlier
names (elementwise chains with broadcasting and promotion, reductions, reshapes,
transposes, slices, `.at[]` updates, gathers, scatters, products, cond, fori_loop,
while_loop, scan), written against a backend `B` (the numpy module as `B.np`, `B.lax`, and
`.at[]` helpers), so one text runs on Ember and on JAX.

    python tests/fuzz.py --seconds 600 [--seed 0] [--batch 8]     # or: make fuzz
"""

from __future__ import annotations

import argparse
import faulthandler
import random
import re
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np

FLOAT, INT, BOOL = "float32", "int32", "bool"


@dataclass(frozen=True)
class Var:
    name: str
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class Stmt:
    out: Var
    expr: str


@dataclass(frozen=True)
class Program:
    inputs: tuple[Var, ...]
    body: tuple[Stmt, ...]
    outputs: tuple[str, ...]
    donate: bool = False  # the first input is donated
    seed: int = 0  # of the input values

    def source(self, name: str = "program") -> str:
        args = ", ".join(v.name for v in self.inputs)
        lines = [f"def {name}(B, {args}):", "    np_, lax = B.np, B.lax"]
        lines += [f"    {s.out.name} = {s.expr}" for s in self.body]
        lines.append(f"    return ({', '.join(self.outputs)},)")
        return "\n".join(lines)

    def function(self) -> Callable:
        scope: dict = {}
        exec(compile(self.source(), "<fuzzed program>", "exec"), scope)  # noqa: S102
        return scope["program"]

    def values(self) -> list[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        out = []
        for v in self.inputs:
            if v.name.startswith("i"):  # indices into a dim of at most 6
                out.append(rng.integers(0, 6, v.shape).astype(np.int32))
            elif v.dtype == INT:
                out.append(rng.integers(-8, 9, v.shape).astype(np.int32))
            else:  # quarters in [-3, 3]: early sums and products are exact
                out.append((rng.integers(-12, 13, v.shape) / 4).astype(np.float32))
        return out


# -- The generator ---------------------------------------------------------------------------

UNARY = ["np_.sin({})", "np_.cos({})", "np_.tanh({})", "np_.abs({})", "-{}",
         "np_.exp(np_.tanh({}))",
         "np_.sqrt(np_.abs({}) + 1.0)", "np_.log1p(np_.abs({}))", "np_.square({})",
         "np_.floor({} * 2.5)", "np_.sign({})", "({} * 0.5 + 0.25)", "np_.maximum({}, 0.0)"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (np_.abs({}) + 1.0))",
          "np_.maximum({}, {})", "np_.minimum({}, {})", "np_.where({} > {}, {a}, {b})",
          "np_.arctan2({}, {})"]
INT_BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} & {})", "({} | {})", "({} ^ {})",
              "np_.maximum({}, {})", "np_.minimum({}, {})"]
REDUCE = ["np_.sum", "np_.max", "np_.min", "np_.mean"]


def _bshape(shape: tuple[int, ...], rng: random.Random) -> tuple[int, ...]:
    """A shape that broadcasts to `shape`: trailing dims kept or made 1."""
    keep = rng.randint(0, len(shape))
    return tuple(1 if rng.random() < 0.4 else d for d in shape[len(shape) - keep:])


class Generator:
    """Draws one program; each `_op` method appends a statement or returns False when the
    names at hand cannot feed it."""

    def __init__(self, rng: random.Random, size: int):
        self.rng, self.size = rng, size
        self.inputs: list[Var] = []
        self.body: list[Stmt] = []
        self.names: list[Var] = []
        self.n = 0

    def fresh(self, shape, dtype) -> Var:
        self.n += 1
        return Var(f"v{self.n}", tuple(shape), dtype)

    def input(self, shape, dtype, prefix="x") -> Var:
        v = Var(f"{prefix}{len(self.inputs)}", tuple(shape), dtype)
        self.inputs.append(v)
        self.names.append(v)
        return v

    def emit(self, shape, dtype, expr: str) -> Var:
        v = self.fresh(shape, dtype)
        self.body.append(Stmt(v, expr))
        self.names.append(v)
        return v

    def pick(self, dtype=None, min_rank=0, pred=None) -> Var | None:
        choices = [v for v in self.names if (dtype is None or v.dtype == dtype)
                   and len(v.shape) >= min_rank and (pred is None or pred(v))]
        if not choices:
            return None
        # favour recent names: chains rather than fans
        return choices[-1 - min(int(self.rng.expovariate(0.5)), len(choices) - 1)]

    def operand_like(self, v: Var) -> str:
        """Another operand for `v`: a name of a broadcastable shape, a new input, a scalar."""
        r = self.rng.random()
        if r < 0.15:
            return repr(self.rng.choice([2, -1, 0.5, 3.0]) if v.dtype == FLOAT
                        else self.rng.choice([1, 3, -2]))
        if r < 0.55:
            same = self.pick(v.dtype, pred=lambda u: u.shape == v.shape and u != v)
            if same is not None:
                return same.name
        return self.input(_bshape(v.shape, self.rng), v.dtype).name

    def program(self, seed: int) -> Program:
        rank = self.rng.choice([0, 1, 1, 2, 2, 2, 3])
        shape = tuple(self.rng.randint(1, 6) for _ in range(rank))
        self.input(shape, self.rng.choice([FLOAT, FLOAT, FLOAT, INT]))
        ops = [m for m in dir(self) if m.startswith("_op_")]
        weights = {"_op_unary": 4, "_op_binary": 5}
        for _ in range(self.size * 4):
            if len(self.body) >= self.size:
                break
            op = self.rng.choices(ops, [weights.get(o, 1) for o in ops])[0]
            getattr(self, op)()
        if not self.body:
            self._op_unary()
        outputs = [self.body[-1].out.name]
        for s in self.body[:-1]:
            if self.rng.random() < 0.15:
                outputs.append(s.out.name)
        donate = self.rng.random() < 0.2 and bool(self.inputs[0].shape)
        return Program(tuple(self.inputs), tuple(self.body), tuple(outputs), donate, seed)

    # Elementwise ------------------------------------------------------------------------

    def _op_unary(self):
        v = self.pick(FLOAT)
        if v is None:
            v = self.pick(INT)
            return v is not None and self.emit(v.shape, FLOAT,
                                               f"{v.name}.astype(np_.float32) * 0.5")
        return self.emit(v.shape, FLOAT, self.rng.choice(UNARY).format(v.name))

    def _op_binary(self):
        v = self.pick()
        if v is None or v.dtype == BOOL:
            return False
        w = self.operand_like(v)
        other = next((u for u in self.names if u.name == w), None)
        shape = np.broadcast_shapes(v.shape, other.shape) if other else v.shape
        if v.dtype == INT:
            return self.emit(shape, INT, self.rng.choice(INT_BINARY).format(v.name, w))
        form = self.rng.choice(BINARY)
        if "{a}" in form:
            a, b = (v.name, w) if self.rng.random() < 0.5 else (w, v.name)
            return self.emit(shape, FLOAT, form.format(v.name, w, a=a, b=b))
        return self.emit(shape, FLOAT, form.format(*((v.name, w) if self.rng.random() < 0.7
                                                      else (w, v.name))))

    def _op_cast(self):
        v = self.pick()
        if v is None:
            return False
        if v.dtype == FLOAT:  # clipped: a rounding apart must not be many integers apart
            return self.emit(v.shape, INT,
                             f"np_.floor(np_.clip({v.name}, -64, 64) * 2.0).astype(np_.int32)")
        if v.dtype == INT:
            return self.emit(v.shape, FLOAT, f"({v.name}.astype(np_.float32) + 0.5)")
        return self.emit(v.shape, FLOAT, f"{v.name}.astype(np_.float32)")

    def _op_compare_select(self):
        v = self.pick(FLOAT)
        if v is None:
            return False
        mask = self.emit(v.shape, BOOL, f"({v.name} > {self.rng.choice([0.0, 0.5, -1.0])})")
        return self.emit(v.shape, FLOAT, f"np_.where({mask.name}, {v.name}, "
                                         f"{self.rng.choice(['0.0', '-' + v.name, '1.5'])})")

    # Reductions, shapes ------------------------------------------------------------------

    def _op_reduce(self):
        v = self.pick(min_rank=1, pred=lambda u: u.dtype != BOOL)
        if v is None:
            return False
        axis = self.rng.randrange(len(v.shape))
        keep = self.rng.random() < 0.4
        fn = self.rng.choice(REDUCE if v.dtype == FLOAT else REDUCE[:3] + ["np_.argmax"])
        if fn == "np_.argmax":
            keep = False
        shape = tuple(1 if i == axis else d for i, d in enumerate(v.shape) if keep or i != axis)
        dtype = INT if fn == "np_.argmax" or v.dtype == INT else FLOAT
        kd = ", keepdims=True" if keep else ""
        return self.emit(shape, dtype, f"{fn}({v.name}, axis={axis}{kd})")

    def _op_reshape(self):
        v = self.pick(min_rank=1, pred=lambda u: u.dtype != BOOL)
        if v is None:
            return False
        n = int(np.prod(v.shape))
        divisors = [d for d in range(1, n + 1) if n % d == 0]
        d = self.rng.choice(divisors)
        shape = self.rng.choice([(n,), (d, n // d), (n // d, 1, d)])
        return self.emit(shape, v.dtype, f"{v.name}.reshape({shape})")

    def _op_transpose(self):
        v = self.pick(min_rank=2, pred=lambda u: u.dtype != BOOL)
        if v is None:
            return False
        perm = list(range(len(v.shape)))
        self.rng.shuffle(perm)
        return self.emit(tuple(v.shape[p] for p in perm), v.dtype,
                         f"np_.transpose({v.name}, {tuple(perm)})")

    def _op_slice(self):
        v = self.pick(min_rank=1, pred=lambda u: u.dtype != BOOL and max(u.shape) > 1)
        if v is None:
            return False
        index, shape = self._window(v.shape)
        return self.emit(shape, v.dtype, f"{v.name}[{index}]")

    def _window(self, shape) -> tuple[str, tuple[int, ...]]:
        parts, out = [], []
        for n in shape:
            start = self.rng.randint(0, n - 1)
            stop = self.rng.randint(start + 1, n)
            step = self.rng.choice([1, 1, 2]) if stop - start > 2 else 1
            if self.rng.random() < 0.1 and n > 1:
                parts.append("::-1")
                out.append(n)
                continue
            parts.append(f"{start}:{stop}:{step}")
            out.append(len(range(start, stop, step)))
        return ", ".join(parts), tuple(out)

    def _op_concat_flip(self):
        v = self.pick(min_rank=1, pred=lambda u: u.dtype != BOOL)
        if v is None:
            return False
        axis = self.rng.randrange(len(v.shape))
        if self.rng.random() < 0.5:
            return self.emit(v.shape, v.dtype, f"np_.flip({v.name}, {axis})")
        shape = tuple(2 * d if i == axis else d for i, d in enumerate(v.shape))
        return self.emit(shape, v.dtype, f"np_.concatenate([{v.name}, {v.name} * 2], "
                                         f"axis={axis})")

    def _op_cumsum_sort(self):
        v = self.pick(min_rank=1, pred=lambda u: u.dtype != BOOL)
        if v is None:
            return False
        axis = self.rng.randrange(len(v.shape))
        fn = self.rng.choice(["np_.cumsum", "np_.sort"])
        return self.emit(v.shape, v.dtype, f"{fn}({v.name}, axis={axis})")

    # Updates, gathers, scatters, products ------------------------------------------------

    def _op_at_set(self):
        v = self.pick(min_rank=1, pred=lambda u: u.dtype != BOOL)
        if v is None:
            return False
        index, shape = self._window(v.shape)
        update = self.pick(v.dtype, pred=lambda u: u.shape == shape)
        value = (update.name if update is not None and self.rng.random() < 0.5
                 else f"({v.name}[{index}] * 2 + 1)")
        how = self.rng.choice(["set", "add", "mul"] if v.dtype == FLOAT else ["set", "add"])
        return self.emit(v.shape, v.dtype, f"{v.name}.at[{index}].{how}({value})")

    def _op_gather(self):
        v = self.pick(min_rank=1, pred=lambda u: u.dtype != BOOL and u.shape[0] == 6)
        if v is None:
            v = self.pick(FLOAT, min_rank=1)
            if v is None:
                return False
            wide = (6, *v.shape[1:])
            column = (6,) + (1,) * (len(wide) - 1)
            v = self.emit(wide, v.dtype, f"np_.broadcast_to({v.name}[:1], {wide}) + "
                                         f"np_.arange(6.0).reshape({column})")
        idx = self.input((self.rng.randint(1, 5),), INT, prefix="i")
        if self.rng.random() < 0.5:
            return self.emit((idx.shape[0], *v.shape[1:]), v.dtype, f"{v.name}[{idx.name}]")
        upd = f"np_.ones({(idx.shape[0], *v.shape[1:])}, np_.{v.dtype})"
        how = self.rng.choice(["add", "max", "set"] if v.dtype == FLOAT else ["add", "max"])
        return self.emit(v.shape, v.dtype, f"{v.name}.at[{idx.name}].{how}({upd})")

    def _op_matmul(self):
        v = self.pick(FLOAT, min_rank=1, pred=lambda u: len(u.shape) <= 3)
        if v is None:
            return False
        k = v.shape[-1]
        n = self.rng.randint(1, 6)
        w = self.input((k, n) if self.rng.random() < 0.8 else (k,), FLOAT)
        shape = v.shape[:-1] + w.shape[1:]
        return self.emit(shape, FLOAT, f"np_.matmul({v.name}, {w.name})")

    # Control flow -------------------------------------------------------------------------

    def _carry(self):
        return self.pick(FLOAT, pred=lambda u: len(u.shape) <= 2)

    def _op_fori_loop(self):
        v = self._carry()
        if v is None:
            return False
        trips = self.rng.randint(0, 4)
        body = self.rng.choice(["c * 0.5 + np_.sin(c)", "np_.tanh(c + i)",
                                "c.at[0].add(1.0)" if v.shape else "c + 1.0",
                                "np_.maximum(c, c * c - 1.0)"])
        return self.emit(v.shape, FLOAT, f"lax.fori_loop(0, {trips}, lambda i, c: {body}, "
                                         f"{v.name})")

    def _op_unrolled(self):
        """A Python loop of identical steps, unrolled in the trace: ember-reroll makes a loop
        of it again where the steps are elementwise (a step that reduces or updates stays
        unrolled); what the step reads besides its carries may widen the first step's."""
        v = self.pick(pred=lambda u: len(u.shape) <= 2 and u.dtype != BOOL)
        if v is None:
            return False
        trips = self.rng.choice([3, 8, 9, 17, 33])
        if v.dtype == INT:
            return self.emit(v.shape, INT, f"B.unrolled({trips}, lambda c: (c * 3 + 1) % 7, "
                                           f"{v.name})")
        w = self.operand_like(v)
        other = next((u for u in self.names if u.name == w), None)
        shape = np.broadcast_shapes(v.shape, other.shape) if other else v.shape
        body = self.rng.choice([
            "c * 0.5 + np_.sin(c)", f"np_.tanh(c * {w} + 0.25)",
            f"np_.where(c > 0.5, c * 0.75, c + {w} * 0.125)", "np_.maximum(c, 0.0) * 0.9 - 0.1",
            "c.at[0].add(1.0)" if v.shape else "c + 1.0", "c - np_.mean(c) * 0.5"])
        if self.rng.random() < 0.3:  # two carries, each step reading both
            return self.emit(shape, FLOAT, f"B.unrolled({trips}, lambda c, d: (d, (c + d) * "
                                           f"0.5 + {w} * 0.25), {v.name}, {v.name} * 0.5)")
        return self.emit(shape, FLOAT, f"B.unrolled({trips}, lambda c: {body}, {v.name})")

    def _op_while_loop(self):
        v = self._carry()
        if v is None:
            return False
        return self.emit(v.shape, FLOAT,
                         f"lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, "
                         f"np_.cos(c[1]) + c[1] * 0.5), (0, {v.name}))[1]")

    def _op_cond(self):
        v = self._carry()
        if v is None:
            return False
        # Not 0: a sum of values that cancel (to within rounding, which the order of the
        # additions decides) took one branch in JAX and the other in Ember.
        return self.emit(v.shape, FLOAT,
                         f"lax.cond(np_.sum({v.name}) > 0.3173, lambda c: c * 2.0, "
                         f"lambda c: np_.exp(np_.tanh(c)), {v.name})")

    def _op_scan(self):
        v = self.pick(FLOAT, min_rank=1, pred=lambda u: len(u.shape) <= 3)
        if v is None:
            return False
        carry = v.shape[1:]
        if self.rng.random() < 0.5:
            return self.emit(carry, FLOAT,
                             f"lax.scan(lambda c, x: (c * 0.5 + x, None), "
                             f"np_.zeros({carry}, np_.float32), {v.name})[0]")
        return self.emit(v.shape, FLOAT,
                         f"lax.scan(lambda c, x: (c + x, np_.sin(c) * x), "
                         f"np_.ones({carry}, np_.float32), {v.name})[1]")


def parse(source: str, inputs: dict[str, tuple[tuple[int, ...], str]], donate: bool = False,
          seed: int = 0) -> Program:
    """The program that `source` (as Program.source prints it) spells, its inputs typed by
    `inputs` (name -> (shape, dtype)): how a shrunk failure becomes a regression test."""
    lines = [line.strip() for line in source.strip().splitlines()[2:]]
    outputs = tuple(n.strip() for n in lines[-1].removeprefix("return (").rstrip(",)")
                    .split(",") if n.strip())
    body = []
    for line in lines[:-1]:
        name, expr = (part.strip() for part in line.split("=", 1))
        body.append(Stmt(Var(name, (), ""), expr))  # shapes matter only to the generator
    return Program(tuple(Var(n, tuple(s), d) for n, (s, d) in inputs.items()), tuple(body),
                   outputs, donate, seed)


def unrolled(trips: int, step: Callable, *carries):
    """`trips` steps of a Python loop, traced one after another (ember-reroll's input):
    the first carry's last value."""
    for _ in range(trips):
        carries = step(*carries)
        carries = carries if isinstance(carries, tuple) else (carries,)
    return carries[0]


def generate(seed: int, size: int | None = None) -> Program:
    rng = random.Random(seed)
    return Generator(rng, size or rng.randint(1, 10)).program(seed)


# -- Running ---------------------------------------------------------------------------------

def backends():
    import jax
    import jax.numpy as jnp

    import ember
    import ember.numpy as enp

    return ember, backend(enp, ember.lax), jax, backend(jnp, jax.lax)


def backend(np_, lax) -> SimpleNamespace:
    """What a program's `B` is: a numpy module, its lax, and the helpers of the generator."""
    return SimpleNamespace(np=np_, lax=lax, unrolled=unrolled)


@dataclass
class Outcome:
    program: Program
    failure: str = ""  # "" when every run agreed
    detail: str = ""


def _tolerance(want: np.ndarray) -> dict:
    if want.dtype.kind in "biu":
        return dict(rtol=0, atol=0)
    return dict(rtol=2e-4, atol=2e-4 * (1 + float(np.max(np.abs(want), initial=0.0))))


def compare(got, want, how: str) -> str:
    """"" when `got` matches `want` (JAX's), else what differs."""
    if len(got) != len(want):
        return f"{how}: {len(got)} results, JAX {len(want)}"
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"{how}: result {k} is {g.dtype}{list(g.shape)}, JAX {w.dtype}{list(w.shape)}"
        if w.dtype.kind == "f" and not np.array_equal(np.isnan(g), np.isnan(w)):
            return f"{how}: result {k} has NaNs where JAX has none (or none where it has)"
        if not np.allclose(g, w, equal_nan=True, **_tolerance(w)):
            err = np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)))
            return f"{how}: result {k} differs by up to {err:.3g}"
    return ""


def _oracle(program: Program, env) -> list[np.ndarray] | str:
    """JAX's results, or why JAX refused the program (the generator's fault, not a bug)."""
    _, _, jax, j = env
    fun = program.function()
    try:
        return [np.asarray(w) for w in jax.jit(lambda *a: fun(j, *a))(*program.values())]
    except Exception as ex:
        return f"JAX refused it: {type(ex).__name__}: {ex}"


def _failed(program: Program, how: str, ex: Exception) -> Outcome:
    detail = "".join(traceback.format_exception_only(type(ex), ex)).strip()
    return Outcome(program, f"{how}: {type(ex).__name__}", detail[-2000:])


def _checked(program: Program, got, want, how: str) -> Outcome:
    failure = compare([np.asarray(g) for g in got], want, how)
    kind = f"{how}: values" if "differs" in failure else failure
    return Outcome(program, kind, failure)


def run(program: Program, env=None) -> Outcome:
    """One program under jit and eagerly, against JAX."""
    return run_batch([program], env)[0]


def run_batch(programs: list[Program], env=None) -> list[Outcome]:
    """Programs compiled as one jitted function (one IREE module: compiles dominate), each
    also run eagerly, all against JAX. A module that fails is retried program by program,
    so each failure is one program's."""
    env = env or backends()
    ember, e = env[0], env[1]
    wants = [_oracle(p, env) for p in programs]
    outcomes = [Outcome(p, "", w) if isinstance(w, str) else None
                for p, w in zip(programs, wants, strict=True)]
    live = [k for k, o in enumerate(outcomes) if o is None]
    funs = {k: programs[k].function() for k in live}
    values = {k: programs[k].values() for k in live}
    for k in live:  # eagerly, on Ember arrays (as JAX's eager ops take JAX arrays)
        try:
            got = funs[k](e, *[ember.device_put(v) for v in values[k]])
        except Exception as ex:
            outcomes[k] = _failed(programs[k], "eager", ex)
            continue
        outcomes[k] = _checked(programs[k], got, wants[k], "eager")
    live = [k for k in live if not outcomes[k].failure]
    if not live:
        return outcomes
    spans, donate, at = [], [], 0
    for k in live:
        spans.append((k, at, at + len(values[k])))
        if programs[k].donate:
            donate.append(at)
        at += len(values[k])

    def together(*args):
        return [funs[k](e, *args[a:b]) for k, a, b in spans]

    args = [ember.device_put(v) for k in live for v in values[k]]
    try:
        results = ember.jit(together, donate_argnums=tuple(donate))(*args)
    except Exception as ex:
        if len(live) == 1:
            outcomes[live[0]] = _failed(programs[live[0]], "jit", ex)
            return outcomes
        for k in live:
            outcomes[k] = run_batch([programs[k]], env)[0]
        return outcomes
    for (k, _, _), got in zip(spans, results, strict=True):
        outcomes[k] = _checked(programs[k], got, wants[k], "jit")
    return outcomes


# -- Shrinking -------------------------------------------------------------------------------

def _uses(name: str, text: str) -> bool:
    return re.search(rf"\b{name}\b", text) is not None


def _without(program: Program, i: int) -> Program | None:
    """`program` without statement i: its readers read an operand of the same type (or the
    statement's name goes away with its last reader)."""
    stmt = program.body[i]
    later = program.body[i + 1:]
    readers = [s for s in later if _uses(stmt.out.name, s.expr)]
    out_uses = stmt.out.name in program.outputs
    if not readers and not out_uses:
        body = program.body[:i] + later
        return _pruned(replace(program, body=body))
    known = {v.name: v for v in program.inputs} | {s.out.name: s.out for s in program.body}
    same = [v for n, v in known.items() if _uses(n, stmt.expr) and v != stmt.out
            and v.shape == stmt.out.shape and v.dtype == stmt.out.dtype]
    if not same:
        return None
    sub = same[0].name
    body = program.body[:i] + tuple(
        Stmt(s.out, re.sub(rf"\b{stmt.out.name}\b", sub, s.expr)) for s in later)
    outputs = tuple(dict.fromkeys(sub if o == stmt.out.name else o for o in program.outputs))
    return _pruned(replace(program, body=body, outputs=outputs))


def _pruned(program: Program) -> Program:
    """Without statements nothing reads and inputs nothing reads."""
    body = list(program.body)
    changed = True
    while changed:
        changed = False
        for k in range(len(body) - 1, -1, -1):
            name = body[k].out.name
            if name not in program.outputs and not any(_uses(name, s.expr) for s in body[k + 1:]):
                del body[k]
                changed = True
    text = " ".join(s.expr for s in body) + " " + " ".join(program.outputs)
    inputs = tuple(v for k, v in enumerate(program.inputs)
                   if _uses(v.name, text) or (k == 0 and program.donate))
    return replace(program, body=tuple(body), inputs=inputs)


def shrink(outcome: Outcome, env=None, budget_s: float = 120.0) -> Outcome:
    """The smallest program failing the same way (greedy: drop outputs, statements,
    donation; keep each step that still fails alike)."""
    env = env or backends()
    best, deadline = outcome, time.monotonic() + budget_s

    def still(candidate: Program | None) -> Outcome | None:
        if candidate is None or time.monotonic() > deadline:
            return None
        got = run(candidate, env)
        return got if got.failure == best.failure else None

    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        p = best.program
        trials = [_pruned(replace(p, outputs=(o,))) for o in p.outputs if len(p.outputs) > 1]
        if p.donate:
            trials.append(replace(p, donate=False))
        trials += [_without(p, i) for i in range(len(p.body))]
        for t in trials:
            got = still(t)
            if got is not None:
                best, progress = got, True
                break
    return best


def companions(batch: list[Program], k: int, env=None) -> list[Program]:
    """The fewest programs of `batch` beside which program k still fails under jit as it did
    in the batch (none when it fails alone): one jitted function holds them all, so a
    failure only together is a bug of the combination (IREE scheduling one program's
    dispatch beside another's)."""
    env = env or backends()
    want = run_batch([batch[k]] + [p for i, p in enumerate(batch) if i != k], env)[0].failure
    if not want or run(batch[k], env).failure == want:
        return []
    rest = [p for i, p in enumerate(batch) if i != k]
    for p in list(rest):
        fewer = [q for q in rest if q is not p]
        if run_batch([batch[k], *fewer], env)[0].failure == want:
            rest = fewer
    return rest


def report(outcome: Outcome) -> str:
    p = outcome.program
    ins = ", ".join(f"{v.name}: {v.dtype}{list(v.shape)}" for v in p.inputs)
    return (f"FAILURE ({outcome.failure}), seed {p.seed}, donate={p.donate}; inputs {ins}\n"
            f"{p.source()}\n{outcome.detail}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=0, help="stop after this many programs")
    parser.add_argument("--batch", type=int, default=8, help="programs compiled as one module")
    parser.add_argument("--progress", action="store_true",
                        help="print each batch's seeds before running it (to find a crash)")
    args = parser.parse_args(argv)
    faulthandler.enable()  # a crash (IREE's or the runtime's) prints where it happened
    warnings.simplefilter("ignore")  # unusable donations are the generator's to make
    env = backends()
    env[0].config.update("ember_compilation_cache_dir", "off")
    start, seed, ran, failures, kinds = time.monotonic(), args.seed, 0, 0, set()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a kill ends it as Ctrl-C does
    try:
        while time.monotonic() - start < args.seconds and not (args.count and ran >= args.count):
            batch = [generate(s) for s in range(seed, seed + args.batch)]
            if args.progress:
                print(f"seeds {seed}..{seed + args.batch - 1}", flush=True)
            for k, outcome in enumerate(run_batch(batch, env)):
                if not outcome.failure:
                    continue
                failures += 1
                if outcome.failure not in kinds:
                    kinds.add(outcome.failure)
                    beside = companions(batch, k, env)
                    print(report(shrink(outcome, env) if not beside else outcome), flush=True)
                    for other in beside:
                        ins = ", ".join(f"{v.name}: {v.dtype}{list(v.shape)}"
                                        for v in other.inputs)
                        print(f"... and fails only compiled with this one (seed {other.seed}, "
                              f"donate={other.donate}; inputs {ins}) in one jitted function:\n"
                              f"{other.source()}\n", flush=True)
            ran, seed = ran + len(batch), seed + len(batch)
    except KeyboardInterrupt:  # the batch under way is not counted
        print("interrupted", flush=True)
    print(f"{ran} programs, {failures} failed ({len(kinds)} kinds), seeds {args.seed}..{seed - 1},"
          f" {time.monotonic() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

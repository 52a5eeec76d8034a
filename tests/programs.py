"""Representative programs, one of each kind Ember compiles differently: the benchmark rows'
functions, a training step at several batch sizes, loops, scan, sort, scatter, linalg, FFT,
convolution, narrow and wide floats, integers. The CPU matrix (test_cpu_matrix.py) compiles
every one for every CPU; a program is a function and the abstract values of its arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import ember
import ember.numpy as jnp
from ember import lax, nn, tree_util as tu


@dataclass(frozen=True)
class Program:
    name: str
    fun: Callable
    args: tuple[Any, ...]  # ShapeDtypeStructs, or trees of them
    jit: dict[str, Any] = field(default_factory=dict)  # options of ember.jit
    x64: bool = False  # traced with ember_enable_x64


def spec(shape: tuple[int, ...], dtype: Any = np.float32) -> ember.ShapeDtypeStruct:
    return ember.ShapeDtypeStruct(tuple(shape), np.dtype(dtype))


MLP_SIZES = (784, 512, 512, 10)


def mlp_params(sizes: tuple[int, ...] = MLP_SIZES) -> list[tuple[Any, Any]]:
    return [(spec((m, n)), spec((n,))) for m, n in zip(sizes[:-1], sizes[1:], strict=True)]


def mlp_loss(params: list, x: Any, y: Any) -> Any:
    """Softmax cross-entropy of a ReLU MLP (the issue's 784-512-512-10 training step)."""
    h = x
    for w, b in params[:-1]:
        h = nn.relu(h @ w + b)
    w, b = params[-1]
    return -jnp.mean(jnp.sum(nn.log_softmax(h @ w + b) * y, axis=-1))


def train_step(params: list, x: Any, y: Any) -> tuple[list, Any]:
    loss, grads = ember.value_and_grad(mlp_loss)(params, x, y)
    return tu.tree_map(lambda p, g: p - 0.01 * g, params, grads), loss


def train_step_program(batch: int) -> Program:
    return Program(f"train_step_b{batch}", train_step,
                   (mlp_params(), spec((batch, 784)), spec((batch, 10))),
                   {"donate_argnums": 0})


def _selu(x):
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)


def _softmax(x):
    e = jnp.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _layernorm(x):
    m = x.mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)


def _mlp_forward(x, params):
    for w, b in params[:-1]:
        x = jnp.maximum(x @ w + b, 0.0)
    w, b = params[-1]
    return x @ w + b


def _rnn(h0, xs, w, u):
    return lax.scan(lambda h, x: (jnp.tanh(h @ w + x @ u),) * 2, h0, xs)


def _heat(a, b):
    def sweep(a, b):
        inner = a[1:-1, 1:-1, 1:-1]
        new = (0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * inner + a[:-2, 1:-1, 1:-1])
               + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * inner + a[1:-1, :-2, 1:-1]) + inner)
        return b.at[1:-1, 1:-1, 1:-1].set(new)
    return lax.fori_loop(0, 5, lambda t, ab: (sweep(ab[1], sweep(*ab)), sweep(*ab)), (a, b))


def _stencil(a):
    for _ in range(3):
        a = a.at[1:-1, 1:-1].set(0.25 * (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2]
                                         + a[1:-1, 2:]))
    return a


def _while(x):
    return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, jnp.sin(c[1]) + c[1]),
                          (0, x))[1]


def _cond(p, x):
    return lax.cond(p > 0, lambda v: jnp.exp(v).sum(), lambda v: (v * v).sum(), x)


def _unrolled(x):
    for _ in range(50):
        x = jnp.sin(x) * 1.0001 + 0.5
    return x


def _conv(x, k):
    return lax.conv_general_dilated(x, k, (1, 1), "SAME")


def _attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / 8.0
    return jnp.einsum("bqk,bkd->bqd", nn.softmax(s, axis=-1), v)


def _grad_where(x):
    return ember.grad(lambda v: jnp.sum(jnp.where(v > 0, jnp.log1p(v * v), jnp.sin(v))))(x)


def _vmapped(xs, w):
    return ember.vmap(lambda x: jnp.tanh(w @ x).sum())(xs)


def _random(key):
    k1, k2 = ember.random.split(key)
    return ember.random.normal(k1, (256, 64)) + ember.random.uniform(k2, (256, 64))


def _int_ops(a, b):
    c = (a * 3 + b) ^ (a >> 2)
    return jnp.cumsum(c % 7, axis=1), jnp.max(c, axis=0), jnp.argmax(c, axis=1)


def _complex(z):
    return jnp.abs(jnp.exp(z) * jnp.conj(z) + z ** 2)


PROGRAMS: tuple[Program, ...] = (
    Program("selu", _selu, (spec((1 << 20,)),)),
    Program("softmax", _softmax, (spec((4096, 1024)),)),
    Program("layernorm", _layernorm, (spec((4096, 1024)),)),
    Program("attention", _attention, (spec((8, 512, 64)),) * 3),
    Program("sum", jnp.sum, (spec((1 << 24,)),)),
    Program("matmul_relu", lambda a, b: jnp.maximum(a @ b, 0.0), (spec((1024, 1024)),) * 2),
    Program("mlp_forward", _mlp_forward, (spec((256, 784)), mlp_params())),
    *(train_step_program(b) for b in (1, 7, 64, 128, 300)),
    Program("fori_loop", lambda x: lax.fori_loop(0, 1000, lambda i, v: v * 0.99 + 0.01, x),
            (spec((256,)),)),
    Program("scan_rnn", _rnn, (spec((64, 256)), spec((100, 64, 256)), spec((256, 256)),
                               spec((256, 256)))),
    Program("while_loop", _while, (spec((1000,)),)),
    Program("cond", _cond, (spec(()), spec((64, 64)))),
    Program("sort", jnp.sort, (spec((1 << 20,)),)),
    Program("argsort", jnp.argsort, (spec((4096,)),)),
    Program("top_k", lambda x: lax.top_k(x, 10), (spec((1 << 20,)),)),
    Program("interior_set", lambda a: a.at[1:-1, 1:-1, 1:-1].set(a[1:-1, 1:-1, 1:-1] * 2.0),
            (spec((25, 25, 25)),)),
    Program("heat3d", _heat, (spec((50, 50, 50)),) * 2),
    Program("stencil_unrolled", _stencil, (spec((17, 19)),)),
    Program("scatter_add", lambda x, i, v: x.at[i].add(v),
            (spec((1 << 20,)), spec((1024,), np.int32), spec((1024,)))),
    Program("row_gather", lambda x, i: x[i], (spec((1000, 1000)), spec((500,), np.int32))),
    Program("flip_rows", lambda x: jnp.flip(x, 0) + 1.0, (spec((1000, 1000)),)),
    Program("solve", jnp.linalg.solve, (spec((64, 64)), spec((64, 8)))),
    Program("cholesky", lambda a: jnp.linalg.cholesky(a @ a.T + 64 * jnp.eye(64)),
            (spec((64, 64)),)),
    Program("inv_det", lambda a: (jnp.linalg.inv(a), jnp.linalg.det(a)), (spec((32, 32)),)),
    Program("fft", lambda x: jnp.fft.fft(x), (spec((16, 1024), np.complex64),)),
    Program("rfft", lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * 2.0), (spec((8, 512)),)),
    Program("fftn_3d", jnp.fft.fftn, (spec((16, 16, 16), np.complex64),)),
    Program("conv2d", _conv, (spec((4, 8, 32, 32)), spec((16, 8, 3, 3)))),
    Program("bf16_matmul", lambda a, b: (a @ b).astype(jnp.float32),
            (spec((256, 256), "bfloat16"), spec((256, 256), "bfloat16"))),
    Program("f16_elementwise", lambda x: jnp.tanh(x) * x + 1, (spec((4096,), np.float16),)),
    Program("f64_matmul", lambda a, b: jnp.exp(a @ b), (spec((128, 128), np.float64),) * 2,
            x64=True),
    Program("f64_reduce", lambda x: (jnp.sin(x).sum(), jnp.std(x)), (spec((10000,), np.float64),),
            x64=True),
    Program("int_ops", _int_ops, (spec((64, 128), np.int32),) * 2),
    Program("int64_cumsum", lambda x: jnp.cumsum(x * x), (spec((4096,), np.int64),), x64=True),
    Program("complex", _complex, (spec((4096,), np.complex64),)),
    Program("grad_where", _grad_where, (spec((1024,)),)),
    Program("vmap", _vmapped, (spec((32, 128)), spec((64, 128)))),
    Program("random", _random, (spec((2,), np.uint32),)),
    Program("unrolled_50", _unrolled, (spec((8,)),)),
    Program("donated_update", lambda x, v: x.at[3:9].set(v * 2),
            (spec((4096,)), spec((6,))), {"donate_argnums": 0}),
)

"""`ember.scipy.stats`: JAX's `jax.scipy.stats` distributions, one module each, their
functions written from the distributions' textbook formulas."""

from . import cauchy, expon, gumbel_l, gumbel_r, laplace, logistic, norm, pareto, t, uniform

__all__ = ["cauchy", "expon", "gumbel_l", "gumbel_r", "laplace", "logistic", "norm", "pareto",
           "t", "uniform"]

"""What the ``policy.model`` keys of ding's policies accept, and the memory check a model passes before it is built.

Layer counts have an upper bound (:data:`MAX_LAYER_NUM`): a model of a billion layers would take as long to state as
to build. Widths have none of their own: :func:`built_within_memory` builds the model first on PyTorch's ``meta``
device (no memory), counts its parameters and refuses a model whose training would not fit in the memory available.

Example:
    >>> str(layers(1)), str(widths([128, 64])), str(ACTIVATION)
    ('an int in [0, 100]', 'a non-empty list of positive ints', "one of 'relu', 'tanh', 'gelu', 'silu'")
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, TypeVar

import torch
from torch import nn

from ding.errors import ConfigError
from ding.model.common import ACTIVATIONS
from ding.utils.accepts import UNSET, Accepts, count, number, one_of, sizes
from ding.utils.memory import mem_available

MAX_LAYER_NUM = 100
"""The most hidden layers a model head may have (DI-engine's configs use 1 to 3)."""

MODEL_COPIES = 5
"""Training keeps about five times a model's parameters: the model, its target copy, its gradients and Adam's two
moments."""

ACTIVATION: Accepts = one_of(*ACTIVATIONS, default="relu")
"""``model.activation``."""

SIGMA_INIT: Accepts = number(0.0, low=-20, high=20, note="the log of the first standard deviation")
"""``model.sigma_init``: a log standard deviation, so that its exp stays a usable float32 (1e-9 to 5e8)."""

M = TypeVar("M", bound=nn.Module)


def layers(default: Any = UNSET) -> Accepts:
    """A head's hidden-layer count: an int in ``[0, MAX_LAYER_NUM]``."""
    return count(default, low=0, high=MAX_LAYER_NUM)


def width(default: Any = UNSET) -> Accepts:
    """A layer width: a positive int."""
    return count(default)


def widths(default: Any = UNSET) -> Accepts:
    """An encoder's layer widths: a non-empty list of positive ints."""
    return sizes(default)


def built_within_memory(build: Callable[[], M], available: int | None = None) -> M:
    """``build()``, once the same model built on the ``meta`` device shows that training it fits in ``available``
    bytes (default: what the machine has available; unknown: no check).

    >>> built_within_memory(lambda: nn.Linear(4, 2)).out_features
    2
    >>> built_within_memory(lambda: nn.Linear(4, 10**9), available=8 * 2**30)
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: policy.model: the model has 5,000,000,000 parameters (18.6 GiB), and training keeps about \
5 times as much (the model, its target copy, gradients and Adam's moments), more than the 8.0 GiB available; \
lower its widths or layer counts
    """
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        sized = build()
    nbytes = sum(t.numel() * t.element_size() for t in itertools.chain(sized.parameters(), sized.buffers()))
    available = mem_available() if available is None else available
    if available is not None and nbytes * MODEL_COPIES > available:
        params = sum(p.numel() for p in sized.parameters())
        raise ConfigError(
            f"policy.model: the model has {params:,} parameters ({nbytes / 2**30:.1f} GiB), and training keeps about "
            f"{MODEL_COPIES} times as much (the model, its target copy, gradients and Adam's moments), more than the "
            f"{available / 2**30:.1f} GiB available; lower its widths or layer counts"
        )
    return build()

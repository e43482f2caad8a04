"""The torch device a policy runs on, from its ``cuda`` key."""

from __future__ import annotations

import warnings

import torch


def policy_device(cuda: bool) -> torch.device:
    """The CUDA device when ``cuda`` is set and torch sees one; otherwise the CPU.

    ``cuda=True`` on a machine without CUDA runs on the CPU with a warning, as DI-engine does, so a config written
    for a GPU machine runs unchanged on a CPU-only one.

    Example:
        >>> policy_device(False)
        device(type='cpu')
    """
    if cuda and not torch.cuda.is_available():
        warnings.warn("policy.cuda is True but torch sees no CUDA device; running on the CPU", stacklevel=3)
        return torch.device("cpu")
    return torch.device("cuda" if cuda else "cpu")

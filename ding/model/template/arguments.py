"""DI-engine's model arguments in ding's terms (compatibility): activation modules, and the arguments ding's models
take at one value only.

Example:
    >>> from torch import nn
    >>> activation_name(nn.Tanh()), activation_name('relu')
    ('tanh', 'relu')
    >>> only('DQN', 'norm_type', 'BN', None, "ding's models have no normalization layers")
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: DQN(norm_type='BN') is not supported: ding's models have no normalization layers; \
ding takes norm_type=None
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ding.errors import ConfigError
from ding.model.common import ACTIVATIONS

NO_NORM = "ding's models have no normalization layers"


def activation_name(activation: Any) -> str:
    """The name ding's models take for ``activation``: a torch activation module (DI-engine's form) or a name."""
    if isinstance(activation, str):
        return activation
    for name, module_class in ACTIVATIONS.items():
        if type(activation) is module_class:
            return name
    modules = ", ".join(f"nn.{cls.__name__}()" for cls in ACTIVATIONS.values())
    raise ConfigError(f"activation must be one of {modules} (or its name), got {activation!r}")


def only(model: str, name: str, value: Any, accepted: Any, why: str) -> None:
    """Raise :class:`ConfigError` unless the argument ``name`` of ``model`` is ``accepted``."""
    if value != accepted or type(value) is not type(accepted):
        raise ConfigError(f"{model}({name}={value!r}) is not supported: {why}; ding takes {name}={accepted!r}")


Refusals = Mapping[str, tuple[Any, str]]
"""DI-engine arguments ding's model does not take: each with the one value ding accepts and why."""


def ding_arguments(model: str, given: Mapping[str, Any], refusals: Refusals) -> dict[str, Any]:
    """The keyword arguments of ding's ``model`` from a DI-engine-signature call (its ``locals()``): each argument of
    ``refusals`` held to its value (:func:`only`) and dropped, ``activation`` named.

    >>> ding_arguments('DQN', {'self': None, 'obs_shape': 4, 'norm_type': None}, {'norm_type': (None, NO_NORM)})
    {'obs_shape': 4}
    """
    kwargs = {key: value for key, value in given.items() if key not in ("self", "__class__")}
    for name, (accepted, why) in refusals.items():
        only(model, name, kwargs.pop(name), accepted, why)
    if "activation" in kwargs:
        kwargs["activation"] = activation_name(kwargs["activation"])
    return kwargs

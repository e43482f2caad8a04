"""Building blocks sized from config shapes: encoders for vector and image observations, and Q-value heads.

Shapes follow the model configs ``compile_config`` fills in: ``obs_shape`` is an int for a 1-D
observation (``4`` for CartPole) or a tuple (``(4, 84, 84)`` for stacked frames), and
``action_shape`` is the number of discrete actions.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ding.errors import ConfigError
from ding.model.noisy import NoisyLinear

ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "silu": nn.SiLU}
"""Activation names a model config may use."""


def as_shape(shape: Any, what: str = "obs_shape") -> tuple[int, ...]:
    """``shape`` (an int, or a list or tuple of ints) as a tuple of positive ints.

    >>> as_shape(4), as_shape([4, 84, 84])
    ((4,), (4, 84, 84))
    >>> as_shape((0, 3))
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: obs_shape must be a positive int or a list/tuple of positive ints, got (0, 3)
    """
    items = (shape,) if isinstance(shape, int) and not isinstance(shape, bool) else shape
    if (
        not isinstance(items, (list, tuple))
        or not items
        or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in items)
    ):
        raise ConfigError(f"{what} must be a positive int or a list/tuple of positive ints, got {shape!r}")
    return tuple(int(n) for n in items)


def action_count(action_shape: Any) -> int:
    """The number of discrete actions: an int, or a one-element list or tuple.

    >>> action_count(2), action_count([6])
    (2, 6)
    >>> action_count([3, 4])
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: action_shape must be the number of discrete actions (an int > 0), got [3, 4]; \
multi-discrete actions are not supported by this model (the dqn policy's DQN model takes them)
    """
    if isinstance(action_shape, (list, tuple)) and len(action_shape) == 1:
        action_shape = action_shape[0]
    if isinstance(action_shape, int) and not isinstance(action_shape, bool) and action_shape > 0:
        return int(action_shape)
    hint = (
        "; multi-discrete actions are not supported by this model (the dqn policy's DQN model takes them)"
        if isinstance(action_shape, (list, tuple))
        else ""
    )
    raise ConfigError(f"action_shape must be the number of discrete actions (an int > 0), got {action_shape!r}{hint}")


def action_counts(action_shape: Any) -> list[int]:
    """The number of actions of each branch of a discrete or multi-discrete action: an int (one branch), or a
    non-empty list or tuple of ints (``MultiDiscrete``'s ``nvec``).

    >>> action_counts(2), action_counts([6]), action_counts([3, 4])
    ([2], [6], [3, 4])
    >>> action_counts([3, 0])
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: action_shape must be the number of discrete actions (an int > 0) or a list of them \
(one per branch of a multi-discrete action), got [3, 0]
    """
    items = action_shape if isinstance(action_shape, (list, tuple)) else [action_shape]
    if not items or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in items):
        raise ConfigError(
            "action_shape must be the number of discrete actions (an int > 0) or a list of them (one per branch of "
            f"a multi-discrete action), got {action_shape!r}"
        )
    return [int(n) for n in items]


def model_kwargs(
    model: str,
    model_cfg: Mapping[str, Any],
    accepted: Iterable[str],
    required: Iterable[str] = ("obs_shape", "action_shape"),
) -> dict[str, Any]:
    """A ``policy.model`` section as keyword arguments of the ``model`` class: a key it does not take, or a required
    size not filled in yet, is a ``ConfigError``.

    >>> model_kwargs('DQN', {'obs_shape': 4, 'action_shape': 2}, ('obs_shape', 'action_shape'))
    {'obs_shape': 4, 'action_shape': 2}
    >>> model_kwargs('DQN', {'obs_shape': 4, 'action_shape': 2, 'dueling': True}, ('obs_shape', 'action_shape'))
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: policy.model has keys the DQN model does not take: ['dueling']; it takes \
['action_shape', 'obs_shape']
    """
    kwargs = dict(model_cfg)
    known = set(accepted)
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise ConfigError(f"policy.model has keys the {model} model does not take: {unknown}; it takes {sorted(known)}")
    for key in required:
        if kwargs.get(key) is None:
            raise ConfigError(f"policy.model.{key} is not set; compile the config with its env to fill it in")
    return kwargs


def hidden_sizes(sizes: Any, what: str) -> list[int]:
    """A non-empty list of positive layer widths."""
    if (
        not isinstance(sizes, (list, tuple))
        or not sizes
        or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in sizes)
    ):
        raise ConfigError(f"{what} must be a non-empty list of positive ints, got {sizes!r}")
    return [int(n) for n in sizes]


def activation(name: str) -> nn.Module:
    """A fresh activation module by name (``relu``, ``tanh``, ``gelu``, ``silu``)."""
    if name not in ACTIVATIONS:
        raise ConfigError(f"unknown activation {name!r}; known: {', '.join(sorted(ACTIVATIONS))}")
    return ACTIVATIONS[name]()


def positive_int(value: Any, key: str, low: int = 1) -> int:
    """``value`` when it is an int of at least ``low`` (a model config's size or layer count), else ConfigError.

    >>> positive_int(64, 'actor_head_hidden_size'), positive_int(0, 'actor_head_layer_num', low=0)
    (64, 0)
    """
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        wanted = "a positive int" if low == 1 else f"an int >= {low}"
        raise ConfigError(f"{key} must be {wanted}, got {value!r}")
    return value


def action_dim(action_space: str, action_shape: Any) -> int:
    """The policy head's width: the number of discrete actions, or the size of a continuous action.

    >>> action_dim('discrete', 5), action_dim('continuous', (2, 3))
    (5, 6)
    """
    if action_space == "discrete":
        return action_count(action_shape)
    return math.prod(as_shape(action_shape, "action_shape"))


def head_sizes(actor_size: Any, actor_layers: Any, critic_size: Any, critic_layers: Any) -> tuple[int, int, int, int]:
    """An actor-critic model's head widths and hidden-layer counts, checked (the config keys' names in errors)."""
    return (
        positive_int(actor_size, "actor_head_hidden_size"),
        positive_int(actor_layers, "actor_head_layer_num", low=0),
        positive_int(critic_size, "critic_head_hidden_size"),
        positive_int(critic_layers, "critic_head_layer_num", low=0),
    )


def init_actor_critic(
    model: nn.Module, actor_out: nn.Linear, critic_out: nn.Linear, keep: Sequence[nn.Module] = ()
) -> None:
    """PPO's start: every linear layer orthogonal (gain sqrt(2), zero bias), the policy output with gain 0.01 (a
    near-uniform first policy) and the value output with gain 1. The modules in ``keep`` (encoders a user made)
    keep the weights they came with."""
    kept = {id(module): copy.deepcopy(module.state_dict()) for module in keep}
    for module in model.modules():
        if isinstance(module, nn.Linear):
            nn.init.orthogonal_(module.weight, gain=math.sqrt(2))
            nn.init.zeros_(module.bias)
    nn.init.orthogonal_(actor_out.weight, gain=0.01)
    nn.init.orthogonal_(critic_out.weight, gain=1.0)
    for module in keep:
        module.load_state_dict(kept[id(module)])


def mlp(
    in_size: int,
    sizes: Sequence[int],
    act: str = "relu",
    last_activation: bool = True,
    linear: Callable[[int, int], nn.Module] = nn.Linear,
) -> nn.Sequential:
    """Linear layers of widths ``sizes`` with an activation after each (after the last too, by default); ``linear``
    builds each layer (``NoisyLinear`` for a noisy network)."""
    layers: list[nn.Module] = []
    for index, size in enumerate(sizes):
        layers.append(linear(in_size, size))
        if last_activation or index < len(sizes) - 1:
            layers.append(activation(act))
        in_size = size
    return nn.Sequential(*layers)


def layered_head(in_size: int, hidden_size: int, layer_num: int, out_size: int, act: str = "relu") -> nn.Sequential:
    """DI-engine's actor / critic head layout: a first layer of ``hidden_size``, ``layer_num`` more of that width,
    then ``out_size`` outputs.

    >>> [m.out_features for m in layered_head(4, 8, 1, 2) if isinstance(m, nn.Linear)]
    [8, 8, 2]
    """
    return nn.Sequential(*mlp(in_size, [hidden_size] * (1 + layer_num), act), nn.Linear(hidden_size, out_size))


class FCEncoder(nn.Module):
    """An MLP over a vector observation; a multi-dimensional one is flattened first.

    Example:
        >>> encoder = FCEncoder(4, [128, 64])
        >>> encoder(torch.zeros(3, 4)).shape, encoder.output_size
        (torch.Size([3, 64]), 64)
        >>> FCEncoder((3, 4), [32])(torch.zeros(2, 3, 4)).shape
        torch.Size([2, 32])
    """

    def __init__(self, obs_shape: int | Sequence[int], hidden_size_list: Sequence[int], act: str = "relu") -> None:
        super().__init__()
        self.obs_shape = as_shape(obs_shape)
        sizes = hidden_sizes(hidden_size_list, "encoder_hidden_size_list")
        self.output_size = sizes[-1]
        self.net = mlp(math.prod(self.obs_shape), sizes, act)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.reshape(x.shape[0], -1))


DEFAULT_KERNELS = (8, 4, 3)
DEFAULT_STRIDES = (4, 2, 1)


class ConvEncoder(nn.Module):
    """Convolutions over a ``(C, H, W)`` image, then one linear layer.

    ``hidden_size_list[:-1]`` are the conv layers' channel counts and ``hidden_size_list[-1]`` the
    output size. Kernel sizes and strides default to the Atari DQN ones (8/4, 4/2, 3/1; 3/1 for any
    further layer). An image too small for those layers is an error that names its size.

    Example:
        >>> encoder = ConvEncoder((4, 84, 84), [32, 64, 64, 512])
        >>> encoder(torch.zeros(2, 4, 84, 84)).shape
        torch.Size([2, 512])
        >>> ConvEncoder((1, 8, 8), [16, 32], kernel_size=[3], stride=[1])(torch.zeros(1, 1, 8, 8)).shape
        torch.Size([1, 32])
    """

    def __init__(
        self,
        obs_shape: Sequence[int],
        hidden_size_list: Sequence[int],
        kernel_size: Sequence[int] | None = None,
        stride: Sequence[int] | None = None,
        act: str = "relu",
    ) -> None:
        super().__init__()
        self.obs_shape = as_shape(obs_shape)
        if len(self.obs_shape) != 3:
            raise ConfigError(f"ConvEncoder needs an image obs_shape (C, H, W), got {obs_shape!r}")
        sizes = hidden_sizes(hidden_size_list, "encoder_hidden_size_list")
        if len(sizes) < 2:
            raise ConfigError(
                f"encoder_hidden_size_list for an image needs conv channels and an output size (at least 2 "
                f"entries), got {list(hidden_size_list)!r}"
            )
        channels = sizes[:-1]
        kernels = list(kernel_size) if kernel_size is not None else _pad(DEFAULT_KERNELS, len(channels), 3)
        strides = list(stride) if stride is not None else _pad(DEFAULT_STRIDES, len(channels), 1)
        if len(kernels) != len(channels) or len(strides) != len(channels):
            raise ConfigError(
                f"{len(channels)} conv layers (encoder_hidden_size_list {sizes}) need as many kernel sizes and "
                "strides; "
                f"got kernel_size {kernels}, stride {strides}"
            )
        layers: list[nn.Module] = []
        in_channels, height, width = self.obs_shape
        for out_channels, kernel, step in zip(channels, kernels, strides, strict=True):
            height, width = (height - kernel) // step + 1, (width - kernel) // step + 1
            if height < 1 or width < 1:
                raise ConfigError(
                    f"image obs_shape {self.obs_shape} is too small for conv layers with kernel sizes {kernels} and "
                    f"strides {strides}; use a larger image or smaller kernels"
                )
            layers += [nn.Conv2d(in_channels, out_channels, kernel, step), activation(act)]
            in_channels = out_channels
        layers += [nn.Flatten(), nn.Linear(in_channels * height * width, sizes[-1]), activation(act)]
        self.output_size = sizes[-1]
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def _pad(values: Sequence[int], count: int, fill: int) -> list[int]:
    return [*values[:count], *[fill] * max(0, count - len(values))]


def build_encoder(obs_shape: Any, hidden_size_list: Sequence[int], act: str = "relu") -> FCEncoder | ConvEncoder:
    """The encoder an observation shape calls for: :class:`ConvEncoder` for ``(C, H, W)``, else :class:`FCEncoder`.

    >>> type(build_encoder(4, [64])).__name__, type(build_encoder((3, 32, 32), [16, 16, 64])).__name__
    ('FCEncoder', 'ConvEncoder')
    """
    shape = as_shape(obs_shape)
    if len(shape) == 3:
        return ConvEncoder(shape, hidden_size_list, act=act)
    if len(shape) > 3:
        raise ConfigError(f"obs_shape {shape} has {len(shape)} dimensions; models take vectors or (C, H, W) images")
    return FCEncoder(shape, hidden_size_list, act=act)


def optional_encoder(
    model: str, obs_shape: Sequence[int], hidden_size_list: Sequence[int] | None, act: str = "relu"
) -> tuple[nn.Module, int]:
    """:func:`build_encoder` and its feature size for the actor-critic ``model``; without ``hidden_size_list``,
    vectors pass unchanged (images need an encoder).

    >>> optional_encoder('QAC', (4,), None)
    (Identity(), 4)
    >>> optional_encoder('QAC', (4,), [8])[1]
    8
    >>> optional_encoder('QAC', (3, 32, 32), None)
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: QAC with image obs_shape (3, 32, 32) needs encoder_hidden_size_list (conv channels, \
then the feature size), e.g. [32, 32, 32, 50]
    """
    if len(obs_shape) not in (1, 3):
        raise ConfigError(f"{model} takes vectors or (C, H, W) images; got obs_shape {tuple(obs_shape)}")
    if hidden_size_list is None:
        if len(obs_shape) == 3:
            raise ConfigError(
                f"{model} with image obs_shape {tuple(obs_shape)} needs encoder_hidden_size_list "
                "(conv channels, then the feature size), e.g. [32, 32, 32, 50]"
            )
        return nn.Identity(), int(obs_shape[0])
    encoder = build_encoder(obs_shape, hidden_size_list, act=act)
    return encoder, encoder.output_size


def linear_layer(noise: bool) -> Callable[[int, int], nn.Module]:
    """The layer a head builds: :class:`~ding.model.noisy.NoisyLinear` when ``noise``, else ``nn.Linear``."""
    return NoisyLinear if noise else nn.Linear


class DiscreteHead(nn.Module):
    """Q-values from features: ``layer_num`` hidden layers, then one value per action (noisy layers with ``noise``)."""

    def __init__(
        self, hidden_size: int, action_num: int, layer_num: int = 1, act: str = "relu", noise: bool = False
    ) -> None:
        super().__init__()
        linear = linear_layer(noise)
        self.body = mlp(hidden_size, [hidden_size] * layer_num, act, linear=linear)
        self.out = linear(hidden_size, action_num)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.body(x))


class DuelingHead(nn.Module):
    """Dueling Q-values: a state value plus action advantages centred on their mean (noisy layers with ``noise``)."""

    def __init__(
        self, hidden_size: int, action_num: int, layer_num: int = 1, act: str = "relu", noise: bool = False
    ) -> None:
        super().__init__()
        linear = linear_layer(noise)
        self.advantage = nn.Sequential(
            mlp(hidden_size, [hidden_size] * layer_num, act, linear=linear), linear(hidden_size, action_num)
        )
        self.value = nn.Sequential(
            mlp(hidden_size, [hidden_size] * layer_num, act, linear=linear), linear(hidden_size, 1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        advantage = self.advantage(x)
        return self.value(x) + advantage - advantage.mean(dim=-1, keepdim=True)

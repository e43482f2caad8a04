"""DI-engine's ``ding.model.template.qac`` (compatibility): ``ContinuousQAC`` (``QAC``, its name before DI-engine
0.5) and ``DiscreteQAC`` with DI-engine's signatures, built as ding's models.

``ContinuousQAC(obs_shape, action_shape, action_space, ...)`` builds ding's model for the action space:
``'regression'`` (DDPG, TD3) :class:`~ding.model.deterministic_qac.DeterministicQAC`, ``'reparameterization'`` (SAC)
:class:`~ding.model.qac.QAC`, each laid out as DI-engine's (a first layer of the head width, then
``*_head_layer_num`` more); ``'hybrid'`` is refused (ding has no parameterized-action policy). ``share_encoder`` is
False only (ding's actor and critic have an encoder each), ``norm_type`` None only; ``activation`` is a torch module.

Example:
    >>> import torch
    >>> model = ContinuousQAC(3, 1, 'regression', twin_critic=True)
    >>> out = model({'obs': torch.zeros(4, 3), 'action': torch.zeros(4, 1)}, mode='compute_critic')
    >>> type(model).__name__, tuple(out['q_value'].shape)
    ('DeterministicQAC', (2, 4))
    >>> ContinuousQAC(3, 1, 'hybrid')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: ContinuousQAC(action_space='hybrid') is not supported: ding's continuous QAC models are \
'regression' (DDPG, TD3) and 'reparameterization' (SAC)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ding.errors import ConfigError
from ding.model import deterministic_qac, discrete_qac
from ding.model import qac as reparameterization_qac
from ding.model.template.arguments import Refusals, ding_arguments
from ding.model.template.q_learning import NORM_ONLY, RELU

QAC_REFUSALS: Refusals = {**NORM_ONLY, "share_encoder": (False, "ding's actor and critic have an encoder each")}


def ContinuousQAC(  # DI-engine's class name: a function that builds ding's model for the action space
    obs_shape: int | Sequence[int],
    action_shape: int | Sequence[int],
    action_space: str,
    twin_critic: bool = False,
    actor_head_hidden_size: int = 64,
    actor_head_layer_num: int = 1,
    critic_head_hidden_size: int = 64,
    critic_head_layer_num: int = 1,
    activation: Any = RELU,
    norm_type: str | None = None,
    encoder_hidden_size_list: Sequence[int] | None = None,
    share_encoder: bool = False,
) -> deterministic_qac.DeterministicQAC | reparameterization_qac.QAC:
    """ding's continuous Q actor-critic for ``action_space`` (see the module docstring)."""
    kwargs = ding_arguments("ContinuousQAC", locals(), QAC_REFUSALS)
    space = kwargs.pop("action_space")
    if space == "regression":
        return deterministic_qac.DeterministicQAC(**kwargs)
    if space == "reparameterization":
        return reparameterization_qac.QAC(**kwargs)
    raise ConfigError(
        f"ContinuousQAC(action_space={space!r}) is not supported: ding's continuous QAC models are "
        "'regression' (DDPG, TD3) and 'reparameterization' (SAC)"
    )


QAC = ContinuousQAC
"""DI-engine's name for :func:`ContinuousQAC` before 0.5."""


class DiscreteQAC(discrete_qac.DiscreteQAC):
    """ding's :class:`~ding.model.discrete_qac.DiscreteQAC` with DI-engine's arguments."""

    def __init__(
        self,
        obs_shape: int | Sequence[int],
        action_shape: int | Sequence[int],
        twin_critic: bool = False,
        actor_head_hidden_size: int = 64,
        actor_head_layer_num: int = 1,
        critic_head_hidden_size: int = 64,
        critic_head_layer_num: int = 1,
        activation: Any = RELU,
        norm_type: str | None = None,
        encoder_hidden_size_list: Sequence[int] | None = None,
        share_encoder: bool = False,
    ) -> None:
        super().__init__(**ding_arguments("DiscreteQAC", locals(), QAC_REFUSALS))

"""The spaces of a vector env's batch, from its envs' spaces and an observation mode (gymnasium's three)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gymnasium import spaces
from gymnasium.spaces.utils import is_space_dtype_shape_equiv
from gymnasium.vector.utils import batch_differing_spaces, batch_space

from ding.errors import BatchSpecError

ObservationMode = str | tuple[spaces.Space[Any], spaces.Space[Any]]


def check_observation_mode(mode: ObservationMode) -> None:
    """Raise unless ``mode`` is ``'same'``, ``'different'`` or a ``(batched, single)`` pair of spaces.

    >>> check_observation_mode('different')
    >>> check_observation_mode((spaces.Box(0, 1, (2, 3)), spaces.Box(0, 1, (3,))))
    """
    if isinstance(mode, tuple) and len(mode) == 2:
        if not all(isinstance(space, spaces.Space) for space in mode):
            raise TypeError(f"an observation_mode pair holds two spaces (batched, single), got {mode!r}")
        return
    if not (isinstance(mode, str) and mode in ("same", "different")):
        raise ValueError(  # gymnasium's words, so code written for its vector envs matches them
            "Invalid `observation_mode`, expected: 'same' or 'different' or tuple of single and batch observation "
            f"space, actual got {mode} (a tuple is (batched, single))"
        )


def unequal_spaces_message(detail: str) -> str:
    """The error for envs whose observation spaces differ under ``observation_mode='same'``.

    It opens with the sentence gymnasium's ``SyncVectorEnv`` raises, so code that matches that text keeps working.

    >>> unequal_spaces_message('env 1 has Discrete(3), env 0 has Discrete(2)')[:52]
    'ManagerVectorEnv built as SyncVectorEnv(..., observa'
    """
    return (
        "ManagerVectorEnv built as SyncVectorEnv(..., observation_mode='same') however the sub-environments "
        f"observation spaces are not equivalent. {detail}. If this is intentional, use "
        "`observation_mode='different'` instead."
    )


def batch_spaces(
    mode: ObservationMode,
    single_obs: spaces.Space[Any],
    single_action: spaces.Space[Any],
    obs_spaces: Sequence[spaces.Space[Any]],
    action_spaces: Sequence[spaces.Space[Any]],
) -> tuple[spaces.Space[Any], spaces.Space[Any]]:
    """The batched observation space and the single one, after checking every env's spaces against the batch.

    ``'same'``: every env has ``single_obs``. ``'different'``: the envs' spaces may differ in bounds but not in
    shape or dtype; the batch holds each env's. A pair: the given spaces, the envs' of the same shapes and dtypes.
    Every env has ``single_action``. Observation spaces are checked first, as gymnasium checks them.

    Raises:
        BatchSpecError: An env's space does not fit (names the env and both spaces).
    """
    batched_and_single = _observation_spaces(mode, single_obs, obs_spaces)
    for env_id, space in enumerate(action_spaces):
        if space != single_action:
            raise BatchSpecError(f"env {env_id} has action space {space}, but the batch's is {single_action}")
    return batched_and_single


def _observation_spaces(
    mode: ObservationMode, single_obs: spaces.Space[Any], obs_spaces: Sequence[spaces.Space[Any]]
) -> tuple[spaces.Space[Any], spaces.Space[Any]]:
    if mode == "same":
        for env_id, space in enumerate(obs_spaces):
            if space != single_obs:
                raise BatchSpecError(unequal_spaces_message(f"env {env_id} has {space}, env 0 has {single_obs}"))
        return batch_space(single_obs, len(obs_spaces)), single_obs
    batched: spaces.Space[Any] | None = None
    single = single_obs
    if isinstance(mode, tuple):
        batched, single = mode
    for env_id, space in enumerate(obs_spaces):
        if not is_space_dtype_shape_equiv(space, single):
            raise BatchSpecError(
                f"env {env_id} has observation space {space}, which differs in shape or dtype from the batch's "
                f"single observation space {single}"
            )
    if batched is None:
        try:
            batched = batch_differing_spaces(list(obs_spaces))
        except (AssertionError, TypeError, ValueError) as err:
            raise BatchSpecError(f"the envs' observation spaces cannot be batched: {err}") from err
    return batched, single

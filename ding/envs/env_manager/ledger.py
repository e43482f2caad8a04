"""Where each env of a manager stands: its state, its ready observation, its episodes, its failures.

:class:`EnvLedger` is the one owner of these. The manager's verbs and its engine read and change them through the
ledger's methods, and the ledger holds the rules that go with them: which envs take actions (and what actions they
accept), how an ended episode is accounted (counted, reset at once or left waiting, ``DONE`` after
``episode_num``), and how a failure spends the env's retry budget (``max_retry`` attempts, then ``ERROR`` and the
error raised when the call ends). The semantics are described in :mod:`~ding.envs.env_manager.base_manager`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager.inputs import check_action_rows, check_actions
from ding.envs.env_manager.settings import ManagerSettings
from ding.envs.env_manager.state import EnvState
from ding.envs.values.conversion import Converter, bounds_check
from ding.envs.values.spaces import DEFAULT_REWARD_SPACE
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import EnvManagerError

__all__ = ["NOT_RESET", "EnvLedger", "Retry"]


class _NotReset:
    def __repr__(self) -> str:
        return "NOT_RESET"


NOT_RESET: Any = _NotReset()
"""Said of an env whose episode ended in a step without the env being reset within that step."""


class Retry(enum.Enum):
    """How a failed env is tried again (``retry_type``)."""

    RESET = "reset"
    RENEW = "renew"


class EnvLedger:
    """States, ready observations, episode counts and failures of ``env_num`` envs (see the module docstring).

    Example:
        >>> from ding.envs.env_manager.settings import MANAGER_CONFIG, ManagerSettings
        >>> from ding.utils.accepts import plain_defaults
        >>> ledger = EnvLedger(2, ManagerSettings.take({**plain_defaults(MANAGER_CONFIG), "episode_num": 1}))
        >>> ledger.begin()
        >>> ledger.started(0, "first obs of env 0")
        >>> ledger.ready_ids(), ledger.state(1).value
        ([0], 'init')
        >>> ledger.account({0: BaseEnvTimestep("last", 1.0, True, {})})  # the episode ended: no reset (episode_num)
        []
        >>> ledger.state(0).value, ledger.ready_ids()
        ('done', [])
    """

    def __init__(self, env_num: int, settings: ManagerSettings) -> None:
        self.env_num = env_num
        self._settings = settings
        self._states = dict.fromkeys(range(env_num), EnvState.VOID)
        self._ready: dict[int, Any] = {}
        self._ready_view = MappingProxyType(self._ready)
        self._away: set[int] = set()  # envs in flight: their observation is not offered for an action
        self._episodes = dict.fromkeys(range(env_num), 0)
        self._within: np.ndarray | None = None  # resets_within_step, until an episode count changes
        self._within_rules: tuple[bool, float] = (True, math.inf)  # the settings _within was made for
        self._failures: dict[int, int] = {}  # env id -> consecutive failed attempts
        self._fatal: list[EnvManagerError] = []  # failures past max_retry, raised when the call ends
        self._action_check: Converter | None = None
        self._action_fits: Callable[[np.ndarray], bool] | None = None  # the action space's bounds check
        self._action_space: spaces.Space[Any] | None = None
        self.reward_space: spaces.Space[Any] = DEFAULT_REWARD_SPACE
        """The space whose zero first and abnormal timesteps carry (the manager sets it once spaces are known)."""

    # ----- lifecycle -----------------------------------------------------------------------------
    def begin(self) -> None:
        """A launch: every env ``INIT``, no episode played, no failure, nothing ready or in flight."""
        self._states.update(dict.fromkeys(self._states, EnvState.INIT))
        self._episodes.update(dict.fromkeys(self._episodes, 0))
        self._within = None
        self._failures.clear()
        self._fatal.clear()
        self._ready.clear()
        self._away.clear()

    def void(self) -> None:
        """A close: every env ``VOID``, nothing ready or in flight."""
        self._ready.clear()
        self._away.clear()
        self._states.update(dict.fromkeys(self._states, EnvState.VOID))

    def expect_actions(self, action_space: spaces.Space[Any] | None, check: Converter | None) -> None:
        """How actions are checked from now on: with ``check`` in ``action_space`` (None: the envs check their own)."""
        self._action_space, self._action_check = action_space, check
        self._action_fits = bounds_check(action_space) if action_space is not None else None

    # ----- states --------------------------------------------------------------------------------
    def state(self, env_id: int) -> EnvState:
        return self._states[env_id]

    def states(self) -> dict[int, EnvState]:
        """Every env's state, by env id (a copy)."""
        return dict(self._states)

    def summary(self) -> str:
        """The states as ``id:state`` pairs, for error messages."""
        return ", ".join(f"{i}:{state.value}" for i, state in sorted(self._states.items()))

    def episodes(self) -> dict[int, int]:
        """Episodes each env has completed since the launch, by env id (a copy)."""
        return dict(self._episodes)

    def all_done(self) -> bool:
        """Whether every env has played its ``episode_num`` episodes."""
        return all(state is EnvState.DONE for state in self._states.values())

    def resetting(self, env_ids: Sequence[int] | Mapping[int, Any]) -> None:
        """The envs are being reset (``RESET``)."""
        for env_id in env_ids:
            self._states[env_id] = EnvState.RESET

    def started(self, env_id: int, obs: Any) -> None:
        """A reset gave env ``env_id`` its first observation: it waits for an action (``RUN``)."""
        self._ready[env_id] = obs
        self._states[env_id] = EnvState.RUN

    def waits_for_reset(self, env_id: int) -> None:
        """Env ``env_id`` is at an episode's end with no reset to come: it waits for one (``NEED_RESET``)."""
        self._ready.pop(env_id, None)
        self._states[env_id] = EnvState.NEED_RESET

    # ----- ready observations --------------------------------------------------------------------
    @property
    def ready_view(self) -> Mapping[int, Any]:
        """The observation of every env that has one, by env id (a read-only view; envs in flight included)."""
        return self._ready_view

    def ready_ids(self) -> list[int]:
        """The envs waiting for an action: with an observation, and not in flight."""
        if self._away:
            away = self._away
            return sorted(i for i in self._ready if i not in away)
        return sorted(self._ready)

    def obs(self, env_id: int) -> Any:
        return self._ready[env_id]

    def set_obs(self, env_id: int, obs: Any) -> None:
        """Env ``env_id`` waits with ``obs`` (a step's result, or a restored state's)."""
        self._ready[env_id] = obs

    def drop_obs(self, env_id: int) -> Any:
        """Take env ``env_id``'s observation away (it is being reset or stepped); returns it (None: it had none)."""
        return self._ready.pop(env_id, None)

    def drop_obs_of(self, env_ids: Iterable[int]) -> None:
        """:meth:`drop_obs` of each of ``env_ids``."""
        pop = self._ready.pop
        for env_id in env_ids:
            pop(env_id, None)

    def away(self, env_ids: Iterable[int]) -> None:
        """The envs are in flight: they keep their observation, but take no action until :meth:`back`."""
        self._away.update(env_ids)

    def back(self, env_ids: Iterable[int]) -> None:
        """The envs are no longer in flight."""
        self._away.difference_update(env_ids)

    # ----- actions -------------------------------------------------------------------------------
    def require_all_ready(self, actions: Any = None) -> None:
        """``step_batch``'s rule: every env waits for an action, and ``actions`` (when given) has a row for each."""
        if len(self._ready) != self.env_num:
            raise EnvManagerError(
                f"step_batch needs every env waiting for an action; ready: {self.ready_ids()}, states: {self.summary()}"
            )
        if actions is not None and len(actions) != self.env_num:
            raise ValueError(f"step_batch() got {len(actions)} actions for {self.env_num} envs")

    def accept_actions(self, actions: Mapping[int, Any]) -> dict[int, Any]:
        """The actions by env id, checked; every env named must wait for an action."""
        return check_actions(actions, self._ready, self.ready_ids, self._states, self._action_check)

    def actions_fit(self, rows: np.ndarray) -> bool:
        """Whether every action in ``rows`` (stacked on leading axes) is within the action space's bounds, the check
        with which actions pass unchanged (:func:`~ding.envs.values.conversion.bounds_check`, made once per space).

        >>> from ding.envs.env_manager.settings import MANAGER_CONFIG
        >>> from ding.utils.accepts import plain_defaults
        >>> ledger = EnvLedger(2, ManagerSettings.take(plain_defaults(MANAGER_CONFIG)))
        >>> ledger.expect_actions(spaces.Discrete(3), None)
        >>> ledger.actions_fit(np.array([0, 2])), ledger.actions_fit(np.array([0, 3]))
        (True, False)
        """
        return self._action_fits is not None and self._action_fits(rows)

    def accept_action_rows(self, env_ids: list[int], rows: Any) -> dict[int, Any]:
        """Actions given as rows (one per env id), checked as :meth:`accept_actions` checks them.

        An array of valid actions passes with one vectorized check; the errors stay per action.
        """
        if self._action_check is None or self._action_space is None:  # the envs check their own actions
            return self.accept_actions({env_id: rows[j] for j, env_id in enumerate(env_ids)})
        return check_action_rows(
            rows,
            env_ids,
            self._action_space,
            self._ready,
            self.ready_ids,
            self._states,
            self._action_check,
            self._action_fits,
        )

    # ----- failures ------------------------------------------------------------------------------
    def zero_reward(self) -> np.ndarray:
        """A reward of 0 in :attr:`reward_space` (first observations, abnormal steps)."""
        space = self.reward_space
        return np.zeros(space.shape or (1,), dtype=space.dtype or np.float32)

    def spend_retry(self, env_id: int, error: EnvManagerError) -> bool:
        """Count a failed attempt of ``env_id``; at ``max_retry`` the env is ``ERROR`` and ``error`` is kept to raise.

        Returns whether the env may be tried again.
        """
        failures = self._failures.get(env_id, 0) + 1
        self._failures[env_id] = failures
        if failures < self._settings.max_retry:
            return True
        self._states[env_id] = EnvState.ERROR
        self._ready.pop(env_id, None)
        self._fatal.append(error)
        return False

    def recover(self, env_id: int, error: EnvManagerError) -> Retry | None:
        """Spend a retry on ``env_id``: None past the budget, else how to try it again (``retry_type``)."""
        if not self.spend_retry(env_id, error):
            return None
        return Retry.RENEW if self._settings.retry_type == "renew" else Retry.RESET

    def forget_failures(self, env_id: int) -> None:
        """A fresh retry budget for ``env_id`` (a successful step, or the caller's reset)."""
        self._failures.pop(env_id, None)

    def abnormal(self, env_id: int, error: EnvManagerError) -> BaseEnvTimestep:
        """The abnormal end of env ``env_id``'s episode after ``error`` (its last observation, reward 0).

        Take it before spending the retry: an env past its budget loses its observation.
        """
        info = {"abnormal": True, "error": error.summary, "traceback": error.traceback_text}
        return BaseEnvTimestep(
            self._ready.get(env_id), self.zero_reward(), True, info, terminated=False, truncated=True
        )

    def raise_fatal(self) -> None:
        """Raise the first failure past ``max_retry`` of the call that just ended (its envs are in ``ERROR``)."""
        if self._fatal:
            error = self._fatal[0]
            self._fatal.clear()
            raise error

    @property
    def failing(self) -> bool:
        """Whether a failure past ``max_retry`` waits to be raised."""
        return bool(self._fatal)

    # ----- episodes ------------------------------------------------------------------------------
    def account(
        self, timesteps: Mapping[int, BaseEnvTimestep], first_obs: Callable[[int], Any] | None = None
    ) -> list[int]:
        """Account one step of each env in ``timesteps``; returns the envs to reset now (in order).

        A step that is not abnormal ends a run of failures; an unfinished episode's observation is the env's ready
        one; an ended episode is accounted by :meth:`end_episode`. ``first_obs(env_id)``, where given, is the new
        episode's first observation of an env that was reset within the step, else :data:`NOT_RESET`.
        """
        ready, failures = self._ready, self._failures
        resets = []
        for env_id, timestep in timesteps.items():
            if failures and env_id in failures and not timestep.info.get("abnormal", False):
                del failures[env_id]  # a successful step ends a run of failures
            if not timestep.done:  # the common case
                ready[env_id] = timestep.obs
                continue
            first = NOT_RESET
            if first_obs is not None and not timestep.info.get("abnormal", False):
                first = first_obs(env_id)
            if self.end_episode(env_id, timestep, first):
                resets.append(env_id)
        return resets

    def stepped(self, observations: Mapping[int, Any]) -> None:
        """Envs whose step succeeded without ending their episode wait with these next observations."""
        ready, failures = self._ready, self._failures
        ready.update(observations)
        if failures:
            for env_id in observations:
                failures.pop(env_id, None)

    def end_episode(self, env_id: int, timestep: BaseEnvTimestep, first: Any = NOT_RESET) -> bool:
        """Account the end of env ``env_id``'s episode; returns whether the env is to be reset now.

        ``first``: the new episode's first observation when the env was reset within the step (an abnormal end
        never is), else :data:`NOT_RESET`. An abnormal episode does not count towards ``episode_num`` and is reset
        (unless the env is in ``ERROR``); a counted one makes the env ``DONE`` after ``episode_num``, else is reset
        with ``auto_reset`` or waits in ``NEED_RESET``.
        """
        abnormal = timestep.info.get("abnormal", False)
        if first is not NOT_RESET and not abnormal:
            self._episodes[env_id] += 1
            self._within = None
            self._ready[env_id] = first
            self._states[env_id] = EnvState.RUN
            return False
        self._ready.pop(env_id, None)
        if self._states[env_id] is EnvState.ERROR:
            return False  # failed past max_retry: waits for reset()
        if not abnormal:
            self._episodes[env_id] += 1
            self._within = None
        if self._episodes[env_id] >= self._settings.episode_num:
            self._states[env_id] = EnvState.DONE
            return False
        if self._settings.auto_reset or abnormal:
            return True
        self._states[env_id] = EnvState.NEED_RESET
        return False

    def resets_within_step(self) -> np.ndarray:
        """Per env, 1 where an episode ending in the next step is to be followed by a reset within that step."""
        settings = self._settings
        rules = (settings.auto_reset, settings.episode_num)  # settings a DI-engine attribute may change
        if self._within is None or self._within_rules != rules:
            if not settings.auto_reset:
                within = np.zeros(self.env_num, dtype=np.int64)
            else:
                counts = np.fromiter(self._episodes.values(), dtype=np.float64, count=self.env_num)
                within = (counts + 1 < settings.episode_num).astype(np.int64)
            within.flags.writeable = False
            self._within, self._within_rules = within, rules
        return self._within

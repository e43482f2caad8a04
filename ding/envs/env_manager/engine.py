"""The engine protocol: how a manager's envs run.

A manager (:class:`~ding.envs.env_manager.base_manager.BaseEnvManager`) checks what its caller passes, keeps the
asynchronous API's state and answers for the envs' states through its
:class:`~ding.envs.env_manager.ledger.EnvLedger`; its engine builds, resets, steps and closes the envs, and reports
every result to that same ledger (it accounts each step there, and resets at once the envs the ledger says to).
The engines:

- :class:`~ding.envs.env_manager.in_process.InProcessEngine`: every env in the calling process (``base``);
- :class:`~ding.envs.env_manager.core.batch_core.BatchCore`: env groups in workers reached through a
  :class:`~ding.envs.env_manager.core.channel.Channel` (threads, local processes, zmq peers, Ray actors);
- :class:`~ding.envs.env_manager.envpool.engine.PoolEngine`: an envpool pool (``envpool``).

A manager type chooses its engine with its ``make_engine`` class attribute: a callable taking the
:class:`EngineParts` the manager shares with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ding.envs.env_manager.batch import BatchTimestep
from ding.envs.env_manager.core.channel import Channel
from ding.envs.env_manager.env_fn import EnvFn
from ding.envs.env_manager.ledger import EnvLedger
from ding.envs.env_manager.settings import EnvSetup, ManagerSettings
from ding.envs.values.spaces import EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep


@dataclasses.dataclass(frozen=True)
class EngineParts:
    """What a manager shares with its engine."""

    env_fns: list[EnvFn]
    """The env constructors, one per env id."""
    settings: ManagerSettings
    """The manager's settings (read where they apply: the caller may change some between calls)."""
    ledger: EnvLedger
    """The envs' states, ready observations, episodes and failures: every result is reported here."""
    setup: EnvSetup
    """Seeds and replay directories, applied whenever an env is built."""
    partial_batches: bool
    """Whether the manager type returns partial batches (a finite ``wait_num`` applies)."""
    close_manager: Callable[[], None]
    """Close the manager: for a fault that leaves the envs without a way to run (a worker that cannot be restarted,
    one lost during a control command). The engine's :meth:`Engine.close` is called from there."""


class Engine(Protocol):
    """How a manager's envs run (see the module docstring). Env ids are ``0 .. env_num - 1``."""

    # ----- lifecycle -----------------------------------------------------------------------------
    def probe_spaces(self) -> EnvSpaces | None:
        """The spaces of envs whose constructors do not declare them, read without building an env in this process
        (in a child process, from a spec); None: the manager reads them from one env built here (``env_ref``)."""
        ...

    def launch(
        self, spaces: EnvSpaces | None, declared: bool, params: Mapping[int, dict[str, Any]]
    ) -> tuple[EnvSpaces | None, bool]:
        """Build every env (with the setup's seeds and replay directories) and reset them with ``params``.

        ``spaces`` are the envs' spaces as far as known (``declared``: stated by their constructors); returns them
        as the built envs showed them (envs built by a factory of a class that declares its spaces count as
        declared). A launch that fails raises (the manager closes).
        """
        ...

    def close(self) -> None:
        """Close every env and release what runs them; calling it again does nothing."""
        ...

    # ----- envs ----------------------------------------------------------------------------------
    def reset(self, params: Mapping[int, dict[str, Any]]) -> None:
        """Reset the envs of ``params`` (keyword arguments by env id): each is ``started`` in the ledger with its
        first observation, or spends retries (renewed when so configured) until it is or is in ``ERROR``."""
        ...

    def step(self, actions: Mapping[int, Any]) -> dict[int, BaseEnvTimestep]:
        """Step envs with checked actions and account every result in the ledger; returns the delivered timesteps.

        A failed env's timestep is its abnormal episode end. An engine that leaves steps in flight (partial batches)
        may deliver other envs than those stepped, and takes ``{}`` to collect envs in flight.
        """
        ...

    def step_batch(self, actions: Any) -> BatchTimestep:
        """Step every env (all waiting for an action) with ``actions[env_id]``, unchecked: as :meth:`step` does,
        checking the actions with the ledger's rules, and return the results as arrays."""
        ...

    def apply_seeds(self, env_ids: Sequence[int] | None = None) -> None:
        """Seed the envs ``env_ids`` (None: every env) that have a seed in the setup."""
        ...

    def apply_replay(self, env_ids: Sequence[int] | None = None) -> None:
        """Turn on video recording of the envs ``env_ids`` (None: every env) into the setup's directories."""
        ...

    def check_replay(self) -> None:
        """Refuse video recording, launched or not, when these envs cannot record (raise); else nothing."""
        ...

    def describe(self, name: str) -> dict[int, tuple[Any, ...]]:
        """What ``name`` is on each env (see :func:`~ding.envs.env_manager.fanout.describe_attribute`)."""
        ...

    def call(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], env_ids: Sequence[int] | None
    ) -> dict[int, Any]:
        """Call method ``name`` of the envs ``env_ids`` (None: every env); results by env id."""
        ...

    # ----- send / recv ---------------------------------------------------------------------------
    def worker_key(self, env_id: int) -> int:
        """What runs env ``env_id``: envs sharing a key step together, one step at a time."""
        ...

    def dispatch(self, actions: Mapping[int, Any]) -> None:
        """Start stepping envs with checked actions and return without waiting (``send``)."""
        ...

    def receive(
        self, pending: Mapping[int, Any], wanted: int, timeout: float | None, *, as_batch: bool = False
    ) -> BatchTimestep | dict[int, BaseEnvTimestep]:
        """Results of at least ``wanted`` envs of ``pending`` (env id -> action, in send order), accounted in the
        ledger: fewer when ``timeout`` passes, none raising :class:`~ding.errors.WorkerTimeoutError`.

        With ``as_batch`` an engine may return the envs' :class:`BatchTimestep` (when no env failed) instead of
        per-env timesteps.
        """
        ...

    # ----- observations --------------------------------------------------------------------------
    def ready_obs_batch(self, env_ids: list[int]) -> Any:
        """The ready observations of ``env_ids`` stacked on a leading axis (a view where the engine has one)."""
        ...

    def adopt_obs(self, env_id: int, obs: Any) -> Any:
        """Make ``obs`` env ``env_id``'s ready observation where the engine keeps one (shared memory); returns the
        object the ledger keeps for it."""
        ...

    # ----- monitoring ----------------------------------------------------------------------------
    @property
    def in_flight_env_ids(self) -> Sequence[int]:
        """Envs stepped by an earlier :meth:`step` whose results are not delivered yet (partial batches)."""
        ...

    @property
    def channel(self) -> Channel | None:
        """The channel to the workers (None: there is none, or not before launch)."""
        ...

    @property
    def worker_pids(self) -> list[int | None]:
        """Process ids of the worker processes, one per env group (empty: no workers)."""
        ...

    @property
    def shared_memory_names(self) -> list[str]:
        """Names of the shared-memory segments of the step buffers."""
        ...

    @property
    def late_results(self) -> int:
        """Results that arrived after their step was given up on (dropped, never delivered)."""
        ...

    @property
    def refused_replies(self) -> int:
        """Worker replies refused because they did not decode (the worker was replaced)."""
        ...


EngineFactory = Callable[[EngineParts], Engine]
"""How a manager type builds its engine."""

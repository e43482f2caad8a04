"""``ding -m spec -c cfg.py --check [N]``: run the configured env and check real values against the predicted spaces.

The config's collector envs are built, chain included, in the env manager the config names, each as a
:class:`~ding.envs.checks.space_check.SpaceCheckedEnv`; N random actions, drawn from the predicted action space
(seeded by the config's seed), are stepped through the manager across episode ends. Observations and rewards are
checked where each step of the chain returns them, where the env returns them and where the manager delivers them;
actions where each step receives them. Every way a value leaves its predicted space (dtype, shape, bounds) is one
finding line, naming the step of the chain; so is an action the env refuses, a failure that stops the run, and spaces
that the built envs report differently from the prediction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ding.config import compile_config
from ding.envs.base_env import as_action_array
from ding.envs.checks.space_check import CheckedEnvFn, Finding, FindingLog, merge_findings
from ding.envs.env_manager import create_env_manager
from ding.envs.from_config import env_class, role_manager_config
from ding.errors import DingError

DEFAULT_CHECK_STEPS = 1000
"""How many env steps ``--check`` takes when no number is given."""


@dataclasses.dataclass(frozen=True)
class CheckReport:
    """What a check found: the findings (empty when every value stayed in its space) and what was run."""

    findings: list[Finding]
    problems: list[str]
    """Findings that are not values: refused actions, failures that stopped the run, spaces that differ."""
    env_steps: int
    episodes: int
    env_num: int
    manager: str
    chain_steps: int
    layers_watched: bool

    @property
    def passed(self) -> bool:
        return not self.findings and not self.problems

    def lines(self) -> list[str]:
        """A summary line, then one line per finding."""
        ran = (
            f"{self.env_steps:,} env steps ({self.episodes:,} episodes) in {self.env_num} envs of the {self.manager} "
            "manager"
        )
        watched = (
            f"the env and each of the {self.chain_steps} steps of its chain"
            if self.layers_watched
            else "the env's output (the steps of its chain could not be told apart)"
        )
        if self.passed:
            return [
                f"check passed: {ran}; every observation, reward and action stayed in its predicted space at {watched}"
            ]
        count = len(self.findings) + len(self.problems)
        return [
            f"check failed: {count} findings in {ran}, checked at {watched}:",
            *self.problems,
            *(finding.line() for finding in self.findings),
            *parting_lines(self.findings),
        ]


def parting_lines(findings: list[Finding]) -> list[str]:
    """For each kind of value, the step where the prediction and the values part: the first step with a finding.

    >>> from ding.envs.checks.space_check import LAYER
    >>> finding = Finding(2, 'frame_stack(n_frames=2)', LAYER, 'observation: dtype float64, declared float32', 1, 0)
    >>> parting_lines([finding])
    ['observation values part from the prediction at step 2 frame_stack(n_frames=2)']
    """
    first: dict[str, Finding] = {}
    for finding in findings:  # ordered by step
        first.setdefault(finding.reason.partition(":")[0], finding)
    return [
        f"{what} values part from the prediction at step {finding.step} {finding.step_name}"
        for what, finding in first.items()
    ]


def check_config(main_config: Mapping[str, Any], create_config: Mapping[str, Any], steps: int) -> CheckReport:
    """Run the check (see the module) for ``steps`` env steps in total and report what it found."""
    cfg = compile_config(main_config, create_config, require_policy=False)
    env_cls = env_class(cfg.env)
    env_fns = [CheckedEnvFn.of(env_cls, env_cfg) for env_cfg in env_cls.create_collector_env_cfg(cfg.env)]
    trace = env_fns[0].trace
    last = len(trace) - 1
    manager_type = str(cfg.env.manager.type)
    delivered = FindingLog(trace)
    delivered_where = f"delivered by the {manager_type} manager"
    problems: list[str] = []
    env_steps = episodes = 0
    manager = create_env_manager(role_manager_config(cfg.env, "collector"), env_fns)
    try:
        manager.seed(int(cfg.seed))
        manager.launch()
        if manager.env_spaces != trace[-1][1]:
            problems.append(
                f"spaces: the envs built in the manager have {manager.env_spaces}, predicted {trace[-1][1]}"
            )
        action_space = trace[-1][1].action
        action_space.seed(int(cfg.seed))
        fresh = set(manager.ready_obs_id)  # envs whose ready observation came from a reset
        taken = dict.fromkeys(range(len(env_fns)), 0)  # steps per env, as each env counts them
        while env_steps < steps:
            for env_id in fresh & set(manager.ready_obs_id):
                delivered.check(last, delivered_where, "observation", manager.ready_obs[env_id], taken[env_id])
            actions = {i: as_action_array(action_space.sample(), action_space, top=True) for i in manager.ready_obs_id}
            try:
                timesteps = manager.step(actions)
            except DingError as err:
                problems.append(f"the run stopped after {env_steps} env steps: {_first_line(err)}")
                break
            fresh = set()
            for env_id, timestep in timesteps.items():
                env_steps += 1
                taken[env_id] += 1
                delivered.check(last, delivered_where, "observation", timestep.obs, taken[env_id])
                delivered.check(last, delivered_where, "reward", timestep.reward, taken[env_id])
                if timestep.done:
                    episodes += 1
                    fresh.add(env_id)
        try:
            in_envs: dict[int, list[Finding]] = manager.call_envs("space_findings")
            watched = all(manager.call_envs("layers_watched").values())
        except DingError as err:
            problems.append(f"the envs' findings could not be read: {_first_line(err)}")
            in_envs, watched = {}, False
    finally:
        manager.close()
    findings = merge_findings([*in_envs.values(), delivered.findings()])
    return CheckReport(findings, problems, env_steps, episodes, len(env_fns), manager_type, last, watched)


def _first_line(err: BaseException) -> str:
    return " ".join(str(err).split("\n--- original traceback ---")[0].split())


__all__ = ["DEFAULT_CHECK_STEPS", "CheckReport", "check_config", "parting_lines"]

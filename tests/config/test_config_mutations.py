"""Random mutations of the dizoo configs: each mutated config is refused with one ``DingError`` naming what is wrong,
or it compiles and its pipeline starts (policy, replay buffer and env managers built, a few env steps collected).
No other exception may escape: a wrong value never reaches a traceback.

A mutation replaces one value of the compiled config (every key a component declares, set in the user's config) with
a wrong type (a str, a list, a dict, None, a bool), a negative, zero, NaN, inf or huge number, or deletes a key or a
whole section the user's config sets. Mutations are drawn with a seeded generator, so every run checks the same ones.
The default suite compiles about a hundred mutations (``ding -m spec`` on a sample of them, as the user runs it),
starts the pipeline for a sample and trains a few env steps for a handful; ``-m slow`` checks several hundred more.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import pathlib
import random
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from ding.config import compile_config, read_config, save_config
from ding.entry import serial_pipeline, serial_pipeline_onpolicy
from ding.entry.utils import create_env_managers, create_policy, seed_env_managers
from ding.envs.from_config import env_class
from ding.envs.probe import spec_trace_of
from ding.errors import DingError
from ding.utils.memory import mem_available
from ding.worker import SampleSerialCollector
from ding.worker.buffer_plan import build_replay_buffer, check_replay_memory, plan_replay_buffer
from tests.ding_cli import ROOT, run_ding

CONFIGS = sorted(
    str(path.relative_to(ROOT))
    for path in (ROOT / "dizoo").glob("**/config/*_config.py")
    if "carla" not in path.parts  # its envs need a CARLA server (compiling them needs none: they are mutated too)
)
ALL_CONFIGS = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "dizoo").glob("**/config/*_config.py"))
QUICK_ENVS = ("classic_control",)
"""Configs whose pipelines start in a second or two, for the runs of the default suite."""

HUGE = 10**9
LEAF_VALUES: dict[str, Any] = {
    "str": "x",
    "list": [1, 2],
    "dict": {"a": 1},
    "none": None,
    "negative": -3,
    "zero": 0,
    "nan": math.nan,
    "inf": math.inf,
    "huge": HUGE,
    "true": True,
    "false": False,
    "fraction": 2.5,
}
"""What a mutation puts in place of a value."""
NAME_KEYS = ("type", "import_names")


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One change of a config: ``kind`` (a :data:`LEAF_VALUES` key, ``delete_key`` or ``delete_section``) at
    ``path``."""

    config: str
    kind: str
    path: tuple[str, ...]

    def __str__(self) -> str:
        what = "" if self.kind.startswith("delete") else f" = {LEAF_VALUES[self.kind]!r}"
        return f"{self.config}: {self.kind} {'.'.join(self.path)}{what}"

    def apply(self, main: Mapping[str, Any]) -> dict[str, Any]:
        """A mutated deep copy of ``main`` (in plain dicts)."""
        mutated = _plain(main)
        *parents, key = self.path
        node = mutated
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        if self.kind.startswith("delete"):
            node.pop(key, None)
        else:
            node[key] = copy.deepcopy(LEAF_VALUES[self.kind])
        return mutated


def _plain(node: Any) -> Any:
    """A deep copy with every mapping a plain dict (an ``EasyDict`` copies a dict assigned into it)."""
    if isinstance(node, Mapping):
        return {key: _plain(value) for key, value in node.items()}
    if isinstance(node, (list, tuple)):
        return type(node)(_plain(value) for value in node)
    return copy.deepcopy(node)


def _leaves(node: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in node.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, (*path, key))
        elif key not in NAME_KEYS:
            yield (*path, key)


def _sections(node: Mapping[str, Any], path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in node.items():
        if isinstance(value, Mapping):
            yield (*path, key)
            yield from _sections(value, (*path, key))


def mutations(seed: int, count: int, configs: list[str]) -> list[Mutation]:
    """``count`` mutations drawn with ``random.Random(seed)``, over ``configs`` in turn."""
    rng = random.Random(seed)
    drawn: list[Mutation] = []
    for index in range(count):
        name = configs[index % len(configs)]
        main, _ = load(name)
        roll = rng.random()
        if roll < 0.08:
            drawn.append(Mutation(name, "delete_section", rng.choice(list(_sections(main)))))
        elif roll < 0.16:
            drawn.append(Mutation(name, "delete_key", rng.choice(list(_leaves(main)))))
        else:
            compiled = compiled_config(name)
            leaves = [path for path in _leaves({"env": compiled.env, "policy": compiled.policy})]
            drawn.append(Mutation(name, rng.choice(sorted(LEAF_VALUES)), rng.choice(leaves)))
    return drawn


_LOADED: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
_COMPILED: dict[str, Any] = {}


def load(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The config file's ``(main_config, create_config)`` (read once; callers copy before changing)."""
    if name not in _LOADED:
        main, create = read_config(ROOT / name)
        _LOADED[name] = (dict(main), dict(create))
    return _LOADED[name]


def compiled_config(name: str) -> Any:
    if name not in _COMPILED:
        _COMPILED[name] = compile_config(*load(name))
    return _COMPILED[name]


def compile_mutated(mutation: Mutation) -> Any | None:
    """The compiled mutated config, or None when a ``DingError`` refused it (any other exception escapes)."""
    main, create = load(mutation.config)
    try:
        return compile_config(mutation.apply(main), create)
    except DingError as err:
        assert str(err).strip(), f"{mutation}: refused without a message"
        return None


def start_pipeline(cfg: Any, steps: int = 4) -> None:
    """Build what a run builds, in its order (policy, replay buffer, env managers), and collect ``steps`` samples."""
    policy = create_policy(cfg, 0)
    if not cfg.policy.get("on_policy"):
        trace = spec_trace_of(env_class(cfg.env), cfg.env)
        plan = plan_replay_buffer(policy.cfg, policy.nstep_rule, trace)
        available = mem_available()
        if available is not None:
            check_replay_memory(plan, cfg.env.collector_env_num + cfg.env.evaluator_env_num, available)
        build_replay_buffer(plan, trace[-1][1], policy.nstep_rule, 0)
    collector_env, evaluator_env = create_env_managers(cfg)
    assert collector_env is not None and evaluator_env is not None
    try:
        seed_env_managers(0, cfg, collector_env, evaluator_env)
        collector = SampleSerialCollector(collector_env, policy.collect_mode)
        samples = collector.collect(n_sample=steps, policy_kwargs=policy.collect_mode.collect_kwargs(0))
        assert len(samples) >= steps
    finally:
        collector_env.close()
        evaluator_env.close()


def check_mutation(mutation: Mutation, start: bool) -> str:
    """Compile ``mutation`` (and with ``start`` start its pipeline); ``'refused'``, ``'compiled'`` or ``'started'``."""
    cfg = compile_mutated(mutation)
    if cfg is None:
        return "refused"
    if not start:
        return "compiled"
    try:
        start_pipeline(cfg)
    except DingError:
        return "refused"
    return "started"


def run_briefly(mutation: Mutation, root: pathlib.Path) -> str:
    """Train the mutated config for a few env steps with the pipeline of its policy; ``'refused'`` or ``'ran'``."""
    main, create = load(mutation.config)
    mutated = mutation.apply(main)
    on_policy = bool(compiled_config(mutation.config).policy.get("on_policy"))
    pipeline = serial_pipeline_onpolicy if on_policy else serial_pipeline
    try:
        pipeline((mutated, create), seed=0, max_env_step=16, root=root, progress=False)
    except DingError:
        return "refused"
    return "ran"


LONG_RUN_KINDS = ("huge", "inf")
"""Mutations that may make a run long without being wrong (10**9 samples per collection, episodes without a time
limit): they are compiled and started, not trained."""


def quick(drawn: list[Mutation]) -> list[Mutation]:
    return [m for m in drawn if m.config.split("/")[1] in QUICK_ENVS]


def trainable(drawn: list[Mutation], count: int) -> list[Mutation]:
    """The first ``count`` of ``drawn`` that compile and are no :data:`LONG_RUN_KINDS`."""
    return [m for m in quick(drawn) if m.kind not in LONG_RUN_KINDS and compile_mutated(m) is not None][:count]


DEFAULT = mutations(seed=20240601, count=100, configs=ALL_CONFIGS)
STARTS = quick(mutations(seed=7, count=60, configs=CONFIGS))[:20]
RUNS = trainable(mutations(seed=11, count=60, configs=CONFIGS), 4)


def test_every_dizoo_config_is_mutated() -> None:
    assert {m.config for m in mutations(seed=0, count=len(ALL_CONFIGS), configs=ALL_CONFIGS)} == set(ALL_CONFIGS)


@pytest.mark.parametrize("mutation", DEFAULT, ids=str)
def test_a_mutated_config_compiles_or_is_refused(mutation: Mutation) -> None:
    check_mutation(mutation, start=False)


@pytest.mark.parametrize("mutation", STARTS, ids=str)
def test_a_mutated_config_starts_its_pipeline_or_is_refused(mutation: Mutation) -> None:
    check_mutation(mutation, start=True)


@pytest.mark.parametrize("mutation", RUNS, ids=str)
def test_a_mutated_config_trains_or_is_refused(mutation: Mutation, tmp_path: pathlib.Path) -> None:
    run_briefly(mutation, tmp_path)


def test_the_samples_hold_refused_and_accepted_mutations() -> None:
    compiled = [check_mutation(m, start=False) for m in DEFAULT]
    assert compiled.count("refused") > 20 and compiled.count("compiled") > 20, compiled
    assert any(compile_mutated(m) is not None for m in STARTS) and any(compile_mutated(m) is None for m in STARTS)


CLI_SAMPLE = DEFAULT[::12]


@pytest.mark.parametrize("console", [False, True], ids=["python -m", "console script"])
def test_ding_spec_prints_one_error_line_or_the_spec(console: bool, tmp_path: pathlib.Path) -> None:
    """As the user runs it, from outside the repo: a refused config is one ``ding: error:`` line and exit 2."""
    for index, mutation in enumerate(CLI_SAMPLE[int(console) :: 2]):
        main, create = load(mutation.config)
        path = save_config(mutation.apply(main), create, tmp_path / f"mutated_{index}_config.py")
        refused = compile_mutated(mutation) is None
        result = spec_cli(path, tmp_path, console)
        if refused:
            errors = [line for line in result.stderr.splitlines() if line.startswith("ding: error:")]
            assert result.returncode == 2 and len(errors) == 1, (str(mutation), result.stderr)
            assert "Traceback" not in result.stderr, (str(mutation), result.stderr)
        else:
            assert result.returncode == 0, (str(mutation), result.stderr)


def spec_cli(path: pathlib.Path, cwd: pathlib.Path, console: bool) -> Any:
    if not console:
        return run_ding("-m", "spec", "-c", str(path), cwd=cwd)
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    script = pathlib.Path(sys.executable).parent / "ding"
    return subprocess.run(
        [str(script), "-m", "spec", "-c", str(path)], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


SLOW = mutations(seed=99, count=400, configs=ALL_CONFIGS)
SLOW_STARTS = mutations(seed=5, count=120, configs=CONFIGS)
SLOW_RUNS = trainable(mutations(seed=13, count=300, configs=CONFIGS), 30)


@pytest.mark.slow
@pytest.mark.parametrize("mutation", SLOW, ids=str)
def test_many_mutated_configs_compile_or_are_refused(mutation: Mutation) -> None:
    check_mutation(mutation, start=False)


@pytest.mark.slow
@pytest.mark.parametrize("mutation", SLOW_STARTS, ids=str)
def test_many_mutated_configs_start_or_are_refused(mutation: Mutation) -> None:
    check_mutation(mutation, start=True)


@pytest.mark.slow
@pytest.mark.parametrize("mutation", SLOW_RUNS, ids=str)
def test_many_mutated_configs_train_or_are_refused(mutation: Mutation, tmp_path: pathlib.Path) -> None:
    run_briefly(mutation, tmp_path)

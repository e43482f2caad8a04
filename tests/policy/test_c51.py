"""C51: the projection onto the atoms by hand (edge atoms, terminal steps), the loss, targets, config and CartPole."""

from __future__ import annotations

import math
import pathlib
from typing import Any

import numpy as np
import pytest
import torch

from ding.config import compile_config, read_config
from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY
from ding.entry import serial_pipeline
from ding.envs import BaseEnvTimestep
from ding.errors import ConfigError
from ding.model import C51DQN, DQN
from ding.policy.c51 import C51Policy, categorical_projection, categorical_td_loss
from ding.policy.dqn import DQNPolicy
from ding.worker import load_checkpoint
from tests.ding_cli import run_ding
from tests.entry.test_cli import ROOT

CARTPOLE_C51 = str(ROOT / "dizoo/classic_control/cartpole/config/cartpole_c51_config.py")
SMALL: dict[str, Any] = {"obs_shape": 4, "action_shape": 2, "encoder_hidden_size_list": [32, 32]}
SUPPORT = torch.arange(5.0)  # atoms 0, 1, 2, 3, 4


def project(next_dist: list[float], reward: float, discount: float, done: bool) -> list[float]:
    out = categorical_projection(
        torch.tensor([next_dist]),
        torch.tensor([reward]),
        torch.tensor([discount]),
        torch.tensor([float(done)]),
        SUPPORT,
    )
    return [round(p, 6) for p in out[0].tolist()]


# ----- the projection, by hand --------------------------------------------------------------------
def test_shifted_atoms_split_between_their_neighbours() -> None:
    # shifted atoms 0.5 + 0.5 z = 0.5, 1.0, 1.5, 2.0, 2.5 carry 0.1, 0.2, 0.3, 0.4, 0.0
    # 0.5 -> half to atom 0, half to atom 1; 1.0 -> atom 1; 1.5 -> halves to 1 and 2; 2.0 -> atom 2
    assert project([0.1, 0.2, 0.3, 0.4, 0.0], 0.5, 0.5, False) == [0.05, 0.05 + 0.2 + 0.15, 0.15 + 0.4, 0.0, 0.0]
    # 0.25 + z: each atom's mass goes 3/4 to its own atom and 1/4 to the next; the last one is clipped to 4
    assert project([0.2, 0.2, 0.2, 0.2, 0.2], 0.25, 1.0, False) == [0.15, 0.2, 0.2, 0.2, 0.25]


def test_atoms_landing_exactly_on_an_atom_keep_all_their_mass() -> None:
    assert project([0.1, 0.2, 0.3, 0.4, 0.0], 1.0, 1.0, False) == [0.0, 0.1, 0.2, 0.3, 0.4]
    assert project([0.5, 0.0, 0.0, 0.0, 0.5], 0.0, 1.0, False) == [0.5, 0.0, 0.0, 0.0, 0.5]  # both edge atoms


def test_atoms_beyond_the_support_go_to_the_edge_atoms() -> None:
    # 3 + z = 3, 4, 5, 6, 7: everything past 4 is clipped onto the top atom
    assert project([0.1, 0.2, 0.3, 0.4, 0.0], 3.0, 1.0, False) == [0.0, 0.0, 0.0, 0.1, 0.9]
    assert project([0.1, 0.2, 0.3, 0.4, 0.0], -10.0, 0.9, False) == [1.0, 0.0, 0.0, 0.0, 0.0]
    # 1 - 2 z = 1, -1, -3, ...: a negative discount is not used by C51, but the clipping holds either way
    assert project([0.5, 0.5, 0.0, 0.0, 0.0], 1.0, -2.0, False) == [0.5, 0.5, 0.0, 0.0, 0.0]


def test_a_terminal_step_ignores_the_next_distribution() -> None:
    # done: every atom moves to the reward itself, 2.25 -> 3/4 on atom 2, 1/4 on atom 3
    for next_dist in ([1.0, 0.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4, 0.0]):
        assert project(next_dist, 2.25, 0.97, True) == [0.0, 0.0, 0.75, 0.25, 0.0]
    assert project([0.1, 0.2, 0.3, 0.4, 0.0], 9.0, 0.97, True) == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert project([0.1, 0.2, 0.3, 0.4, 0.0], -1.0, 0.97, True) == [1.0, 0.0, 0.0, 0.0, 0.0]


def reference_projection(
    next_dist: np.ndarray, reward: np.ndarray, discount: np.ndarray, done: np.ndarray, support: np.ndarray
) -> np.ndarray:
    """The textbook loop: each atom's mass goes to floor and ceil of its fractional index."""
    v_min, v_max, delta = support[0], support[-1], support[1] - support[0]
    out = np.zeros_like(next_dist)
    for row in range(len(next_dist)):
        for atom, z in enumerate(support):
            tz = min(max(reward[row] + discount[row] * (1 - done[row]) * z, v_min), v_max)
            b = (tz - v_min) / delta
            lower, upper = math.floor(b), math.ceil(b)
            if lower == upper:
                out[row, lower] += next_dist[row, atom]
            else:
                out[row, lower] += next_dist[row, atom] * (upper - b)
                out[row, upper] += next_dist[row, atom] * (b - lower)
    return out


def test_matches_the_textbook_loop_and_keeps_mass_and_mean() -> None:
    rng = np.random.default_rng(0)
    support = np.linspace(-10.0, 10.0, 51)
    next_dist = rng.dirichlet(np.ones(51), size=64)
    reward = rng.uniform(-3, 3, size=64)
    discount = rng.choice([0.97, 0.97**3], size=64)
    done = (rng.random(64) < 0.25).astype(np.float64)
    out = categorical_projection(*(torch.tensor(a) for a in (next_dist, reward, discount, done, support))).numpy()
    np.testing.assert_allclose(out, reference_projection(next_dist, reward, discount, done, support), atol=1e-12)
    np.testing.assert_allclose(out.sum(-1), 1.0, atol=1e-12)
    # splitting an atom between its neighbours keeps its value: the mean is that of the clipped shifted atoms
    shifted = np.clip(reward[:, None] + (discount * (1 - done))[:, None] * support, -10.0, 10.0)
    mean = (next_dist * shifted).sum(-1)
    np.testing.assert_allclose(out @ support, mean, atol=1e-9)


def test_cross_entropy_by_hand() -> None:
    log_p = torch.log(torch.tensor([[0.25, 0.75], [0.5, 0.5]]))
    target = torch.tensor([[0.0, 1.0], [0.2, 0.8]])
    expected = (-math.log(0.75) - (0.2 * math.log(0.5) + 0.8 * math.log(0.5))) / 2
    assert categorical_td_loss(log_p, target).item() == pytest.approx(expected)


# ----- the policy -----------------------------------------------------------------------------------
def small_policy(**cfg: Any) -> C51Policy:
    model = {**SMALL, **cfg.pop("model", {})}
    return C51Policy({"model": model, **cfg}, seed=0)


def random_batch(size: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {
            "obs": rng.normal(size=4).astype(np.float32),
            "action": int(rng.integers(2)),
            "reward": float(rng.normal()),
            "next_obs": rng.normal(size=4).astype(np.float32),
            "done": bool(rng.random() < 0.2),
            "discount": 0.97,
        }
        for _ in range(size)
    ]


def test_registered_as_a_dqn_with_di_engine_keys() -> None:
    assert POLICY_REGISTRY.get("c51") is C51Policy and issubclass(C51Policy, DQNPolicy)
    assert BUILTIN_POLICY_MODULES["c51"] == C51Policy.__module__
    defaults = C51Policy.default_config()
    assert {k: defaults["model"][k] for k in ("v_min", "v_max", "n_atom")} == {"v_min": -10, "v_max": 10, "n_atom": 51}
    assert defaults["learn"]["update_per_collect"] == 3 and defaults["learn"]["target_update_freq"] == 100
    assert defaults["nstep"] == 1 and defaults["discount_factor"] == 0.97 and not defaults["priority"]


def test_the_cartpole_config_compiles_strictly() -> None:
    main, create = read_config(CARTPOLE_C51)
    cfg = compile_config(main, create)
    assert cfg.policy.type == "c51" and cfg.exp_name == "cartpole_c51_seed0"
    assert cfg.policy.model == {
        "obs_shape": 4,
        "action_shape": 2,
        "obs_dtype": "float32",
        "obs_range": None,
        "encoder_hidden_size_list": [128, 128, 64],
        "head_hidden_size": None,
        "head_layer_num": 1,
        "activation": "relu",
        "noise": False,
        "v_min": -10,
        "v_max": 10,
        "n_atom": 51,
    }
    assert (cfg.policy.nstep, cfg.policy.collect.n_sample, cfg.policy.other.replay_buffer.replay_buffer_size) == (
        3,
        80,
        20000,
    )
    main.policy.model.n_atoms = 21
    with pytest.raises(ConfigError, match=r"'policy\.model\.n_atoms'.*Did you mean 'n_atom'"):
        compile_config(main, create)


@pytest.mark.parametrize(
    ("cfg", "error", "match"),
    [
        ({"priority_IS_weight": True}, ConfigError, r"priority_IS_weight is True but policy\.priority is False"),
        ({"nstep": 0}, ConfigError, r"policy\.nstep must be a positive int, got 0"),
        ({"model": {"v_min": 5, "v_max": 5}}, ConfigError, r"v_min must be less than v_max"),
        ({"model": {"n_atom": 1}}, ConfigError, r"policy\.model\.n_atom must be an int >= 2, got 1"),
        ({"model": {"dueling": True}}, ConfigError, r"unknown config key 'policy\.model\.dueling'"),
        ({"learn": {"batchsize": 3}}, ConfigError, r"'policy\.learn\.batchsize'.*Did you mean 'batch_size'"),
    ],
)
def test_bad_settings(cfg: dict[str, Any], error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        small_policy(**cfg)


def test_a_model_without_atoms_is_refused() -> None:
    with pytest.raises(TypeError, match=r"a C51 model needs a 'support' tensor of its atom values.*on DQN"):
        C51Policy({"model": {"obs_shape": 4, "action_shape": 2}}, model=DQN(4, 2))


def test_actions_are_greedy_on_the_distributions_means() -> None:
    policy = small_policy()
    obs = {i: np.full(4, i / 10, dtype=np.float32) for i in range(32)}
    greedy = policy.eval_mode.forward(obs)
    with torch.no_grad():
        q = policy.model(torch.as_tensor(np.stack(list(obs.values()))))["logit"].numpy()
    assert [greedy[i]["action"] for i in obs] == list(q.argmax(-1))
    collected = policy.collect_mode.forward(obs, eps=0.0)
    assert all(collected[i]["action"] == greedy[i]["action"] for i in obs)
    assert {policy.collect_mode.forward(obs, eps=1.0)[i]["action"] for i in obs} == {0, 1}


def test_targets_of_a_hand_made_episode() -> None:
    """n-step reward and discount, the online model's choice, the target model's distribution, the done mask."""
    torch.manual_seed(0)
    cfg = {"nstep": 2, "discount_factor": 0.5, "model": {"v_min": -10, "v_max": 10, "n_atom": 21}}
    policy = small_policy(**cfg)
    torch.manual_seed(1)
    policy.load_state_dict(
        {"model": policy.state_dict()["model"], "target_model": C51DQN(**SMALL, n_atom=21).state_dict()}
    )
    obs = [np.array([t, -t, 0.5 * t, 1.0], dtype=np.float32) for t in range(4)]
    traj = []
    for t, (reward, end) in enumerate([(1.0, False), (2.0, False), (4.0, True)]):
        ts = BaseEnvTimestep(obs[t + 1], np.array([reward], np.float32), end, {}, terminated=end)
        traj.append(policy.collect_mode.process_transition(obs[t], {"action": t % 2}, ts))
    data = policy._collate(policy.collect_mode.get_train_sample(traj, True))
    target = policy.target_distribution(data)
    support = torch.arange(-10.0, 11.0)
    # samples 1 and 2 end in the termination: all mass on the n-step reward 2 + 0.5 * 4 = 4 and 4
    assert target[1].tolist() == target[2].tolist() == (support == 4).float().tolist()
    # sample 0: reward 1 + 0.5 * 2 = 2, discount 0.25, next obs obs[2]: the online model picks the action
    with torch.no_grad():
        best = int(policy.model(torch.as_tensor(obs[2])[None])["logit"].argmax())
        next_dist = policy._target_model(torch.as_tensor(obs[2])[None])["distribution"][0, best].numpy()
    expected = reference_projection(next_dist[None], np.array([2.0]), np.array([0.25]), np.zeros(1), support.numpy())
    np.testing.assert_allclose(target[0].numpy(), expected[0], atol=1e-6)
    # ignore_done bootstraps after the termination too: discount 0.25 for sample 1, 0.5 for sample 2 (one step)
    ignore = small_policy(**cfg, learn={"ignore_done": True})
    ignore.load_state_dict(policy.state_dict())
    with torch.no_grad():
        last = ignore._target_model(torch.as_tensor(obs[3])[None])["distribution"][0]
        best = int(ignore.model(torch.as_tensor(obs[3])[None])["logit"].argmax())
    for row, discount in ((1, 0.25), (2, 0.5)):
        expected = reference_projection(
            last[best].numpy()[None], np.array([4.0]), np.array([discount]), np.zeros(1), support.numpy()
        )
        np.testing.assert_allclose(ignore.target_distribution(data)[row].numpy(), expected[0], atol=1e-6)


def test_learning_moves_the_distribution_onto_a_certain_return() -> None:
    """Every step ends with reward 1: the taken action's distribution must concentrate on the atom at 1."""
    torch.manual_seed(0)
    policy = small_policy(model={"v_min": -2, "v_max": 2, "n_atom": 5}, learn={"learning_rate": 0.01})
    batch = [dict(sample, action=1, reward=1.0, done=True) for sample in random_batch(32)]
    losses = [policy.learn_mode.forward(batch)["total_loss"] for _ in range(200)]
    assert losses[-1] < 0.05 < losses[0] and all(math.isfinite(x) for x in losses)
    stats = policy.learn_mode.forward(batch)
    assert set(stats) == {"cur_lr", "total_loss", "q_value", "target_q_value"}
    assert stats["target_q_value"] == pytest.approx(1.0) and stats["q_value"] == pytest.approx(1.0, abs=0.05)
    with torch.no_grad():
        dist = policy.model(torch.as_tensor(np.stack([s["obs"] for s in batch])))["distribution"][:, 1]
    assert (dist[:, 3] > 0.95).all()  # atom 3 of -2, -1, 0, 1, 2
    assert policy.learn_iter == 201


def test_state_round_trip_and_target_updates() -> None:
    policy = small_policy(learn={"target_update_freq": 2})
    batch = random_batch(16)

    def target_is_online() -> bool:
        state = policy.state_dict()
        return all(torch.equal(state["model"][k], state["target_model"][k]) for k in state["model"])

    policy.learn_mode.forward(batch)
    assert not target_is_online()
    policy.learn_mode.forward(batch)
    assert target_is_online()
    other = small_policy()
    other.learn_mode.load_state_dict(policy.learn_mode.state_dict())
    obs = {0: np.ones(4, np.float32)}
    np.testing.assert_array_equal(policy.eval_mode.forward(obs)[0]["logit"], other.eval_mode.forward(obs)[0]["logit"])
    assert other.learn_iter == 2 and torch.equal(other.support, torch.linspace(-10, 10, 51))


# ----- the pipeline -------------------------------------------------------------------------------
def test_cli_smoke_writes_the_experiment_directory(tmp_path: pathlib.Path) -> None:
    result = run_ding("-m", "serial", "-c", CARTPOLE_C51, "--env-step", "200", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    exp_dir = tmp_path / "cartpole_c51_seed0"
    assert "seed 0: stopped before stop_value 195" in result.stdout
    main_config, create_config = read_config(exp_dir / "total_config.py")
    assert create_config.policy == {"type": "c51", "import_names": ["ding.policy.c51"]}
    assert compile_config(main_config, create_config) == main_config
    final = load_checkpoint(next((exp_dir / "ckpt").glob("iteration_*.pth.tar")))
    assert final["last_step"] >= 200 and final["last_iter"] > 0
    assert final["model"]["support"].tolist() == torch.linspace(-10, 10, 51).tolist()


def test_cartpole_c51_reaches_the_stop_value(tmp_path: pathlib.Path) -> None:
    result = serial_pipeline(CARTPOLE_C51, seed=0, max_env_step=60000, root=tmp_path, progress=False)
    assert result.stop_value_reached, result.summary()
    assert result.best_eval_return is not None and result.best_eval_return >= 195

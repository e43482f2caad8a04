"""gymnasium's vector wrappers and training loops on ManagerVectorEnv: equal to them on SyncVectorEnv, and learning."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.wrappers import vector as vector_wrappers
from torch import nn
from torch.distributions import Categorical

from ding.envs.env_manager.vector import ManagerVectorEnv, gymnasium_env_fn, make_vector_env
from dizoo.classic_control.cartpole.envs import CartPoleEnv

WRAPPERS: dict[str, Callable[[VectorEnv[Any, Any, Any]], VectorEnv[Any, Any, Any]]] = {
    "NormalizeObservation": vector_wrappers.NormalizeObservation,
    "NormalizeReward": partial(vector_wrappers.NormalizeReward, gamma=0.9),
    "RecordEpisodeStatistics": vector_wrappers.RecordEpisodeStatistics,
    "ClipReward": partial(vector_wrappers.ClipReward, min_reward=0.0, max_reward=0.5),
    "TransformObservation": partial(vector_wrappers.TransformObservation, func=lambda obs: obs * 2.0),
    "DtypeObservation": partial(vector_wrappers.DtypeObservation, dtype=np.float64),
    "FlattenObservation": vector_wrappers.FlattenObservation,
    "DictInfoToList": vector_wrappers.DictInfoToList,
}


def cartpole_fns(num: int) -> list[Callable[[], gym.Env[Any, Any]]]:
    return [partial(gym.make, "CartPole-v1", max_episode_steps=30) for _ in range(num)]


def timeless(infos: Any) -> Any:
    """``infos`` without RecordEpisodeStatistics' wall-clock episode times."""
    if isinstance(infos, dict) and isinstance(infos.get("episode"), dict):
        return {**infos, "episode": {k: v for k, v in infos["episode"].items() if k != "t"}}
    return infos


@pytest.mark.parametrize("name", list(WRAPPERS))
def test_wrapper_gives_what_it_gives_on_sync_vector_env(name: str) -> None:
    wrap = WRAPPERS[name]
    theirs = wrap(SyncVectorEnv(cartpole_fns(3)))
    ours = wrap(make_vector_env({"type": "subprocess"}, [gymnasium_env_fn(fn) for fn in cartpole_fns(3)]))
    try:
        assert ours.observation_space == theirs.observation_space
        np.testing.assert_array_equal(ours.reset(seed=5)[0], theirs.reset(seed=5)[0])
        actions = np.random.default_rng(0).integers(0, 2, size=(150, 3))
        ends = 0
        for t, row in enumerate(actions):
            mine, ref = ours.step(row), theirs.step(row)
            for part, (a, b) in enumerate(zip(mine[:4], ref[:4], strict=True)):
                np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=f"step {t}, part {part}")
            assert data_equivalence(timeless(mine[4]), timeless(ref[4])), f"step {t}: infos {mine[4]} != {ref[4]}"
            ends += int((mine[2] | mine[3]).sum())
        assert ends >= 10
    finally:
        ours.close()
        theirs.close()


def test_normalize_observation_refuses_same_step_as_gymnasium_does() -> None:
    fns = [gymnasium_env_fn(fn) for fn in cartpole_fns(2)]
    with (
        make_vector_env({"type": "base"}, fns, autoreset_mode=AutoresetMode.SAME_STEP) as envs,
        pytest.raises(ValueError, match=r"to be NEXT_STEP or DISABLED, got AutoresetMode.SAME_STEP"),
    ):
        vector_wrappers.NormalizeObservation(envs)


# ----- a CleanRL-style PPO learns CartPole through a subprocess manager ---------------------------------------
def layer(inputs: int, outputs: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    linear = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.constant_(linear.bias, 0.0)
    return linear


class Agent(nn.Module):
    def __init__(self, obs_size: int, actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(layer(obs_size, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_size, 64), nn.Tanh(), layer(64, 64), nn.Tanh(), layer(64, actions, 0.01))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def act(
        self, obs: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        dist = Categorical(logits=self.actor(obs))
        action = dist.sample() if action is None else action
        return action, dist.log_prob(action), dist.entropy(), self.value(obs)


def train_ppo(envs: VectorEnv[Any, Any, Any], *, max_steps: int, target: float, seed: int = 0) -> tuple[float, int]:
    """PPO as CleanRL writes it, for NEXT_STEP autoreset: a step that starts an env's next episode is left out of
    the loss (its action did nothing). Returns the mean return of the last 20 episodes and the env steps taken."""
    num_envs, num_steps, epochs, minibatches = envs.num_envs, 128, 4, 4
    gamma, lam, clip, ent_coef, vf_coef, lr = 0.99, 0.95, 0.2, 0.01, 0.5, 2.5e-4
    obs_space, action_space = envs.single_observation_space, envs.single_action_space
    assert isinstance(obs_space, gym.spaces.Box) and isinstance(action_space, gym.spaces.Discrete)
    obs_shape = obs_space.shape
    torch.manual_seed(seed)
    agent = Agent(int(np.prod(obs_shape)), int(action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=lr, eps=1e-5)
    obs_buf = torch.zeros((num_steps, num_envs, *obs_shape))
    actions, logprobs, rewards, dones, values, valid = (torch.zeros((num_steps, num_envs)) for _ in range(6))
    next_obs = torch.as_tensor(envs.reset(seed=seed)[0])
    next_done, starting = torch.zeros(num_envs), torch.zeros(num_envs, dtype=torch.bool)
    returns: list[float] = []
    steps = 0
    while steps < max_steps:
        for group in optimizer.param_groups:
            group["lr"] = lr * (1.0 - steps / max_steps)
        for t in range(num_steps):
            obs_buf[t], dones[t], valid[t] = next_obs, next_done, (~starting).float()
            with torch.no_grad():
                action, logprob, _, value = agent.act(next_obs)
            actions[t], logprobs[t], values[t] = action, logprob, value
            obs, reward, terminations, truncations, infos = envs.step(action.numpy())
            ended = np.logical_or(terminations, truncations)
            rewards[t] = torch.as_tensor(reward, dtype=torch.float32)
            next_obs, next_done = torch.as_tensor(obs), torch.as_tensor(ended, dtype=torch.float32)
            starting = torch.as_tensor(ended)
            if "episode" in infos:
                returns.extend(float(r) for r in infos["episode"]["r"][infos["_episode"]])
        steps += num_steps * num_envs
        with torch.no_grad():
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(num_envs)
            next_value = agent.value(next_obs)
            for t in reversed(range(num_steps)):
                following_done = next_done if t == num_steps - 1 else dones[t + 1]
                following_value = next_value if t == num_steps - 1 else values[t + 1]
                delta = rewards[t] + gamma * following_value * (1.0 - following_done) - values[t]
                advantages[t] = last = delta + gamma * lam * (1.0 - following_done) * last
            targets = advantages + values
        keep = valid.reshape(-1).bool()
        b_obs = obs_buf.reshape(-1, *obs_shape)[keep]
        b_actions, b_logprobs = actions.reshape(-1)[keep], logprobs.reshape(-1)[keep]
        b_advantages, b_targets = advantages.reshape(-1)[keep], targets.reshape(-1)[keep]
        size = len(b_obs)
        for _ in range(epochs):
            order = torch.randperm(size)
            for chunk in order.tensor_split(minibatches):
                _, logprob, entropy, value = agent.act(b_obs[chunk], b_actions[chunk].long())
                ratio = (logprob - b_logprobs[chunk]).exp()
                adv = b_advantages[chunk]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
                value_loss = 0.5 * ((value - b_targets[chunk]) ** 2).mean()
                loss = policy_loss + vf_coef * value_loss - ent_coef * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
        if len(returns) >= 20 and np.mean(returns[-20:]) >= target:
            break
    return float(np.mean(returns[-20:])), steps


@pytest.mark.slow
def test_cleanrl_ppo_learns_cartpole_through_a_subprocess_manager() -> None:
    torch.set_num_threads(1)
    fns = [partial(CartPoleEnv, cfg={"max_episode_steps": 500}) for _ in range(4)]
    manager_cfg = {"type": "subprocess", "envs_per_worker": 2}
    with make_vector_env(manager_cfg, fns) as vector_env:
        assert isinstance(vector_env, ManagerVectorEnv)
        assert vector_env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
        envs = vector_wrappers.RecordEpisodeStatistics(vector_env)
        mean_return, steps = train_ppo(envs, max_steps=400_000, target=400.0)
    assert mean_return >= 400.0, f"mean return of the last 20 episodes {mean_return:.1f} after {steps} env steps"

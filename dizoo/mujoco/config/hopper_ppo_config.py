"""Hopper-v5 (gymnasium MuJoCo) with continuous-action PPO, normalized observations and rewards.

Train with ``ding -m serial_onpolicy -c dizoo/mujoco/config/hopper_ppo_config.py -s 0`` (or run this file). The
stop value is about what PPO reaches within 1M env steps; this config has not been run to it here. Every env keeps
its own observation statistics, so evaluation envs normalize by what they have seen themselves.
"""

from easydict import EasyDict

hopper_ppo_config = dict(
    exp_name="hopper_ppo_seed0",
    env=dict(
        env_id="Hopper-v5",
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=8,
        stop_value=2500,
        max_episode_steps=1000,
        norm_obs=dict(use_norm=True, clip_range=[-10.0, 10.0]),
        norm_reward=dict(use_norm=True, reward_discount=0.99),
    ),
    policy=dict(
        cuda=False,
        action_space="continuous",
        model=dict(
            share_encoder=False,
            encoder_hidden_size_list=[64, 64],
            actor_head_hidden_size=64,
            critic_head_hidden_size=64,
            activation="tanh",
            sigma_init=-0.5,
        ),
        learn=dict(
            epoch_per_collect=10,
            batch_size=64,
            learning_rate=0.0003,
            value_weight=0.5,
            entropy_weight=0.0,
            clip_ratio=0.2,
            adv_norm=True,
            grad_clip_value=0.5,
        ),
        collect=dict(n_sample=2048, unroll_len=1, discount_factor=0.99, gae_lambda=0.95),
        eval=dict(evaluator=dict(eval_freq=5000)),
    ),
)
hopper_ppo_config = EasyDict(hopper_ppo_config)
main_config = hopper_ppo_config

hopper_ppo_create_config = dict(
    env=dict(type="mujoco", import_names=["dizoo.mujoco.envs.mujoco_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)
hopper_ppo_create_config = EasyDict(hopper_ppo_create_config)
create_config = hopper_ppo_create_config

if __name__ == "__main__":
    # or: ding -m serial_onpolicy -c hopper_ppo_config.py -s 0
    from ding.entry import serial_pipeline_onpolicy

    raise SystemExit(serial_pipeline_onpolicy((main_config, create_config), seed=0).exit_status)

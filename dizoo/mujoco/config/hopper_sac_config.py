"""Hopper-v5 (gymnasium MuJoCo v5) with SAC; shapes come from the env's declared spaces.

Train with ``ding -m serial -c dizoo/mujoco/config/hopper_sac_config.py -s 0`` (or run this file).
The stop value is about what SAC reaches within 1M env steps; this config has not been run to it here.
"""

from easydict import EasyDict

hopper_sac_config = dict(
    exp_name="hopper_sac_seed0",
    env=dict(
        env_id="Hopper-v5",
        collector_env_num=1,
        evaluator_env_num=8,
        n_evaluator_episode=8,
        stop_value=3000,
        max_episode_steps=1000,
        norm_obs=dict(use_norm=False),
        norm_reward=dict(use_norm=False),
    ),
    policy=dict(
        cuda=False,
        random_collect_size=10000,
        model=dict(twin_critic=True, actor_head_hidden_size=256, critic_head_hidden_size=256),
        learn=dict(
            update_per_collect=1,
            batch_size=256,
            learning_rate_q=0.001,
            learning_rate_policy=0.001,
            learning_rate_alpha=0.0003,
            alpha=0.2,
            auto_alpha=True,
            target_theta=0.005,
            discount_factor=0.99,
        ),
        collect=dict(n_sample=1),
        eval=dict(evaluator=dict(eval_freq=5000)),
        other=dict(replay_buffer=dict(replay_buffer_size=1000000)),
    ),
)
hopper_sac_config = EasyDict(hopper_sac_config)
main_config = hopper_sac_config

hopper_sac_create_config = dict(
    env=dict(type="mujoco", import_names=["dizoo.mujoco.envs.mujoco_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
)
hopper_sac_create_config = EasyDict(hopper_sac_create_config)
create_config = hopper_sac_create_config

if __name__ == "__main__":
    # or: ding -m serial -c hopper_sac_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

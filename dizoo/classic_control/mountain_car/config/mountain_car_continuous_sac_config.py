"""MountainCar with a continuous force (``continuous=True``) and SAC; shapes come from the env's declared spaces.

Train with ``ding -m serial -c dizoo/classic_control/mountain_car/config/mountain_car_continuous_sac_config.py -s 0``.
The stop value 90 is gymnasium's reward threshold for MountainCarContinuous-v0.
"""

from easydict import EasyDict

mountain_car_continuous_sac_config = dict(
    exp_name="mountain_car_continuous_sac_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=90,
        continuous=True,
    ),
    policy=dict(
        cuda=False,
        random_collect_size=10000,
        model=dict(twin_critic=True, actor_head_hidden_size=128, critic_head_hidden_size=128),
        learn=dict(
            update_per_collect=8,
            batch_size=128,
            learning_rate_q=0.001,
            learning_rate_policy=0.001,
            learning_rate_alpha=0.0003,
            alpha=0.2,
            auto_alpha=True,
            target_theta=0.005,
            discount_factor=0.99,
        ),
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq=1000)),
        other=dict(replay_buffer=dict(replay_buffer_size=100000)),
    ),
)
mountain_car_continuous_sac_config = EasyDict(mountain_car_continuous_sac_config)
main_config = mountain_car_continuous_sac_config

mountain_car_continuous_sac_create_config = dict(
    env=dict(type="mountain_car", import_names=["dizoo.classic_control.mountain_car.envs.mountain_car_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
)
mountain_car_continuous_sac_create_config = EasyDict(mountain_car_continuous_sac_create_config)
create_config = mountain_car_continuous_sac_create_config

if __name__ == "__main__":
    # or: ding -m serial -c mountain_car_continuous_sac_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

"""MountainCar (discrete actions) with DQN; obs_shape (2) and action_shape (3) come from the env's declared spaces.

Train with ``ding -m serial -c dizoo/classic_control/mountain_car/config/mountain_car_dqn_config.py -s 0``.
The stop value -110 is gymnasium's reward threshold for MountainCar-v0; the sparse reward needs long
exploration (a slow epsilon decay and n-step returns).
"""

from easydict import EasyDict

mountain_car_dqn_config = dict(
    exp_name="mountain_car_dqn_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=-110,
        continuous=False,
    ),
    policy=dict(
        cuda=False,
        model=dict(encoder_hidden_size_list=[128, 128, 64], dueling=True),
        nstep=3,
        discount_factor=0.99,
        learn=dict(update_per_collect=5, batch_size=64, learning_rate=0.001),
        collect=dict(n_sample=16),
        eval=dict(evaluator=dict(eval_freq=500)),
        other=dict(
            eps=dict(type="exp", start=1.0, end=0.05, decay=50000),
            replay_buffer=dict(replay_buffer_size=100000),
        ),
    ),
)
mountain_car_dqn_config = EasyDict(mountain_car_dqn_config)
main_config = mountain_car_dqn_config

mountain_car_dqn_create_config = dict(
    env=dict(type="mountain_car", import_names=["dizoo.classic_control.mountain_car.envs.mountain_car_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
)
mountain_car_dqn_create_config = EasyDict(mountain_car_dqn_create_config)
create_config = mountain_car_dqn_create_config

if __name__ == "__main__":
    # or: ding -m serial -c mountain_car_dqn_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

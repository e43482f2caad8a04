"""Acrobot with DQN; the model's obs_shape (6) and action_shape (3) are filled from the env's declared spaces.

Train with ``ding -m serial -c dizoo/classic_control/acrobot/config/acrobot_dqn_config.py -s 0`` (or run this file).
The stop value -100 is gymnasium's reward threshold for Acrobot-v1.
"""

from easydict import EasyDict

acrobot_dqn_config = dict(
    exp_name="acrobot_dqn_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=-100,
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
            eps=dict(type="exp", start=0.95, end=0.05, decay=20000),
            replay_buffer=dict(replay_buffer_size=50000),
        ),
    ),
)
acrobot_dqn_config = EasyDict(acrobot_dqn_config)
main_config = acrobot_dqn_config

acrobot_dqn_create_config = dict(
    env=dict(type="acrobot", import_names=["dizoo.classic_control.acrobot.envs.acrobot_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
)
acrobot_dqn_create_config = EasyDict(acrobot_dqn_create_config)
create_config = acrobot_dqn_create_config

if __name__ == "__main__":
    # or: ding -m serial -c acrobot_dqn_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

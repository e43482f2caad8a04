"""Pong with DQN on the RAM: the 128 bytes of the console's memory, scaled to [0, 1], instead of the screen.

``ram=True`` turns the ``atari_default`` chain into the RAM chain (``dizoo.atari.envs.atari_ram_chain``):
the same no-op starts, frame skipping, lives and reward clipping, then ``ram`` and a flattening to a
(128,) vector for the model's fully connected encoder. Train with
``ding -m serial -c dizoo/atari/config/pong_dqn_ram_config.py -s 0`` (or run this file); it stops at a
mean return of 20. RAM agents learn more slowly than pixel agents on most games, so this takes millions
of env steps too; no test runs it to the end.
"""

from easydict import EasyDict

pong_dqn_ram_config = dict(
    exp_name="pong_dqn_ram_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=4,
        n_evaluator_episode=4,
        stop_value=20,
        env_id="ALE/Pong-v5",
        env_wrapper="atari_default",
        ram=True,
    ),
    policy=dict(
        cuda=False,
        model=dict(encoder_hidden_size_list=[256, 256, 128], dueling=True),
        nstep=3,
        discount_factor=0.99,
        learn=dict(update_per_collect=10, batch_size=64, learning_rate=0.0001, target_update_freq=500),
        collect=dict(n_sample=96),
        eval=dict(evaluator=dict(eval_freq=4000)),
        other=dict(
            eps=dict(type="exp", start=1.0, end=0.05, decay=250000),
            replay_buffer=dict(replay_buffer_size=100000),
        ),
    ),
)
pong_dqn_ram_config = EasyDict(pong_dqn_ram_config)
main_config = pong_dqn_ram_config

pong_dqn_ram_create_config = dict(
    env=dict(type="atari", import_names=["dizoo.atari.envs.atari_env"]),
    env_manager=dict(type="subprocess"),
    policy=dict(type="dqn"),
)
pong_dqn_ram_create_config = EasyDict(pong_dqn_ram_create_config)
create_config = pong_dqn_ram_create_config

if __name__ == "__main__":
    # or: ding -m serial -c pong_dqn_ram_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

"""Q*bert with DQN on the ``atari_default`` chain: the model sees 4 stacked 84x84 gray frames.

The model's obs_shape and action_shape are filled from the env's declared spaces. Train with ``ding -m serial -c
dizoo/atari/config/qbert_dqn_config.py -s 0`` (or run this file); it stops at a mean return of 10,000 over the
evaluation episodes, about the Nature DQN score. Atari training takes millions of env steps (hours on a GPU, much
longer on CPU cores), so no test runs it to the end; ``ding -m spec -c <this file>`` shows the spaces at once.
Memory: a stored transition holds two float32 frame stacks (0.23 MB), so the replay buffer of 20,000 transitions
takes about 4.5 GB.
"""

from easydict import EasyDict

qbert_dqn_config = dict(
    exp_name="qbert_dqn_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=4,
        n_evaluator_episode=4,
        stop_value=10000,
        env_id="ALE/Qbert-v5",  # frameskip=1 underneath: the chain skips frames
        env_wrapper="atari_default",
        repeat_action_probability=0.0,  # 0.25 for sticky actions
    ),
    policy=dict(
        cuda=False,  # True where torch sees a GPU
        model=dict(encoder_hidden_size_list=[32, 64, 64, 512], dueling=True),  # Nature DQN convolutions
        nstep=3,
        discount_factor=0.99,
        learn=dict(update_per_collect=10, batch_size=32, learning_rate=0.0001, target_update_freq=500),
        collect=dict(n_sample=96),
        eval=dict(evaluator=dict(eval_freq=4000)),
        other=dict(
            eps=dict(type="exp", start=1.0, end=0.05, decay=250000),
            replay_buffer=dict(replay_buffer_size=20000),
        ),
    ),
)
qbert_dqn_config = EasyDict(qbert_dqn_config)
main_config = qbert_dqn_config

qbert_dqn_create_config = dict(
    env=dict(type="atari", import_names=["dizoo.atari.envs.atari_env"]),
    env_manager=dict(type="subprocess"),
    policy=dict(type="dqn"),
)
qbert_dqn_create_config = EasyDict(qbert_dqn_create_config)
create_config = qbert_dqn_create_config

if __name__ == "__main__":
    # or: ding -m serial -c qbert_dqn_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)

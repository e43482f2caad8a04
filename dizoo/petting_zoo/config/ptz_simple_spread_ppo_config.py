"""simple_spread with 3 agents trained by PPO over the agents' joint action (5 ** 3 = 125 actions).

The env shows the stacked agent observations ``(3, 18)`` (``agent_obs_only``), takes one ``Discrete(125)`` action
that names every agent's move (``joint_action``) and rewards the team with the agents' summed reward
(``shared_reward``), so single-agent PPO controls the whole team. Train with
``ding -m serial_onpolicy -c dizoo/petting_zoo/config/ptz_simple_spread_ppo_config.py -s 0`` (or run this file).
A random team scores about -81 per episode; this config reaches -60 after about 50,000-70,000 env steps (about a
minute on one CPU core) and then levels off near -55.
"""

from easydict import EasyDict

n_agent = 3
ptz_simple_spread_ppo_config = dict(
    exp_name="ptz_simple_spread_ppo_seed0",
    env=dict(
        env_family="mpe",
        env_id="simple_spread_v3",
        n_agent=n_agent,
        n_landmark=n_agent,
        max_cycles=25,
        agent_obs_only=True,
        joint_action=True,
        shared_reward=True,
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=10,
        stop_value=-60,
    ),
    policy=dict(
        cuda=False,
        action_space="discrete",
        model=dict(encoder_hidden_size_list=[128, 128], critic_head_hidden_size=128, actor_head_hidden_size=128),
        learn=dict(
            epoch_per_collect=5,
            batch_size=256,
            learning_rate=0.0005,
            value_weight=0.5,
            entropy_weight=0.01,
            clip_ratio=0.2,
            adv_norm=True,
            grad_clip_value=0.5,
        ),
        collect=dict(n_sample=1600, unroll_len=1, discount_factor=0.95, gae_lambda=0.95),
        eval=dict(evaluator=dict(eval_freq=50)),
    ),
)
ptz_simple_spread_ppo_config = EasyDict(ptz_simple_spread_ppo_config)
main_config = ptz_simple_spread_ppo_config

ptz_simple_spread_ppo_create_config = dict(
    env=dict(type="petting_zoo", import_names=["dizoo.petting_zoo.envs.petting_zoo_simple_spread_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)
ptz_simple_spread_ppo_create_config = EasyDict(ptz_simple_spread_ppo_create_config)
create_config = ptz_simple_spread_ppo_create_config

if __name__ == "__main__":
    # or: ding -m serial_onpolicy -c ptz_simple_spread_ppo_config.py -s 0
    from ding.entry import serial_pipeline_onpolicy

    raise SystemExit(serial_pipeline_onpolicy((main_config, create_config), seed=0).exit_status)

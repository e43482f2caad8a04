"""What config keys mean where their declaration says nothing beside them (no note, no comment), by the end of their
key path (``learn.learning_rate``) or their name. The components' docstrings say the same in more words."""

from __future__ import annotations

MEANINGS: dict[str, str] = {
    # env
    "env.import_names": "modules to import before the env type is looked up (those that register it)",
    "env.n_evaluator_episode": "episodes one evaluation plays, over the evaluator envs",
    "env.is_train": "build the training form of the wrapper chain (False: the evaluation form, as a preset states it)",
    "env.env_kwargs": "keyword arguments for the env's constructor (gymnasium.make's, for an env id)",
    "env.env": "the section of the env the spare instances are built from",
    "agent_obs_only": "each agent's own observation alone, without the global state",
    "agent_specific_global_state": "each agent's row: its observation followed by the global state",
    "shared_reward": "the agents' rewards summed into one (1,) reward",
    "joint_action": "Discrete agents act through one Discrete action over their joint choices",
    # env managers
    "manager.shared_memory": "observations come back through shared memory instead of pickled messages",
    "manager.endpoint": "where the workers connect: 'ipc', 'tcp' or 'tcp://HOST:PORT'",
    "manager.heartbeat_interval": "seconds between the heartbeats a worker sends",
    "manager.heartbeat_timeout": "seconds of silence after which a worker is taken for dead",
    "manager.max_message_bytes": "the largest message a socket accepts; larger ones are refused",
    # policy: the whole section
    "policy.cuda": "train and act on the GPU",
    "policy.discount_factor": "the discount of future rewards (gamma)",
    "policy.nstep": "steps of reward summed before bootstrapping (n-step targets)",
    "policy.reward_batch_norm": "standardize each batch's rewards",
    "policy.recompute_adv": "recompute the advantages with the current critic before every epoch",
    "policy.multi_agent": "MAPPO: one policy for every agent of a multi-agent env",
    # policy.model
    "model.obs_shape": "the observation's shape (filled from the env's spaces when left out)",
    "model.action_shape": "the number of actions, or the action's shape (filled from the env's spaces when left out)",
    "model.obs_dtype": "the observation's dtype (filled from the env's spaces); uint8 frames are scaled in the model",
    "model.obs_range": "the observation's bounds (filled from the env's spaces), for scaling",
    "model.encoder_hidden_size_list": "the widths of the encoder's layers (an MLP, or a conv encoder for images)",
    "model.actor_head_hidden_size": "the width of the actor head's hidden layers",
    "model.actor_head_layer_num": "hidden layers of the actor head",
    "model.critic_head_hidden_size": "the width of the critic head's hidden layers",
    "model.critic_head_layer_num": "hidden layers of the critic head",
    "model.share_encoder": "the actor and the critic share one encoder (False: one each)",
    "model.activation": "the activation between layers",
    "model.head_hidden_size": "the width of the head's hidden layers (None: the encoder's last width)",
    "model.head_layer_num": "hidden layers of the head",
    "model.noise": "noisy linear layers in the head (with policy.noisy_net)",
    "model.dueling": "a dueling head: a state value plus advantages per action",
    "model.v_min": "the lowest atom of the return distribution",
    "model.v_max": "the highest atom of the return distribution",
    "model.n_atom": "atoms of the return distribution",
    "model.num_quantiles": "quantiles of the return per action",
    "model.twin_critic": "two critics, the smaller of their values used as the target (TD3's clipped double Q)",
    # policy.learn
    "learn.batch_size": "transitions per update",
    "learn.learning_rate": "the optimizer's step size",
    "learn.learning_rate_actor": "the actor optimizer's step size",
    "learn.learning_rate_critic": "the critic optimizer's step size",
    "learn.learning_rate_q": "the critics' optimizer's step size",
    "learn.learning_rate_policy": "the actor optimizer's step size",
    "learn.learning_rate_alpha": "the step size of the temperature's optimizer (with auto_alpha)",
    "learn.betas": "Adam's betas",
    "learn.eps": "Adam's epsilon",
    "learn.value_weight": "the weight of the value loss in the total loss",
    "learn.entropy_weight": "the weight of the entropy bonus in the total loss",
    "learn.adv_norm": "standardize the advantages of each minibatch",
    "learn.ignore_done": "bootstrap the value after real episode ends too (as for time limits)",
    "learn.update_per_collect": "updates after each collection",
    "learn.target_update_freq": "updates between hard copies of the model into the target model",
    "learn.discount_factor": "the discount of future rewards (gamma)",
    "learn.actor_update_freq": "critic updates per actor update",
    "learn.noise": "target policy smoothing: noise on the target actions",
    "learn.noise_sigma": "the standard deviation of the target policy's noise",
    "noise_range.min": "the lowest target policy noise (clipped)",
    "noise_range.max": "the highest target policy noise (clipped)",
    "learn.alpha": "the entropy temperature (its start with auto_alpha)",
    "learn.auto_alpha": "tune the temperature towards the target entropy",
    "learn.log_space": "tune log(alpha) rather than alpha",
    "learn.epoch_per_collect": "passes over each collection's samples",
    "learn.clip_ratio": "PPO's clip of the probability ratio",
    "learn.value_norm": "the critic predicts returns divided by their running standard deviation",
    "learn.ppo_param_init": "orthogonal initialization of the model (False: PyTorch's own)",
    "learn.grad_clip_type": "clip the gradients' norm or each value at grad_clip_value, or not at all (None)",
    "learn.kl_type": "DI-engine's estimator of the KL divergence towards the pretrained model",
    "learn.kl_beta": "the weight of the KL penalty towards the pretrained model (0: none)",
    # policy.collect
    "collect.n_sample": "transitions collected between updates",
    "collect.discount_factor": "the discount of future rewards (gamma) in the advantages and returns",
    "collect.gae_lambda": "GAE's lambda",
    "collect.noise_sigma": "the standard deviation of the Gaussian exploration noise",
    # policy.other.eps
    "eps.type": "how epsilon decays from start to end: exponentially or linearly",
    "eps.start": "epsilon at the first env step",
    "eps.end": "epsilon after the decay",
}


def meaning_of(path: str) -> str:
    """The meaning of the key at ``path`` (``policy.learn.learning_rate``): the longest end of the path listed."""
    parts = path.split(".")
    for start in range(len(parts)):
        found = MEANINGS.get(".".join(parts[start:]))
        if found:
            return found
    return ""

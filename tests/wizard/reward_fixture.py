"""A GRPO reward with TRL's signature, for the wizard's scenarios (init checks it with `ast`, never imports it)."""


def length_reward(completions, **kwargs):
    return [len(completion) / 10 for completion in completions]

"""The smallest training config the training tests share: a few hundred steps per skill.

A plain module, not a test file: the tests that train import it from here."""

TINY = {
    "net_arch": [16, 16],
    "dagger": {
        "expert_episodes": 2,
        "noise": 0.3,
        "iterations": 1,
        "student_episodes": 1,
        "epochs": 2,
        "lr": 0.001,
    },
    "ppo": {
        "n_steps": 64,
        "batch_size": 64,
        "n_epochs": 1,
        "learning_rate": 0.0001,
        "clip_range": 0.1,
        "gamma": 0.98,
        "gae_lambda": 0.95,
        "target_kl": None,
        "log_std_init": -1.6,
        "value_warmup_episodes": 1,
    },
    "sac": {
        "learning_rate": 0.0001,
        "buffer_size": 1000,
        "batch_size": 32,
        "gamma": 0.98,
        "ent_coef": 0.005,
        "demo_episodes": 1,
        "critic_warmup_steps": 4,
    },
    "timesteps": 128,
    "eval": {"episodes": 1, "freq": 128},
}

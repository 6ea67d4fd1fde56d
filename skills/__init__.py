"""Skill library: declarations (registry), policies, training, safe storage, evaluation."""

from skills.registry import REGISTRY, catalogue, get, names
from skills.skill_env import register_skill_envs

register_skill_envs()  # gymnasium ids skillbridge/Skill-<name>-v0

__all__ = ["REGISTRY", "catalogue", "get", "names"]

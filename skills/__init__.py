"""Skill library: declarations (registry), policies, training, safe storage, evaluation."""

from skills.registry import REGISTRY, catalogue, get, names

__all__ = ["REGISTRY", "catalogue", "get", "names"]

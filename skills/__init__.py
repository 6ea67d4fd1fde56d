"""Skill library: declarations (registry), policies, training, safe storage, evaluation."""

from skills.drawer import CloseDrawer, OpenDrawer
from skills.home import Home
from skills.pick import Pick
from skills.place import Place
from skills.press_button import PressButton
from skills.push import Push
from skills.registry import REGISTRY, catalogue, get, names, register
from skills.skill_env import register_skill_envs

# the built-in skills, in catalogue order (prompts and schemas list them so)
for _skill in (Pick, Place, Push, Home, OpenDrawer, CloseDrawer, PressButton):
    register(_skill)
register_skill_envs()  # gymnasium ids skillbridge/Skill-<name>-v0

__all__ = ["REGISTRY", "catalogue", "get", "names", "register"]

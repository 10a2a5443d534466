"""Errors of the skill library (exit codes 25 and 26 of ``evotree.core.errors.EXIT_CODES``)."""

from __future__ import annotations

from evotree.core.errors import EvotreeError

__all__ = ["InvalidSkillParam", "SkillNotApplicable", "SkillsFileError", "UnknownSkill"]


class UnknownSkill(EvotreeError):
    """No built-in skill has this name (the message offers the closest names)."""

    exit_code = 25
    code = "unknown_skill"


class InvalidSkillParam(EvotreeError):
    """A skill parameter is unknown, of the wrong type or out of its range."""

    exit_code = 25
    code = "invalid_skill_param"


class SkillsFileError(EvotreeError):
    """A version's ``skills.toml`` cannot be read (syntax, unknown skill, bad parameter)."""

    exit_code = 25
    code = "invalid_skills_file"


class SkillNotApplicable(EvotreeError):
    """The skill does not apply here: the domain, the trainer or the TRL version rules it out."""

    exit_code = 26
    code = "skill_not_applicable"

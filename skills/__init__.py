"""The skill library: interventions that change training (``StdGroupFilter``, …), with metadata.

* :mod:`evotree.skills.catalog` — the built-in skills in EvoTrainer's format (trigger, intervention,
  expected outcome, validation, domains) with typed parameters and provenance; light to import.
* :mod:`evotree.skills.recipe` — ``skills.toml`` in a version's tree; :func:`apply_skill` records a
  skill (a commit on the version's branch and a ``skill.applied`` ledger event);
  :func:`applied_skills` reads what a version trains with.
* :mod:`evotree.skills.runtime` — what each skill computes on a scored GRPO batch or a reward; the
  train phase activates it through the TRL seam in :mod:`evotree.harness.trl`.

Importing this package loads neither pygit2 nor torch.
"""

from evotree.skills.catalog import ParamSpec, SkillInfo, get_skill, list_skills, parse_params
from evotree.skills.errors import (
    InvalidSkillParam,
    SkillNotApplicable,
    SkillsFileError,
    UnknownSkill,
)
from evotree.skills.recipe import (
    SKILLS_FILE,
    AppliedSkill,
    ApplyResult,
    applied_skills,
    apply_skill,
    check_applicable,
    load_skills_file,
    parse_skills_text,
)

__all__ = [
    "SKILLS_FILE",
    "AppliedSkill",
    "ApplyResult",
    "InvalidSkillParam",
    "ParamSpec",
    "SkillInfo",
    "SkillNotApplicable",
    "SkillsFileError",
    "UnknownSkill",
    "applied_skills",
    "apply_skill",
    "check_applicable",
    "get_skill",
    "list_skills",
    "load_skills_file",
    "parse_params",
    "parse_skills_text",
]

"""evotree.toml: the template, defaults, and errors that name the key and the line."""

from __future__ import annotations

import pytest

from evotree.core.config import Config, locate_key, parse_config
from evotree.core.config_template import render_template
from evotree.core.errors import ConfigError


@pytest.mark.parametrize("domain", ["custom", "math", "gym"])
def test_template_parses_and_matches_defaults_except_commands(domain: str) -> None:
    text = render_template(domain)
    cfg = parse_config(text)
    defaults = Config()
    assert cfg.workspace.domain == domain
    assert cfg.gates == defaults.gates
    assert cfg.budget.max_episodes == (128 if domain == "gym" else 0)
    assert cfg.budget.max_steps == defaults.budget.max_steps
    assert cfg.executor == defaults.executor
    assert cfg.protect == defaults.protect
    # the template spells out every key there is, so users see the whole policy
    from dataclasses import fields

    for section in fields(Config):
        if (
            section.name == "interventions"
        ):  # a free-form table of classes (docs/protocols/search-statistics.md)
            assert "# [interventions]" in text
            continue
        for key in fields(getattr(defaults, section.name)):
            assert f"\n{key.name} = " in text, (
                f"{section.name}.{key.name} missing from the template"
            )


def test_template_covers_required_sections() -> None:
    text = render_template()
    for section in (
        "[workspace]",
        "[train]",
        "[eval]",
        "[protect]",
        "[budget]",
        "[gates]",
        "[executor]",
    ):
        assert section in text


def test_empty_file_gives_defaults() -> None:
    assert parse_config("") == Config()


def test_syntax_error_names_line() -> None:
    text = "[gates]\nalpha = 0.05\nmin_delta = = 1\n"
    with pytest.raises(ConfigError, match=r"evotree.toml:3: not valid TOML") as info:
        parse_config(text)
    assert info.value.details["line"] == 3


def test_unknown_key_names_key_line_and_suggestion() -> None:
    text = "[workspace]\ndomain = 'math'\n\n[gates]\nalpha = 0.1\nmin_delt = 0.5\n"
    with pytest.raises(
        ConfigError, match=r":6: unknown key 'gates.min_delt' \(did you mean 'gates.min_delta'\?\)"
    ) as info:
        parse_config(text)
    assert info.value.details == {"path": "evotree.toml", "key": "gates.min_delt", "line": 6}


def test_wrong_type_names_key_and_line() -> None:
    text = "[budget]\nmax_episodes = 'many'\n"
    with pytest.raises(
        ConfigError, match=r":2: budget.max_episodes: expected an integer, actually: 'many'"
    ):
        parse_config(text)


def test_bool_is_not_an_integer() -> None:
    with pytest.raises(ConfigError, match="expected an integer"):
        parse_config("[executor]\njobs = true\n")


def test_invalid_value_names_key_and_line() -> None:
    text = "[workspace]\ndomain = 'custom'\n[gates]\n\nalpha = 1.5\n"
    with pytest.raises(
        ConfigError, match=r":5: gates.alpha: expected a number in \(0, 1\), actually: 1.5"
    ):
        parse_config(text)


def test_unknown_domain_and_executor() -> None:
    with pytest.raises(
        ConfigError, match=r":2: workspace.domain: expected one of custom, math, gym"
    ):
        parse_config("[workspace]\ndomain = 'chess'\n")
    with pytest.raises(
        ConfigError, match=r"executor.kind: expected one of local, ray, slurm, actually: 'pbs'"
    ):
        parse_config("[executor]\nkind = 'pbs'\n")
    assert parse_config("[executor]\nkind = 'slurm'\n").executor.kind == "slurm"


def test_unknown_section_and_non_table() -> None:
    with pytest.raises(
        ConfigError, match=r":1: unknown section \[gate\] \(did you mean 'gates'\?\)"
    ):
        parse_config("[gate]\nalpha = 0.1\n")
    with pytest.raises(ConfigError, match=r"\[budget\] must be a table"):
        parse_config("budget = 3\n")


def test_list_items_are_type_checked() -> None:
    with pytest.raises(ConfigError, match=r"protect.paths: expected a list of a string"):
        parse_config("[protect]\npaths = ['judge/', 3]\n")


def test_int_accepted_for_float() -> None:
    cfg = parse_config("[gates]\nmin_delta = 1\n")
    assert cfg.gates.min_delta == 1.0 and isinstance(cfg.gates.min_delta, float)


def test_locate_key_handles_comments_and_quotes() -> None:
    text = "# top\n[gates] # policy\n'alpha' = 0.1\n[budget]\nmax_episodes = 3\n"
    assert locate_key(text, "gates.alpha") == 3
    assert locate_key(text, "budget.max_episodes") == 5
    assert locate_key(text, "budget") == 4
    assert locate_key(text, "gates.nothing") is None


def test_render_template_rejects_unknown_domain() -> None:
    with pytest.raises(ConfigError, match="unknown domain 'chess'"):
        render_template("chess")

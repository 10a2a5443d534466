"""The lazy ``evotree`` group: its table of commands is what the modules register, and
``evotree --help`` imports no command module (start-up stays at click's cost)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import click

from evotree.cli.main import COMMANDS


def test_the_table_is_what_each_module_registers() -> None:
    registered: dict[str, tuple[str, str]] = {}
    for module_name in sorted({module for module, _ in COMMANDS.values()}):
        group = click.Group()
        importlib.import_module(f"evotree.cli.{module_name}").register(group)
        for name, command in group.commands.items():
            assert name not in registered, f"{name} registered twice"
            registered[name] = (module_name, command.get_short_help_str(limit=1000))
    assert registered == COMMANDS, "update COMMANDS in evotree/cli/main.py"


def test_help_imports_no_command_module() -> None:
    code = (
        "import sys, contextlib, io\n"
        "from evotree.cli.main import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: cli(['--help'], prog_name='evotree')\n"
        "    except SystemExit: pass\n"
        "import json; print(json.dumps(sorted(m for m in sys.modules if m.startswith(("
        "'evotree.cli.', 'evotree.verbs', 'harness', 'gates', 'diagnostics')))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert loaded <= {"evotree.cli.main", "evotree.cli.common", "evotree.cli.console"}, loaded


def test_an_unknown_command_still_fails_with_click_s_message() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "evotree", "no-such-command"], capture_output=True, text=True
    )
    assert out.returncode == 2 and "No such command" in out.stderr

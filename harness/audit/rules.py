"""The leak audit's rules applied to one simple command (:func:`classify`).

Each rule set lives in its own module, and :func:`classify` runs them in a fixed order (the
order of the hits it returns):

* :mod:`~evotree.harness.audit.network_rules` — forge clients (gh, glab, hub), network programs,
  package installs, and git's fetch / clone / remotes (``audit.network_fetch``);
* :mod:`~evotree.harness.audit.history_rules` — git commands that read history or references
  beyond the task's base (``audit.git_history_leak``), over
  :mod:`~evotree.harness.audit.revisions` (how a word names a revision),
  :mod:`~evotree.harness.audit.git_argv` (how a git command line reads) and
  :mod:`~evotree.harness.audit.git_scopes` (the references a wide command reads);
* :mod:`~evotree.harness.audit.internals_rules` — reads of ``.git``'s internals
  (``audit.git_internals_read``);
* :mod:`~evotree.harness.audit.bytecode_rules` — cached ``.pyc`` bytecode the trajectory did
  not build (``audit.hidden_data_read``);
* :mod:`~evotree.harness.audit.hidden_rules` — hidden data (``audit.hidden_data_read``);
* :mod:`~evotree.harness.audit.test_write_rules` — writes to tests (``audit.test_write``).

:class:`~evotree.harness.audit.hits.Hit` is what a rule returns;
:class:`~evotree.harness.audit.hits.RuleSet` what the rules know about the task.
"""

from __future__ import annotations

from evotree.harness.audit.bytecode_rules import bytecode_hits
from evotree.harness.audit.hidden_rules import hidden_hits
from evotree.harness.audit.history_rules import _fed_lines, _git_rules
from evotree.harness.audit.hits import Hit, RuleSet
from evotree.harness.audit.internals_rules import internals_hits, traced_open_hit
from evotree.harness.audit.lexer import SimpleCommand, _basename
from evotree.harness.audit.network_rules import forge_hits, network_hits, package_hits
from evotree.harness.audit.test_write_rules import test_write_hits

__all__ = ["classify"]


def classify(cmd: SimpleCommand, rules: RuleSet = RuleSet()) -> list[Hit]:
    """The leak rules that fire on one simple command (module doc)."""
    argv = cmd.argv
    joined = " ".join(argv) + "".join(f" {op}{t}" for op, t in cmd.redirects)
    name = _basename(argv[0]) if argv else ""
    hits = forge_hits(name, argv, joined)
    if name == "hub" and len(argv) > 1:  # hub wraps git: git's rules too
        hits += _git_rules(("git", *argv[1:]), joined)
    if name == "open()":  # the runtime trace saw a program other than git open git storage
        hits.append(traced_open_hit(argv, joined))
        return hits
    if name == "git":
        reads_input = any(w in argv for w in ("cat-file", "pack-objects", "fmt-merge-msg"))
        hits += _git_rules(argv, joined, _fed_lines(cmd) if reads_input else None)
    hits += network_hits(name, argv, joined)
    hits += package_hits(name, argv, joined)
    hits += internals_hits(name, cmd, joined)
    found = any(h.code == "audit.hidden_data_read" for h in hits)
    hits += bytecode_hits(name, cmd, joined)
    hits += hidden_hits(cmd, rules, joined, found)
    hits += test_write_hits(name, cmd, joined)
    return hits

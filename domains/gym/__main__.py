"""``python -P -m evotree.domains.gym envs|references|pools|anchors``: maintenance of a gym workspace.

* ``envs`` — the environments the domain knows and whether each can run here (and if not, why
  and what to install);
* ``references [--root DIR]`` — recompute ``judge/references.json`` from the validation pool of
  ``judge/gym.toml`` (after changing the judged environments or the pool);
* ``anchors [ENV...] [--episodes N] [--first-seed S]`` — measure the random and the reference
  policy's mean return on N public seeds (default: Core-16, 16 seeds from 1,000,001), as a
  Markdown table; writes nothing (how the table in docs/domains/gym.md was made);
* ``pools ENV... [--root DIR] [--validation N] [--heldout N]`` — add hidden seed pools for
  environments that have none yet in ``judge/gym.toml`` (existing pools are kept) and add them
  to ``[judge].envs``; then run ``references``.

These rewrite the judge's hidden files, which live in the judge store (``refs/evotree/judge``),
never in a checkout. Work on an exported copy outside the repository, then promote it::

    evotree judge export ~/judge-edit
    python -P -m evotree.domains.gym pools LunarLander-v3 --root ~/judge-edit
    python -P -m evotree.domains.gym references --root ~/judge-edit
    evotree judge propose ~/judge-edit      # who proposes the change
    evotree judge promote ~/judge-edit      # another person's signed sign-off

``--root`` is required, and a directory inside a git checkout is refused: hidden pools and
references written there would sit where candidates and agents can read them.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from evotree.domains.gym.catalog import CATALOG
from evotree.domains.gym.catalog import DEFAULT_ENVS
from evotree.domains.gym.catalog import unavailable_reason
from evotree.domains.gym.experts import EXPERTS
from evotree.domains.gym.catalog import CORE16
from evotree.domains.gym.core16 import PRIVILEGED
from evotree.domains.gym.core16 import STATIC_REFERENCES
from evotree.domains.gym.scoring import reference_returns
from evotree.domains.gym import REFERENCES_FILE
from evotree.domains.gym import references_text
from evotree.domains.gym import JUDGE_FILE
from evotree.domains.gym.settings import load_judge_settings
from evotree.domains.gym.templates import draw_hidden_pools


def _envs() -> int:

    for env_id, info in CATALOG.items():
        reason = unavailable_reason(env_id)
        state = "available" if reason is None else "unavailable"
        flags = ", ".join(
            f
            for f, on in (("default", env_id in DEFAULT_ENVS), ("expert", env_id in EXPERTS))
            if on
        )
        print(f"{env_id:28s} {info.category:9s} {state:12s} {flags}")
        if reason:
            print(f"    {reason}")
    return 0


def _anchors(envs: list[str], episodes: int, first_seed: int) -> int:
    import statistics

    print(
        f"| env | random (mean of {episodes}) | reference (mean of {episodes}) | anchors used | reference |"
    )
    print("|---|---:|---:|---|---|")
    for env_id in envs or CORE16:
        seeds = [first_seed + i for i in range(episodes)]
        low = statistics.mean(reference_returns(env_id, seeds, "random"))
        high = statistics.mean(reference_returns(env_id, seeds, "expert"))
        anchors = (
            f"EvoPolicyGym static {STATIC_REFERENCES[env_id][0]:g} / {STATIC_REFERENCES[env_id][1]:g}"
            if env_id in STATIC_REFERENCES
            else "measured (these two)"
        )
        kind = "privileged" if env_id in PRIVILEGED else "observation only"
        print(f"| {env_id} | {low:.2f} | {high:.2f} | {anchors} | {kind} |", flush=True)
    return 0


def _inside_checkout(root: Path) -> Path | None:
    """The git working tree (or repository) that contains ``root``, if any."""
    here = root.resolve()
    for path in (here, *here.parents):
        if (path / ".git").exists():
            return path
    return None


def _check_root(root: Path) -> int:
    """0 when ``root`` is a judge directory outside any checkout; else 2 with the reason on stderr."""
    checkout = _inside_checkout(root)
    if checkout is not None:
        print(
            f"{root} is inside the git checkout {checkout}: hidden judge data must not be written there.\n"
            "  fix: evotree judge export DIR (outside the repository), pass --root DIR, then "
            "evotree judge propose DIR; another person: evotree judge promote DIR",
            file=sys.stderr,
        )
        return 2
    if not (root / "judge").is_dir():
        print(
            f"{root} has no judge/ directory: pass the directory `evotree judge export DIR` wrote",
            file=sys.stderr,
        )
        return 2
    return 0


def _references(root: Path) -> int:

    text = references_text(root)
    (root / REFERENCES_FILE).write_text(text, encoding="utf-8")
    print(
        f"wrote {root / REFERENCES_FILE}; propose it with: evotree judge propose {root}; another person puts it in force: evotree judge promote {root}"
    )
    return 0


def _pools(root: Path, envs: list[str], validation: int, heldout: int) -> int:

    path = root / JUDGE_FILE
    settings = load_judge_settings(path)
    for env_id in envs:
        if env_id not in EXPERTS:
            print(
                f"{env_id} has no expert policy, so it cannot be judged; experts: {', '.join(EXPERTS)}",
                file=sys.stderr,
            )
            return 2
        reason = unavailable_reason(env_id)
        if reason:
            print(reason, file=sys.stderr)
            return 2
    new = [e for e in envs if not any(e in table for table in settings.pools.values())]
    taken = {s for table in settings.pools.values() for seeds in table.values() for s in seeds}
    text = path.read_text(encoding="utf-8")
    while True:
        pools = draw_hidden_pools(new, {"validation": validation, "heldout": heldout})
        if not taken & {s for table in pools.values() for seeds in table.values() for s in seeds}:
            break
    for split, table in pools.items():
        lines = "".join(
            f'"{env_id}" = [{", ".join(map(str, seeds))}]\n' for env_id, seeds in table.items()
        )
        header = f"[pools.{split}]\n"
        if header in text:
            at = text.index(header) + len(header)
            end = text.find("\n[", at)
            end = len(text) if end < 0 else end + 1
            body = text[at:end].rstrip("\n") + "\n"
            text = text[:at] + body + lines + ("\n" if end < len(text) else "") + text[end:]
        else:
            text = text.rstrip("\n") + f"\n\n{header}{lines}"
    judged = settings.envs + [e for e in envs if e not in settings.envs]
    quoted = ", ".join(f'"{e}"' for e in judged)
    text, count = re.subn(
        r"(?m)^envs\s*=\s*\[[^\]]*\]", lambda _: f"envs = [{quoted}]", text, count=1
    )
    if not count:
        print(f"{path}: no `envs = [...]` line in [judge] to update", file=sys.stderr)
        return 2
    path.write_text(text, encoding="utf-8")
    load_judge_settings(path)  # still valid
    print(
        f"added pools for {', '.join(new) or 'nothing (all had pools)'} to {path}; now run: "
        f"python -P -m evotree.domains.gym references --root {root}, then evotree judge propose {root} and, by another person, evotree judge promote {root}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -P -m evotree.domains.gym", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("envs", help="list the known environments and whether they can run here")
    anchors = sub.add_parser(
        "anchors", help="measure random and reference returns on public seeds (a table)"
    )
    anchors.add_argument("envs", nargs="*")
    anchors.add_argument("--episodes", type=int, default=16)
    anchors.add_argument("--first-seed", type=int, default=1_000_001)
    root_help = "the judge directory `evotree judge export DIR` wrote (outside any git checkout)"
    refs = sub.add_parser("references", help="recompute judge/references.json under --root")
    refs.add_argument("--root", type=Path, required=True, help=root_help)
    pools = sub.add_parser(
        "pools", help="add hidden pools for more environments to judge/gym.toml under --root"
    )
    pools.add_argument("envs", nargs="+")
    pools.add_argument("--root", type=Path, required=True, help=root_help)
    pools.add_argument("--validation", type=int, default=16)
    pools.add_argument("--heldout", type=int, default=16)
    args = parser.parse_args(argv)
    if args.command == "envs":
        return _envs()
    if args.command == "anchors":
        return _anchors(args.envs, args.episodes, args.first_seed)
    refused = _check_root(args.root)
    if refused:
        return refused
    if args.command == "references":
        return _references(args.root)
    return _pools(args.root, args.envs, args.validation, args.heldout)


if __name__ == "__main__":
    sys.exit(main())

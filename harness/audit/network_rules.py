"""The network rules of the leak audit (``audit.network_fetch``): network programs (``curl``,
``wget``, ``ssh``, ``nc``, ...) and their targets, loopback excepted (:func:`is_loopback`); git's
fetch, pull, clone, ``ls-remote`` and remotes (a clone or fetch of the repository itself is no
network); package installs from URLs or the index; forge clients (``gh``, ``glab``, hub)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit.git_argv import _git_split, _GitCall, _positionals
from evotree.harness.audit.git_scopes import SUBMODULE_REMOTE
from evotree.harness.audit.hits import Hit
from evotree.harness.audit.revisions import _hashes, is_head_relative, _rev_kind

__all__ = ["forge_hits", "is_loopback", "network_hits", "package_hits"]


_NET_SUBS = frozenset(
    {"fetch", "pull", "clone", "ls-remote", "fetch-pack", "remote-https", "http-fetch"}
)


#: hub's own commands (all reach GitHub)
_HUB_NET = frozenset(
    {
        "pr",
        "pull-request",
        "issue",
        "browse",
        "api",
        "ci-status",
        "compare",
        "create",
        "fork",
        "release",
        "sync",
        "delete",
        "gist",
        "am",
        "apply",
        "cherry-pick",
    }
)


#: commands of gh / glab that stay on this machine
_FORGE_LOCAL = frozenset(
    {"help", "version", "completion", "config", "alias", "extension", "ext", "--version"}
)


def _git_network(call: _GitCall) -> bool:
    """fetch / pull / clone / ls-remote / remote update / submodule update reach the network."""
    sub, args, joined = call.sub, call.args, call.joined
    if sub == "ls-remote" and "--get-url" in args:
        return True  # prints the remote's URL from the local config; contacts nothing
    if sub == "clone" and _local_clone(call):
        return True
    if sub in ("fetch", "pull") and _local_remote(args):
        # the repository itself (``git fetch . main:scratch``): no network; what it copies is a
        # revision of this repository, judged like any other
        pos, _ = _positionals(args, sub)
        for spec in pos[1:]:
            src = spec.lstrip("+").split(":", 1)[0]
            kind = _rev_kind(src)
            if kind in ("hash", "ref"):
                call.hit(
                    "high",
                    f"git {sub} . {src} copies a revision outside HEAD's history",
                    _hashes(src),
                    refs=(src,),
                )
            elif src and not is_head_relative(src):
                call.candidate(src)
        return True
    if sub in _NET_SUBS:
        call.hits.append(
            Hit("audit.network_fetch", "high", f"git {sub} reaches the network", joined)
        )
        return sub != "pull"  # (pull also merges: judged as a move below)
    if sub == "remote" and call.args and args[0] in ("update", "add", "set-url"):
        call.hits.append(
            Hit(
                "audit.network_fetch",
                "high" if args[0] == "update" else "warn",
                f"git remote {args[0]}",
                joined,
            )
        )
        return True
    if (
        sub == "remote"
        and args[:1] in (["show"], ["prune"])
        and (args[0] == "prune" or "-n" not in args)
        and len([a for a in args if not a.startswith("-")]) > 1
    ):
        # (show -n: only the local configuration; prune asks the remote, dry run or not)
        call.hits.append(
            Hit(
                "audit.network_fetch",
                "high",
                f"git remote {args[0]} contacts the remote (lists its branches)",
                joined,
            )
        )
        return True
    if sub == "submodule" and "update" in args:
        if "--no-fetch" not in args and "-N" not in args:
            call.hits.append(
                Hit("audit.network_fetch", "warn", "git submodule update may fetch", joined)
            )
        if "--remote" in args:
            # checks each submodule out at its remote-tracking branch, not the commit the base
            # pins: judged in each submodule's store
            call.hits.append(
                Hit(
                    "audit.git_history_leak",
                    "high",
                    "git submodule update --remote checks out each submodule's remote-tracking "
                    "branch (not the commit the base pins)",
                    joined,
                    refs=(SUBMODULE_REMOTE,),
                )
            )
        return True
    return False


def _local_remote(args: Sequence[str]) -> bool:
    """Is the repository a fetch or pull names this repository itself (``.``, ``./``)?"""
    pos, _ = _positionals(args)
    return bool(pos) and pos[0] in (".", "./", "file://.")


def _local_clone(call: _GitCall) -> bool:
    """``git clone [--single-branch --branch X] . DEST``: a copy of this repository, not the
    network; it copies the branch it names (or every branch, and the tags unless
    ``--no-tags``), judged in the task repository."""
    args = call.args
    branch = None
    pos: list[str] = []
    k = 0
    while k < len(args):
        word = args[k]
        if word in (
            "-b",
            "--branch",
            "-o",
            "--origin",
            "-c",
            "--config",
            "--depth",
            "-u",
            "--upload-pack",
            "--reference",
            "--separate-git-dir",
            "--template",
            "-j",
            "--jobs",
            "--filter",
            "--bundle-uri",
            "--server-option",
        ):
            if word in ("-b", "--branch") and k + 1 < len(args):
                branch = args[k + 1]
            k += 2
            continue
        if word.startswith("--branch="):
            branch = word.split("=", 1)[1]
        elif not word.startswith("-"):
            pos.append(word)
        k += 1
    if not pos or pos[0] not in (".", "./", "file://."):
        return False
    if "--single-branch" in args:
        kind = _rev_kind(branch) if branch else None
        if branch and kind in ("hash", "ref"):
            call.hit(
                "high",
                f"git clone . --branch {branch} copies a revision outside HEAD's history",
                _hashes(branch),
                refs=(branch,),
            )
        elif branch and not is_head_relative(branch):
            call.candidate(branch)
        return True
    scope = (
        "*refs:"
        if "--mirror" in args
        else "*refs:refs/heads/" + ("" if "--no-tags" in args else ",refs/tags/")
    )
    call.hit("high", "git clone . copies every branch of this repository", refs=(scope,))
    return True


_NET = frozenset(
    {
        "curl",
        "wget",
        "aria2c",
        "http",
        "https",
        "httpie",
        "lynx",
        "links",
        "w3m",
        "nc",
        "ncat",
        "netcat",
        "telnet",
        "scp",
        "sftp",
        "ssh",
        "ftp",
        "socat",
        "wget2",
        "xh",
        "connect()",
    }
)  # connect(): a connect the runtime trace saw (harness/audit/trace.py)


# options that take a value, per network program (the value is not a host)
_NET_OPT_ARG = {
    "curl": frozenset(
        {
            "-H",
            "--header",
            "-d",
            "--data",
            "--data-raw",
            "--data-binary",
            "--data-urlencode",
            "--data-ascii",
            "--json",
            "-X",
            "--request",
            "-o",
            "--output",
            "-u",
            "--user",
            "-A",
            "--user-agent",
            "-e",
            "--referer",
            "-b",
            "--cookie",
            "-c",
            "--cookie-jar",
            "-F",
            "--form",
            "--form-string",
            "-w",
            "--write-out",
            "-m",
            "--max-time",
            "--connect-timeout",
            "-T",
            "--upload-file",
            "--resolve",
            "--connect-to",
            "-E",
            "--cert",
            "--key",
            "--cacert",
            "--capath",
            "-K",
            "--config",
            "-r",
            "--range",
            "-y",
            "--speed-time",
            "-Y",
            "--speed-limit",
            "-z",
            "--time-cond",
            "--retry",
            "--retry-delay",
            "--retry-max-time",
            "--limit-rate",
            "-C",
            "--continue-at",
            "--interface",
            "--dns-servers",
            "-U",
            "--proxy-user",
            "--max-filesize",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "-D",
            "--dump-header",
            "--oauth2-bearer",
            "--variable",
            "--unix-socket",
            "--abstract-unix-socket",
            "-Q",
            "--quote",
            "--mail-from",
            "--mail-rcpt",
            "-t",
            "--telnet-option",
            "--local-port",
            "--max-redirs",
            "--expect100-timeout",
            "--happy-eyeballs-timeout-ms",
            "--output-dir",
            "--create-file-mode",
            "--etag-save",
            "--etag-compare",
            "--aws-sigv4",
            "--hostpubmd5",
            "--pubkey",
            "--request-target",
            "--keepalive-time",
            "--parallel-max",
            "-P",
            "--ftp-port",
        }
    ),
    "wget": frozenset(
        {
            "-O",
            "--output-document",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "-P",
            "--directory-prefix",
            "-U",
            "--user-agent",
            "--header",
            "--post-data",
            "--post-file",
            "--body-data",
            "--body-file",
            "--method",
            "-e",
            "--execute",
            "-t",
            "--tries",
            "-T",
            "--timeout",
            "-w",
            "--wait",
            "--user",
            "--password",
            "-B",
            "--base",
            "-Q",
            "--quota",
            "--limit-rate",
            "-l",
            "--level",
            "--load-cookies",
            "--save-cookies",
            "-A",
            "--accept",
            "-R",
            "--reject",
            "-D",
            "--domains",
            "--referer",
            "--ca-certificate",
            "--certificate",
        }
    ),
    "ssh": frozenset(
        {
            "-p",
            "-i",
            "-l",
            "-o",
            "-F",
            "-L",
            "-R",
            "-D",
            "-b",
            "-c",
            "-E",
            "-e",
            "-m",
            "-O",
            "-Q",
            "-S",
            "-W",
            "-w",
            "-B",
            "-I",
        }
    ),
    "scp": frozenset({"-P", "-i", "-o", "-F", "-c", "-l", "-S", "-D", "-X"}),
    "nc": frozenset(
        {"-p", "-s", "-w", "-i", "-q", "-X", "-x", "-I", "-O", "-T", "-V", "-M", "-m", "-e", "-c"}
    ),
    "http": frozenset(
        {
            "-a",
            "--auth",
            "-A",
            "--auth-type",
            "-o",
            "--output",
            "--session",
            "--session-read-only",
            "--pretty",
            "-s",
            "--style",
            "-p",
            "--print",
            "--verify",
            "--cert",
            "--cert-key",
            "--timeout",
            "--max-redirects",
            "--ssl",
            "--ciphers",
            "--format-options",
            "--default-scheme",
            "-P",
            "--response-charset",
            "--response-mime",
            "--chunked-size",
        }
    ),
}


for _alias, _base in (
    ("ncat", "nc"),
    ("netcat", "nc"),
    ("telnet", "nc"),
    ("sftp", "scp"),
    ("https", "http"),
    ("httpie", "http"),
    ("xh", "http"),
    ("wget2", "wget"),
    ("aria2c", "wget"),
):
    _NET_OPT_ARG[_alias] = _NET_OPT_ARG[_base]


#: options whose value is itself a host the traffic goes to (a proxy, a jump host)
_NET_HOST_OPT = frozenset({"-x", "--proxy", "--preproxy", "-J", "--url"})


_LOOPBACK_HOST = re.compile(
    r"^(localhost|localhost\.localdomain|[\w.-]*\.localhost|ip6-localhost|ip6-loopback|"
    r"127(?:\.\d{1,3}){1,3}|::1|0\.0\.0\.0|0|::ffff:127(?:\.\d{1,3}){3}|"
    r"\$\(hostname[^)]*\)|\$\{?HOSTNAME\}?)$",
    re.I,
)


def _net_targets(name: str, argv: Sequence[str]) -> tuple[list[str], bool]:
    """(the hosts / URLs a network program reaches, whether it reads targets from a file)."""
    with_arg = _NET_OPT_ARG.get(name, frozenset())
    targets: list[str] = []
    from_file = False
    k = 1
    positional: list[str] = []
    while k < len(argv):
        word = argv[k]
        if word == "--":
            positional += argv[k + 1 :]
            break
        if word.startswith("--"):
            opt, eq, value = word.partition("=")
            if opt in ("--input-file", "-i") or opt == "--config":
                from_file = True
            if opt in _NET_HOST_OPT:
                if eq:
                    targets.append(value)
                elif k + 1 < len(argv):
                    targets.append(argv[k + 1])
                k += 1 if eq else 2
                continue
            k += 2 if opt in with_arg and not eq else 1
            continue
        if word.startswith("-") and len(word) > 1:
            # a cluster of short flags: the first one that takes a value takes the rest (or the
            # next word)
            for j, letter in enumerate(word[1:], 1):
                opt = "-" + letter
                if opt in with_arg or opt in _NET_HOST_OPT:
                    value = word[j + 1 :]
                    if not value and k + 1 < len(argv):
                        value = argv[k + 1]
                        k += 1
                    if opt in _NET_HOST_OPT:
                        targets.append(value)
                    if opt in ("-K",) or (name in ("wget", "wget2", "aria2c") and opt == "-i"):
                        from_file = True
                    break
            k += 1
            continue
        positional.append(word)
        k += 1
    if name in ("http", "https", "httpie", "xh"):
        pos = [p for p in positional if not re.fullmatch(r"[A-Z]+", p)]
        targets += [("localhost" + p if p.startswith(":") else p) for p in pos[:1]]
    elif name in ("nc", "ncat", "netcat", "telnet"):
        targets += positional[:1]
    elif name == "socat":
        for addr in positional:
            parts = addr.split(":")
            if (
                parts[0].upper().startswith(("TCP", "UDP", "SSL", "OPENSSL", "PROXY", "SOCKS"))
                and len(parts) > 1
            ):
                targets.append(parts[1])
    elif name in ("ssh",):
        targets += positional[:1]
    elif name in ("scp", "sftp", "rsync"):
        targets += [p.split(":", 1)[0] for p in positional if ":" in p and not p.startswith("/")]
        if name == "sftp":
            targets += positional[:1]
    else:
        targets += positional
    return targets, from_file


def _host(target: str) -> str:
    t = target.strip().strip("'\"")
    t = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", t)
    t = t.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in t:
        t = t.rsplit("@", 1)[1]
    if t.startswith("["):
        return t[1 : t.find("]")] if "]" in t else t[1:]
    if t.count(":") > 1 and not t.startswith("$("):
        return t  # a bare IPv6 address
    return t.split(":", 1)[0] if not t.startswith("$(") else t[: t.find(")") + 1] if ")" in t else t


def is_loopback(target: str) -> bool:
    """True when a URL / host names this machine (``localhost``, ``127.0.0.1``, ``[::1]``,
    ``0.0.0.0``, ``$(hostname)``): a server the trajectory started itself, not the network."""
    return bool(_LOOPBACK_HOST.match(_host(target)))


def _net_rule(name: str, argv: Sequence[str], joined: str) -> Hit | None:
    targets, from_file = _net_targets(name, argv)
    targets = [t for t in targets if t]
    if not targets and not from_file:
        return None  # curl --version, ssh -V: no host, nothing fetched
    if targets and not from_file and all(is_loopback(t) for t in targets):
        return Hit("audit.network_fetch", "info", f"{name} to this machine (loopback) only", joined)
    if name == "connect()":
        return Hit(
            "audit.network_fetch", "high", f"connect() to {targets[0]} (runtime trace)", joined
        )
    return Hit("audit.network_fetch", "high", f"{name} reaches the network", joined)


def forge_hits(name: str, argv: Sequence[str], joined: str) -> list[Hit]:
    """hub's own commands (all reach GitHub) and gh / glab / tea / lab commands that reach the
    forge; hub's git commands are judged by the git rules besides (:mod:`.rules`)."""
    if name == "hub" and len(argv) > 1:
        sub, _ = _git_split(argv)
        if sub in _HUB_NET:
            return [Hit("audit.network_fetch", "high", f"hub {sub} reaches GitHub", joined)]
    elif name in ("gh", "glab", "tea", "lab"):
        words = [a for a in argv[1:] if not a.startswith("-")]
        if words and words[0] not in _FORGE_LOCAL:
            return [
                Hit(
                    "audit.network_fetch",
                    "high",
                    f"{name} {' '.join(words[:2])} reaches the forge "
                    "(pull requests, patches, the repository's future)",
                    joined,
                )
            ]
    return []


def network_hits(name: str, argv: Sequence[str], joined: str) -> list[Hit]:
    """A network program's hit (:func:`_net_rule`), if it is one and reaches somewhere."""
    if name not in _NET:
        return []
    hit = _net_rule(name, argv, joined)
    return [hit] if hit is not None else []


def package_hits(name: str, argv: Sequence[str], joined: str) -> list[Hit]:
    """pip / uv / conda: ``download`` fetches packages; ``install`` of a URL is high, of a name
    (the package index) a warn; local paths and editable installs are no fetch."""
    if name not in ("pip", "pip3", "uv", "conda") or len(argv) <= 1:
        return []
    words = [a for a in argv[1:] if not a.startswith("-")]
    action = words[0] if words else ""
    if name == "uv" and action == "pip":
        words = words[1:]
        action = words[0] if words else ""
    if action == "download":
        return [Hit("audit.network_fetch", "high", f"{name} download fetches packages", joined)]
    if action != "install":
        return []
    urls = [w for w in words[1:] if re.match(r"^(git\+|https?://|ftp://)", w) or "@ http" in w]
    if urls:
        return [Hit("audit.network_fetch", "high", f"{name} install from a URL: {urls[0]}", joined)]
    if words[1:] and not all(w in (".", "-e") or w.startswith((".", "/")) for w in words[1:]):
        return [
            Hit("audit.network_fetch", "warn", f"{name} install reaches the package index", joined)
        ]
    return []

"""`tfwizard knowledge from-source`: a release's knowledge entry from TensorFlow's own
files (for maintainers; CONTRIBUTING.md, "Adding a TensorFlow release")."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from ..core.i18n import _
from .context import Environment, ExitStatus, arg_path


def register(sub: Any) -> None:
    """Add `knowledge` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser("knowledge", help=_("maintainers: check or write a release's knowledge "
                                           "entry from TensorFlow's own files"))
    ksub = p.add_subparsers(dest="knowledge_command", metavar="COMMAND", required=True)
    q = ksub.add_parser("from-source", help=_("read a TensorFlow tree (a folder, or a git URL "
                                              "at a tag) and print, check or write the "
                                              "release's entry"))
    q.add_argument("source", metavar="PATH_OR_URL",
                   help=_("a TensorFlow checkout here, or a git URL (only the few files "
                          "needed are fetched)"))
    q.add_argument("--release", required=True, metavar="VERSION",
                   help=_('the release the tree is, e.g. "2.22.0rc0"'))
    q.add_argument("--ref", metavar="TAG",
                   help=_("with a URL: the tag or branch to read (default: the release's "
                          "tag, v2.22.0-rc0 for 2.22.0rc0)"))
    q.add_argument("--commit", metavar="SHA",
                   help=_("the tree's commit when it has no .git (cited by the entry)"))
    q.add_argument("--redist", metavar="FILE",
                   help=_("the cuda_redist_versions.bzl of the rules_ml_toolchain commit the "
                          "tree pins, when cuda.toml has no list for it"))
    q.add_argument("--knowledge", metavar="DIR",
                   help=_("the knowledge folder to check or write (default: the one "
                          "tfwizard loads)"))
    mode = q.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help=_("exit 1 when the entry differs from the files (or is missing)"))
    mode.add_argument("--write", action="store_true",
                      help=_("write the entry into releases.toml (and its source, and a new "
                             "hermetic list)"))
    q.add_argument("--json", action="store_true", help=_("print the result as JSON"))
    q.set_defaults(handler=cmd_knowledge_from_source)


def cmd_knowledge_from_source(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Read the tree, draft the entry, then print, check or write it."""
    from ..core.knowledge import load_knowledge, load_knowledge_from
    from ..core.resources import resource_path
    from ..core.tfsource.entry import fetch_tree, git_tag, is_url

    folder = arg_path(env, args.knowledge) if args.knowledge else resource_path("knowledge")
    kb = load_knowledge_from(folder) if args.knowledge else load_knowledge()
    redist = arg_path(env, args.redist).read_text("utf-8") if args.redist else None
    if is_url(args.source):
        with tempfile.TemporaryDirectory(prefix="tfwizard-tree-") as tmp:
            tree = Path(tmp) / "tensorflow"
            fetch_tree(args.source, args.ref or git_tag(args.release), tree)
            return _run(args, env, kb, folder, tree, redist)
    tree = arg_path(env, args.source)
    if not tree.is_dir():
        raise UsageError(_("{path} is not a folder").format(path=tree))
    return _run(args, env, kb, folder, tree, redist)


def _run(args: argparse.Namespace, env: Environment, kb: Any, folder: Path, tree: Path,
         redist: str | None) -> ExitStatus:
    import dataclasses

    from ..core.tfsource.entry import draft_entry, entry_values, write_entry
    from ..core.tfsource.facts import read_source_facts

    facts = read_source_facts(tree)
    if not facts.stated:
        raise UsageError(_("{path} holds none of TensorFlow's build files").format(path=tree))
    if args.commit:
        facts = dataclasses.replace(facts, commit=args.commit)
    draft = draft_entry(kb, args.release, facts, redist)
    differences = [d.to_dict() for d in draft.differences]
    if args.json:
        env.out(json.dumps({"release": args.release, "exists": draft.existing is not None,
                            "commit": facts.commit, "read": list(draft.read),
                            "inherited": list(draft.inherited), "differences": differences,
                            "entry": entry_values(draft)}, indent=2))
    else:
        _print(env, draft)
    if args.write:
        for path in write_entry(folder, draft):
            env.out(_("wrote {path}").format(path=path))
        return ExitStatus.OK
    if args.check:
        return ExitStatus.ERROR if differences or draft.existing is None else ExitStatus.OK
    return ExitStatus.OK


def _print(env: Environment, draft: Any) -> None:
    from ..core.tfsource.entry import READ_KEYS, entry_toml

    facts = draft.facts
    where = facts.commit[:12] or _("commit unknown")
    env.out(_("TensorFlow {version} from {tree} ({commit})").format(
        version=draft.release.version, tree=facts.where, commit=where))
    for key in draft.read:
        cited = facts.cite(READ_KEYS[key]) if key in READ_KEYS else (
            facts.cite("redist_cuda") or facts.cite("toolchain_pin"))
        env.out(_("  read {key} from {file}").format(key=key, file=cited or "?"))
    if draft.existing is None:
        env.out(_("releases.toml has no {version}: the keys not read come from "
                  "{template}").format(version=draft.release.version,
                                       template=draft.template.version))
    for d in draft.differences:
        env.out(_("differs: {fact}: releases.toml {table}, the files {source} ({file})").format(
            fact=d.fact, table=d.table or "-", source=d.source or "-", file=d.file or "?"))
    if draft.existing is not None and not draft.differences:
        env.out(_("releases.toml agrees with the files"))
    env.out("")
    env.out(entry_toml(draft).rstrip("\n"))


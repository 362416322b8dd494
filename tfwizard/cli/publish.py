"""`tfwizard publish`: a built wheel, labelled with its target and carrying its provenance,
into the team's wheelhouse (a package server through the upload API twine uses, or a
folder with PEP 503 pages). core/wheelhouse/publish.py does the work."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.i18n import _
from .context import Environment, ExitStatus


def register(sub: Any) -> None:
    """Add `publish` to the `tfwizard` parser's subcommands."""
    p = sub.add_parser(
        "publish", help=_("put a built wheel, labelled with its target and its provenance, "
                          "into the team's wheelhouse"),
        description=_("Label the wheel a build made (a PEP 440 local version such as "
                      "2.21.0+cu128.sm120), put its build facts into its .dist-info, and "
                      "upload it to the wheelhouse (the standard upload API twine uses) or "
                      "write it into a wheelhouse folder with its index pages. Credentials "
                      "come as twine takes them: TWINE_USERNAME/TWINE_PASSWORD, ~/.pypirc, "
                      "keyring."))
    p.add_argument("source", metavar="BUILD_ID|WHEEL",
                   help=_("a build id or build record folder, or a wheel file a build made"))
    p.add_argument("--to", metavar="URL",
                   help=_("the wheelhouse: a simple index URL (…/simple/), an upload URL, a "
                          "~/.pypirc section name, or a folder (default: the build's recipe's "
                          "[wheelhouse] url, else TFWIZARD_WHEELHOUSE)"))
    p.add_argument("--label", metavar="SEGMENT", default=None,
                   help=_("an extra segment for the version label (default: the recipe's "
                          "wheelhouse.label)"))
    p.add_argument("--json", action="store_true", help=_("print the result as JSON"))
    p.set_defaults(handler=cmd_publish)


def cmd_publish(args: argparse.Namespace, env: Environment) -> ExitStatus:
    """Publish, then say what the GPU machines run."""
    from ..core.wheelhouse import wheelhouse_url
    from ..core.wheelhouse.publish import find_source, publish

    record, _wheel = find_source(args.source, env.env, env.cwd)
    recipe = _record_recipe(record)
    to = wheelhouse_url(args.to, recipe, env.env)
    label = args.label if args.label is not None else (
        recipe.wheelhouse.label if recipe is not None else "")
    result = publish(args.source, to, env.env, env.cwd, extra_label=label)
    if args.json:
        env.out(json.dumps(result.to_dict(), indent=2))
        return ExitStatus.OK
    words = {"uploaded": _("Uploaded {wheel} to {to}."),
             "present": _("{to} already has {wheel} (the same sha256): nothing to upload."),
             "published": _("Wrote {wheel} into {to} and its index pages.")}
    env.out(words.get(result.status, "{wheel} {to}").format(wheel=result.filename,
                                                            to=result.to))
    env.out(_("  sha256 {sha}; build {build}").format(sha=result.sha256, build=result.build_id))
    env.out(_("On the machines that run TensorFlow:"))
    env.out(f"  tfwizard advise --wheelhouse {result.wheelhouse}")
    env.out(f"  tfwizard install --wheelhouse {result.wheelhouse} --venv DIR --create")
    return ExitStatus.OK


def _record_recipe(record: Any) -> Any:
    """The recipe a build record keeps (None without one)."""
    if record is None or not (record / "recipe.toml").is_file():
        return None
    from ..core.recipe import load_recipe

    return load_recipe(record / "recipe.toml")

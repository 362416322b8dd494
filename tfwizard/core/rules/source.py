"""Rules on a local TensorFlow checkout (tensorflow.source_dir): it must exist, hold
files, and be a TensorFlow checkout. They read this machine's file system, as the build
will mount that folder (issue 19: a missing or empty folder passed `check` and the GUI)."""

from __future__ import annotations

from ..i18n import _
from .context import Ctx


def rule_source_dir(ctx: Ctx) -> None:
    """tensorflow.source_dir names a folder here that is a TensorFlow checkout."""
    key = "tensorflow.source_dir"
    if not ctx.recipe.tensorflow.source_dir:
        return
    path = ctx.recipe.resolve_path(key)
    if path is None:
        return
    if not path.exists():
        ctx.add("SOURCE_MISSING", "error",
                _("{path} does not exist on this machine; choose the folder of your "
                  "TensorFlow checkout, or clone the release instead.").format(path=path),
                ["tf-source-md"], key)
    elif not path.is_dir():
        ctx.add("SOURCE_MISSING", "error", _("{path} is a file, not a folder.").format(path=path),
                ["tf-source-md"], key)
    elif not any(path.iterdir()):
        ctx.add("SOURCE_EMPTY", "error",
                _("{path} is empty: clone TensorFlow into it first (`git clone "
                  "https://github.com/tensorflow/tensorflow`), or clone the release "
                  "instead.").format(path=path), ["tf-source-md"], key)
    elif not (path / "configure.py").is_file():
        ctx.add("SOURCE_NOT_TF", "error",
                _("{path} is not a TensorFlow checkout (no configure.py).").format(path=path),
                ["tf-configure-py"], key)

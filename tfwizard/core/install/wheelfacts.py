"""What a TensorFlow wheel says of itself, read from the file without installing it.

    facts = read_wheel_facts(Path("tensorflow-2.21.0-cp312-cp312-manylinux_2_27_x86_64.whl"))
    facts.name, facts.version, facts.tags        # METADATA and WHEEL
    facts.build_info                             # tensorflow/python/platform/build_info.py

`build_info` is TensorFlow's own generated module (the dict `tf.sysconfig.get_build_info()`
returns), parsed without running it; None when the wheel has none. Releases write
different keys there: 2.22 no longer lists the CUDA version or the compute capabilities,
so an absent key means "not recorded", never "wrong".
"""

from __future__ import annotations

import ast
import zipfile
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from ..errors import TfWizardError
from ..i18n import _

#: where TensorFlow's wheels keep their build facts
BUILD_INFO = "tensorflow/python/platform/build_info.py"


@dataclass(frozen=True)
class WheelFacts:
    """A wheel's name, version and tags (its .dist-info) and TensorFlow's build facts."""

    name: str
    version: str
    tags: tuple[str, ...]  # "cp311-cp311-manylinux_2_27_x86_64", one per WHEEL Tag line
    build_info: dict[str, Any] | None = field(default=None)


def parse_build_info(text: str) -> dict[str, Any]:
    """The `build_info` mapping of TensorFlow's generated build_info.py, without importing
    it (a dict literal or `collections.OrderedDict([...])`); ValueError when it has none."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "build_info" for t in node.targets):
            value = node.value
            if isinstance(value, ast.Call) and value.args:  # collections.OrderedDict([...])
                return dict(ast.literal_eval(value.args[0]))
            return dict(ast.literal_eval(value))
    raise ValueError("build_info.py has no build_info assignment")


def read_wheel_facts(path: Path) -> WheelFacts:
    """The facts of the wheel at `path`; TfWizardError naming the file when it is not a
    wheel that can be read (no .dist-info, a broken zip, a build_info that is not data)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            meta = _member(names, "METADATA")
            wheel = _member(names, "WHEEL")
            if meta is None or wheel is None:
                raise ValueError(_("it has no .dist-info/METADATA and WHEEL"))
            headers = HeaderParser().parsestr(zf.read(meta).decode("utf-8", "replace"))
            tag_lines = HeaderParser().parsestr(zf.read(wheel).decode("utf-8", "replace"))
            info = (parse_build_info(zf.read(BUILD_INFO).decode("utf-8", "replace"))
                    if BUILD_INFO in names else None)
    except (OSError, zipfile.BadZipFile, ValueError, SyntaxError) as exc:
        raise TfWizardError(_("cannot read the wheel {path}: {error}").format(
            path=path, error=exc)) from None
    return WheelFacts(str(headers.get("Name", "")), str(headers.get("Version", "")),
                      tuple(str(t) for t in tag_lines.get_all("Tag") or ()), info)


def _member(names: list[str], leaf: str) -> str | None:
    """The top-level `*.dist-info/LEAF` of a wheel's members."""
    return next((n for n in names if n.count("/") == 1 and n.endswith(".dist-info/" + leaf)),
                None)

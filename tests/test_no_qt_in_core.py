"""The headless CLI and core never import Qt (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> list[str]:
    names = []
    for path in sorted((ROOT / "tfwizard").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        if rel.parts[:2] == ("tfwizard", "gui") or rel.name == "__main__":
            continue
        names.append(".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts))
    return names


def test_core_and_cli_import_no_qt():
    modules = _modules()
    assert "tfwizard.cli" in modules and "tfwizard.core.recipe" in modules
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "from tfwizard.cli import capture\n"
        "capture(['--help'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"Qt imported by the core: {out.stdout}"


def test_package_has_no_shell_strings():
    offenders = []
    for path in (ROOT / "tfwizard").rglob("*.py"):
        text = path.read_text()
        for needle in ("shell=True", "os.system(", "docker.sock"):
            if needle in text:
                offenders.append(f"{path.name}: {needle}")
    assert offenders == []


def test_no_container_is_ever_privileged():
    """Every place the package says `privileged` (a keyword or a dict key, the style
    containers.create's kwargs use) says the constant False; and it does say it, so the
    check looks at the code that makes containers."""
    import ast

    found = []
    for path in (ROOT / "tfwizard").rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            pairs = []
            if isinstance(node, ast.Call):
                pairs = [(k.arg, k.value) for k in node.keywords]
            elif isinstance(node, ast.Dict):
                pairs = [(k.value if isinstance(k, ast.Constant) else None, v)
                         for k, v in zip(node.keys, node.values, strict=True)]
            for key, value in pairs:
                if key == "privileged":
                    where = f"{path.relative_to(ROOT)}:{value.lineno}"
                    assert isinstance(value, ast.Constant) and value.value is False, where
                    found.append(where)
    assert any(w.startswith("tfwizard/core/building/run/containers.py") for w in found), found

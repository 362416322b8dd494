"""What the front-end server computes at import time is shared by every command it forks:
a module that read the environment, the home folder, the locale or the user when imported
would give each command the SERVER's values (started by some earlier command, with its
environment). No module the server can import does so; core/i18n's import-time language is
the one exception, and `cli.main` sets the language again from each command's environment
(tests/front/test_front.py: LANG=zh_CN through a server started in English)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: calls that read the process's environment (or what follows from it)
ENV_READERS = {"getenv", "environ", "home", "expanduser", "expandvars", "getuid", "geteuid",
               "getlocale", "getpreferredencoding", "getcwd", "cwd", "user_data_dir",
               "user_cache_dir", "user_config_dir", "user_state_dir", "language_from_env",
               "gethostname", "getpass", "getuser", "cpu_count", "now", "time", "monotonic"}
#: (module, the call) that run at import and are harmless, with why
ALLOWED = {("tfwizard/core/i18n.py", "language_from_env"):
           "cli.main sets the language from each command's environment"}


def _import_time_calls(path: Path) -> list[tuple[int, str]]:
    """(line, name) of each call of ENV_READERS outside any function or lambda; os.environ
    read as a mapping (subscript, .get) at module level too."""
    found: list[tuple[int, str]] = []

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                # decorators and default values run at import; the body does not
                for part in [*getattr(child, "decorator_list", []), *child.args.defaults,
                             *[d for d in child.args.kw_defaults if d is not None]]:
                    walk(ast.Module(body=[ast.Expr(part)], type_ignores=[]))
                continue
            if isinstance(child, ast.Call):
                func = child.func
                name = getattr(func, "id", None) or getattr(func, "attr", None)
                if name in ENV_READERS:
                    found.append((child.lineno, name))
            if isinstance(child, ast.Attribute) and child.attr == "environ":
                found.append((child.lineno, "environ"))
            walk(child)

    walk(ast.parse(path.read_text("utf-8")))
    return found


def test_no_module_the_server_imports_reads_the_environment_at_import():
    bad, allowed = [], set()
    for path in sorted((ROOT / "tfwizard").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("tfwizard/gui/"):
            continue  # the server never imports the GUI
        for line, name in _import_time_calls(path):
            if (rel, name) in ALLOWED:
                allowed.add((rel, name))
            else:
                bad.append(f"{rel}:{line}: {name}")
    assert bad == []
    assert allowed == set(ALLOWED), "an ALLOWED entry no longer applies: remove it"


def test_the_scan_sees_an_import_time_read(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import os\nHOME = os.environ.get('HOME')\nA = os.getenv('X')\n"
                      "def f(h=os.path.expanduser('~')):\n    return os.environ['Y']\n")
    assert _import_time_calls(sample) == [(2, "environ"), (3, "getenv"), (4, "expanduser")]

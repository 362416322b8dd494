from __future__ import annotations

from pathlib import Path

import pytest

from tfwizard.core.errors import RecipeError, UsageError
from tfwizard.core.recipe import (
    TOP_KEYS,
    Problem,
    Recipe,
    key_lines,
    load_recipe,
    parse_recipe,
    save_recipe,
    schema_reference,
)

ROOT = Path(__file__).resolve().parents[2]
LAPTOP = ROOT / "recipes" / "tf218-cuda-laptop.toml"


def problems(text: str) -> list[Problem]:
    with pytest.raises(RecipeError) as info:
        parse_recipe(text, "t.toml")
    return info.value.problems


def test_every_example_recipe_loads():
    files = sorted((ROOT / "recipes").glob("*.toml"))
    assert len(files) >= 5
    for f in files:
        recipe = load_recipe(f)
        assert recipe.name
        assert recipe.tensorflow.version


def test_laptop_recipe_values():
    r = load_recipe(LAPTOP)
    assert (r.tensorflow.version, r.python.version, r.backend.kind) == ("2.18.0", "3.11", "cuda")
    assert r.cuda.version == "12.5.1" and r.cuda.cudnn == "9.3.0"
    assert r.cuda.compute_capabilities == ["8.6"]
    assert r.toolchain.clang == "18" and r.install.extras == ["and-cuda"]


def test_three_mistakes_reported_at_once_with_lines():
    text = LAPTOP.read_text()
    text = text.replace('version = "12.5.1"', 'version = "12.5"')
    text = text.replace("xla = true", 'xla = "yes"')
    text = text.replace('compiler = "clang"', 'compilr = "clang"')
    found = problems(text)
    assert len(found) == 3
    by_key = {p.key_path: p for p in found}
    lines = text.splitlines()
    assert "12.5.1" in by_key["cuda.version"].suggestion
    assert "full version" in by_key["cuda.version"].message
    assert 'did you mean "compiler"' in by_key["cuda.compilr"].suggestion
    for p in found:
        assert p.line is not None
        assert p.key_path.split(".")[-1] in lines[p.line - 1]


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ("name='x'\n[tensorflow]\nversion='2.18.0'\n", "schema", "missing"),
        ("schema=9\nname='x'\n[tensorflow]\nversion='2.18.0'\n", "schema", "newer"),
        ("schema=1\n[tensorflow]\nversion='2.18.0'\n", "name", "missing"),
        ("schema=1\nname='a b'\n[tensorflow]\nversion='2.18.0'\n", "name", "not a valid name"),
        ("schema=1\nname='x'\n[tensorflow]\nversion='2.99.0'\n", "tensorflow.version", "not a release"),
        ("schema=1\nname='x'\n", "tensorflow", "missing"),
        ("schema=1\nname='x'\n[tensorflow]\nversion='2.18.0'\n[backend]\nkind='tpu'\n",
         "backend.kind", "not one of"),
        ("schema=1\nname='x'\n[tensorflow]\nversion='2.18.0'\n[build]\njobs=-1\n",
         "build.jobs", "out of range"),
        ("schema=1\nname='x'\n[tensorflow]\nversion='2.18.0'\n[build]\nopt_flags='-O2'\n",
         "build.opt_flags", "list"),
        ("schema=1\nname='x'\n[tensorflow]\nversion='2.18.0'\n[build]\n"
         "bazel_flags=['--copt=$(id)']\n", "build.bazel_flags", "shell"),
        ("schema=1\nname='x'\n[tensorflow]\nversion='2.18.0'\n[build]\n"
         "bazel_flags=['--output_base=/etc']\n", "build.bazel_flags", "not allowed"),
        ("schema=1\nname='x'\n[tensorflow]\nversion='2.18.0'\n[cuda]\n"
         "compute_capabilities=['86']\n", "cuda.compute_capabilities", "not a compute capability"),
        ("schema=1\nname='x'\nbuidl=1\n[tensorflow]\nversion='2.18.0'\n", "buidl", "not a recipe key"),
        ("schema=1\nname='x'\n[tensorflow]\nversion='2.18.0'\n[build]\nimage='Bad Image'\n",
         "build.image", "Docker image"),
        ("schema=1\nname='x'\n[tensorflow]\nref='--upload-pack=x'\n", "tensorflow.ref", "git"),
    ],
)
def test_single_problems(text, key, fragment):
    found = problems(text)
    assert any(p.key_path == key and fragment in str(p) for p in found), found


def test_toml_syntax_error_has_line():
    found = problems("schema = 1\nname = \n")
    assert found[0].key_path == "(toml)" and found[0].line == 2


def test_duplicate_key_and_non_utf8():
    assert problems("schema=1\nschema=1\n")[0].line == 2
    with pytest.raises(RecipeError) as info:
        parse_recipe(b"schema = 1\nname = '\xff'\n", "x")
    assert "UTF-8" in str(info.value) and info.value.problems[0].line == 2


def test_save_preserves_comments_and_keeps_backup(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text(LAPTOP.read_text())
    recipe = load_recipe(path)
    changed = recipe.with_changes({"cuda.version": "12.6.3", "build.jobs": 8})
    changed.document = recipe.document
    save_recipe(changed, path)
    text = path.read_text()
    assert "# hermetic CUDA, full x.y.z" in text
    assert "CC 8.6 cubins also run on 8.9" in text
    assert 'version = "12.6.3"' in text and "jobs = 8" in text
    assert (tmp_path / "r.toml.bak").read_text() == LAPTOP.read_text()
    assert load_recipe(path).cuda.version == "12.6.3"


def test_save_refuses_an_invalid_recipe(tmp_path):
    path = tmp_path / "r.toml"
    recipe = load_recipe(LAPTOP).with_changes({"build.jobs": -3})
    with pytest.raises(RecipeError):
        save_recipe(recipe, path)
    assert not path.exists()


def test_with_changes_rejects_unknown_key():
    with pytest.raises(UsageError):
        Recipe().with_changes({"cuda.nope": 1})


def test_key_lines_handles_dotted_keys_and_headers():
    lines = key_lines("schema = 1\n[cuda]\nversion = 'x'\n[build]\ncuda.x = 1\n")
    assert lines["cuda.version"] == 3 and lines["build.cuda.x"] == 5 and lines["cuda"] == 2


def test_schema_reference_lists_every_key():
    keys = {row["key"] for row in schema_reference()}
    for key in ["schema", "name", "tensorflow.version", "tensorflow.ref", "tensorflow.source_dir",
                "python.version", "backend.kind", "cuda.version", "cuda.cudnn",
                "cuda.compute_capabilities", "cuda.compiler", "rocm.version",
                "rocm.amdgpu_targets", "toolchain.clang", "toolchain.gcc", "build.opt_flags",
                "build.xla", "build.jobs", "build.image", "build.bazel_flags",
                "target.host_profile", "install.venv", "install.extras"]:
        assert key in keys
    assert all(row["help"] for row in schema_reference())


def test_every_key_s_help_has_a_chinese_translation():
    """`recipe new` shows each section key's help translated: a key whose help is not marked
    N_() (so not in the catalog) would stay English there. The catalog test (tests/test_i18n.py)
    checks that every marked text is translated."""
    from tfwizard.core.i18n import catalog

    zh = catalog("zh_CN")
    missing = [row["key"] for row in schema_reference()
               if row["key"] not in TOP_KEYS and zh.lookup(row["help"]) is None]
    assert missing == []

"""Property-based fuzzing of the recipe loader, `tfwizard check` and the plan.

No input may produce a traceback: the loader returns a Recipe or raises RecipeError whose
every problem names a key path (and a line where the TOML parser gives one); `check`
exits 0, 1 or 2; a structurally valid recipe with any plausible values evaluates and plans.
Examples are derandomized so CI is repeatable; set TFWIZARD_FUZZ_RANDOM=1 to explore.

The suite feeds 1,000 inputs to the loader and 1,000 to `check` (the same derandomized ones
every run: more of them buy nothing until the code changes). TFWIZARD_FUZZ_SCALE=10 is the
deep run, 10,000 each, about 10 minutes: run it after changing the loader, the rules or the
plan (CONTRIBUTING.md, "Tests").
"""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfwizard.cli import ExitStatus, capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.errors import RecipeError, TfWizardError
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import SECTIONS, Recipe, parse_recipe
from tfwizard.core.rules import evaluate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [p.read_text() for p in sorted((ROOT / "recipes").glob("*.toml"))]
HOSTS = ROOT / "tests" / "data" / "hosts"
RANDOM = bool(os.environ.get("TFWIZARD_FUZZ_RANDOM"))
SCALE = max(1, int(os.environ.get("TFWIZARD_FUZZ_SCALE", "1")))
COUNTER = {"loader": 0, "check": 0, "valid": 0}


def fuzz_settings(n: int):
    return settings(max_examples=n * SCALE, deadline=None, derandomize=not RANDOM,
                    suppress_health_check=list(HealthCheck), database=None)


scalars = st.one_of(
    st.text(max_size=40), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.booleans(),
    st.floats(allow_nan=False), st.sampled_from(["12.5.1", "2.18.0", "cuda", "8.6", "sm_90",
                                                 "--config=cuda", "$(id)", "a\nb", "..", ""]),
)
toml_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(string.ascii_letters + "_.-", min_size=1,
                                                    max_size=12), inner, max_size=4)),
    max_leaves=20,
)
key_names = st.sampled_from(["schema", "name", "description", *SECTIONS, "tensorflow.version",
                             "bogus", "cuda.version", "build.jobs"])


@st.composite
def random_documents(draw) -> str:
    """Random TOML documents with recipe-ish keys and arbitrary value types."""
    doc = tomlkit.document()
    for key in draw(st.lists(key_names, max_size=8, unique=True)):
        value = draw(toml_values)
        try:
            doc[key] = value
        except Exception:  # noqa: BLE001 - tomlkit refuses some keys; skip them
            continue
    return tomlkit.dumps(doc)


BAD_VALUES = ["1", "true", "[1, 2]", "{a = 1}", "3.5", '""', "[[[[[]]]]]", "-1", "'x\\ny'"]


@st.composite
def mutated_examples(draw) -> bytes:
    """An example recipe with lines dropped, duplicated, swapped or corrupted."""
    lines = draw(st.sampled_from(EXAMPLES)).splitlines()
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.integers(0, 7))
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])  # duplicate key or table
        elif op == 2 and "=" in lines[i]:
            key = lines[i].split("=", 1)[0]
            value = draw(st.sampled_from(BAD_VALUES))
            lines[i] = f"{key}= {value}"
        elif op == 3:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif op == 4:
            lines.insert(i, draw(st.text(max_size=30)))
        elif op == 5:
            lines.insert(i, "a = " + "[" * 200 + "]" * 200)  # deep nesting
        elif op == 6:
            lines.insert(i, f'[{draw(st.sampled_from(["cuda", "build", "x.y.z", "tensorflow"]))}]')
        else:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if draw(st.booleans()):
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(max_size=8)) + data[pos:]
    return data


def _assert_loader_contract(data: bytes | str) -> None:
    COUNTER["loader"] += 1
    try:
        recipe = parse_recipe(data, "fuzz.toml")
    except RecipeError as exc:
        assert exc.problems
        for p in exc.problems:
            assert p.key_path, p
            assert p.line is None or p.line >= 1
        return
    assert isinstance(recipe, Recipe)


@fuzz_settings(500)
@given(mutated_examples())
def test_loader_on_mutated_examples(data):
    _assert_loader_contract(data)


@fuzz_settings(500)
@given(random_documents())
def test_loader_on_random_documents(text):
    _assert_loader_contract(text)


def test_loader_on_pathological_inputs():
    huge = b"name = '" + b"x" * 2_000_000 + b"'\n"
    for data in [b"", b"\x00" * 100, b"\xff\xfe\x00", huge, b"a = " + b"[" * 5000,
                 b"[a]\n" * 10000, b"schema = 1\nschema = 2\n", "schema = 1\n\u202e".encode(),
                 b"[" + b"a." * 3000 + b"b]\n", b"x = {" * 3000]:
        _assert_loader_contract(data)


@st.composite
def plausible_recipes(draw) -> Recipe:
    """Structurally valid recipes with any combination of plausible values."""
    kb_versions = ["2.10.0", "2.13.0", "2.16.1", "2.17.0", "2.18.0", "2.20.0", "2.21.0", "master"]
    changes = {
        "tensorflow.version": draw(st.sampled_from(kb_versions)),
        "python.version": draw(st.sampled_from(["3.7", "3.9", "3.11", "3.12", "3.13", "3.14"])),
        "backend.kind": draw(st.sampled_from(["cpu", "cuda", "rocm"])),
        "cuda.version": draw(st.sampled_from(["", "11.8", "12.3", "12.5.1", "12.8.1", "13.0.0",
                                              "12.5", "99.1.0"])),
        "cuda.cudnn": draw(st.sampled_from(["", "8.9", "9.3.0", "9.22.0", "7.0"])),
        "cuda.compute_capabilities": draw(st.lists(st.sampled_from(
            ["auto", "3.5", "7.0", "8.6", "9.0a", "sm_35", "sm_90", "compute_90", "sm_100f",
             "sm_120", "2.0", "sm_88", "compute_30"]), max_size=5)),
        "cuda.compiler": draw(st.sampled_from(["clang", "nvcc"])),
        "rocm.version": draw(st.sampled_from(["", "6.2.0", "7.1.0", "5.0"])),
        "rocm.amdgpu_targets": draw(st.lists(st.sampled_from(["auto", "gfx90a", "gfx1100",
                                                              "gfx1201"]), max_size=3)),
        "toolchain.clang": draw(st.sampled_from(["", "14", "17", "18", "19", "22", "99"])),
        "toolchain.gcc": draw(st.sampled_from(["", "9", "13"])),
        "build.jobs": draw(st.integers(0, 256)),
        "build.xla": draw(st.booleans()),
        "build.bazel_flags": draw(st.lists(st.sampled_from(["--config=cuda", "--jobs=4",
                                                            "--verbose_failures"]), max_size=3)),
        "install.extras": draw(st.sampled_from([[], ["and-cuda"]])),
        "cache.disk_cache": draw(st.booleans()),
    }
    return Recipe().with_changes(changes)


HOST_PROFILES = [HostProfile.load(p) for p in sorted(HOSTS.glob("*.json"))]


@fuzz_settings(500)
@given(plausible_recipes(), st.sampled_from(HOST_PROFILES), st.sampled_from(HOST_PROFILES + [None]))
def test_rules_and_plan_never_crash(recipe, build, target):
    COUNTER["valid"] += 1
    findings = evaluate(recipe, build, target)
    for f in findings:
        assert f.severity in ("error", "warning", "info") and f.message and f.code
        if f.fix is not None:
            recipe.with_changes(f.fix.changes)  # every fix is a valid recipe change
    try:
        make_plan(recipe, build_host=build, target_host=target)
    except TfWizardError:
        pass  # a clean, user-facing refusal is fine


@pytest.fixture(scope="module")
def check_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzzcheck")


@fuzz_settings(1000)
@given(data=st.one_of(mutated_examples(), random_documents().map(str.encode)))
def test_check_cli_never_tracebacks(data, check_dir):
    COUNTER["check"] += 1
    path = check_dir / "r.toml"
    path.write_bytes(data)
    status, out, err = capture(["check", str(path), "--host", str(HOSTS / "no-gpu-server.json"),
                                "--json"])
    assert status in (ExitStatus.OK, ExitStatus.ERROR, ExitStatus.USAGE), err
    assert "Traceback" not in out + err and "internal error" not in err


def test_fuzz_counts_reported():
    # runs last in this module: the number of inputs fed, for the closing note
    total = COUNTER["loader"] + COUNTER["check"]
    if total:
        print(f"\nfuzzed: loader {COUNTER['loader']}, check {COUNTER['check']}, "
              f"valid recipes evaluated {COUNTER['valid']}")
        assert COUNTER["loader"] >= 1000 * SCALE and COUNTER["check"] >= 1000 * SCALE

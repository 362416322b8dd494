"""The pull-request summary of a `tfwizard test` run: Markdown to paste into a PR
description — what changed (git's diffstat), the release and ref, the recipe, every test run
with its result (a table), and the commands that reproduce the run.

    text = markdown_summary(run, recipe_path="cpu.toml", recipe=recipe,
                            diffstat=git_diffstat, ref="v2.17.0", commands=[...])

The summary is in English by default: it goes into TensorFlow's pull requests, which are
written in English (as the bug-report bundle's diagnosis.en.txt). `lang` asks for another
catalog's words. Test labels, statuses, paths and commands are names and stay as they are.
"""

from __future__ import annotations

from typing import Any

from ..i18n import DEFAULT, N_, translate
from .run import TestResult, TestRun


def _fence(body: str, lang: str = "") -> list[str]:
    """A fenced code block whose fence is longer than any backtick run inside it."""
    longest = run = 0
    for ch in body:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return [fence + lang, body, fence]


def _result(test: TestResult, say: Any) -> str:
    mark = "✅" if test.passed else "❌"
    cached = " " + say(N_("(cached)")) if test.cached else ""
    return f"{mark} {test.status}{cached}"


def _recipe_line(recipe: Any) -> str:
    """The recipe's backend and Python, from its sections (names, not translated)."""
    parts = [recipe.backend.kind]
    if recipe.backend.kind == "cuda" and recipe.cuda.version:
        parts.append(f"CUDA {recipe.cuda.version}")
    if recipe.python.version:
        parts.append(f"Python {recipe.python.version}")
    return ", ".join(parts)


def markdown_summary(run: TestRun, *, recipe_path: str, recipe: Any, diffstat: str, ref: str,
                     commands: list[str], lang: str | None = DEFAULT) -> str:
    """The Markdown summary of `run` (see the module's docstring); `ref` is the git ref or
    commit the change was tested on, `commands` the shell lines that reproduce it."""
    def say(text: str) -> str:
        return translate(text, lang)

    release = recipe.tensorflow.version or say(N_("(from the source folder)"))
    out = ["### " + say(N_("TensorFlow tests run with tfwizard")), ""]
    out += ["**" + say(N_("What changed")) + "**", ""]
    out += _fence(diffstat.strip("\n") or say(N_("(no changes against the ref)")))
    out += [""]
    # the words are looked up outside the f-strings, where Babel's extractor sees them
    words = {key: say(text) for key, text in (
        ("release", N_("Release")), ("ref", N_("Ref")), ("recipe", N_("Recipe")),
        ("test", N_("Test")), ("result", N_("Result")), ("duration", N_("Duration")),
        ("attempts", N_("Attempts")))}
    out += [f"- **{words['release']}:** {release}",
            f"- **{words['ref']}:** `{ref or '-'}`",
            f"- **{words['recipe']}:** `{recipe_path}` ({_recipe_line(recipe)})", ""]
    passed = len(run.tests) - len(run.failed)
    out += ["**" + say(N_("Tests: {passed} of {total} passed (Bazel: {exit})")).format(
        passed=passed, total=len(run.tests), exit=run.exit_name or run.exit_code) + "**", ""]
    if run.tests:
        out += [f"| {words['test']} | {words['result']} | {words['duration']} "
                f"| {words['attempts']} |", "|---|---|---:|---:|"]
        out += [f"| `{t.label}` | {_result(t, say)} | {t.duration_s:.1f} s "
                f"| {t.attempts} |" for t in run.tests]
    else:
        out += [say(N_("No test ran."))]
    if run.cancelled:
        out += ["", say(N_("The run was cancelled before it finished."))]
    out += ["", "**" + say(N_("To reproduce")) + "**", ""]
    out += _fence("\n".join(commands), "sh")
    return "\n".join(out) + "\n"

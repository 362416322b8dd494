"""One error hierarchy; every message says what to do next.

A leaf module: it imports nothing of tfwizard's. Whoever raises an error words its message
(in the current language); which exit status an error gives is the CLI's business
(`tfwizard.cli.context.exit_status`), not the error's.
"""

from __future__ import annotations

from typing import Any


class TfWizardError(Exception):
    """Base of every error tfwizard reports to a person (no traceback unless --debug)."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n{self.hint}" if self.hint else self.message


class UsageError(TfWizardError):
    """Bad input on the command line or in a file the user named."""


class RecipeError(UsageError):
    """A recipe that cannot be used; carries every problem found, not just the first.

    `message` is the whole text (recipe.recipe_error words it); `problems` the
    recipe.Problem list behind it, for JSON and the GUI.
    """

    def __init__(self, path: str, problems: list[Any], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.problems = problems


class KnowledgeError(TfWizardError):
    """The knowledge base in resources/ is missing or inconsistent (a bug in tfwizard)."""


class UnsafeValue(UsageError):
    """A value that would reach a bazelrc, an env answer, a command or a path is unsafe."""


class DockerUnavailable(TfWizardError):
    """The Docker engine cannot be reached or used."""


class ImageMissing(TfWizardError):
    """The build image is not present and cannot be pulled."""


class BuildCancelled(TfWizardError):
    """A build was cancelled by the user."""


class InstallFailed(TfWizardError):
    """Installing a wheel into the target interpreter failed."""


class WheelIncompatible(InstallFailed):
    """The wheel's Python or platform tag cannot run in the target interpreter."""


class InstallCancelled(InstallFailed):
    """The install was interrupted; `result` (an InstallResult) says whether the
    environment is unchanged."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result

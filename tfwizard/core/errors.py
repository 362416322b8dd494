"""One error hierarchy; every message says what to do next."""

from __future__ import annotations


class TfWizardError(Exception):
    """Base of every error tfwizard reports to a person (no traceback unless --debug)."""

    #: exit status the CLI uses for this error
    exit_code = 1

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n{self.hint}" if self.hint else self.message


class UsageError(TfWizardError):
    """Bad input on the command line or in a file the user named."""

    exit_code = 2


class RecipeError(UsageError):
    """A recipe that cannot be used; carries every problem found, not just the first."""

    def __init__(self, path: str, problems: list) -> None:  # list[Problem]
        from .i18n import _  # here: i18n imports this module

        self.path = path
        self.problems = problems
        lines = [_("{path}: {count} problem(s)").format(path=path, count=len(problems))]
        lines += [f"  {p}" for p in problems]
        super().__init__("\n".join(lines))


class KnowledgeError(TfWizardError):
    """The knowledge base in resources/ is missing or inconsistent (a bug in tfwizard)."""


class UnsafeValue(UsageError):
    """A value that would reach a bazelrc, an env answer, a command or a path is unsafe."""


class DockerUnavailable(TfWizardError):
    """The Docker engine cannot be reached or used."""


class ImageMissing(TfWizardError):
    """The build image is not present and cannot be pulled."""


class BuildFailed(TfWizardError):
    """A build ran and did not produce a wheel."""


class BuildCancelled(TfWizardError):
    """A build was cancelled by the user."""

    exit_code = 130


class InstallFailed(TfWizardError):
    """Installing a wheel into the target interpreter failed."""


class VerifyFailed(TfWizardError):
    """The verification probe could not run."""

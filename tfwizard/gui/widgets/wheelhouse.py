"""The team's wheelhouse in the wizard: Welcome's advice says whether a wheel there serves
the machine, the Build page publishes the wheel it made (the Install page's install of the
wheelhouse's best wheel is jobs.wheelhouse_install). core/wheelhouse does the work; this reads the wizard's state and
keeps the index and the upload off the GUI thread. Credentials come as `tfwizard publish`
takes them (TWINE_USERNAME/TWINE_PASSWORD, ~/.pypirc, keyring): the wizard never asks for
or shows a password."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget
from qasync import asyncSlot

from tfwizard.core.errors import TfWizardError

from ..i18n import tr
from ..state import WizardState
from .richtext import code_html


def configured_url(state: WizardState) -> str:
    """The wheelhouse the recipe names, else TFWIZARD_WHEELHOUSE; "" when none."""
    from tfwizard.core.wheelhouse import wheelhouse_url

    return wheelhouse_url(None, state.recipe, os.environ)


def advice_text(state: WizardState) -> str:
    """The wheelhouse's answer for the target (else this) machine and the recipe's backend
    and Python (blocking: reads the index); "" without a wheelhouse or a machine."""
    from tfwizard.core.wheelhouse.advice import advice_note

    url = configured_url(state)
    machine = state.target_host or state.build_host
    if not url or machine is None:
        return ""
    return advice_note(url, machine, state.kb, on_target=state.target_host is not None,
                       backend=state.recipe.backend.kind,
                       python=state.recipe.python.version or None)


def publish_build(record_dir: str, url: str, label: str) -> Any:
    """Publish a build's wheel (blocking: labels, uploads or writes a folder)."""
    from tfwizard.core.wheelhouse.publish import publish

    return publish(record_dir, url, os.environ, Path.cwd(), extra_label=label)


class PublishRow(QWidget):
    """"Publish to wheelhouse" after a build that made a wheel, with a wheelhouse named;
    what was published (the labelled file, its sha256) or why not, beside it."""

    def __init__(self, state: WizardState, parent: QWidget) -> None:
        super().__init__(parent)
        self.state = state
        self.setObjectName("publish-row")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.button = QPushButton(tr("Publish to wheelhouse"), self)
        self.button.setObjectName("publish")
        self.button.clicked.connect(self.publish)
        row.addWidget(self.button)
        self.status = QLabel("", self)
        self.status.setObjectName("publish-status")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.status, 1)
        self.task: asyncio.Future[Any] | None = None
        self.result: Any = None  # the build result offered
        self.setVisible(False)

    def offer(self, result: Any) -> None:
        """Shown after a successful build that made a wheel, when a wheelhouse is named."""
        url = configured_url(self.state)
        show = bool(result is not None and result.ok and result.wheel and result.record_dir
                    and url)
        self.setVisible(show)
        self.button.setEnabled(show)
        self.button.setToolTip(tr("Label the wheel with its target, put its build facts in "
                                  "it and upload it to {url}").format(url=url) if url else "")
        self.status.setText("")
        self.result = result

    @asyncSlot()
    async def publish(self) -> None:
        """Publish the build's wheel off the GUI thread, then say where it went."""
        result = self.result
        url = configured_url(self.state)
        if result is None or not url or self.task is not None:
            return
        self.button.setEnabled(False)
        self.status.setText(tr("Publishing…"))
        loop = asyncio.get_running_loop()
        self.task = loop.run_in_executor(None, publish_build, str(result.record_dir), url,
                                         self.state.recipe.wheelhouse.label)
        try:
            done = await self.task
        except TfWizardError as exc:
            self.status.setText(code_html(tr("Not published: {why}").format(
                why=exc.message + (f" {exc.hint}" if getattr(exc, "hint", "") else ""))))
            self.button.setEnabled(True)
            return
        finally:
            self.task = None
        self.status.setText(code_html(tr(
            "Published {wheel} (sha256 {sha}…) to {to}. On the machines that run "
            "TensorFlow: `tfwizard install --wheelhouse {url} --venv DIR --create`").format(
                wheel=done.filename, sha=done.sha256[:12], to=done.to, url=done.wheelhouse)))

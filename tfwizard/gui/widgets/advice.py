"""The advice box: does the official wheel serve the machine (core/advise/), with one
button to install it and verify, and one for a wheel the person already has; with a
wheelhouse named, first whether a wheel there serves it (core/wheelhouse/advice.py)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from tfwizard.core.advise import Advice
from tfwizard.core.errors import TfWizardError

from ..i18n import tr
from ..state import WizardState
from .richtext import code_html

#: (requirement or "" for "I already have a wheel") -> go to Install
GoInstall = Callable[[str], None]

#: seconds an answer of the wheelhouse stands for the same question (a wheel published
#: meanwhile shows after this, or after a change of the question)
HOUSE_TTL_S = 60.0


class AdviceBox(QFrame):
    """The verdict of `tfwizard advise` for the target (else this) machine and the
    recipe's backend; "Install the official wheel" when one serves the machine."""

    def __init__(self, state: WizardState, parent: QWidget, go_install: GoInstall) -> None:
        super().__init__(parent)
        self.state = state
        self.go_install = go_install
        self.advice: Advice | None = None
        self.setObjectName("advice")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        column = QVBoxLayout(self)
        self.summary = QLabel("", self)
        self.summary.setObjectName("advice-verdict")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)  # `commands` as code
        # the wheelhouse's answer, ahead of the official wheel's (read off the GUI thread)
        self.house = QLabel("", self)
        self.house.setObjectName("advice-wheelhouse")
        self.house.setWordWrap(True)
        self.house.setTextFormat(Qt.TextFormat.RichText)
        self.house.setVisible(False)
        self._asked = 0  # the newest question: an older answer that comes late is dropped
        # what the last answer was for, and when: the index is read again only when the
        # question changes (a wheelhouse, machine, backend or Python) or after HOUSE_TTL_S
        self._house_asked: tuple[object, ...] | None = None
        self._house_at = 0.0
        column.addWidget(self.house)
        column.addWidget(self.summary)
        row = QHBoxLayout()
        self.official_button = QPushButton(tr("Install the official wheel"), self)
        self.official_button.setObjectName("install-official")
        self.official_button.setToolTip(tr("Go to Install with the official wheel, then "
                                           "Verify: no build"))
        self.official_button.clicked.connect(self._official)
        row.addWidget(self.official_button)
        self.have_wheel_button = QPushButton(tr("I already have a wheel"), self)
        self.have_wheel_button.setObjectName("have-wheel")
        self.have_wheel_button.setToolTip(tr("Go to Install with a wheel file of your own, "
                                             "then Verify"))
        self.have_wheel_button.clicked.connect(lambda: self.go_install(""))
        row.addWidget(self.have_wheel_button)
        row.addStretch(1)
        column.addLayout(row)
        # the advice reads the recipe's backend and the hosts as they are now, on every
        # change (it went stale when only the page's own changes asked for it)
        self._stale = True
        state.recipeChanged.connect(self._changed)
        state.hostsChanged.connect(self._changed)

    def _changed(self) -> None:
        self._stale = True
        if self.isVisible():
            self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        """Qt: shown again (Back to Welcome): advise for what changed meanwhile."""
        super().showEvent(event)
        if self._stale:
            self.refresh()

    def refresh(self) -> None:
        """Advise again for the hosts and recipe as they are now."""
        from tfwizard.core.advise import Intent, advise

        s = self.state
        self._stale = False
        self.advice = None
        if s.build_host is not None:
            intent = Intent.CPU if s.recipe.backend.kind == "cpu" else Intent.GPU
            try:
                # the recipe's backend, as `tfwizard advise --target` takes the target's
                self.advice = advise(s.kb, host=s.build_host, target=s.target_host,
                                     intent=intent, backend=s.recipe.backend.kind)
            except TfWizardError as exc:
                self.summary.setText(code_html(tr("No advice: {why}").format(why=exc.message)))
        if self.advice is not None:
            self.summary.setText(code_html(self.advice.summary))
        elif s.build_host is None:
            self.summary.setText(tr("Detecting this machine: the advice follows."))
        serves = self.advice is not None and self.advice.official_serves and \
            bool(self.advice.requirement) and not self.advice.on_target
        self.official_button.setVisible(serves)
        self._ask_wheelhouse()

    def _ask_wheelhouse(self) -> None:
        """Ask the wheelhouse (when one is named) in a thread; its answer fills the line."""
        from .wheelhouse import advice_text, configured_url

        s = self.state
        url = configured_url(s)
        if not url or s.build_host is None:
            self._asked += 1
            self._house_asked = None
            self.house.setVisible(False)
            return
        # the profile itself (kept alive here): an id() could be reused by a new one
        question = (url, s.target_host or s.build_host, s.target_host is not None,
                    s.recipe.backend.kind, s.recipe.python.version)
        if question == self._house_asked and time.monotonic() - self._house_at < HOUSE_TTL_S:
            return  # the same question: the answer shown (or on its way) stands
        self._asked += 1
        self._house_asked, self._house_at = question, time.monotonic()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a test that drives the box alone)
            return
        asked = self._asked
        self.house.setText(tr("Looking in the team's wheelhouse…"))
        self.house.setVisible(True)

        def answered(future: asyncio.Future[str]) -> None:
            if asked != self._asked or future.cancelled():
                return
            error = future.exception()
            if error:
                self._house_asked = None  # ask again next time: the index may be back
            with contextlib.suppress(RuntimeError):  # the window closed meanwhile
                self.house.setText(code_html(str(error) if error else future.result()))

        loop.run_in_executor(None, advice_text, self.state).add_done_callback(answered)

    def _official(self) -> None:
        if self.advice is not None and self.advice.requirement:
            self.go_install(self.advice.requirement)

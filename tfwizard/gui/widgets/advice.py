"""The advice box: does the official wheel serve the machine (core/advise/), with one
button to install it and verify, and one for a wheel the person already has."""

from __future__ import annotations

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

    def _official(self) -> None:
        if self.advice is not None and self.advice.requirement:
            self.go_install(self.advice.requirement)

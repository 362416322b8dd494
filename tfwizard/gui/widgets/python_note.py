"""The Source page's line on the install interpreter: which Python
Install will use, and a warning with a one-click fix when the wheel's Python differs.

What is compared is decided by the core (`core/install/python.py`); this only shows it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from tfwizard.core.install.python import CHOSEN, EXISTING_VENV, python_agreement

from ..i18n import tr
from ..state import WizardState


class PythonNote(QWidget):
    """"Install will use …" and, when the versions differ, why the wheel will not install."""

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.setObjectName("python-note")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel(self)
        self.label.setObjectName("install-interpreter")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.label, 1)
        self.use_button = QPushButton(self)
        self.use_button.setObjectName("use-install-python")
        self.use_button.clicked.connect(self._use_interpreter_version)
        row.addWidget(self.use_button, 0, Qt.AlignmentFlag.AlignTop)
        self.mismatch = False
        self._version: str | None = None

    def refresh(self) -> None:
        """Compare the recipe's wheel Python with Install's interpreter and say so."""
        s = self.state
        found = python_agreement(s.recipe, s.kb) if s.target_host is None else None
        self.setVisible(found is not None)  # another machine installs it: its own Python
        if found is None:
            return
        version = found.version or tr("unknown version")
        if found.how == EXISTING_VENV:
            uses = tr("Install will put the wheel into the venv of {python} (Python {version}).")
        elif found.how == CHOSEN:
            uses = tr("Install will create the venv with {python} (Python {version}), chosen "
                      "on the Install page.")
        else:
            uses = tr("Install will create the venv with {python} (Python {version}), the "
                      "interpreter tfwizard runs on; another can be chosen on the Install "
                      "page.")
        text = uses.format(python=found.interpreter, version=version)
        self.mismatch = not found.agrees
        self._version = found.version
        release = s.kb.release(s.recipe.tensorflow.version or "master")
        can_use = self.mismatch and release is not None and found.version in release.pythons
        if self.mismatch:
            text = tr("The wheel will be for Python {wheel}, but {uses} A cp{tag} wheel does "
                      "not install there: build for Python {version}, or choose a Python "
                      "{wheel} interpreter on the Install page.").format(
                wheel=found.wheel, uses=text, tag=found.wheel.replace(".", ""), version=version)
        self.label.setText(text)
        self.label.setProperty("severity", "warning" if self.mismatch else "info")
        self.label.setStyleSheet("color: #8a5300; font-weight: bold;" if self.mismatch else "")
        self.use_button.setVisible(bool(can_use))
        if can_use:
            self.use_button.setText(tr("Use Python {version}").format(version=found.version))

    def _use_interpreter_version(self) -> None:
        if self._version:
            self.state.update({"python.version": self._version})

"""The Build options page's Remote execution section.

Endpoint, instance name, TLS (the endpoint's scheme: grpcs:// or grpc://), headers and the
platform properties of every action, written to `[remote]`; and "Test connection", which
runs the core's preflight (core/remote/check.py: GetCapabilities, then the probe) in a
thread and shows its findings as they come.

Header values are secrets: the recipe keeps `name=${VARIABLE}` only. A value typed here is
put into this process's environment under that variable (so a build started from this
window sends it) and is never written to the recipe; its field shows it masked.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable, MutableMapping

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from qasync import asyncSlot

from tfwizard.core.building.plan.remote import AUTO, exec_properties
from tfwizard.core.knowledge import recipe_python
from tfwizard.core.remote.check import RemoteCheck, check_service
from tfwizard.core.secrets import env_reference

from ..i18n import tr
from ..state import WizardState
from .findings import FindingRow

#: the recipe keys this section writes
KEYS = ("remote.executor", "remote.instance_name", "remote.headers", "remote.exec_properties")


def variable_for(header: str) -> str:
    """The environment variable a header's secret is kept in, e.g. TFWIZARD_X_API_KEY."""
    return "TFWIZARD_" + re.sub(r"[^A-Z0-9]+", "_", header.upper()).strip("_")


def with_tls(endpoint: str, tls: bool) -> str:
    """The endpoint with its scheme grpcs:// (TLS) or grpc:// (plain); unix: stays."""
    text = endpoint.strip()
    if not text or text.startswith("unix:"):
        return text
    _scheme, sep, rest = text.partition("://")
    return ("grpcs://" if tls else "grpc://") + (rest if sep else text)


def uses_tls(endpoint: str) -> bool:
    """Whether gRPC talks TLS to this endpoint (no scheme: TLS, as Bazel reads it)."""
    text = endpoint.strip()
    return not text.startswith(("grpc://", "unix:"))


class HeaderRow(QWidget):
    """One header: its name, the variable that holds its value, the value (masked)."""

    changed = Signal()

    def __init__(self, parent: QWidget, index: int) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.name = QLineEdit(self)
        self.name.setObjectName(f"remote-header-name-{index}")
        self.name.setPlaceholderText("x-buildbuddy-api-key")
        self.variable = QLineEdit(self)
        self.variable.setObjectName(f"remote-header-variable-{index}")
        self.variable.setPlaceholderText(tr("variable"))
        self.value = QLineEdit(self)
        self.value.setObjectName(f"remote-header-value-{index}")
        self.value.setEchoMode(QLineEdit.EchoMode.Password)
        self.value.setPlaceholderText(tr("value (kept out of the recipe)"))
        for edit, stretch in ((self.name, 2), (self.variable, 2), (self.value, 3)):
            edit.textEdited.connect(lambda _t: self.changed.emit())
            row.addWidget(edit, stretch)


class RemoteExecutionSection(QGroupBox):
    """[remote] executor, instance, TLS, headers, exec properties, and Test connection."""

    def __init__(self, state: WizardState, parent: QWidget,
                 environ: MutableMapping[str, str] | None = None) -> None:
        super().__init__(tr("Remote execution"), parent)
        self.setObjectName("remote-execution")
        self.state = state
        #: where typed header values are kept (this process's environment)
        self.environ: MutableMapping[str, str] = os.environ if environ is None else environ
        self.check: RemoteCheck | None = None
        self.seconds = 0.0
        self._syncing = False
        form = QFormLayout(self)
        self.endpoint = self._edit("remote-executor", "grpcs://remote.example.com:443",
                                   self._endpoint_edited)
        form.addRow(tr("Endpoint:"), self.endpoint)
        self.instance = self._edit("remote-instance", tr("empty = the service's default"),
                                   lambda t: self._set({"remote.instance_name": t.strip()}))
        form.addRow(tr("Instance name:"), self.instance)
        self.tls = QCheckBox(tr("TLS (grpcs://)"), self)
        self.tls.setObjectName("remote-tls")
        self.tls.toggled.connect(self._tls_toggled)
        form.addRow("", self.tls)
        self.header_box = QVBoxLayout()
        self.headers: list[HeaderRow] = []
        add = QPushButton(tr("Add header"), self)
        add.setObjectName("remote-add-header")
        add.clicked.connect(lambda: self._add_header())
        self.header_box.addWidget(add)
        form.addRow(tr("Headers:"), self.header_box)
        self.properties = self._edit(
            "remote-exec-properties", "container-image=docker://IMAGE",
            lambda t: self._set({"remote.exec_properties": t.split()}))
        self.properties.setToolTip(tr("Platform properties of every remote action, separated "
                                      "by spaces; \"auto\" = the build image."))
        form.addRow(tr("Exec properties:"), self.properties)
        test_row = QHBoxLayout()
        self.test_button = QPushButton(tr("Test connection"), self)
        self.test_button.setObjectName("remote-test")
        self.test_button.clicked.connect(self.test_connection)
        test_row.addWidget(self.test_button)
        self.status = QLabel("", self)
        self.status.setObjectName("remote-status")
        self.status.setWordWrap(True)
        test_row.addWidget(self.status, 1)
        form.addRow("", test_row)
        self.results = QVBoxLayout()
        form.addRow(self.results)
        self.rows: list[FindingRow] = []

    def _edit(self, name: str, placeholder: str, on_edit: Callable[[str], object]) -> QLineEdit:
        edit = QLineEdit(self)
        edit.setObjectName(name)
        edit.setPlaceholderText(placeholder)
        edit.textEdited.connect(on_edit)
        return edit

    # -- recipe <-> fields -------------------------------------------------------------
    def _set(self, changes: dict[str, object]) -> None:
        if not self._syncing:
            self.state.update(changes)

    def _endpoint_edited(self, text: str) -> None:
        self._set({"remote.executor": text.strip()})
        self.tls.blockSignals(True)  # the box follows the text here, not the other way
        self.tls.setChecked(bool(text.strip()) and uses_tls(text))
        self.tls.blockSignals(False)

    def _tls_toggled(self, on: bool) -> None:
        if self._syncing or not self.endpoint.text().strip():
            return
        self.endpoint.setText(with_tls(self.endpoint.text(), on))
        self._set({"remote.executor": self.endpoint.text().strip()})

    def _add_header(self) -> HeaderRow:
        row = HeaderRow(self, len(self.headers))
        row.changed.connect(self._headers_edited)
        self.header_box.insertWidget(len(self.headers), row)
        self.headers.append(row)
        return row

    def _headers_edited(self) -> None:
        """Each row with a name becomes name=${VARIABLE}; a typed value goes to the
        environment under VARIABLE, never to the recipe."""
        items = []
        for row in self.headers:
            name = row.name.text().strip()
            if not name:
                continue
            variable = row.variable.text().strip() or variable_for(name)
            if row.value.text():
                self.environ[variable] = row.value.text()
            items.append(f"{name}=${{{variable}}}")
        self._set({"remote.headers": items})

    def sync(self) -> None:
        """Show the recipe's [remote] (leaving a field being typed in alone)."""
        self._syncing = True
        try:
            remote = self.state.recipe.remote
            if self.endpoint.text().strip() != remote.executor:
                self.endpoint.setText(remote.executor)
            self.tls.setChecked(bool(remote.executor) and uses_tls(remote.executor))
            if self.instance.text().strip() != remote.instance_name:
                self.instance.setText(remote.instance_name)
            if self.properties.text().split() != remote.exec_properties:
                self.properties.setText(" ".join(remote.exec_properties))
            self._sync_headers(remote.headers)
        finally:
            self._syncing = False

    def _sync_headers(self, items: list[str]) -> None:
        while len(self.headers) < len(items):
            self._add_header()
        for i, row in enumerate(self.headers):
            name, _sep, value = items[i].partition("=") if i < len(items) else ("", "", "")
            variable = env_reference(value) or ""
            if row.name.text().strip() != name:
                row.name.setText(name)
            if (row.variable.text().strip() or variable_for(name)) != variable:
                row.variable.setText(variable)
            if not row.value.text():
                # masked either way; a plain value in an old recipe shows as it is
                row.value.setText(self.environ.get(variable, "") if variable else value)

    # -- Test connection ---------------------------------------------------------------
    @asyncSlot()
    async def test_connection(self) -> None:
        """Run the preflight against the recipe's executor in a thread; show its findings."""
        await self.run_check()

    async def run_check(self) -> RemoteCheck:
        """The check itself (awaitable from tests): capabilities, then the probe."""
        self._clear()
        recipe = self.state.recipe
        if not recipe.remote.executor:
            self.status.setText(tr("Set the endpoint first."))
            return RemoteCheck()
        self.test_button.setEnabled(False)
        self.status.setText(tr("Asking {endpoint}…").format(endpoint=recipe.remote.executor))
        image = self.build_image()
        properties = (exec_properties(recipe.remote, image) if image else
                      [p for p in recipe.remote.exec_properties if p != AUTO])
        environ = dict(self.environ)
        t0 = time.monotonic()
        try:
            check = await asyncio.get_running_loop().run_in_executor(
                None, lambda: check_service(recipe, environ, properties))
        finally:
            self.test_button.setEnabled(True)
        self.seconds = time.monotonic() - t0
        self.show_check(check)
        return check

    def build_image(self) -> str:
        """The recipe's build image ("auto" properties name it): build.image, else the
        release's image for the recipe's Python."""
        recipe = self.state.recipe
        if recipe.build.image:
            return recipe.build.image
        release = self.state.kb.release_for(recipe)
        return release.image_for(recipe_python(recipe, release)) if release else ""

    def show_check(self, check: RemoteCheck) -> None:
        """One row per finding, and a status line that says whether the service will do."""
        self._clear()
        self.check = check
        kb = self.state.kb
        for finding in check.findings:
            titles = [kb.sources[s].title for s in finding.sources if s in kb.sources]
            row = FindingRow(finding, titles, self)
            self.results.addWidget(row)
            self.rows.append(row)
        errors = [f for f in check.findings if f.severity == "error"]
        if errors:
            self.status.setText(tr("The service will not do as set: {message}").format(
                message=errors[0].message))
            self.status.setStyleSheet("color: #b00020; font-weight: bold;")
        else:
            self.status.setText(tr("The service answers and will run this build's actions "
                                   "({seconds} s).").format(seconds=f"{self.seconds:.1f}"))
            self.status.setStyleSheet("")

    def _clear(self) -> None:
        for row in self.rows:
            self.results.removeWidget(row)
            row.hide()
            row.deleteLater()
        self.rows = []

    def codes(self) -> list[str]:
        """The codes of the findings shown, in order."""
        return [row.finding.code for row in self.rows]

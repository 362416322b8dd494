"""Recipe fields for networks behind a firewall: a text field per recipe key (proxies, a
Bazel remote cache, a pip index mirror), written through the shared recipe as typed."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QLineEdit, QWidget

from ..i18n import tr
from ..state import WizardState

#: (recipe key, object name, label, placeholder, tooltip) of one text field
Field = tuple[str, str, str, str, str]


def proxy_fields() -> list[Field]:
    """The [network] proxies and the remote cache, in the current language."""
    return [
        ("network.http_proxy", "http-proxy", tr("HTTP proxy:"), "http://proxy.example:3128",
         tr("HTTP_PROXY for the build container and Bazel; ${VAR} keeps a password out of "
            "the recipe (http://${PROXY_USER}:${PROXY_PASS}@proxy:3128)")),
        ("network.https_proxy", "https-proxy", tr("HTTPS proxy:"), "http://proxy.example:3128",
         tr("HTTPS_PROXY, likewise")),
        ("network.no_proxy", "no-proxy", tr("No proxy for:"), "localhost,.example.com",
         tr("NO_PROXY: hosts reached directly")),
        ("remote.cache", "remote-cache", tr("Remote cache:"), "grpc://cache.example:9092",
         tr("A Bazel remote cache shared by builds (grpc://, grpcs://, http://, https://)")),
    ]


def index_fields() -> list[Field]:
    """The pip index mirror of the install, in the current language."""
    return [
        ("install.index_url", "index-url", tr("pip index (mirror):"),
         tr("empty = PyPI; e.g. https://mirror.example/simple"),
         tr("pip --index-url: where pip finds TensorFlow's dependencies")),
        ("install.trusted_host", "trusted-host", tr("Trusted host:"), "mirror.example",
         tr("pip --trusted-host, for a mirror without a valid certificate")),
    ]


class RecipeFields(QGroupBox):
    """A group of text fields, one per recipe key; an optional "upload" box for the remote
    cache."""

    def __init__(self, state: WizardState, parent: QWidget, title: str, name: str,
                 fields: Sequence[Field], upload: bool = False) -> None:
        super().__init__(title, parent)
        self.setObjectName(name)
        self.state = state
        self._syncing = False
        form = QFormLayout(self)
        self.edits: dict[str, QLineEdit] = {}
        for key, object_name, label, placeholder, tip in fields:
            edit = QLineEdit(self)
            edit.setObjectName(object_name)
            edit.setPlaceholderText(placeholder)
            edit.setToolTip(tip)
            edit.textEdited.connect(lambda text, k=key: self._set({k: text.strip()}))
            form.addRow(label, edit)
            self.edits[key] = edit
        self.upload: QCheckBox | None = None
        if upload:
            self.upload = QCheckBox(tr("Also write to the remote cache (off: read only)"), self)
            self.upload.setObjectName("remote-upload")
            self.upload.toggled.connect(lambda on: self._set({"remote.upload": on}))
            form.addRow("", self.upload)

    def _set(self, changes: dict[str, object]) -> None:
        if not self._syncing:
            self.state.update(changes)

    def sync(self) -> None:
        """Show the recipe's values (a field being typed in keeps its text)."""
        self._syncing = True
        try:
            r = self.state.recipe
            for key, edit in self.edits.items():
                value = str(r.get(key))
                if edit.text().strip() != value:
                    edit.setText(value)
            if self.upload is not None:
                self.upload.setChecked(r.remote.upload)
        finally:
            self._syncing = False

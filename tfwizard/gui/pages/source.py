"""The Source page: a release, a git ref, or a local checkout."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
)

from tfwizard.core.views.choice_notes import release_label

from ..i18n import tr
from ..state import WizardState
from ..widgets.browse import FOLDER, browse_button
from ..widgets.python_note import PythonNote
from .base import RecipePage
from .toolchain import fill_choices


class SourcePage(RecipePage):
    """Source: a TensorFlow release, a git ref, or a local checkout."""

    keys = ("tensorflow.", "python.", "name", "description", "schema")

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("TensorFlow release and source"),
                         tr("Which TensorFlow to build, from a release tag or a checkout you "
                            "have."))
        kb = state.kb
        form = QFormLayout()
        self.name_edit = QLineEdit(self.content)
        self.name_edit.setObjectName("recipe-name")
        self.name_edit.setToolTip(tr("A short name: letters, digits, . _ -"))
        # registered while empty: Next stays disabled until the recipe has a name
        self.registerField("name*", self.name_edit)
        self.name_edit.textEdited.connect(lambda t: self.set({"name": t}))
        form.addRow(tr("Recipe name:"), self.name_edit)
        self.version_combo = QComboBox(self.content)
        self.version_combo.setObjectName("tf-version")
        releases = kb.release_versions()
        for version in ([v for v in reversed(releases) if v != "master"]
                        + [v for v in releases if v == "master"]):
            self.version_combo.addItem(release_label(kb, version), version)
        self.version_combo.setToolTip(tr("Each release with the CUDA and the Pythons it "
                                         "builds with"))
        self.registerField("tfVersion", self.version_combo, "currentIndex",
                           self.version_combo.currentIndexChanged)
        self.version_combo.currentIndexChanged.connect(
            lambda _i: self.set({"tensorflow.version": self.version_combo.currentData()}))
        form.addRow(tr("TensorFlow release:"), self.version_combo)
        self.python_combo = QComboBox(self.content)
        self.python_combo.setObjectName("python-version")
        self.pythons = {p for r in kb.releases for p in r.pythons}  # the table's, all releases
        self.python_combo.currentIndexChanged.connect(
            lambda _i: self.set({"python.version": self.python_combo.currentData() or ""}))
        form.addRow(tr("Python of the wheel:"), self.python_combo)
        self.body.addLayout(form)
        self.python_note = PythonNote(state, self.content)
        self.body.addWidget(self.python_note)

        box = QGroupBox(tr("Source"), self.content)
        grid = QVBoxLayout(box)
        self.release_radio = QRadioButton(tr("Clone the release tag (or a git ref)"), box)
        self.release_radio.setObjectName("source-release")
        self.checkout_radio = QRadioButton(tr("Build a local checkout"), box)
        self.checkout_radio.setObjectName("source-checkout")
        group = QButtonGroup(self)
        group.addButton(self.release_radio)
        group.addButton(self.checkout_radio)
        grid.addWidget(self.release_radio)
        ref_row = QHBoxLayout()
        ref_row.addWidget(QLabel(tr("git ref (optional):"), box))
        self.ref_edit = QLineEdit(box)
        self.ref_edit.setObjectName("git-ref")
        self.ref_edit.setPlaceholderText(tr("empty = the release tag"))
        self.ref_edit.textEdited.connect(lambda t: self.set({"tensorflow.ref": t.strip()}))
        ref_row.addWidget(self.ref_edit, 1)
        grid.addLayout(ref_row)
        url_row = QHBoxLayout()
        url_row.addWidget(QLabel(tr("from (a mirror, file:// too):"), box))
        self.url_edit = QLineEdit(box)
        self.url_edit.setObjectName("git-url")
        self.url_edit.setToolTip(tr("Where the tag is cloned from: TensorFlow's GitHub, a "
                                    "mirror, or file:///path/to/tensorflow.git"))
        self.url_edit.textEdited.connect(lambda t: self.set({"tensorflow.git_url": t.strip()}))
        url_row.addWidget(self.url_edit, 1)
        grid.addLayout(url_row)
        grid.addWidget(self.checkout_radio)
        dir_row = QHBoxLayout()
        self.dir_edit = QLineEdit(box)
        self.dir_edit.setObjectName("source-dir")
        self.dir_edit.setPlaceholderText(tr("/path/to/tensorflow (keep the release above: its "
                                            "knowledge is used for the checks)"))
        self.dir_edit.textEdited.connect(lambda t: self.set({"tensorflow.source_dir": t.strip()}))
        dir_row.addWidget(self.dir_edit, 1)
        self.browse = browse_button(self.dir_edit, FOLDER, tr("TensorFlow checkout"),
                                    lambda path: self.set({"tensorflow.source_dir": path}))
        dir_row.addWidget(self.browse)
        grid.addLayout(dir_row)
        self.body.addWidget(box)
        self.body.addStretch(1)
        self.release_radio.toggled.connect(self._mode_changed)

    def _mode_changed(self, release: bool) -> None:
        self.ref_edit.setEnabled(release)
        self.url_edit.setEnabled(release)
        self.dir_edit.setEnabled(not release)
        self.browse.setEnabled(not release)
        if release:
            self.set({"tensorflow.source_dir": ""})
        else:
            self.set({"tensorflow.ref": "", "tensorflow.source_dir": self.dir_edit.text().strip()})

    def sync(self) -> None:
        """Fill the fields from the recipe."""
        r = self.state.recipe
        if self.name_edit.text() != r.name:
            self.name_edit.setText(r.name)
        version = r.tensorflow.version or "master"
        if self.version_combo.findData(version) < 0:
            self.version_combo.addItem(version, version)
        self.version_combo.setCurrentIndex(self.version_combo.findData(version))
        self._fill_pythons()
        checkout = bool(r.tensorflow.source_dir)
        self.checkout_radio.setChecked(checkout)
        self.release_radio.setChecked(not checkout)
        self.ref_edit.setText(r.tensorflow.ref)
        self.ref_edit.setEnabled(not checkout)
        if self.url_edit.text().strip() != r.tensorflow.git_url:
            self.url_edit.setText(r.tensorflow.git_url)
        self.url_edit.setEnabled(not checkout)
        self.dir_edit.setText(r.tensorflow.source_dir)
        self.dir_edit.setEnabled(checkout)
        self.browse.setEnabled(checkout)
        self._mark_dir_field()
        self.python_note.refresh()

    def _fill_pythons(self) -> None:
        """Every Python, the ones the release cannot build marked with why, the ones it
        supports said so."""
        from tfwizard.core.compat import version_number
        from tfwizard.core.tfsource.overlay import release_view

        # a checkout's own requirements_lock_3_*.txt say its Pythons, not the table
        view, rel, _kb = release_view(self.state.recipe, self.state.kb)
        supported = set(rel.pythons) if rel is not None else set()
        note = (tr("supported by this checkout") if view is not None else
                tr("supported by {release}").format(release=rel.version) if rel else "")
        pythons = [""] + sorted(self.pythons | supported, key=version_number)
        combo = self.python_combo
        combo.blockSignals(True)
        fill_choices(combo, self.state, "python.version", pythons,
                     self.state.recipe.python.version, tr("newest the release supports"),
                     {p: note for p in supported})
        for index in range(combo.count()):
            if combo.itemData(index) and not combo.itemText(index).startswith("Python"):
                combo.setItemText(index, f"Python {combo.itemText(index)}")
        combo.blockSignals(False)

    def _mark_dir_field(self) -> None:
        """A red frame and the reason on the folder field while the rules find it wrong."""
        errors = self.state.errors_for(("tensorflow.source_dir",))
        self.dir_edit.setProperty("invalid", bool(errors))
        self.dir_edit.setStyleSheet("border: 1px solid #b00020;" if errors else "")
        self.dir_edit.setToolTip(errors[0].message if errors else "")

    def validatePage(self) -> bool:
        """Qt: Next; a local checkout must be a TensorFlow checkout (it has configure.py)."""
        if not super().validatePage():
            return False
        if self.checkout_radio.isChecked():
            text = self.dir_edit.text().strip()
            if not text:
                return self.block(tr("Choose the folder of your TensorFlow checkout."))
            key = "tensorflow.source_dir"
            path = self.state.recipe.with_changes({key: text}).resolve_path(key)
            if path is None or not (path / "configure.py").is_file():
                return self.block(tr("{path} is not a TensorFlow checkout (no configure.py).")
                                  .format(path=path))
        return True

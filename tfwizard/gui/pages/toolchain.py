"""The Toolchain page: Python, CUDA, cuDNN and clang, each list marked by the rules."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLineEdit,
    QStyle,
)

from tfwizard.core.defaults import release_cuda_lists
from tfwizard.core.findings import Finding
from tfwizard.core.recipe import Recipe
from tfwizard.core.tfsource.overlay import release_view
from tfwizard.core.toolchain import has_hermetic_cc
from tfwizard.core.views.choice_notes import clang_choices, cuda_notes, with_note

from ..i18n import tr
from ..state import WizardState
from .base import PageId, RecipePage


def new_errors(state: WizardState, candidate: Recipe, key: str) -> list[Finding]:
    """Errors a candidate value would bring: new ones, or ones about that key."""
    current = {(f.code, f.message) for f in state.findings if f.severity == "error"}
    return [f for f in state.evaluate(candidate) if f.severity == "error"
            and (f.key == key or (f.code, f.message) not in current)]


def fill_choices(combo: QComboBox, state: WizardState, key: str, values: list[str],
                 current: str, empty_label: str = "",
                 notes: dict[str, str] | None = None) -> None:
    """Put every choice in the combo; the ones that bring an error are marked, with why;
    `notes` are said beside the others (the release's default, what the driver runs)."""
    combo.clear()
    error_icon = combo.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical)
    if current not in values:
        values = values + [current]
    for value in values:
        label = value or empty_label
        errors = new_errors(state, state.recipe.with_changes({key: value}), key)
        if errors:
            short = errors[0].message
            short = short if len(short) <= 70 else short[:67] + "…"
            combo.addItem(error_icon, f"{label}  ✖ {short}", value)
            index = combo.count() - 1
            combo.setItemData(index, "\n".join(f.message for f in errors),
                              Qt.ItemDataRole.ToolTipRole)
            combo.setItemData(index, QBrush(QColor(160, 0, 32)), Qt.ItemDataRole.ForegroundRole)
        else:
            note = (notes or {}).get(value, "")
            combo.addItem(with_note(label, note), value)
            if note:
                combo.setItemData(combo.count() - 1, note, Qt.ItemDataRole.ToolTipRole)
    combo.setCurrentIndex(combo.findData(current))


class ToolchainPage(RecipePage):
    """Toolchain: Python, CUDA, cuDNN and clang, each choice marked by the rules."""

    keys = ("cuda.version", "cuda.cudnn", "cuda.compiler", "toolchain.", "rocm.",
            "install.extras")

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("Toolchain"),
                         tr("CUDA, cuDNN and the compiler: the release's hermetic lists. "
                            "Choices that would fail are marked with the reason."))
        self.cuda_box = QGroupBox("CUDA", self.content)
        cform = QFormLayout(self.cuda_box)
        self.cuda_combo = QComboBox(self.cuda_box)
        self.cuda_combo.setObjectName("cuda-version")
        self.cuda_combo.activated.connect(
            lambda _i: self.set({"cuda.version": self.cuda_combo.currentData()}))
        cform.addRow("CUDA:", self.cuda_combo)
        self.cudnn_combo = QComboBox(self.cuda_box)
        self.cudnn_combo.setObjectName("cudnn-version")
        self.cudnn_combo.activated.connect(
            lambda _i: self.set({"cuda.cudnn": self.cudnn_combo.currentData()}))
        cform.addRow("cuDNN:", self.cudnn_combo)
        self.compiler_combo = QComboBox(self.cuda_box)
        self.compiler_combo.setObjectName("cuda-compiler")
        self.compiler_combo.addItem(tr("clang (what TensorFlow's releases use)"), "clang")
        self.compiler_combo.addItem("nvcc", "nvcc")
        self.compiler_combo.activated.connect(
            lambda _i: self.set({"cuda.compiler": self.compiler_combo.currentData()}))
        cform.addRow(tr("CUDA compiler:"), self.compiler_combo)
        self.body.addWidget(self.cuda_box)

        self.rocm_box = QGroupBox("ROCm", self.content)
        rform = QFormLayout(self.rocm_box)
        self.rocm_version = QLineEdit(self.rocm_box)
        self.rocm_version.setObjectName("rocm-version")
        self.rocm_version.textEdited.connect(lambda t: self.set({"rocm.version": t.strip()}))
        rform.addRow(tr("ROCm version:"), self.rocm_version)
        self.rocm_targets = QLineEdit(self.rocm_box)
        self.rocm_targets.setObjectName("rocm-targets")
        self.rocm_targets.setPlaceholderText(tr("gfx90a gfx1100, or auto"))
        self.rocm_targets.textEdited.connect(
            lambda t: self.set({"rocm.amdgpu_targets": t.replace(",", " ").split()}))
        rform.addRow(tr("gfx targets:"), self.rocm_targets)
        self.body.addWidget(self.rocm_box)

        box = QGroupBox(tr("C++ compiler"), self.content)
        form = QFormLayout(box)
        self.clang_combo = QComboBox(box)
        self.clang_combo.setObjectName("clang-version")
        self.clang_combo.activated.connect(
            lambda _i: self.set({"toolchain.clang": self.clang_combo.currentData()}))
        form.addRow("clang:", self.clang_combo)
        self.local_check = QCheckBox(tr("Compile with the build image's clang, not the "
                                        "release's hermetic LLVM (clang_local)"), box)
        self.local_check.setObjectName("local-clang")
        self.local_check.setToolTip(tr("From TensorFlow 2.21 Bazel downloads the C++ toolchain "
                                       "(LLVM) and the image's /usr/lib/llvm-N is not used; "
                                       "this builds with the image's instead "
                                       "(--config=clang_local)."))
        self.local_check.clicked.connect(
            lambda checked: self.set({"toolchain.local_clang": bool(checked)}))
        form.addRow("", self.local_check)
        self.gcc_edit = QLineEdit(box)
        self.gcc_edit.setObjectName("gcc-version")
        self.gcc_edit.setPlaceholderText(tr("only when not building with clang"))
        self.gcc_edit.textEdited.connect(lambda t: self.set({"toolchain.gcc": t.strip()}))
        form.addRow("gcc:", self.gcc_edit)
        self.body.addWidget(box)
        self.body.addStretch(1)

    def sync(self) -> None:
        """Fill the lists for the recipe's release, marking the choices that would be errors."""
        s, r = self.state, self.state.recipe
        _view, rel, kb = release_view(r, s.kb)  # a checkout's own pins, not the table's
        cuda = r.backend.kind == "cuda"
        self.setSubTitle(self.subtitles().get(r.backend.kind, ""))
        self.cuda_box.setVisible(cuda)
        self.rocm_box.setVisible(r.backend.kind == "rocm")
        if cuda and rel is not None:
            cudas, cudnns = release_cuda_lists(kb, rel)
            fill_choices(self.cuda_combo, s, "cuda.version", cudas, r.cuda.version, tr("(none)"),
                         cuda_notes(rel, s.effective_target, cudas))
            fill_choices(self.cudnn_combo, s, "cuda.cudnn", cudnns, r.cuda.cudnn, tr("(none)"))
            self.compiler_combo.setCurrentIndex(self.compiler_combo.findData(r.cuda.compiler))
        clangs, empty, notes = clang_choices(kb, r, rel)
        fill_choices(self.clang_combo, s, "toolchain.clang", clangs, r.toolchain.clang, empty,
                     notes)
        self.local_check.setVisible(has_hermetic_cc(rel))
        self.local_check.setChecked(r.toolchain.local_clang)
        self.gcc_edit.setText(r.toolchain.gcc)
        self.rocm_version.setText(r.rocm.version)
        self.rocm_targets.setText(" ".join(r.rocm.amdgpu_targets))

    @staticmethod
    def subtitles() -> dict[str, str]:
        """The page's subtitle for each backend, in the current language."""
        return {"cuda": tr("CUDA, cuDNN and the compiler: the release's hermetic lists. "
                           "Choices that would fail are marked with the reason."),
                "rocm": tr("ROCm, its GPU targets and the compiler. Choices that would fail "
                           "are marked with the reason."),
                "cpu": tr("The C++ compiler. Choices that would fail are marked with the "
                          "reason.")}

    def nextId(self) -> int:
        """Qt: the Compute page for a CUDA build, else Options."""
        return int(PageId.COMPUTE if self.state.recipe.backend.kind == "cuda"
                   else PageId.OPTIONS)

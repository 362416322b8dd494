"""The wizard's setup pages: host, source, backend, toolchain, GPUs, options, review.

Every page reads the shared Recipe (`state.recipe`), writes through `state.update`, and
shows the findings about the keys it owns; Next is disabled while one of them is an error.
Which choices are sensible is decided by the core's rules, never here.
"""

from __future__ import annotations

import asyncio
import html
import shlex
from collections.abc import Callable, Iterable
from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QSplitter,
    QStyle,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)
from qasync import asyncSlot

from tfwizard.core import cc as ccmod
from tfwizard.core.build.plan import make_plan, resource_limits
from tfwizard.core.build.render import render_commands
from tfwizard.core.errors import TfWizardError
from tfwizard.core.host import HostProfile
from tfwizard.core.knowledge import recipe_python
from tfwizard.core.recipe import Recipe
from tfwizard.core.rules import Finding

from .findings import FindingsPanel
from .i18n import tr
from .state import WizardState


class PageId(IntEnum):
    WELCOME = 0
    SOURCE = 1
    BACKEND = 2
    TOOLCHAIN = 3
    COMPUTE = 4
    OPTIONS = 5
    REVIEW = 6
    BUILD = 7
    INSTALL = 8
    VERIFY = 9


PAGE_SLUGS = {
    PageId.WELCOME: "welcome",
    PageId.SOURCE: "source",
    PageId.BACKEND: "backend",
    PageId.TOOLCHAIN: "toolchain",
    PageId.COMPUTE: "compute",
    PageId.OPTIONS: "options",
    PageId.REVIEW: "review",
    PageId.BUILD: "build",
    PageId.INSTALL: "install",
    PageId.VERIFY: "verify",
}


def split_words(text: str) -> list[str]:
    """A line of flags as the list the recipe keeps (shell-like quoting allowed)."""
    try:
        return shlex.split(text)
    except ValueError:  # an unfinished quote while typing
        return text.split()


def join_words(words: Iterable[str]) -> str:
    return " ".join(shlex.quote(w) for w in words)


class RecipePage(QWizardPage):
    """A page over the shared recipe: sync widgets from it, show its findings."""

    #: recipe keys this page owns ("section." = the whole section); None = every key
    keys: tuple[str, ...] | None = ()
    show_findings = True

    def __init__(self, state: WizardState, title: str, subtitle: str = "") -> None:
        super().__init__()
        self.state = state
        self._syncing = False
        self.setTitle(title)
        if subtitle:
            self.setSubTitle(subtitle)
        outer = QVBoxLayout(self)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.content = QWidget(self.splitter)
        self.body = QVBoxLayout(self.content)
        self.body.setContentsMargins(0, 0, 0, 0)
        self.splitter.addWidget(self.content)
        self.findings = FindingsPanel(state, self.keys, self.splitter)
        self.splitter.addWidget(self.findings)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.findings.setVisible(self.show_findings)
        outer.addWidget(self.splitter, 1)
        self.block_reason = QLabel(self)
        self.block_reason.setObjectName("block-reason")
        self.block_reason.setWordWrap(True)
        self.block_reason.setStyleSheet("color: #b00020;")
        self.block_reason.hide()
        outer.addWidget(self.block_reason)
        state.findingsChanged.connect(self.completeChanged.emit)
        state.recipeChanged.connect(self._recipe_changed)
        state.hostsChanged.connect(self._recipe_changed)

    # -- for subclasses ---------------------------------------------------------------
    def sync(self) -> None:
        """Show the recipe's current values (called with change handlers muted)."""

    def set(self, changes: dict[str, Any]) -> None:
        """Write answers to the shared recipe, unless we are the ones showing it."""
        if self._syncing:
            return
        self.block_reason.hide()
        self.state.update(changes)

    def block(self, reason: str) -> bool:
        self.block_reason.setText(reason)
        self.block_reason.show()
        return False

    # -- QWizardPage ------------------------------------------------------------------
    def _run_sync(self) -> None:
        self._syncing = True
        try:
            self.sync()
        finally:
            self._syncing = False

    def _recipe_changed(self) -> None:
        wizard = self.wizard()
        if wizard is not None and wizard.currentPage() is self:
            self._run_sync()

    def initializePage(self) -> None:
        self.block_reason.hide()
        self._run_sync()

    def isComplete(self) -> bool:
        return super().isComplete() and not self.state.errors_for(self.keys)

    def validatePage(self) -> bool:
        errors = self.state.errors_for(self.keys)
        if errors:
            return self.block(tr("Fix first: {message}").format(message=errors[0].message))
        return True


# -- Welcome ------------------------------------------------------------------------------


def _gib(value: int | None) -> str:
    return f"{value / 2**30:.0f} GiB" if value else tr("unknown")


def nvidia_text(host: HostProfile) -> str:
    """The NVIDIA row when no GPU is listed: made from the profile's status, in the current
    language (a saved profile's advice is in the language it was detected in)."""
    nv = host.nvidia
    known = {
        "none": tr("no NVIDIA GPU detected"),
        "no_library": tr("no NVIDIA GPU detected (the NVIDIA driver library is not "
                         "installed)"),
        "no_driver": tr("no NVIDIA GPU detected (the NVIDIA kernel driver is not loaded)"),
        "mismatch": tr("the NVIDIA driver and its library differ in version: reboot, or "
                       "reinstall the driver"),
    }
    if nv.status in known:
        return known[nv.status]
    return tr("NVIDIA detection failed: {message}").format(message=nv.message or nv.status)


def docker_text(host: HostProfile) -> str:
    """The Docker row: made here from the profile's fields when Docker works (so it is in
    the current language); otherwise the detection's advice, which says what to do."""
    d = host.docker
    if d.status == "ok":
        text = tr("Docker {version} (API {api}) at {host}").format(
            version=d.server_version or "?", api=d.api_version or "?", host=d.host or "?")
        if d.nvidia_runtime:
            text += tr(", NVIDIA runtime")
        return text
    status = {"not_installed": tr("not installed"), "not_running": tr("not running"),
              "permission_denied": tr("permission denied")}.get(d.status, tr("not usable"))
    return f"{status}: {d.message}" if d.message else status


def host_html(host: HostProfile | None, state: WizardState, title: str) -> str:
    """The parts of a host profile that matter for a build, as a small HTML table."""
    e = html.escape
    if host is None:
        return f"<b>{e(title)}</b><br>{e(tr('Detecting…'))}"
    rows: list[tuple[str, str]] = []
    nv = host.nvidia
    if nv.gpus:
        for gpu in nv.gpus:
            if gpu.error:
                rows.append((f"GPU {gpu.index}", tr("error: {error}").format(error=gpu.error)))
                continue
            cc = gpu.compute_capability or "?"
            arch = state.kb.gpu_arch_name(cc) if gpu.compute_capability else None
            derived = tr(" (from the name)") if gpu.cc_derived else ""
            mem = f", {gpu.memory_total_mib / 1024:.0f} GiB" if gpu.memory_total_mib else ""
            rows.append((f"GPU {gpu.index}", f"{gpu.name or 'NVIDIA GPU'}: CC {cc}{derived}"
                         f"{' ' + arch if arch else ''}{mem}"))
        rows.append((tr("NVIDIA driver"), nv.driver_version or tr("unknown")))
        rows.append((tr("CUDA supported by the driver"),
                     tr("up to {version}").format(version=nv.cuda_driver_version)
                     if nv.cuda_driver_version else tr("unknown")))
    else:
        rows.append(("NVIDIA", nvidia_text(host)))
    for amd in host.amd.gpus:
        rows.append((f"AMD GPU {amd.node}", f"{amd.name or ''} {amd.gfx_target}".strip()))
    rows.append(("Docker", docker_text(host)))
    res = host.resources
    rows.append(("CPU", tr("{model} ({count} CPUs, {arch})").format(
        model=host.cpu.model or host.cpu.arch, count=res.cpu_count or host.cpu.cores,
        arch=host.cpu.arch)))
    rows.append((tr("RAM"), tr("{total} total, {available} available").format(
        total=_gib(res.ram_total_bytes), available=_gib(res.ram_available_bytes))))
    rows.append((tr("Disk"), tr("{free} free at {path}").format(
        free=_gib(res.disk_free_bytes), path=res.disk_path or "?")))
    os_text = " ".join(x for x in (host.os.distro, host.os.distro_version) if x) or host.os.system
    rows.append((tr("OS"), os_text + (f", glibc {host.os.glibc}" if host.os.glibc else "")
                 + (" (WSL2)" if host.os.wsl2 else "")))
    cells = "".join(f"<tr><td style='padding-right:12px'><i>{e(k)}</i></td><td>{e(v)}</td></tr>"
                    for k, v in rows)
    return f"<b>{e(title)}</b><table>{cells}</table>"


class WelcomePage(RecipePage):
    keys = ("target.",)

    def __init__(self, state: WizardState, detect: Callable[[], HostProfile] | None) -> None:
        super().__init__(state, tr("Welcome to tfwizard"),
                         tr("tfwizard builds a TensorFlow wheel from source in Docker. "
                            "First, the machine it builds on, and the one it builds for."))
        self.detect = detect
        self.detecting = False
        self.build_label = QLabel(self.content)
        self.build_label.setObjectName("build-host")
        self.build_label.setTextFormat(Qt.TextFormat.RichText)
        self.build_label.setWordWrap(True)
        self.build_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.body.addWidget(self.build_label)
        self.target_label = QLabel(self.content)
        self.target_label.setObjectName("target-host")
        self.target_label.setTextFormat(Qt.TextFormat.RichText)
        self.target_label.setWordWrap(True)
        self.body.addWidget(self.target_label)
        buttons = QHBoxLayout()
        self.refresh_button = QPushButton(tr("Refresh"), self.content)
        self.refresh_button.setObjectName("refresh")
        self.refresh_button.setToolTip(tr("Detect this machine again (GPUs, driver, Docker, RAM)"))
        self.refresh_button.setEnabled(detect is not None)
        self.refresh_button.clicked.connect(self.refresh)
        buttons.addWidget(self.refresh_button)
        self.import_button = QPushButton(tr("Import target machine profile…"), self.content)
        self.import_button.setObjectName("import-target")
        self.import_button.setToolTip(tr("Build for another machine: a file written there by "
                                         "`tfwizard detect --json > target.json`"))
        self.import_button.clicked.connect(self.choose_target)
        buttons.addWidget(self.import_button)
        self.local_button = QPushButton(tr("Build for this machine"), self.content)
        self.local_button.setObjectName("clear-target")
        self.local_button.clicked.connect(lambda: self.state.set_target(None))
        buttons.addWidget(self.local_button)
        buttons.addStretch(1)
        self.body.addLayout(buttons)
        self.status = QLabel(self.content)
        self.status.setObjectName("detect-status")
        self.body.addWidget(self.status)
        self.body.addStretch(1)
        self._render()

    def sync(self) -> None:
        self._render()

    def _render(self) -> None:
        s = self.state
        self.build_label.setText(host_html(s.build_host, s,
                                           tr("This machine (builds the wheel)")))
        if s.target_host is None:
            self.target_label.setText(tr("<b>Target machine</b>: this machine. Import another "
                                         "machine's profile to build a wheel for it."))
        else:
            self.target_label.setText(host_html(
                s.target_host, s,
                tr("Target machine (runs the wheel): {path}").format(path=s.target_path)))
        self.local_button.setEnabled(s.target_host is not None)

    @asyncSlot()
    async def refresh(self) -> None:
        """Detect this machine off the GUI thread (NVML, Docker and disks can be slow)."""
        if self.detect is None or self.detecting:
            return
        self.detecting = True
        self.refresh_button.setEnabled(False)
        self.status.setText(tr("Detecting this machine…"))
        try:
            host = await asyncio.get_running_loop().run_in_executor(None, self.detect)
        finally:
            self.detecting = False
            self.refresh_button.setEnabled(True)
        self.status.setText("")
        wizard = self.wizard()
        if wizard is not None and hasattr(wizard, "host_detected"):
            wizard.host_detected(host)
        else:
            self.state.set_build_host(host)
        self._render()

    def choose_target(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, tr("Import target machine profile"), "",
                                              tr("Host profiles (*.json);;All files (*)"))
        if path:
            self.import_target(path)

    def import_target(self, path: str) -> bool:
        try:
            self.state.load_target_profile(path)
        except TfWizardError as exc:
            self.status.setText(tr("Cannot import {path}: {message}").format(path=path,
                                                                               message=exc.message))
            return False
        self.status.setText(tr("Building for the machine described in {path}.").format(path=path))
        self._render()
        return True


# -- Source -------------------------------------------------------------------------------


class SourcePage(RecipePage):
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
        self.version_combo.addItems([v for v in reversed(releases) if v != "master"]
                                    + [v for v in releases if v == "master"])
        self.registerField("tfVersion", self.version_combo, "currentText",
                           self.version_combo.currentTextChanged)
        self.version_combo.currentTextChanged.connect(
            lambda t: self.set({"tensorflow.version": t}))
        form.addRow(tr("TensorFlow release:"), self.version_combo)
        self.python_combo = QComboBox(self.content)
        self.python_combo.setObjectName("python-version")
        pythons = sorted({p for r in kb.releases for p in r.pythons},
                         key=lambda p: tuple(int(x) for x in p.split(".")))
        self.python_combo.addItem(tr("newest the release supports"), "")
        for p in pythons:
            self.python_combo.addItem(f"Python {p}", p)
        self.python_combo.currentIndexChanged.connect(
            lambda _i: self.set({"python.version": self.python_combo.currentData() or ""}))
        form.addRow(tr("Python of the wheel:"), self.python_combo)
        self.body.addLayout(form)

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
        grid.addWidget(self.checkout_radio)
        dir_row = QHBoxLayout()
        self.dir_edit = QLineEdit(box)
        self.dir_edit.setObjectName("source-dir")
        self.dir_edit.setPlaceholderText(tr("/path/to/tensorflow (keep the release above: its "
                                            "knowledge is used for the checks)"))
        self.dir_edit.textEdited.connect(lambda t: self.set({"tensorflow.source_dir": t.strip()}))
        dir_row.addWidget(self.dir_edit, 1)
        self.browse = QPushButton(tr("Browse…"), box)
        self.browse.clicked.connect(self._browse)
        dir_row.addWidget(self.browse)
        grid.addLayout(dir_row)
        self.body.addWidget(box)
        self.body.addStretch(1)
        self.release_radio.toggled.connect(self._mode_changed)

    def _mode_changed(self, release: bool) -> None:
        self.ref_edit.setEnabled(release)
        self.dir_edit.setEnabled(not release)
        self.browse.setEnabled(not release)
        if release:
            self.set({"tensorflow.source_dir": ""})
        else:
            self.set({"tensorflow.ref": "", "tensorflow.source_dir": self.dir_edit.text().strip()})

    def _browse(self) -> None:
        path = QFileDialog.getExistingDirectory(self, tr("TensorFlow checkout"))
        if path:
            self.dir_edit.setText(path)
            self.set({"tensorflow.source_dir": path})

    def sync(self) -> None:
        r = self.state.recipe
        if self.name_edit.text() != r.name:
            self.name_edit.setText(r.name)
        version = r.tensorflow.version or "master"
        if self.version_combo.findText(version) < 0:
            self.version_combo.addItem(version)
        self.version_combo.setCurrentText(version)
        index = self.python_combo.findData(r.python.version)
        if index < 0:
            self.python_combo.addItem(f"Python {r.python.version}", r.python.version)
            index = self.python_combo.count() - 1
        self.python_combo.setCurrentIndex(index)
        checkout = bool(r.tensorflow.source_dir)
        self.checkout_radio.setChecked(checkout)
        self.release_radio.setChecked(not checkout)
        self.ref_edit.setText(r.tensorflow.ref)
        self.ref_edit.setEnabled(not checkout)
        self.dir_edit.setText(r.tensorflow.source_dir)
        self.dir_edit.setEnabled(checkout)
        self.browse.setEnabled(checkout)

    def validatePage(self) -> bool:
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


# -- Backend ------------------------------------------------------------------------------

def backends() -> tuple[tuple[str, str, str], ...]:
    """(kind, label, blurb) of each backend, in the current language."""
    return (
        ("cpu", tr("CPU only"), tr("Runs everywhere; no GPU libraries needed.")),
        ("cuda", "NVIDIA CUDA",
         tr("Hermetic CUDA: the build needs no GPU, the target needs a driver.")),
        ("rocm", "AMD ROCm",
         tr("Needs a ROCm build image; the target needs an AMD GPU with ROCm.")),
    )


class BackendPage(RecipePage):
    keys = ("backend.",)

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("Backend"), tr("What the wheel runs on."))
        self.group = QButtonGroup(self)
        self.radios: dict[str, QRadioButton] = {}
        self.reasons: dict[str, QLabel] = {}
        for kind, label, blurb in backends():
            radio = QRadioButton(label, self.content)
            radio.setObjectName(f"backend-{kind}")
            self.group.addButton(radio)
            self.radios[kind] = radio
            self.body.addWidget(radio)
            reason = QLabel(blurb, self.content)
            reason.setObjectName(f"backend-{kind}-reason")
            reason.setWordWrap(True)
            reason.setContentsMargins(24, 0, 0, 8)
            self.reasons[kind] = reason
            self.body.addWidget(reason)
            radio.toggled.connect(lambda on, k=kind: self._chosen(k) if on else None)
        self.body.addStretch(1)

    def _chosen(self, kind: str) -> None:
        self.set({"backend.kind": kind})

    def sync(self) -> None:
        r, target = self.state.recipe, self.state.effective_target
        for kind, _label, blurb in backends():
            candidate = r.with_changes({"backend.kind": kind})
            blocking = [f for f in self.state.evaluate(candidate)
                        if f.severity == "error" and f.key == "backend.kind"]
            radio, reason = self.radios[kind], self.reasons[kind]
            text = blurb
            if kind == "cuda" and target is not None:
                ccs = target.nvidia_ccs()
                text += (tr(" Target GPUs: CC {ccs}.").format(ccs=", ".join(ccs)) if ccs else
                         tr(" The target has no NVIDIA GPU."))
            if kind == "rocm" and target is not None:
                gfx = target.amd_targets()
                text += (tr(" Target GPUs: {gfx}.").format(gfx=", ".join(gfx)) if gfx else
                         tr(" The target has no AMD GPU."))
            # the current choice stays selectable so its error (and fix) can be seen
            radio.setEnabled(not blocking or kind == r.backend.kind)
            if blocking:
                text = tr("Not available: {message}").format(message=blocking[0].message)
            reason.setText(text)
            radio.setChecked(kind == r.backend.kind)


# -- Toolchain ----------------------------------------------------------------------------


def new_errors(state: WizardState, candidate: Recipe, key: str) -> list[Finding]:
    """Errors a candidate value would bring: new ones, or ones about that key."""
    current = {(f.code, f.message) for f in state.findings if f.severity == "error"}
    return [f for f in state.evaluate(candidate) if f.severity == "error"
            and (f.key == key or (f.code, f.message) not in current)]


def fill_choices(combo: QComboBox, state: WizardState, key: str, values: list[str],
                 current: str, empty_label: str = "") -> None:
    """Put every choice in the combo; the ones that bring an error are marked, with why."""
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
            combo.addItem(label, value)
    combo.setCurrentIndex(combo.findData(current))


class ToolchainPage(RecipePage):
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
        self.gcc_edit = QLineEdit(box)
        self.gcc_edit.setObjectName("gcc-version")
        self.gcc_edit.setPlaceholderText(tr("only when not building with clang"))
        self.gcc_edit.textEdited.connect(lambda t: self.set({"toolchain.gcc": t.strip()}))
        form.addRow("gcc:", self.gcc_edit)
        self.body.addWidget(box)
        self.body.addStretch(1)

    def sync(self) -> None:
        s, r = self.state, self.state.recipe
        rel = s.kb.release_for(r)
        cuda = r.backend.kind == "cuda"
        self.cuda_box.setVisible(cuda)
        self.rocm_box.setVisible(r.backend.kind == "rocm")
        if cuda and rel is not None:
            redist = s.kb.redist.get(rel.cuda_list or "")
            if rel.hermetic_cuda and redist is not None:
                cudas, cudnns = list(redist.cuda), list(redist.cudnn)
            else:
                cudas, cudnns = [rel.tested_cuda], [rel.tested_cudnn]
            fill_choices(self.cuda_combo, s, "cuda.version", cudas, r.cuda.version, tr("(none)"))
            fill_choices(self.cudnn_combo, s, "cuda.cudnn", cudnns, r.cuda.cudnn, tr("(none)"))
            self.compiler_combo.setCurrentIndex(self.compiler_combo.findData(r.cuda.compiler))
        clangs = [str(c) for c in sorted(s.kb.clangs)]
        fill_choices(self.clang_combo, s, "toolchain.clang", [""] + clangs, r.toolchain.clang,
                     tr("(none: gcc)"))
        self.gcc_edit.setText(r.toolchain.gcc)
        self.rocm_version.setText(r.rocm.version)
        self.rocm_targets.setText(" ".join(r.rocm.amdgpu_targets))

    def nextId(self) -> int:
        return int(PageId.COMPUTE if self.state.recipe.backend.kind == "cuda"
                   else PageId.OPTIONS)


# -- Compute capabilities ---------------------------------------------------------------------


class ComputePage(RecipePage):
    keys = ("cuda.compute_capabilities",)

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("GPU compute capabilities"),
                         tr("Which GPUs get compiled code (cubins). Each one adds build time; a "
                            "cubin for X.y also runs on X.z with z >= y."))
        presets = QHBoxLayout()
        for name, label, tip in (
            ("this-machine", tr("This machine"),
             tr("the target machine's GPUs, PTX for the newest")),
            ("official", tr("Official wheel list"),
             tr("what the release's pip wheel is built for")),
            ("portable", tr("Portable"), tr("one cubin per GPU generation this CUDA can build, "
                                            "PTX for the newest")),
        ):
            button = QPushButton(label, self.content)
            button.setObjectName(f"preset-{name}")
            button.setToolTip(tip)
            button.clicked.connect(lambda _c=False, n=name: self.apply_preset(n))
            presets.addWidget(button)
        presets.addStretch(1)
        self.body.addLayout(presets)
        self.auto_check = QCheckBox(tr('"auto": whatever GPUs the target machine has'), self.content)
        self.auto_check.setObjectName("cc-auto")
        self.auto_check.toggled.connect(self._auto_toggled)
        self.body.addWidget(self.auto_check)
        self.list = QListWidget(self.content)
        self.list.setObjectName("cc-list")
        for cc in state.kb.known_ccs():
            item = QListWidgetItem(self._label(cc), self.list)
            item.setData(Qt.ItemDataRole.UserRole, cc)
            item.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled)
            item.setCheckState(Qt.CheckState.Unchecked)
        self.list.itemChanged.connect(self._ticked)
        self.body.addWidget(self.list, 1)
        self.ptx_check = QCheckBox(tr("Also PTX for the newest ticked GPU (runs on future GPUs "
                                      "after a one-time JIT)"), self.content)
        self.ptx_check.setObjectName("cc-ptx")
        self.ptx_check.toggled.connect(lambda _on: self._write_ticked())
        self.body.addWidget(self.ptx_check)
        self.tokens_label = QLabel(self.content)
        self.tokens_label.setObjectName("cc-tokens")
        self.tokens_label.setWordWrap(True)
        self.body.addWidget(self.tokens_label)

    def _label(self, cc: str) -> str:
        kb = self.state.kb
        text = f"{cc}   {kb.gpu_arch_name(cc) or ''}" + ("  (Jetson/Tegra)" if kb.is_tegra(cc)
                                                         else "")
        target = self.state.effective_target
        if target is not None:
            names = [g.name or f"GPU {g.index}" for g in target.nvidia.gpus
                     if g.compute_capability == cc and not g.error]
            if names:
                text += tr("   ← target: {names}").format(names=", ".join(names))
        return text

    def items(self) -> dict[str, QListWidgetItem]:
        out = {}
        for i in range(self.list.count()):
            item = self.list.item(i)
            out[item.data(Qt.ItemDataRole.UserRole)] = item
        return out

    def ticked(self) -> list[str]:
        return [cc for cc, item in self.items().items()
                if item.checkState() == Qt.CheckState.Checked]

    def sync(self) -> None:
        r = self.state.recipe
        tokens = list(r.cuda.compute_capabilities)
        resolved = self.state.compute_capabilities()  # as the plan resolves "auto"
        expanded = [t for t in (ccmod.parse_target(x) for x in resolved or []) if t]
        shown = {t.cc for t in expanded}
        for cc, item in self.items().items():
            item.setText(self._label(cc))
            item.setCheckState(Qt.CheckState.Checked if cc in shown else Qt.CheckState.Unchecked)
        self.auto_check.setChecked("auto" in tokens)
        self.ptx_check.setChecked(any(t.ptx for t in expanded))
        self.tokens_label.setText(tr("Recipe: cuda.compute_capabilities = {tokens}").format(
                                  tokens=repr(tokens) if tokens else tr("[] (none)"))
                                  + (f"  →  {', '.join(resolved)}"
                                     if "auto" in tokens and resolved else ""))

    def _sorted(self, ccs: Iterable[str]) -> list[str]:
        return sorted(set(ccs), key=lambda c: tuple(int(x) for x in c.split(".")))

    def tokens_for(self, ccs: Iterable[str], ptx: bool) -> list[str]:
        """Ticked boxes as TF tokens: a cubin each (sm_XY), PTX of the newest (compute_XY)."""
        chosen = self._sorted(ccs)
        tokens = [ccmod.cc_token(c) for c in chosen]
        if chosen and ptx:
            tokens.append(ccmod.cc_token(chosen[-1], ptx=True))
        return tokens

    def _ticked(self, _item: QListWidgetItem) -> None:
        self._write_ticked()

    def _write_ticked(self) -> None:
        if self._syncing:
            return
        self.set({"cuda.compute_capabilities": self.tokens_for(self.ticked(),
                                                               self.ptx_check.isChecked())})

    def _auto_toggled(self, on: bool) -> None:
        if self._syncing:
            return
        if on:
            self.set({"cuda.compute_capabilities": ["auto"]})
        else:
            self._write_ticked()

    def apply_preset(self, name: str) -> None:
        s = self.state
        rel = s.kb.release_for(s.recipe)
        if name == "official":
            tokens = list(rel.wheel_compute_capabilities) if rel else []
        elif name == "this-machine":
            target = s.effective_target
            tokens = self.tokens_for(target.nvidia_ccs() if target else [], True)
        else:
            tokens = self.portable_tokens()
        s.update({"cuda.compute_capabilities": tokens})

    def portable_tokens(self) -> list[str]:
        """The core's "portable" preset (one cubin per buildable generation, PTX newest)."""
        from tfwizard.core.rules import portable_compute_capabilities

        return portable_compute_capabilities(self.state.recipe, self.state.kb)


# -- Build options ----------------------------------------------------------------------------


class OptionsPage(RecipePage):
    keys = ("build.", "cache.", "output.")

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("Build options"),
                         tr("Optimisation, XLA, parallelism, caches and the build image."))
        form = QFormLayout()
        self.opt_edit = QLineEdit(self.content)
        self.opt_edit.setObjectName("opt-flags")
        self.opt_edit.setPlaceholderText("-march=native -Wno-sign-compare")
        self.opt_edit.textEdited.connect(lambda t: self.set({"build.opt_flags": split_words(t)}))
        form.addRow(tr("Optimisation flags:"), self.opt_edit)
        self.xla_check = QCheckBox(tr("Build with XLA"), self.content)
        self.xla_check.setObjectName("xla")
        self.xla_check.toggled.connect(lambda on: self.set({"build.xla": on}))
        form.addRow("", self.xla_check)
        jobs_row = QHBoxLayout()
        self.jobs_spin = QSpinBox(self.content)
        self.jobs_spin.setObjectName("jobs")
        self.jobs_spin.setRange(0, 4096)
        self.jobs_spin.setSpecialValueText(tr("auto"))
        self.jobs_spin.valueChanged.connect(lambda v: self.set({"build.jobs": v}))
        jobs_row.addWidget(self.jobs_spin)
        self.jobs_hint = QLabel(self.content)
        self.jobs_hint.setObjectName("jobs-hint")
        self.jobs_hint.setWordWrap(True)
        jobs_row.addWidget(self.jobs_hint, 1)
        form.addRow(tr("Bazel jobs:"), jobs_row)
        self.disk_cache = QCheckBox(tr("Keep Bazel's disk cache (faster rebuilds)"), self.content)
        self.disk_cache.setObjectName("disk-cache")
        self.disk_cache.toggled.connect(lambda on: self.set({"cache.disk_cache": on}))
        form.addRow(tr("Caches:"), self.disk_cache)
        self.repo_cache = QCheckBox(tr("Keep Bazel's download cache"), self.content)
        self.repo_cache.setObjectName("repo-cache")
        self.repo_cache.toggled.connect(lambda on: self.set({"cache.repository_cache": on}))
        form.addRow("", self.repo_cache)
        self.image_edit = QLineEdit(self.content)
        self.image_edit.setObjectName("image")
        self.image_edit.textEdited.connect(lambda t: self.set({"build.image": t.strip()}))
        form.addRow(tr("Build image:"), self.image_edit)
        self.flags_edit = QLineEdit(self.content)
        self.flags_edit.setObjectName("bazel-flags")
        self.flags_edit.setPlaceholderText("--copt=-O3 --verbose_failures")
        self.flags_edit.textEdited.connect(
            lambda t: self.set({"build.bazel_flags": split_words(t)}))
        form.addRow(tr("Extra Bazel flags:"), self.flags_edit)
        self.network_combo = QComboBox(self.content)
        self.network_combo.setObjectName("network")
        self.network_combo.addItems(["bridge", "none", "host"])
        self.network_combo.activated.connect(
            lambda _i: self.set({"build.network": self.network_combo.currentText()}))
        form.addRow(tr("Container network:"), self.network_combo)
        self.output_edit = QLineEdit(self.content)
        self.output_edit.setObjectName("output-dir")
        self.output_edit.setPlaceholderText(tr("empty = the build record folder"))
        self.output_edit.textEdited.connect(lambda t: self.set({"output.dir": t.strip()}))
        form.addRow(tr("Wheel folder:"), self.output_edit)
        self.body.addLayout(form)
        self.body.addStretch(1)

    def sync(self) -> None:
        s, r = self.state, self.state.recipe
        if split_words(self.opt_edit.text()) != r.build.opt_flags:
            self.opt_edit.setText(join_words(r.build.opt_flags))
        self.xla_check.setChecked(r.build.xla)
        self.jobs_spin.setValue(r.build.jobs)
        jobs, ram_mb, why = resource_limits(s.build_host, r.build.jobs,
                                            float(s.kb.platforms["memory"]["gib_per_job"]))
        if r.build.jobs:
            self.jobs_hint.setText(tr("set by hand"))
        elif jobs:
            self.jobs_hint.setText(tr("auto: {why}").format(why=why))
        else:
            self.jobs_hint.setText(tr("auto: Bazel decides (this machine's RAM is unknown)"))
        self.disk_cache.setChecked(r.cache.disk_cache)
        self.repo_cache.setChecked(r.cache.repository_cache)
        rel = s.kb.release_for(r)
        if rel is not None:
            self.image_edit.setPlaceholderText(
                tr("empty = {image}").format(image=rel.image_for(recipe_python(r, rel))))
        self.image_edit.setText(r.build.image)
        if split_words(self.flags_edit.text()) != r.build.bazel_flags:
            self.flags_edit.setText(join_words(r.build.bazel_flags))
        self.network_combo.setCurrentText(r.build.network)
        self.output_edit.setText(r.output.dir)


# -- Review -----------------------------------------------------------------------------------


def mono(widget: QPlainTextEdit) -> None:
    from PySide6.QtGui import QFontDatabase

    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    widget.setReadOnly(True)
    widget.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)


class ReviewPage(RecipePage):
    keys = None  # every finding: this is the last stop before the build

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("Review"), tr("The recipe, and exactly what the build will "
                                                 "run. Nothing has run yet."))
        self.setButtonText(QWizard.WizardButton.NextButton, tr("To the build >"))
        top = QHBoxLayout()
        self.save_button = QPushButton(tr("Save recipe…"), self.content)
        self.save_button.setObjectName("save-recipe")
        self.save_button.clicked.connect(self._save)
        top.addWidget(QLabel(tr("Recipe (TOML):"), self.content))
        top.addStretch(1)
        top.addWidget(self.save_button)
        self.body.addLayout(top)
        split = QSplitter(Qt.Orientation.Horizontal, self.content)
        self.toml_view = QPlainTextEdit(split)
        self.toml_view.setObjectName("review-toml")
        mono(self.toml_view)
        self.commands_view = QPlainTextEdit(split)
        self.commands_view.setObjectName("review-commands")
        mono(self.commands_view)
        split.addWidget(self.toml_view)
        split.addWidget(self.commands_view)
        split.setStretchFactor(1, 2)
        self.body.addWidget(split, 1)

    def sync(self) -> None:
        s = self.state
        self.toml_view.setPlainText(s.recipe.to_toml())
        try:
            plan = make_plan(s.recipe, build_host=s.build_host, target_host=s.target_host,
                             kb=s.kb,
                             recipe_dir=s.recipe.path.parent if s.recipe.path else None)
            text = render_commands(plan)
            if plan.notes:
                text += "\n# " + tr("Notes:") + "\n" + "".join(f"#   {n}\n" for n in plan.notes)
        except TfWizardError as exc:
            text = (tr("# No plan yet: {message}").format(message=exc.message)
                    + f"\n# {exc.hint}").rstrip("# \n") + "\n"
        self.commands_view.setPlainText(text)

    def _save(self) -> None:
        window = self.window()
        save = getattr(window, "save_recipe_as", None)
        if callable(save):
            save()
            return
        path, _ = QFileDialog.getSaveFileName(self, tr("Save recipe"), f"{self.state.recipe.name}"
                                              ".toml", tr("Recipes (*.toml)"))
        if path:
            from tfwizard.core.recipe import save_recipe

            try:
                save_recipe(self.state.recipe, path)
            except TfWizardError as exc:
                QMessageBox.warning(self, tr("Cannot save the recipe"), str(exc))

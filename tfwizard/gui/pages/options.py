"""The Build options page: optimisation flags, jobs, caches, extra Bazel flags."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
)

from tfwizard.core.building.plan.plan import resource_limits
from tfwizard.core.knowledge import recipe_python

from ..i18n import tr
from ..state import WizardState
from ..widgets.browse import FOLDER, browse_button
from ..widgets.network import RecipeFields, proxy_fields
from ..widgets.remote import RemoteExecutionSection
from .base import RecipePage, join_words, split_words


class OptionsPage(RecipePage):
    """Build options: optimisation flags, jobs, caches, extra Bazel flags."""

    keys = ("build.", "cache.", "output.", "remote.", "network.")
    scrolls = True  # the build options and Remote execution do not fit 1024x700 unscrolled

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("Build options"),
                         tr("Optimisation, XLA, parallelism, caches and the build image."))
        form = QFormLayout()
        self.opt_edit = QLineEdit(self.content)
        self.opt_edit.setObjectName("opt-flags")
        self.opt_edit.setPlaceholderText("-march=native -Wno-sign-compare")
        self.opt_edit.textEdited.connect(lambda t: self.set({"build.opt_flags": split_words(t)}))
        self.opt_edit.setToolTip(tr("The compiler flags configure.py asks for "
                                    "(CC_OPT_FLAGS): -march=native optimises for this CPU, "
                                    "and the wheel then needs a CPU like it."))
        form.addRow(tr("Compiler flags (CC_OPT_FLAGS):"), self.opt_edit)
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
        output_row = QHBoxLayout()
        output_row.addWidget(self.output_edit, 1)
        output_row.addWidget(browse_button(self.output_edit, FOLDER, tr("Wheel folder"),
                                           lambda path: self.set({"output.dir": path})))
        form.addRow(tr("Wheel folder:"), output_row)
        self.body.addLayout(form)
        self.network = RecipeFields(state, self.content, tr("Network: proxies and a shared "
                                                            "cache"), "network",
                                    proxy_fields(), upload=True)
        self.body.addWidget(self.network)
        self.remote = RemoteExecutionSection(state, self.content)
        self.body.addWidget(self.remote)
        self.body.addStretch(1)

    def sync(self) -> None:
        """Fill the fields from the recipe (leaving a field being typed in alone)."""
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
            self.jobs_hint.setText(tr("auto: Bazel runs {jobs} compile jobs at once ({why})")
                                   .format(jobs=jobs, why=why))
        else:
            self.jobs_hint.setText(tr("auto: Bazel decides (this machine's RAM is unknown)"))
        self.disk_cache.setChecked(r.cache.disk_cache)
        self.repo_cache.setChecked(r.cache.repository_cache)
        rel = s.kb.release_for(r)
        if rel is not None:
            image = rel.image_for(recipe_python(r, rel))
            self.image_edit.setPlaceholderText(
                tr("empty = {image}; a ROCm build needs an image with ROCm").format(image=image)
                if r.backend.kind == "rocm" else tr("empty = {image}").format(image=image))
        self.image_edit.setText(r.build.image)
        if split_words(self.flags_edit.text()) != r.build.bazel_flags:
            self.flags_edit.setText(join_words(r.build.bazel_flags))
        self.network_combo.setCurrentText(r.build.network)
        self.output_edit.setText(r.output.dir)
        self.network.sync()
        self.remote.sync()

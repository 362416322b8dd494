"""The Compute capabilities page: the GPUs' CCs, presets, and PTX."""

from __future__ import annotations

import json
from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
)

from tfwizard.core import cc as ccmod
from tfwizard.core.rules.capabilities import buildable
from tfwizard.core.rules.context import Ctx

from ..i18n import tr
from ..state import WizardState
from .base import RecipePage


class ComputePage(RecipePage):
    """Compute capabilities: tick GPUs' CCs (or auto), PTX, presets; the rules mark what cannot be built."""

    keys = ("cuda.compute_capabilities",)

    def __init__(self, state: WizardState) -> None:
        super().__init__(state, tr("GPU compute capabilities"),
                         tr("Which GPUs get compiled code (cubins). Each one adds build time; a "
                            "cubin for X.y also runs on X.z with z >= y."))
        presets = QHBoxLayout()
        for name, label, tip in (
            ("target", tr("Target machine"),
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
        """The list's items by compute capability."""
        out = {}
        for i in range(self.list.count()):
            item = self.list.item(i)
            out[item.data(Qt.ItemDataRole.UserRole)] = item
        return out

    def ticked(self) -> list[str]:
        """The ticked compute capabilities."""
        return [cc for cc, item in self.items().items()
                if item.checkState() == Qt.CheckState.Checked]

    def sync(self) -> None:
        """Tick what the recipe lists (or auto), mark each CC as the rules judge it."""
        r = self.state.recipe
        tokens = list(r.cuda.compute_capabilities)
        resolved = self.state.compute_capabilities()  # as the plan resolves "auto"
        expanded = ccmod.targets(resolved or [])  # as TF's CUDA rules read the list
        shown = {t.cc for t in expanded}
        ctx = Ctx(r, self.state.kb, None, None, None, True)
        for cc, item in self.items().items():
            self._mark(item, cc, buildable(ctx, cc))
            item.setCheckState(Qt.CheckState.Checked if cc in shown else Qt.CheckState.Unchecked)
        self.auto_check.setChecked("auto" in tokens)
        self.ptx_check.setChecked(any(t.ptx for t in expanded))
        self.tokens_label.setText(tr("Recipe: cuda.compute_capabilities = {tokens}").format(
                                  tokens=json.dumps(tokens) if tokens else tr("[] (none)"))
                                  + (f"  →  {', '.join(resolved)}"
                                     if "auto" in tokens and resolved else ""))

    def _mark(self, item: QListWidgetItem, cc: str, can_build: bool) -> None:
        """The CC's label; greyed, with why, when the recipe's CUDA cannot build it (every
        target builds a cubin: compute_XY is the cubin and PTX, tf-cuda-rules)."""
        text, tip = self._label(cc), ""
        if not can_build:
            why = tr("CUDA {cuda} cannot build it").format(cuda=self.state.recipe.cuda.version)
            text, tip = f"{text}   ({why})", why
        item.setText(text)
        item.setToolTip(tip)
        role = QPalette.ColorRole.PlaceholderText if not can_build else QPalette.ColorRole.Text
        item.setForeground(QBrush(self.list.palette().color(role)))

    def _sorted(self, ccs: Iterable[str]) -> list[str]:
        return sorted(set(ccs), key=lambda c: tuple(int(x) for x in c.split(".")))

    def tokens_for(self, ccs: Iterable[str], ptx: bool) -> list[str]:
        """Ticked boxes as TF tokens: a cubin each (sm_XY), the newest as compute_XY (its
        cubin and PTX) when `ptx`."""
        return ccmod.cc_tokens(ccs, ptx=ptx)

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
        """Set the capabilities from a preset: "official" (the release's wheel), "target"
        (the target machine's GPUs: the imported profile's, else this machine's) or
        "portable"."""
        s = self.state
        rel = s.kb.release_for(s.recipe)
        if name == "official":
            tokens = list(rel.wheel_compute_capabilities) if rel else []
        elif name == "target":
            target = s.effective_target
            tokens = self.tokens_for(target.nvidia_ccs() if target else [], True)
        else:
            tokens = self.portable_tokens()
        s.update({"cuda.compute_capabilities": tokens})

    def portable_tokens(self) -> list[str]:
        """The core's "portable" preset (one cubin per buildable generation, PTX newest)."""
        from tfwizard.core.rules import portable_compute_capabilities

        return portable_compute_capabilities(self.state.recipe, self.state.kb)

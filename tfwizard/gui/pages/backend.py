"""The Backend page: CPU, CUDA or ROCm."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QLabel,
    QRadioButton,
)

from ..i18n import tr
from ..state import WizardState
from .base import RecipePage


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
    """Backend: CPU, CUDA or ROCm, each with what it needs."""

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
        self.hermetic_tip = tr("Hermetic CUDA: Bazel downloads the CUDA, cuDNN and NCCL the "
                               "release names into the build itself, so nothing of CUDA is "
                               "installed on this machine and it needs no GPU.")
        for widget in (self.radios["cuda"], self.reasons["cuda"]):
            widget.setToolTip(self.hermetic_tip)
        self.body.addStretch(1)

    def _chosen(self, kind: str) -> None:
        self.set({"backend.kind": kind})

    def sync(self) -> None:
        """Tick the recipe's backend."""
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

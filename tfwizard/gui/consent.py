"""The wizard's confirmation before a build sends a ${VAR} somewhere (core/consent.py)."""

from __future__ import annotations

import os

from PySide6.QtWidgets import QMessageBox, QWidget

from tfwizard.core import consent
from tfwizard.core.recipe import Recipe

from .dialogs import ask
from .i18n import tr


def missing_consent(recipe: Recipe) -> list[consent.SecretUse]:
    """The recipe's uses of set variables that no consent covers yet."""
    uses = [u for u in consent.recipe_uses(recipe, os.environ) if u.variable in os.environ]
    return consent.unconsented(uses)


async def confirm_secrets(parent: QWidget, recipe: Recipe) -> bool:
    """Ask before a build sends environment variables the user has not allowed: True to
    go on (allowed until the wizard closes, or always), False to stay."""
    uses = missing_consent(recipe)
    if not uses:
        return True
    box = QMessageBox(QMessageBox.Icon.Warning, tr("Send environment variables?"),
                      tr("This recipe reads these variables from your environment and sends "
                        "them on. Allow it only if you trust the recipe and the hosts:\n\n"
                        "{lines}").format(lines="\n".join(consent.describe(u) for u in uses)),
                      QMessageBox.StandardButton.NoButton, parent)
    box.setObjectName("secret-consent")
    once = box.addButton(tr("Allow until the wizard closes"), QMessageBox.ButtonRole.AcceptRole)
    always = box.addButton(tr("Always allow"), QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    await ask(box)
    clicked = box.clickedButton()
    if clicked is always:
        for use in uses:
            consent.allow(use.variable, use.host)
        return True
    if clicked is once:
        # the build's runner reads consent from this process's environment, as it reads
        # TFWIZARD_ALLOW_SECRETS set before the wizard started
        pairs = os.environ.get(consent.CONSENT_ENV, "").split() + [u.pair for u in uses]
        os.environ[consent.CONSENT_ENV] = " ".join(pairs)
        return True
    return False

"""On start, offer to re-attach to a build whose window went away (closed, crashed).

The core finds the builds (`attachany.running_build_ids`: cold builds' containers labelled
`io.tfwizard.build` and warm builds' execs, with a record in this data folder) and follows
one (`attachany.attach_runner`); this module only asks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from .dialogs import ask
from .i18n import tr
from .pages import PageId


def running_builds(env: Mapping[str, str] | None = None) -> list[str]:
    """Ids of the builds running on the engine with a record here ([] without Docker)."""
    from tfwizard.core.building.warm.attachany import running_build_ids
    from tfwizard.core.docker import client as dockerutil
    from tfwizard.core.errors import TfWizardError

    try:
        client = dockerutil.connect(env, timeout=5)
    except TfWizardError:
        return []
    try:
        return running_build_ids(client, env=env)  # cold builds and warm ones
    except TfWizardError:
        return []
    finally:
        client.close()


def attach_box(parent: QWidget | None, build_ids: list[str]) -> QMessageBox:
    """The question: Attach (to the newest build) or Ignore."""
    box = QMessageBox(QMessageBox.Icon.Question, tr("A build is still running"),
                      tr("Build {id} is still running in Docker; its window went away.")
                      .format(id=build_ids[0]), parent=parent)
    box.setObjectName("attach-box")
    more = (tr(" ({count} more running)").format(count=len(build_ids) - 1)
            if len(build_ids) > 1 else "")
    box.setInformativeText(tr("Attach shows its whole log so far and follows it to the end "
                              "(the wheel is copied out as usual){more}. Ignore leaves it "
                              "running; `tfwizard build --attach` follows it later.")
                           .format(more=more))
    box.addButton(tr("Attach"), QMessageBox.ButtonRole.AcceptRole).setObjectName("attach")
    box.addButton(tr("Ignore"), QMessageBox.ButtonRole.RejectRole).setObjectName("ignore")
    return box


async def offer_attach(window: Any, build_ids: list[str]) -> str | None:
    """Ask; on Attach, open the Build page following that build. The chosen id, or None.

    The question is awaited (dialogs.ask), never exec()'d: a nested event loop inside this
    coroutine would hang the Welcome page's detection task.
    """
    if not build_ids:
        return None
    box = attach_box(window, build_ids)
    await ask(box)
    clicked = box.clickedButton()
    if clicked is None or clicked.objectName() != "attach":
        return None
    chosen = build_ids[0]
    follow_build(window, chosen)
    return chosen


def follow_build(window: Any, build_id: str) -> None:
    """Open the Build page following build `build_id` (its log so far, then live)."""

    def follow(_state: Any) -> Any:
        from tfwizard.core.building.warm.attachany import attach_runner

        return attach_runner(build_id)  # a warm build's exec, else its containers

    wizard = window.wizard
    wizard.build.factory = follow
    wizard.setStartId(PageId.BUILD)
    wizard.restart()
    wizard.build.start()


async def check_at_start(window: Any,
                         find: Callable[[], list[str]] = running_builds) -> str | None:
    """The startup hook: look for running builds off the event loop, then ask."""
    ids = await asyncio.get_running_loop().run_in_executor(None, find)
    return await offer_attach(window, ids)

"""Asking from inside a coroutine without a nested event loop.

`QDialog.exec()` (and the static `QFileDialog.get*` helpers) start a second event loop;
run from a coroutine, they block that task's step while the loop keeps dispatching, and
qasync cannot step any other task meanwhile ("Cannot enter into task ... while another task
is being executed"): the other task hangs for good. `ask()` shows the dialog with `open()`
(window-modal, returns at once) and awaits its `finished` signal instead.
"""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QDialog, QFileDialog, QWidget


async def ask(dialog: QDialog) -> int:
    """Show `dialog` window-modal and wait for its result (QDialog.DialogCode as an int)."""
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def finished(result: int) -> None:
        if not done.done():
            done.set_result(result)

    dialog.finished.connect(finished)
    dialog.open()
    try:
        return await done
    except asyncio.CancelledError:
        dialog.reject()
        raise
    finally:
        dialog.finished.disconnect(finished)


async def save_file_name(parent: QWidget, caption: str, path: str, filters: str) -> str:
    """QFileDialog.getSaveFileName, awaited: the chosen path, or "" when cancelled."""
    dialog = QFileDialog(parent, caption, path, filters)
    dialog.setObjectName("save-file-dialog")
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.selectFile(path)
    if await ask(dialog) != QDialog.DialogCode.Accepted:
        return ""
    files = dialog.selectedFiles()
    return files[0] if files else ""

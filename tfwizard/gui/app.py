"""`tfwizard-gui`: the desktop wizard; without a display it prints help and the host."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any


def has_display(env: dict[str, str] | None = None) -> bool:
    """Whether Qt can open a window here (a display, or an offscreen platform)."""
    env = dict(os.environ) if env is None else env
    if env.get("QT_QPA_PLATFORM", "") in ("offscreen", "minimal", "vnc"):
        return True
    if sys.platform in ("win32", "darwin"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def missing_qt() -> str | None:
    """The name of the GUI library this installation lacks, or None."""
    import importlib.util

    for module in ("PySide6", "qasync"):
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):  # a broken or half-removed installation
            return module
    return None


def run() -> None:
    """GUI entry point."""
    from tfwizard.core.i18n import _

    missing = missing_qt()
    if missing is not None:  # e.g. a distribution package installed without Qt
        print(_("tfwizard-gui: {module} is not installed in {python}, so the wizard cannot "
                "open. Install it there (`{python} -m pip install PySide6-Essentials "
                "qasync`), or use the command-line tool `tfwizard`.").format(
                    module=missing, python=sys.executable), file=sys.stderr)
        sys.exit(3)
    if not has_display():
        from tfwizard.cli import main

        print(_("tfwizard-gui: no display found (DISPLAY / WAYLAND_DISPLAY unset); "
                "here is the command-line tool instead.") + "\n")
        main(["--help"])
        print()
        main(["detect"])
        sys.exit(0)
    missing_libs = qt_cannot_start()
    if missing_libs:
        print(missing_libs, file=sys.stderr)
        from tfwizard.core.qtlibs import EXIT_MISSING_LIBRARY

        sys.exit(EXIT_MISSING_LIBRARY)
    sys.exit(run_gui(sys.argv))


def qt_cannot_start(env: dict[str, str] | None = None) -> str:
    """Why Qt could not open a window here (a system library its platform plugin needs is
    missing or broken), or "" when it can; checked before Qt loads the plugin, whose own
    message names the wrong library and then aborts the process."""
    from tfwizard.core import qtlibs

    if not sys.platform.startswith("linux") or (env or os.environ).get(qtlibs.PROBE_ENV):
        return ""  # started as the probe itself: never probe again
    from tfwizard.core.i18n import _

    checks = qtlibs.check_qt(env)
    if qtlibs.usable(checks):
        return ""
    return "\n".join((
        _("tfwizard-gui: Qt cannot open a window on this system."), qtlibs.report(checks),
        _("Install the packages named above, then start tfwizard-gui again; the command-line "
          "tool `tfwizard` works without them.")))


def recipe_argument(args: list[str]) -> Path | None:
    """The recipe file named on the command line (`tfwizard-gui RECIPE`), made absolute;
    None when there is none (Qt's own options are gone from the list already)."""
    files = [a for a in args if not a.startswith("-")]
    return Path(os.path.abspath(files[0])) if files else None


_error_boxes: list[Any] = []


def explained(exc: BaseException) -> BaseException:
    """An ordinary file-system failure (read-only, full, a name too long: an OSError that
    names its path) as the usage error the CLI prints; other errors as they are."""
    if isinstance(exc, OSError) and exc.filename is not None:
        from tfwizard.core.paths import explain_os_error

        return explain_os_error(exc)
    return exc


def show_exception(exc_type: type[BaseException], exc: BaseException,
                   tb: TracebackType | None) -> None:
    """sys.excepthook: an unexpected error (asyncSlot reports there too) becomes a dialog."""
    from PySide6.QtWidgets import QApplication, QMessageBox

    text = "".join(traceback.format_exception(exc_type, exc, tb))
    sys.__stderr__.write(text) if sys.__stderr__ is not None else None
    if QApplication.instance() is None:
        return
    from tfwizard.core.errors import TfWizardError

    from .i18n import tr

    exc = explained(exc)
    if isinstance(exc, TfWizardError):  # the user's to fix: no traceback, no "bug"
        box = QMessageBox(QMessageBox.Icon.Warning, tr("tfwizard"), str(exc))
    else:
        box = QMessageBox(QMessageBox.Icon.Critical, tr("tfwizard: unexpected error"),
                          f"{exc_type.__name__}: {exc}")
    box.setObjectName("excepthook-box")
    if not isinstance(exc, TfWizardError):
        box.setInformativeText(tr("This is a bug in tfwizard; the details below help fix it."))
        box.setDetailedText(text)
    _error_boxes.append(box)  # a parentless dialog lives as long as a Python reference
    box.finished.connect(lambda _r: _error_boxes.remove(box))
    box.open()


def run_gui(argv: list[str] | None = None, **window_args: Any) -> int:
    """Start the Qt application on a qasync event loop and run the wizard window."""
    import asyncio

    import qasync
    from PySide6.QtWidgets import QApplication

    existing = QApplication.instance()
    app = existing or QApplication(argv or sys.argv)
    # the recipe named on the command line; Qt took its own options out of its copy
    args = (argv or sys.argv)[1:] if existing is not None else app.arguments()[1:]
    app.setApplicationName("tfwizard")
    # static on QGuiApplication; Wayland matches the window to tfwizard.desktop by this name
    QApplication.setDesktopFileName("tfwizard")
    from .icons import app_icon

    QApplication.setWindowIcon(app_icon())
    sys.excepthook = show_exception
    from . import i18n

    i18n.install(i18n.initial_language())
    # the loop ends when main() returns, never under it: Qt's quit on the last window
    # would stop it while a start-up task still runs ("Event loop stopped before Future
    # completed")
    QApplication.setQuitOnLastWindowClosed(False)
    window_args.setdefault("remember", True)

    async def main() -> int:
        from dataclasses import replace

        from .jobs import Jobs
        from .main_window import MainWindow

        closed = asyncio.get_running_loop().create_future()
        jobs = window_args.get("jobs") or Jobs()
        if "host" not in window_args and jobs.detect is None:
            from tfwizard.core.detect import detect_host

            window_args["jobs"] = jobs = replace(jobs, detect=detect_host)
        window = MainWindow(**window_args)
        window.closed.connect(lambda: None if closed.done() else closed.set_result(0))
        window.show_first()
        if window.wizard.state.build_host is None:
            window.wizard.welcome.refresh()  # detection runs in a thread; the window is up
        opened = recipe_argument(args)
        if opened is not None:  # `tfwizard-gui RECIPE`: shown on Review, as File > Open does
            window.open_recipe(opened)
        if jobs.build is None:  # a real build, not a test's fake one
            from .attach import check_at_start

            # a build whose window went away: attach to it? Closing the window meanwhile
            # ends the wait (quitting during start-up must not stop the loop under a task)
            asking = asyncio.ensure_future(check_at_start(window))
            await asyncio.wait([asking, closed], return_when=asyncio.FIRST_COMPLETED)
            asking.cancel()
        await closed
        return 0

    # qasync.run is `asyncio.run(main(), loop_factory=QEventLoop)` on Python >= 3.12, and
    # the same through an event loop policy on 3.10/3.11, where asyncio.run has no factory
    result: int = qasync.run(main())
    return result

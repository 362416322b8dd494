"""The Qt binding itself: what the wizard relies on and one binding release broke."""

from __future__ import annotations

import sys

import pytest


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12")
def test_void_calls_keep_the_reference_to_none(qapp):
    """PySide6 6.12.0 lost a reference to None on every call of a void method; before
    Python 3.12 the GUI then aborts ("deallocating None") after a few thousand calls.
    pyproject.toml keeps that release out."""
    from PySide6.QtWidgets import QLabel

    label = QLabel()
    before = sys.getrefcount(None)
    for _ in range(1000):
        label.setText("x")
        label.setWordWrap(True)
    assert sys.getrefcount(None) - before > -100

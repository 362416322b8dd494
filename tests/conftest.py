"""Shared fixtures. Docker/world helpers live in tests/world.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT.parent / "shared" / "reference"
DATA = Path(__file__).resolve().parent / "data"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture
def kb():
    from tfwizard.core.knowledge import load_knowledge

    return load_knowledge()


@pytest.fixture
def root() -> Path:
    return ROOT

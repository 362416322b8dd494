"""The wizard's pages, one module per page: welcome, source, backend, toolchain, compute,
options, review (the setup), and build, test, install, verify (the pages that run things).

Each page is a RecipePage (`base`) over the shared recipe; PageId numbers them in order.
"""

from __future__ import annotations

from .backend import BackendPage
from .base import PAGE_SLUGS, PageId, RecipePage
from .build import BuildPage
from .compute import ComputePage
from .install import InstallPage
from .options import OptionsPage
from .review import ReviewPage
from .source import SourcePage
from .test import TestPage
from .toolchain import ToolchainPage
from .verify import VerifyPage
from .welcome import WelcomePage

__all__ = ["PAGE_SLUGS", "BackendPage", "BuildPage", "ComputePage", "InstallPage",
           "OptionsPage", "PageId", "RecipePage", "ReviewPage", "SourcePage", "TestPage", "ToolchainPage",
           "VerifyPage", "WelcomePage"]

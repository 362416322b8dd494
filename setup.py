"""Which packages the wheel holds: found, never listed, so a new one cannot be left out.

The fixed layout keeps the data in resources/ at the top of the repository; the wheel ships
it as the package tfwizard.resources (its folders as namespace packages, so setuptools does
not warn about data folders), and the documents of docs/ (the user guide the wizard's Help
shows offline) as tfwizard.resources.docs. Everything else is in pyproject.toml; tests/test_packaging.py
compares the wheel with the files git tracks.

An editable install (`pip install -e .`, PEP 660: setuptools runs this file with the
`editable_wheel` command) lists only the code, with `package_dir={"": "."}`: setuptools then
sees a simple layout and installs a plain path .pth (its documented "lenient" strategy)
instead of an import finder that every Python start of the venv would pay (~10 ms, which
every `tfwizard` command pays: issue 17). The checkout's resources/ is found next to the
package (tfwizard/core/resources.py); tests/test_packaging.py checks both installs.
"""

import sys
from pathlib import Path

from setuptools import find_namespace_packages, setup

CODE = find_namespace_packages(include=["tfwizard", "tfwizard.*"], exclude=["*.__pycache__"])
DATA = ["tfwizard.resources", *(f"tfwizard.resources.{name}" for name in
                                 find_namespace_packages(where="resources",
                                                         exclude=["*.__pycache__"]))]
# a tree copied without docs/ (a test of the data layout) still builds, without the guide
DOCS = {"tfwizard.resources.docs": "docs"} if Path("docs").is_dir() else {}

if "editable_wheel" in sys.argv[1:]:
    setup(packages=CODE, package_dir={"": "."})
else:
    setup(packages=CODE + DATA + list(DOCS),
          package_dir={"tfwizard.resources": "resources", **DOCS})

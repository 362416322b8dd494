"""Which packages the wheel holds: found, never listed, so a new one cannot be left out.

The fixed layout keeps the data in resources/ at the top of the repository; the wheel ships
it as the package tfwizard.resources (its folders as namespace packages, so setuptools does
not warn about data folders). Everything else is in pyproject.toml; tests/test_packaging.py
compares the wheel with the files git tracks.
"""

from setuptools import find_namespace_packages, setup

CODE = find_namespace_packages(include=["tfwizard", "tfwizard.*"], exclude=["*.__pycache__"])
DATA = ["tfwizard.resources", *(f"tfwizard.resources.{name}" for name in
                                 find_namespace_packages(where="resources",
                                                         exclude=["*.__pycache__"]))]

setup(packages=CODE + DATA, package_dir={"tfwizard.resources": "resources"})

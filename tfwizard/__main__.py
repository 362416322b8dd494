"""`python -m tfwizard`: the command line (the desktop wizard is `tfwizard-gui`)."""

from tfwizard.cli import run

run()

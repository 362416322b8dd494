"""`python -m tfwizard`: the command line, as `tfwizard` runs it; the desktop wizard is
`tfwizard-gui`."""

from tfwizard.cli import run

run()

"""`python -m tfwizard`: the command line, as `tfwizard` runs it (through the front end,
tfwizard/front/); the desktop wizard is `tfwizard-gui`."""

from tfwizard.front.client import run

run()

from tfwizard.cli import run

run()

"""Entry script of the standalone `tfwizard` bundle (PyInstaller needs a script file)."""

from tfwizard.cli import run

if __name__ == "__main__":
    run()

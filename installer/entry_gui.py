"""Entry script of the standalone `tfwizard-gui` bundle (PyInstaller needs a script file)."""

from tfwizard.gui.app import run

if __name__ == "__main__":
    run()

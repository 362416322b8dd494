"""The Qt-free core shared by the CLI and the GUI."""

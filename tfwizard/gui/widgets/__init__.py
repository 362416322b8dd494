"""Widgets the wizard's pages share: the findings panel, the log view, the bundle saver."""

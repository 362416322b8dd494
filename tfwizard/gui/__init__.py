"""The PySide6 wizard: thin pages over one WizardState; the only package that imports Qt."""


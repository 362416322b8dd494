"""Qt-free view models the GUI reads: readiness, the review's verdict, choice notes, the verification panel."""

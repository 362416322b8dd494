"""Offline stand-in: nothing to fetch."""

def rules_java_dependencies():
    pass

def rules_java_toolchains():
    pass

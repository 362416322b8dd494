"""What the front-end server imports and fills once, before it forks any child: the
modules the served commands use (PRELOAD) and the caches of shipped data (PREFILL)."""

from __future__ import annotations

import importlib
from collections.abc import Callable

#: modules the served commands import on their way (measured with -X importtime on a warm
#: `tfwizard build`): importing them here is what makes a served command fast
PRELOAD = (
    "tfwizard.cli",
    "docker",
    "tfwizard.core.build.plan",
    "tfwizard.core.build.dockerutil",
    "tfwizard.core.build.warm",
    "tfwizard.core.build.warmrun",
    "tfwizard.core.build.warmbep",
    "tfwizard.core.build.runner",
    "tfwizard.core.build.record",
    "tfwizard.core.build.preflight",
    "tfwizard.core.build.diagnose",
    "tfwizard.core.build.hostcache",
    "tfwizard.core.build.probecache",
    "tfwizard.core.knowledge",
    "tfwizard.core.recipe",
    "tfwizard.cli.follow",
    "tfwizard.cli.gates",
    # what a warm no-op child still imported (its "new modules" in server.log, bench/rebuild.py)
    "tfwizard.core.detect",
    "tfwizard.core.detect.amd",
    "tfwizard.core.detect.cpu",
    "tfwizard.core.detect.docker_probe",
    "tfwizard.core.detect.nvidia",
    "tfwizard.core.detect.osinfo",
    "tfwizard.core.detect.process",
    "tfwizard.core.detect.pythons",
    "tfwizard.core.detect.resources",
    "tfwizard.core.build.remotecheck",
    "tfwizard.core.build.render",
    "concurrent.futures.thread",
    "netrc",
)
#: (module, function): caches of the shipped data that every command fills the same way,
#: filled once here. They depend on files only (never the environment), and a change to
#: those files makes the server stale (wire.code_snapshot), so a child never sees old data.
PREFILL = (
    ("tfwizard.core.knowledge", "load_knowledge"),
    ("tfwizard.core.bazelfacts", "load_bazel_facts"),
    ("tfwizard.core.build.diagnose", "load_failures"),
    ("tfwizard.core.build.diagnose", "_warning_matcher"),  # the success path's log scan
    ("tfwizard.front.preload", "host_type_hints"),  # the kept host profile's from_dict
)
def host_type_hints() -> None:
    """Resolve the type hints of core/host's dataclasses (host._field_types, cached): a
    build reads its kept HostProfile back with them, ~1 ms each process otherwise."""
    import dataclasses

    from tfwizard.core import host

    for value in vars(host).values():
        if isinstance(value, type) and dataclasses.is_dataclass(value):
            host._field_types(value)


def preload(log: Callable[[str], None]) -> None:
    """Import PRELOAD, fill PREFILL's caches and the catalogs (what fails is logged, not
    fatal: the child does it itself); LOG: the server's log."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            log(f"preload {name}: {exc}")
    for module, function in PREFILL:
        try:
            getattr(importlib.import_module(module), function)()
        except Exception as exc:  # noqa: BLE001 - the child then fills it itself
            log(f"prefill {module}.{function}: {type(exc).__name__}: {exc}")
    from tfwizard.core import i18n

    for lang in i18n.LANGUAGES:
        i18n.catalog(lang)

"""What the server fills before it forks (tfwizard/front/preload.py)."""

from __future__ import annotations

import importlib

from tfwizard.core import host
from tfwizard.front import preload


def test_every_prefill_names_a_function_that_runs():
    for module, function in preload.PREFILL:
        getattr(importlib.import_module(module), function)()


def test_the_host_profiles_type_hints_are_resolved_ahead():
    host._field_types.cache_clear()
    preload.host_type_hints()
    before = host._field_types.cache_info()
    assert before.misses > 5  # HostProfile and the classes inside it
    host.HostProfile.from_dict(host.HostProfile().to_dict())
    after = host._field_types.cache_info()
    assert after.hits > before.hits and after.misses == before.misses  # none resolved now

"""Round 21's runtime wordings, written from jax's own messages (jax/_src/xla_bridge.py of
the 0.2-0.4 releases) for a jaxlib without CUDA: its GPU backend finds no "cuda" platform
or lacks the CUDA-only allocator settings, and a GPU backend asked for is not there."""

from __future__ import annotations

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    (["I0820 16:00:20.281177 140257858221888 xla_bridge.py:212] Unable to initialize backend "
      "'gpu': Not found: Could not find registered platform with name: \"cuda\". Available "
      "platform names are: Interpreter Host"], "jaxlib-without-cuda"),
    (["I0101 00:00:00.000000 1 xla_bridge.py:357] Unable to initialize backend 'cuda': "
      "module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'"],
     "jaxlib-without-cuda"),
    (["RuntimeError: Unknown backend: 'gpu' requested, but no platforms that are instances "
      "of gpu are present. Platforms present are: interpreter,cpu"], "jaxlib-without-cuda"),
]

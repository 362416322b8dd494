"""A program's words when a file of the user's takes a module's place, and when code written
for Keras 2 meets Keras 3, and a build's words for a CUDA toolkit newer than the release's,
as their sources word them (sources.toml's python-shadowing-s19, keras3-messages-s19 and
cuda-toolkit-too-new-s19). Data only: RUNTIME runs in test_runtime_wordings_r7.py's tests
and BUILD in test_round7_build_signatures.py's, found by wordings.py; NEAR_MISSES in
test_runtime_wordings_r7.py's near-miss test, by name (NOT_THESE).

The Python lines were printed by CPython 3.8.18, 3.12.1 and 3.13.0 with a tensorflow.py or a
random.py beside the script, or follow 3.14's format strings with plausible paths; the Keras
lines were printed by TensorFlow 2.21.0 with Keras 3.15.1, or follow the libraries' format
strings.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    ("cuda-toolkit-too-new", ["fatbinary fatal   : Unknown option '-bin2c-path'"]),
    ("cuda-toolkit-too-new", [
        "ERROR: /root/.cache/bazel/_bazel_root/0a1b/external/nccl_archive/BUILD.bazel:54:17: in "
        "_prune_relocatable_code rule @nccl_archive//:device_pruned: ",
        "Traceback (most recent call last):",
        "\tFile \"/root/.cache/bazel/_bazel_root/0a1b/external/local_config_nccl/build_defs.bzl\", "
        "line 207, column 15, in _prune_relocatable_code_impl",
        "\t\toutput.append(outputs)",
        "Error: 'File' value has no field or method 'append'"]),
    ("cuda-toolkit-too-new", [
        "bazel-out/k8-opt/bin/external/nccl_archive/device_dlink.cc:69:10: fatal error: "
        "fatbinary_section.h: No such file or directory"]),
]
#: the ids BUILD_NEAR_MISSES must not be diagnosed as
NOT_BUILD = {"cuda-toolkit-too-new"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # a toolkit too old for the GPU, another fatbinary option, another file missing
    "nvcc fatal   : Unsupported gpu architecture 'compute_75'",
    "fatbinary fatal   : Unknown option '-foo'",
    "foo.cc:3:10: fatal error: fatbinary_section.h: No such file or directory",
    "ERROR: /x/BUILD:1:1: in _cuda_library rule //x:y: ",
]

#: (a program's output, the id diagnosed first)
RUNTIME: list[tuple[list[str], str]] = [
    # CPython 3.8-3.12, a script named tensorflow.py: the attribute, and from ... import
    (["AttributeError: partially initialized module 'tensorflow' has no attribute 'constant' "
      "(most likely due to a circular import)"], "import-shadowed"),
    (["ImportError: cannot import name 'keras' from partially initialized module 'tensorflow' "
      "(most likely due to a circular import) (/tmp/shadow/b/tensorflow.py)"],
     "import-shadowed"),
    # a standard-library module replaced (random.py)
    (["AttributeError: partially initialized module 'random' has no attribute 'randint' (most "
      "likely due to a circular import)"], "import-shadowed"),
    # 3.13: the module's origin in the message, and the shadowing hints (3.13.0's words,
    # then 3.14's)
    (["AttributeError: partially initialized module 'tensorflow' from '/tmp/shadow/a/"
      "tensorflow.py' has no attribute 'constant' (most likely due to a circular import)"],
     "import-shadowed"),
    (["AttributeError: module 'tensorflow' has no attribute 'constant' (consider renaming "
      "'/home/u/proj/tensorflow.py' if it has the same name as a third-party module you "
      "intended to import)"], "import-shadowed"),
    (["AttributeError: module 'random' has no attribute 'randint' (consider renaming '/home/u/"
      "proj/random.py' since it has the same name as the standard library module named "
      "'random' and the import system gives it precedence)"], "import-shadowed"),
    (["ImportError: cannot import name 'keras' from 'tensorflow' (consider renaming '/home/u/"
      "proj/tensorflow.py' if it has the same name as a library you intended to import)"],
     "import-shadowed"),
    (["ImportError: cannot import name 'Enum' from 'enum' (consider renaming '/home/u/proj/"
      "enum.py' since it has the same name as the standard library module named 'enum' and "
      "prevents importing that standard library module)"], "import-shadowed"),
    # importlib, any Python 3: a package's submodule asked of one plain file
    (["ModuleNotFoundError: No module named 'tensorflow.keras'; 'tensorflow' is not a package"],
     "import-shadowed"),
    # Transformers 4.53+ (bare), deepface, TensorFlow Probability 0.24's print
    (["ValueError: Your currently installed version of Keras is Keras 3, but this is not yet "
      "supported in Transformers. Please install the backwards-compatible tf-keras package "
      "with `pip install tf-keras`."], "keras2-code-on-keras3"),
    (["ValueError: You have tensorflow 2.16.1 and this requires tf-keras package. Please run "
      "`pip install tf-keras` or downgrade your tensorflow."], "keras2-code-on-keras3"),
    (["Failed to import TF-Keras. Please note that TF-Keras is not installed by default when "
      "you install TensorFlow Probability. This is so that JAX-only users do not have to "
      "install TensorFlow or TF-Keras. To use TensorFlow Probability with TensorFlow, please "
      "install the tf-keras or tf-keras-nightly package.",
      "This can be be done through installing the tensorflow-probability[tf] extra.",
      "ModuleNotFoundError: No module named 'tf_keras'"], "keras2-code-on-keras3"),
    # Keras 3.15.1 under TensorFlow 2.21.0, as printed
    (["ValueError: Argument(s) not recognized: {'lr': 0.01}"], "keras2-code-on-keras3"),
    (["ValueError: The `save_format` argument is deprecated in Keras 3. Please remove this "
      "argument and pass a file path with either `.keras` or `.h5` extension.Received: "
      "save_format=tf"], "keras2-code-on-keras3"),
    (["ValueError: Only instances of `keras.Layer` can be added to a Sequential model. "
      "Received: <tf_keras.src.layers.core.dense.Dense object at 0x7f2a1c3e5d90> (of type "
      "<class 'tf_keras.src.layers.core.dense.Dense'>)"], "keras2-code-on-keras3"),
    # TensorFlow Probability 0.23 under Keras 3
    (["AttributeError: module 'keras._tf_keras.keras' has no attribute '__internal__'"],
     "keras2-code-on-keras3"),
]

#: lines a program prints that neither id may take (a failed import may be said of the
#: first three: import-failed)
NEAR_MISSES = [
    # a cycle inside an installed package (a submodule, or a module loading from
    # site-packages): the package's own, or an installation that mixes releases
    "ImportError: cannot import name 'test' from partially initialized module "
    "'tensorflow._api.v2.__internal__' (most likely due to a circular import) (/usr/lib/"
    "python3/dist-packages/tensorflow/_api/v2/__internal__/__init__.py)",
    "AttributeError: partially initialized module 'keras.src.layers' has no attribute 'Dense' "
    "(most likely due to a circular import)",
    "ImportError: cannot import name 'keras' from partially initialized module 'tensorflow' "
    "(most likely due to a circular import) (/opt/venv/lib/python3.11/site-packages/"
    "tensorflow/__init__.py)",
    # Keras 3's words for a plain mistake, not Keras-2 code
    "ValueError: Only instances of `keras.Layer` can be added to a Sequential model. Received: "
    "<object object at 0x7ff9044b61d0> (of type <class 'object'>)",
    "ValueError: Argument(s) not recognized: {'learning_rat': 0.01}",
    "ValueError: Unrecognized keyword arguments passed to Dense: {'foo': 1}",
    # Keras 2's wording of a layer of another Keras (2018)
    "TypeError: The added layer must be an instance of class Layer. Found: <tensorflow.python."
    "keras.engine.training.Model object at 0x000002C7010E3C88>",
]

#: (a near miss, the ids it must not be diagnosed as)
NOT_THESE = [(line, {"import-shadowed", "keras2-code-on-keras3"}) for line in NEAR_MISSES]

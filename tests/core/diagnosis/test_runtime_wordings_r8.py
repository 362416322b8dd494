"""Round 8's runtime signatures match the stable part of a message in its other wordings:
other packages, versions, loaders and column widths than the corpus's excerpts show, behind
the prefixes CI systems and launchers put before a line. The lists run in
test_runtime_wordings_r7's tests, behind every prefix, with round 7's.

Every line here was written for this test from the tools' own message formats (their
sources, as resources/knowledge/sources.toml cites them); none is copied from the corpus.
"""

from __future__ import annotations

from tfwizard.core.diagnosis.runtime import diagnose_log

#: (lines, the id diagnosed first)
WORDINGS = [
    # tf.load_op_library's NotFoundError wrapped by a terminal at another column, in the
    # middle of the path and of the symbol, for another add-on and namespace
    (["tensorflow.python.framework.errors_impl.NotFoundError: /usr/local/lib/python3.9/dist-pa",
      "ckages/tensorflow_io/python/ops/libtensorflow_io_plugins.so: undefined symbol: _ZN3t",
      "sl6StatusC1ENS_5error4CodeESt17basic_string_viewIcSt11char_traitsIcEE"],
     "tf-addon-abi-mismatch"),
    # the container toolkit refusing an image whose CUDA the host driver cannot run, in the
    # later wording (no spaces, the advice after a comma)
    (["docker: Error response from daemon: failed to create task for container: failed to "
      "create shim task: OCI runtime create failed: runc create failed: unable to start "
      "container process: error during container init: error running hook #0: error running "
      "hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'",
      "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please "
      "update your driver to a newer version, or use an earlier cuda container: unknown."],
     "driver-insufficient"),
    # macOS's loader: dyld 4's words, dyld 2's for a missing library, and the stack probe
    # from a plain program
    (["ImportError: dlopen(/Users/me/venv/lib/python3.12/site-packages/tensorflow/python/"
      "_pywrap_tensorflow_internal.so, 0x0002): Symbol not found: _OBJC_CLASS_$_MTLResidencySet",
      "  Referenced from: <1A2B3C4D-0000-1111-2222-333344445555> /Users/me/venv/lib/python3.12/"
      "site-packages/tensorflow/libtensorflow_framework.2.dylib (built for macOS 15.0 which is "
      "newer than running OS)"], "import-macos-too-old"),
    (["dyld: Library not loaded: @rpath/libc++.1.dylib",
      "  Referenced from: /opt/tools/bin/flatc (which was built for Mac OS X 11.0)"],
     "import-macos-too-old"),
    (["dyld: lazy symbol binding failed: Symbol not found: ___chkstk_darwin"],
     "import-macos-too-old"),
    # keras (or tf-keras) newer than TensorFlow: other attributes, submodules, module names,
    # and a TensorFlow with no tf.__internal__ at all
    (["AttributeError: module 'tensorflow._api.v2.compat.v2.__internal__' has no attribute "
      "'register_load_context_function'"], "keras-newer-than-tf"),
    (["AttributeError: module 'tensorflow.compat.v2.__internal__.distribute' has no "
      "attribute 'strategy_supports_no_merge_call'"], "keras-newer-than-tf"),
    (["AttributeError: module 'tensorflow.compat.v2' has no attribute '__internal__'"],
     "keras-newer-than-tf"),
    (["    raise ImportError(", "ImportError: Keras requires TensorFlow 2.3 or higher. Install "
      "TensorFlow via `pip install tensorflow`"], "keras-newer-than-tf"),
    (["ImportError: This version of TensorFlow Probability requires TensorFlow version >= "
      "2.19; Detected an installation of version 2.16.2. Please upgrade TensorFlow to "
      "proceed."], "keras-newer-than-tf"),
    # jax's check of jaxlib: the ">=" form of jax 0.4, a dev build newer than jax
    (["RuntimeError: jaxlib is version 0.4.7, but this version of jax requires version "
      ">= 0.4.14."], "jaxlib-version-mismatch"),
    (["RuntimeError: jaxlib version 0.4.31.dev20240701 is newer than and incompatible with "
      "jax version 0.4.30. Please update your jax and/or jaxlib packages."],
     "jaxlib-version-mismatch"),
    # a wheel for another Python or machine: jaxlib's and tflite_runtime's
    (["ERROR: jaxlib-0.4.30-cp312-cp312-manylinux2014_x86_64.whl is not a supported wheel on "
      "this platform."], "wheel-python-mismatch"),
    (["ERROR: tflite_runtime-2.14.0-cp311-cp311-manylinux_2_34_aarch64.whl is not a supported "
      "wheel on this platform."], "wheel-python-mismatch"),
    # no jaxlib wheel for this interpreter, in pip's two lines
    (["ERROR: Could not find a version that satisfies the requirement jaxlib==0.4.38 (from "
      "versions: none)"], "no-wheel-for-python"),
    (["ERROR: No matching distribution found for jaxlib>=0.4.30"], "no-wheel-for-python"),
]

#: lines that look like the above and mean something else
QUIET = [
    # another package's wheel, another package's missing attribute, another loader error
    "ERROR: numpy-2.0.0-cp312-cp312-win_amd64.whl is not a supported wheel on this platform.",
    "AttributeError: module 'tensorflow_hub' has no attribute 'KerasLayer'",
    "dyld: Library not loaded: @rpath/libfoo.dylib",
    "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1",
    # Cython's check of the Python a module was built for is a RuntimeWarning: the module
    # loaded, and a working run prints it (the failure, if any, is a later line)
    "/opt/venv/lib/python3.12/site-packages/somepkg/__init__.py:3: RuntimeWarning: compile "
    "time Python version 3.11 of module 'somepkg._speedups' does not match runtime version 3.12",
]


def _ids(found) -> list[str]:
    return [d.id for d in found]


def test_a_wrapped_path_of_tensorflow_itself_is_no_add_on():
    """The wrapped form reads the path across the lines: TensorFlow's own library missing
    one of its symbols is a broken installation, not an add-on built for another release."""
    found = diagnose_log([
        "tensorflow.python.framework.errors_impl.NotFoundError: /usr/lib/python3/dist-packa",
        "ges/tensorflow/python/_pywrap_tensorflow_internal.so: undefined symbol: _ZN10tensor",
        "flow8OpKernel11TraceStringEPNS_15OpKernelContextEb"])
    assert "tf-addon-abi-mismatch" not in _ids(found)


def test_the_wrapped_add_on_is_named_whole():
    found = diagnose_log([
        "tensorflow.python.framework.errors_impl.NotFoundError: /srv/env/lib/python3.10/site-",
        "packages/tensorflow_text/python/ops/_fast_wordpiece_tokenizer.so: undefined symbol:",
        " _ZN3tsl8internal10LogMessageD1Ev"])[0]
    assert found.id == "tf-addon-abi-mismatch"
    assert ("/srv/env/lib/python3.10/site-packages/tensorflow_text/python/ops/"
            "_fast_wordpiece_tokenizer.so") in found.cause

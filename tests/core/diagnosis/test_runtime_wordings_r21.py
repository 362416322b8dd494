"""Round 21's runtime rules that read Python's own output.

An import that failed in a way no rule names is import-failed, in the traceback's words:
a traceback's frame of a package's __init__.py run as a module (only an import runs it
so) and the exception after it, TensorFlow's "Failed to load the native TensorFlow
runtime", or an ImportError alone. It speaks only when nothing else explains the output: a
specific rule (a CUDA library, glibc, NumPy's ABI) says more.

A CPU build as a program printed it (tf.test.is_built_with_cuda() giving False, on its line
or the next; get_build_info()'s is_cuda_build) is cpu-build-gpu-expected. The wording lists
of the round are in round21_wordings.py.
"""

from __future__ import annotations

import pytest

from tfwizard.core.diagnosis.runtime import diagnose, diagnose_log
from tfwizard.core.host import HostProfile

TF1_CHAINED = [
    "Traceback (most recent call last):",
    '  File "/usr/lib/python3/dist-packages/tensorflow/python/pywrap_tensorflow.py", '
    "line 58, in <module>",
    "    from tensorflow.python.pywrap_tensorflow_internal import *",
    "ImportError: /usr/lib/python3/dist-packages/tensorflow/python/_pywrap_tensorflow_"
    "internal.so: undefined symbol: _ZN10tensorflow8internal21CheckOpMessageBuilder9New"
    "StringB5cxx11Ev",
    "",
    "During handling of the above exception, another exception occurred:",
    "",
    "Traceback (most recent call last):",
    '  File "<stdin>", line 1, in <module>',
    '  File "/usr/lib/python3/dist-packages/tensorflow/__init__.py", line 24, in <module>',
    "    from tensorflow.python import pywrap_tensorflow  # pylint: disable=unused-import",
    "ImportError: Traceback (most recent call last):",
    '  File "/usr/lib/python3/dist-packages/tensorflow/python/pywrap_tensorflow.py", '
    "line 58, in <module>",
    "ImportError: /usr/lib/python3/dist-packages/tensorflow/python/_pywrap_tensorflow_"
    "internal.so: undefined symbol: _ZN10tensorflow8internal21CheckOpMessageBuilder9New"
    "StringB5cxx11Ev",
    "",
    "Failed to load the native TensorFlow runtime.",
]


def _one(lines: list[str]):
    found = diagnose_log(lines)
    assert [d.id for d in found] == ["import-failed"], [d.id for d in found]
    return found[0]


def test_a_traceback_through_a_package_init_names_the_package_and_its_exception():
    d = _one(["Traceback (most recent call last):",
              '  File "train.py", line 3, in <module>',
              '  File "/env/lib/python3.6/site-packages/tensorflow/__init__.py", line 98, '
              "in <module>",
              "    from tensorflow_core import *",
              '  File "/env/lib/python3.6/site-packages/tensorflow_core/__init__.py", '
              "line 363, in <module>",
              "NameError: name 'sys' is not defined"])
    assert d.title == "Importing tensorflow failed"
    assert "NameError: name 'sys' is not defined" in d.cause
    assert d.lines == [3, 6] and d.severity == "error" and d.speaker == "python-import"


def test_the_first_exception_that_says_something_is_quoted_not_tf1s_wrapper():
    d = _one(TF1_CHAINED)
    assert d.title == "Importing tensorflow failed"
    assert "undefined symbol: _ZN10tensorflow8internal21" in d.cause
    assert "Traceback (most recent call last)" not in d.cause
    assert d.lines == [10, 14]


def test_a_windows_frame_and_tensorflows_own_words_alone():
    d = _one(['  File "C:\\Users\\me\\venv\\Lib\\site-packages\\jax\\__init__.py", line 37, '
              "in <module>",
              "AttributeError: module 'jaxlib' has no attribute 'version'"])
    assert d.title == "Importing jax failed"
    d = _one(["RuntimeError: module compiled against API version 0xf",
              "Failed to load the native TensorFlow runtime."])
    assert d.title == "Importing tensorflow failed"


@pytest.mark.parametrize(("line", "module"), [
    ("ImportError: cannot import name 'builder' from 'google.protobuf.internal' "
     "(/env/lib/python3.10/site-packages/google/protobuf/internal/__init__.py)",
     "google.protobuf.internal"),
    # an extension's own symbol: the package it belongs to, not an add-on of TensorFlow's
    ("ImportError: /x/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: "
     "_ZN3c1017RegisterOperatorsD1Ev", "torch_scatter"),
    # TensorFlow's own library missing a symbol: a broken installation, not an add-on
    ("ImportError: /usr/lib/python3/dist-packages/tensorflow/python/_pywrap_tensorflow_"
     "internal.so: undefined symbol: _ZN10tensorflow8internal21CheckOpMessageBuilder9New"
     "StringB5cxx11Ev", "tensorflow"),
    ("ImportError: This package should not be accessible on Python 3. Either you are trying "
     "to run from the python-future src folder or your installation of python-future is "
     "corrupted.", "a package"),
])
def test_an_import_error_alone_names_the_module_it_can(line, module):
    d = _one([line])
    assert d.title == f"Importing {module} failed"
    assert line in d.cause


def test_a_specific_cause_speaks_instead():
    # a CUDA library missing at import: import-cuda-lib-missing says more
    found = diagnose_log([
        '  File "/usr/lib/python3/dist-packages/tensorflow/__init__.py", line 24, in <module>',
        "ImportError: libcublas.so.9.0: cannot open shared object file: No such file or "
        "directory"])
    assert [d.id for d in found] == ["import-cuda-lib-missing"]


def test_a_warning_does_not_hide_the_import_that_failed():
    # cudart missing on a host without an NVIDIA GPU is only information
    host = HostProfile.from_dict({"nvidia": {"gpus": []}})
    found = diagnose_log([
        "2021-05-10 11:39:52.415791: W tensorflow/stream_executor/platform/default/"
        "dso_loader.cc:60] Could not load dynamic library 'libcudart.so.11.0'; dlerror: "
        "libcudart.so.11.0: cannot open shared object file: No such file or directory",
        '  File "/env/site-packages/keras/__init__.py", line 3, in <module>',
        "ImportError: cannot import name 'dtensor' from 'tensorflow.compat.v2.experimental'"],
        host)
    assert [d.id for d in found][0] == "import-failed"
    assert found[0].title == "Importing keras failed"


@pytest.mark.parametrize("lines", [
    # an exception in the program's own code, not an import
    ["Traceback (most recent call last):", '  File "train.py", line 40, in <module>',
     '  File "/env/site-packages/keras/engine/training.py", line 12, in fit',
     "ValueError: Shapes (None, 10) and (None, 1) are incompatible"],
    # a package's __init__ run as a function, not as a module
    ['  File "/env/site-packages/tensorflow/__init__.py", line 40, in __getattr__',
     "AttributeError: module 'tensorflow' has no attribute 'Session'"],
    # a frame without an exception (the excerpt was cut)
    ['  File "/env/site-packages/tensorflow/__init__.py", line 40, in <module>'],
    # an optional import a library reports and goes past
    ["W0101 12:00:00.000000 140 import_utils.py:9] Failed to import optional module: "
     "Cannot import tensorrt"],
])
def test_what_is_no_failed_import_stays_quiet(lines):
    assert diagnose_log(lines) == []


def test_the_probes_import_error_names_tensorflow():
    found = diagnose({"import_error": "ImportError: No module named 'tensorflow'"})
    assert found[0].id == "import-failed"
    assert found[0].title == "Importing tensorflow failed"


@pytest.mark.parametrize("line", [
    # a jaxlib with CUDA on a host where only ROCm is missing (alphafold's start-up)
    "I0820 16:10:25.575558 140208504612672 xla_bridge.py:353] Unable to initialize backend "
    "'rocm': NOT_FOUND: Could not find registered platform with name: \"rocm\". Available "
    "platform names are: Interpreter Host CUDA",
    "I0101 xla_bridge.py:350] Unable to initialize backend 'tpu': module "
    "'jaxlib.xla_extension' has no attribute 'get_tpu_client'",
])
def test_jax_backends_other_than_cuda_are_not_a_cpu_jaxlib(line):
    assert "jaxlib-without-cuda" not in [d.id for d in diagnose_log([line])]


def test_a_cpu_jaxlib_on_a_host_without_nvidia_gpus_is_information():
    host = HostProfile.from_dict({"nvidia": {"gpus": []}})
    found = diagnose_log(["RuntimeError: Unknown backend: 'gpu' requested, but no platforms "
                          "that are instances of gpu are present. Platforms present are: "
                          "interpreter,cpu"], host)
    assert [(d.id, d.severity) for d in found] == [("jaxlib-without-cuda", "info")]


# -- a CPU build, as a program printed it ------------------------------------------------------

@pytest.mark.parametrize("lines", [
    [">>> print(tf.test.is_built_with_cuda())", "False"],
    ["Built with CUDA: tf.test.is_built_with_cuda() = False"],
    ["OrderedDict([('cpu_compiler', 'C:/Program Files/Microsoft Visual Studio/2019/VC/bin/"
     "cl.exe'), ('is_cuda_build', False), ('is_rocm_build', False)])"],
    ["{'is_cuda_build': False, 'is_rocm_build': False, 'is_tensorrt_build': False}"],
])
def test_a_cpu_build_printed_is_cpu_build_gpu_expected(lines):
    found = diagnose_log(lines)
    assert [(d.id, d.severity) for d in found] == [("cpu-build-gpu-expected", "error")]
    assert "CPU build" in found[0].cause


@pytest.mark.parametrize("lines", [
    [">>> print(tf.test.is_built_with_cuda())", "True"],
    [">>> tf.test.is_built_with_cuda()", ">>> False"],
    ["OrderedDict([('cuda_version', '12.3'), ('is_cuda_build', True)])"],
    ["is_built_with_cuda() returned True; is_gpu_available() = False"],
])
def test_a_cuda_build_printed_stays_quiet(lines):
    assert diagnose_log(lines) == []


def test_a_cpu_build_is_information_where_one_was_asked_for_or_there_is_no_gpu():
    lines = [">>> print(tf.test.is_built_with_cuda())", "False"]
    assert [d.severity for d in diagnose_log(lines, expect="cpu")] == ["info"]
    host = HostProfile.from_dict({"nvidia": {"gpus": []}})
    assert [d.severity for d in diagnose_log(lines, host)] == ["info"]


@pytest.mark.parametrize("line", [
    # TensorFlow's own C++ symbol missing from its library, and a PyTorch extension's: not
    # the CPython API
    "ImportError: /x/site-packages/torch_scatter/_scatter_cuda.so: undefined symbol: "
    "_ZN3c1017RegisterOperatorsD1Ev",
    "ImportError: /x/site-packages/mylib/_ext.so: undefined symbol: python_helper_init",
])
def test_a_symbol_outside_the_python_api_is_no_python_mismatch(line):
    assert "wheel-python-mismatch" not in [d.id for d in diagnose_log([line])]


# -- a start-up line that yields to any error ---------------------------------------------------

CUDART_DLERROR = ("2021-05-10 11:39:52.415791: W tensorflow/stream_executor/platform/default/"
                  "dso_loader.cc:60] Could not load dynamic library 'libcudart.so.11.0'; "
                  "dlerror: libcudart.so.11.0: cannot open shared object file: No such file or "
                  "directory")


def test_tensorflows_cudart_dlerror_goes_after_whatever_the_run_failed_with():
    # without a host profile the dlerror is an error too, but TensorFlow says to ignore it
    # without a GPU: the import that failed later, or a library failure, is said first
    found = diagnose_log([CUDART_DLERROR,
                          '  File "/env/site-packages/keras/__init__.py", line 3, in <module>',
                          "ImportError: cannot import name 'dtensor' from "
                          "'tensorflow.compat.v2.experimental'"])
    assert [d.id for d in found] == ["import-failed", "cudart-not-found"]
    found = diagnose_log([CUDART_DLERROR,
                          "2021-05-10 11:39:55.1: E tensorflow/stream_executor/cuda/cuda_dnn.cc:"
                          "336] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR"])
    assert [d.id for d in found] == ["cudnn-handle-failed", "cudart-not-found"]
    assert [d.id for d in diagnose_log([CUDART_DLERROR])] == ["cudart-not-found"]


def test_an_import_error_another_rule_names_is_that_rule_only():
    # TensorFlow's own check at import: the ImportError is cudart-not-found's line
    line = ("ImportError: Could not find 'cudart64_100.dll'. TensorFlow requires that this DLL "
            "be installed in a directory that is named in your %PATH% environment variable.")
    assert [d.id for d in diagnose_log([line])] == ["cudart-not-found"]
    assert [d.id for d in diagnose_log([
        '  File "C:\\Python37\\lib\\site-packages\\tensorflow\\__init__.py", line 28, in <module>',
        line])] == ["cudart-not-found"]

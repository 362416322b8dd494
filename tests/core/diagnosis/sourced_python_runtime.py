"""The python_runtime group's signatures (what Python's import machinery, the dynamic loaders,
pip, NumPy and jax/jaxlib print) on the wordings their own sources give: other
versions, locales and tools of the same failures. Data only: the lists run in
test_round7_build_signatures.py's and test_runtime_wordings_r7.py's tests, with the rounds'.

Every line was written for these tests from the speaking tool's own format string (cited in
resources/knowledge/sources.toml under the key named in each comment), with plausible paths
and versions filled in; none is copied from the corpus.
"""

from __future__ import annotations

#: (lines, the id diagnosed first)
RUNTIME = [
    # glibc's loader in Simplified Chinese (po/zh_CN.po; glibc-loader-messages): Python's
    # ImportError, and a program linked against the CUDA libraries, in both languages
    (["ImportError: libcudart.so.11.0: 无法打开共享对象文件: 没有那个文件或目录"],
     "import-cuda-lib-missing"),
    (["tensorflow_model_server: error while loading shared libraries: libcudart.so.10.1: "
      "cannot open shared object file: No such file or directory"], "import-cuda-lib-missing"),
    (["./label_image: 载入共享库时出错: libcublas.so.12: 无法打开共享对象文件: 没有那个文件或目录"],
     "import-cuda-lib-missing"),
    # ... refusing an executable stack (glibc 2.41's dl-load.c, zh_CN)
    (["ImportError: /opt/venv/lib/python3.12/site-packages/jaxlib/xla_extension.so: "
      "无法启用共享目标需要的执行栈: 无效的参数"], "import-executable-stack-refused"),
    # jaxlib's plugin check (jaxlib/plugin_support.py; jaxlib-plugin-version-check)
    (["/usr/lib/python3.12/site-packages/jaxlib/plugin_support.py:71: RuntimeWarning: JAX "
      "plugin jax_cuda12_plugin version 0.5.3 is installed, but it is not compatible with the "
      "installed jaxlib version 0.6.0, so it will not be used."], "jaxlib-version-mismatch"),
    # NumPy 2's headers (generate_numpy_api.py, generate_ufunc_api.py; numpy-import-array)
    (["ImportError: numpy._core.multiarray failed to import"], "numpy-abi-mismatch"),
    (["ImportError: numpy._core.umath failed to import"], "numpy-abi-mismatch"),
    (["ImportError: numpy.core.umath failed to import"], "numpy-abi-mismatch"),
    (["AttributeError: _UFUNC_API not found"], "numpy-abi-mismatch"),
    (["RuntimeError: module was compiled against NumPy C-API version 0x12 (NumPy 2.0) but the "
      "running NumPy has C-API version 0x10. Check the section C-API incompatibility at the "
      "Troubleshooting ImportError section at https://numpy.org/devdocs/user/troubleshooting-"
      "importerror.html#c-api-incompatibility for indications on how to solve this problem."],
     "numpy-abi-mismatch"),
    # TensorFlow's Windows pre-load check, 2.x and 1.x (self_check.py; tf-self-check)
    (["ImportError: Could not find the DLL(s) 'msvcp140.dll or msvcp140_1.dll'. TensorFlow "
      "requires that these DLLs be installed in a directory that is named in your %PATH% "
      "environment variable."], "windows-dll-load-failed"),
    (["ImportError: Could not find 'msvcp140.dll'. TensorFlow requires that this DLL be "
      "installed in a directory that is named in your %PATH% environment variable. You may "
      "install this DLL by downloading Visual C++ 2015 Redistributable Update 3 from this URL: "
      "https://www.microsoft.com/en-us/download/details.aspx?id=53587"],
     "windows-dll-load-failed"),
    # pip's Requires-Python refusal: jaxlib, and the resolver's list form (pip-requires-python)
    (["ERROR: Package 'jaxlib' requires a different Python: 3.8.10 not in '>=3.9'"],
     "no-wheel-for-python"),
    (["ERROR: Packages require a different Python. 3.8.10 not in:",
      "'>=3.9' (required by tensorflow 2.16.1 (from https://files.pythonhosted.org/packages/"
      "aa/bb/tensorflow-2.16.1-cp312-cp312-manylinux_2_17_x86_64.whl))"],
     "no-wheel-for-python"),
    # pip before 20.3 and `pip check` on Keras 3 (pip-dependency-conflict-words)
    (["ERROR: tensorflow 2.15.0 has requirement keras<2.16,>=2.15.0, but you'll have keras "
      "3.0.2 which is incompatible."], "keras3-over-tf215"),
    (["tensorflow-cpu 2.15.1 has requirement keras<2.16,>=2.15.0, but you have keras 3.3.3."],
     "keras3-over-tf215"),
    # TensorFlow Model Optimization's check at import (tfmot-tf-version-check)
    (["ImportError: This version of TensorFlow Model Optimization requires TensorFlow version "
      ">= 2.14.0; Detected an installation of version 2.13.1. Please upgrade TensorFlow to "
      "proceed."], "keras-newer-than-tf"),
    # uv refusing a wheel file of another Python or platform (uv-wheel-incompatible), and
    # pip refusing a jax CUDA plugin's (pip-install-issues)
    (["error: A path dependency is incompatible with the current platform: dist/tensorflow-"
      "2.18.0-cp312-cp312-linux_x86_64.whl"], "wheel-python-mismatch"),
    (["error: A URL dependency is incompatible with the current platform: https://example.com/"
      "wheels/jaxlib-0.4.30-cp311-cp311-manylinux2014_aarch64.whl"], "wheel-python-mismatch"),
    (["ERROR: jax_cuda12_plugin-0.4.30-cp312-cp312-manylinux2014_x86_64.whl is not a supported "
      "wheel on this platform."], "wheel-python-mismatch"),
]

#: lines that look like these failures and are not (nothing may be diagnosed)
NEAR_MISSES = [
    # pip's newer words for a dependency of another package than Keras 3 over TensorFlow
    "tensorflow 2.16.1 requires keras>=3.0.0, but you have keras 2.15.0 which is incompatible.",
    "keras 3.3.3 has requirement numpy>=1.0, but you have numpy 0.9.",
    # the resolver's Requires-Python list naming another package
    "'>=3.9' (required by numpy 2.0.0 (from https://files.pythonhosted.org/x))",
    # a library found in NumPy's folder is not an import failure
    "I: loaded /usr/lib/python3/dist-packages/numpy/core/_multiarray_umath.so",
    # an optional extension that a library reports and goes past (CPython's ctypes words)
    "UserWarning: Failed to load image Python extension: Could not find module "
    "'C:\\venv\\Lib\\site-packages\\torchvision\\image.pyd' (or one of its dependencies).",
    # uv refusing another package's wheel
    "error: A path dependency is incompatible with the current platform: dist/numpy-2.0.0-"
    "cp312-cp312-linux_x86_64.whl",
    # another library than the CUDA ones missing, in Chinese
    "python3: 载入共享库时出错: libjpeg.so.8: 无法打开共享对象文件: 没有那个文件或目录",
]

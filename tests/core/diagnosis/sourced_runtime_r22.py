"""Runtime wordings mined from the tools' own sources (message formats, translations),
by readers who saw neither the corpus nor its held-out misses: TensorFlow's old dso_loader
on Windows (the DLL's own name, no "lib"), cuda_diagnostics after a failed cuInit, jax
0.4.17-0.4.20's "Unable to load X." before it asked "Is it installed?", jaxlib's cuDNN stub,
glibc's translations of "cannot open shared object file", HIP's error names as TensorFlow's
rocm_driver.cc spells them, jax's cuDNN 9.10.0 check, tensorflow-addons' and
tensorflow-io's own version and load failures, an add-on built against another Abseil or
protobuf, jax's get_backend() and JAX_PLATFORMS paths without a CUDA backend, uv's and
Poetry's resolvers, CPython's loader for the other Python major, TensorFlow's Windows
bitness check, and pip 9-18's Requires-Python words; a third pass: jaxlib 0.1.x's and jax's
words without CUDA, TensorFlow Decision Forests' and Horovod's for another TensorFlow,
pytest's and the interpreter's for a module not installed. Data only: the wording tests run it
behind every prefix (wordings.RUNTIME_LISTS)."""

from __future__ import annotations

#: (lines, the id diagnosed first) for a program's output
RUNTIME: list[tuple[list[str], str]] = [
    # a third pass: jaxlib 0.1.x and jax without CUDA, TensorFlow Decision Forests and
    # Horovod for another TensorFlow, pytest's and the interpreter's words for an import
    (["RuntimeError: Unknown backend gpu. Available: ['interpreter', 'cpu']"],
     "jaxlib-without-cuda"),
    (["RuntimeError: This operation requires CUDA support from jaxlib or jax cuda plugin."],
     "jaxlib-without-cuda"),
    (["tensorflow.python.framework.errors_impl.NotFoundError: Failure to load the "
      "inference.so custom c++ tensorflow ops. This error is likely caused the version of "
      "TensorFlow and TensorFlow Decision Forests are not compatible."],
     "tf-addon-abi-mismatch"),
    (["horovod.common.exceptions.HorovodVersionMismatchError: Framework tensorflow installed "
      "with version 2.15.0 but found version 2.13.1."], "tf-addon-abi-mismatch"),
    (["E   ModuleNotFoundError: No module named 'tensorflow'"], "import-failed"),
    (["ERROR tests/test_model.py - ModuleNotFoundError: No module named 'keras'"],
     "import-failed"),
    (["/usr/bin/python3: No module named pip"], "import-failed"),
    (["/usr/bin/python3: Error while finding module specification for 'tensorflow.tools' "
      "(ModuleNotFoundError: No module named 'tensorflow')"], "import-failed"),
    ([r"I c:\tf_jenkins\home\workspace\release-win\device\gpu\os\windows\tensorflow"
      r"\stream_executor\dso_loader.cc:126] Couldn't open CUDA library cudart64_80.dll"],
     "cudart-not-found"),
    (["RuntimeError: Unable to initialize backend 'cuda': Unable to load CUDA. (you may need "
      "to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this "
      "backend.)"], "cudart-not-found"),
    ([r"I c:\tf_jenkins\home\workspace\stream_executor\dso_loader.cc:126] Couldn't open CUDA "
      "library nvcuda.dll"], "libcuda-not-found"),
    (["I tensorflow/compiler/xla/stream_executor/cuda/cuda_diagnostics.cc:192] libcuda "
      "reported version is: NOT_FOUND: was unable to find libcuda.so DSO loaded into this "
      "program"], "libcuda-not-found"),
    (["Skipping registering GPU devices..."], "dlopen-failed"),
    (["I tensorflow/stream_executor/cuda/cuda_dnn.cc:3459] Unable to load cuDNN DSO"],
     "dlopen-failed"),
    ([r"I c:\tf_jenkins\home\workspace\stream_executor\dso_loader.cc:126] Couldn't open CUDA "
      "library cudnn64_5.dll"], "dlopen-failed"),
    (["RuntimeError: Unable to initialize backend 'cuda': Unable to load cuDNN. (you may "
      "need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this "
      "backend.)"], "dlopen-failed"),
    (["RuntimeError: cuDNN not found."], "dlopen-failed"),
    (["ImportError: libcudart.so.10.0: Kann die Shared-Object-Datei nicht öffnen: Datei oder "
      "Verzeichnis nicht gefunden"], "import-cuda-lib-missing"),
    (["ImportError: libcublas.so.9.0: Ne peut ouvrir le fichier d'objet partagé: Aucun "
      "fichier ou dossier de ce type"], "import-cuda-lib-missing"),
    (["ImportError: libcusolver.so.10: 共有オブジェクトファイルを開けません: そのようなファイルや"
      "ディレクトリはありません"], "import-cuda-lib-missing"),
    (["ImportError: libcudart.so.9.0: невозможно открыть разделяемый объектный файл: Нет "
      "такого файла или каталога"], "import-cuda-lib-missing"),
    (["I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:147] no NVIDIA GPU device is "
      "present: /dev/nvidia0 does not exist"], "cuinit-no-device"),
    (["E tensorflow/stream_executor/rocm/rocm_driver.cc:982] could not retrieve ROCM device "
      "count: HIP_ERROR_NoDevice"], "cuinit-no-device"),
    (["RuntimeError: cuDNN 9.10.0 had a binary backward-compatibility issue due to reordered "
      "enum values affecting block-scale datatypes. Found runtime version 91000 and build "
      "version 91100. Please upgrade to 9.10.1 or above."], "cudnn-mismatch"),
    (["ImportError: This version of TensorFlow Addons requires TensorFlow version >= 2.1.0; "
      "Detected an installation of version 2.0.0. Please upgrade TensorFlow to proceed."],
     "tf-addon-abi-mismatch"),
    (["/usr/local/lib/python3.10/dist-packages/tensorflow_io/python/ops/__init__.py:104: "
      "UserWarning: file system plugins are not loaded: unable to open file: "
      "libtensorflow_io.so, from paths: ['/usr/local/lib/python3.10/dist-packages/"
      "tensorflow_io/python/ops/libtensorflow_io.so']"], "tf-addon-abi-mismatch"),
    (["NotImplementedError: ('unable to open file: ', '_kafka_ops.so')"],
     "tf-addon-abi-mismatch"),
    (["tensorflow.python.framework.errors_impl.NotFoundError: /usr/local/lib/python3.10/"
      "dist-packages/tensorflow_text/python/ops/_regex_split_ops.so: undefined symbol: "
      "_ZN4absl12lts_2023080212log_internal10LogMessageC1EPKci"], "tf-addon-abi-mismatch"),
    (["RuntimeError: Backend 'gpu' failed to initialize: NOT_FOUND: Could not find registered "
      "platform with name: \"cuda\""], "jaxlib-without-cuda"),
    (["RuntimeError: Unable to initialize backend 'cuda': Backend 'cuda' is not in the list "
      "of known backends: ['cpu', 'tpu']. (set JAX_PLATFORMS='' to automatically choose an "
      "available backend)"], "jaxlib-without-cuda"),
    (["RuntimeError: Unknown backend cuda. Available backends are ['cpu']"],
     "jaxlib-without-cuda"),
    (["  ╰─▶ Because there is no version of jaxlib==0.4.1+cuda11.cudnn86 and you require "
      "jaxlib==0.4.1+cuda11.cudnn86, we can conclude that your requirements are "
      "unsatisfiable."], "wheel-not-on-index"),
    (["Because myapp depends on torch (2.0.1+cu118) which doesn't match any versions, "
      "version solving failed."], "wheel-not-on-index"),
    (["ERROR: Could not find a final version that satisfies the requirement "
      "tensorflow==2.15.0+nv24.3 (from versions: none)"], "wheel-not-on-index"),
    (["ImportError: dynamic module does not define module export function "
      "(PyInit__pywrap_tensorflow_internal)"], "wheel-python-mismatch"),
    (["ImportError: dynamic module does not define init function "
      "(init_pywrap_tensorflow_internal)"], "wheel-python-mismatch"),
    (["ImportError: TensorFlow requires a 64-bit Python interpreter, but this interpreter is "
      "32-bit. Reinstall the 64-bit build of Python and reinstall TensorFlow into it."],
     "wheel-python-mismatch"),
    (["tensorflow requires Python '>=3.5' but the running Python is 2.7.12"],
     "no-wheel-for-python"),
]

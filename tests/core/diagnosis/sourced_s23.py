"""Lines for session 23's change, in the tools' own formats: urllib3's warning that it is
retrying a connection under pip (connectionpool.py: "Retrying (%r) after connection broken
by '%r': %s") is not a failed download; pip says so in its own words when its retries run
out. Data only: BUILD runs in test_round7_build_signatures.py's tests, found by
wordings.py.
"""

from __future__ import annotations

#: (the id diagnosed, alone, after an unrelated line; the lines)
BUILD: list[tuple[str, list[str]]] = [
    # pip's end when its retries ran out (urllib3's MaxRetryError, then the exception's own
    # last line in a traceback)
    ("download-failed", [
        "ERROR: Could not install packages due to an OSError: HTTPSConnectionPool("
        "host='files.pythonhosted.org', port=443): Max retries exceeded with url: "
        "/packages/tensorflow-2.8.2-cp39-cp39-win_amd64.whl (Caused by ReadTimeoutError("
        "\"HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Read timed out. "
        "(read timeout=15)\"))"]),
    ("download-failed", [
        "pip._vendor.urllib3.exceptions.ReadTimeoutError: HTTPSConnectionPool("
        "host='files.pythonhosted.org', port=443): Read timed out."]),
    ("download-failed", [
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='pypi.org', port=443): "
        "Failed to establish a new connection: [Errno -3] Temporary failure in name "
        "resolution"]),
]
#: the ids BUILD_NEAR_MISSES must not give
NOT_BUILD = {"download-failed"}
#: lines that must not be diagnosed as any of NOT_BUILD
BUILD_NEAR_MISSES = [
    # urllib3's retry warnings under pip (pip 10 and newer print "WARNING: " before them)
    "  WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, "
    "status=None)) after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool("
    "host='files.pythonhosted.org', port=443): Read timed out. (read timeout=15)\")': "
    "/simple/tensorflow/",
    "WARNING: Retrying (Retry(total=3, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection."
    "HTTPSConnection object at 0x7f1c2a0b3d60>: Failed to establish a new connection: "
    "[Errno -3] Temporary failure in name resolution')': /simple/numpy/",
    "  Retrying (Retry(total=4, connect=None, read=None, redirect=None)) after connection "
    "broken by 'NewConnectionError('<pip._vendor.requests.packages.urllib3.connection."
    "VerifiedHTTPSConnection object at 0x7f0e1c2d3e50>: Failed to establish a new "
    "connection: [Errno -2] Name or service not known',)': /simple/six/",
]

"""A minimal REAPI client for the tests: one Execute, its result as JSON on stdout.

Runs with the BuildGrid venv's Python (it uses the REAPI modules in BuildGrid's wheel):

    .venv-buildgrid/bin/python tests/reapi/client.py --endpoint 127.0.0.1:PORT --instance NAME \
        [--input-dir DIR] [--workdir SUB] [--output-file P]... [--output-dir P]... \
        [--env K=V]... [--property K=V]... [--timeout S] -- ARGV...

It uploads DIR as the input root, sends Command and Action (do_not_cache), waits for the
operation and prints {"status": {"code", "message"}, "exit_code", "stdout", "stderr",
"files": {path: {"text", "executable"}}, "dirs": {path: {relpath: text}}}. Exit 0 when
the call itself worked (whatever the action did), 2 when the Execute call failed; then
the JSON has "error": {"code", "message"}.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import grpc
from buildgrid._protos.build.bazel.remote.execution.v2 import remote_execution_pb2 as re_pb2
from buildgrid._protos.build.bazel.remote.execution.v2 import (
    remote_execution_pb2_grpc as re_grpc,
)
from buildgrid._protos.google.rpc import code_pb2


def digest(data: bytes) -> re_pb2.Digest:
    return re_pb2.Digest(hash=hashlib.sha256(data).hexdigest(), size_bytes=len(data))


def directory_tree(path: Path, blobs: dict[str, bytes]) -> re_pb2.Digest:
    """Directory messages for `path` (files, executables, subfolders) into blobs; its digest."""
    node = re_pb2.Directory()
    for child in sorted(path.iterdir(), key=lambda p: p.name):
        if child.is_dir():
            node.directories.add(name=child.name, digest=directory_tree(child, blobs))
        else:
            data = child.read_bytes()
            d = digest(data)
            blobs[d.hash] = data
            node.files.add(name=child.name, digest=d,
                           is_executable=os.access(child, os.X_OK))
    data = node.SerializeToString()
    d = digest(data)
    blobs[d.hash] = data
    return d


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--endpoint", required=True)
    p.add_argument("--instance", required=True)
    p.add_argument("--input-dir")
    p.add_argument("--workdir", default="")
    p.add_argument("--output-file", action="append", default=[])
    p.add_argument("--output-dir", action="append", default=[])
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--property", action="append", default=[])
    p.add_argument("--timeout", type=float, default=0)
    p.add_argument("argv", nargs="+")
    args = p.parse_args(argv)

    channel = grpc.insecure_channel(args.endpoint)
    cas = re_grpc.ContentAddressableStorageStub(channel)
    blobs: dict[str, bytes] = {}
    if args.input_dir:
        root = directory_tree(Path(args.input_dir), blobs)
    else:
        empty = re_pb2.Directory().SerializeToString()
        root = digest(empty)
        blobs[root.hash] = empty
    command = re_pb2.Command(arguments=args.argv, working_directory=args.workdir,
                             output_files=sorted(args.output_file),
                             output_directories=sorted(args.output_dir))
    for pair in sorted(args.env):
        name, _, value = pair.partition("=")
        command.environment_variables.add(name=name, value=value)
    for pair in sorted(args.property):
        name, _, value = pair.partition("=")
        command.platform.properties.add(name=name, value=value)
    command_data = command.SerializeToString()
    command_digest = digest(command_data)
    blobs[command_digest.hash] = command_data
    action = re_pb2.Action(command_digest=command_digest, input_root_digest=root,
                           do_not_cache=True, platform=command.platform)
    if args.timeout:
        action.timeout.FromNanoseconds(int(args.timeout * 1e9))
    action_data = action.SerializeToString()
    action_digest = digest(action_data)
    blobs[action_digest.hash] = action_data
    cas.BatchUpdateBlobs(re_pb2.BatchUpdateBlobsRequest(
        instance_name=args.instance,
        requests=[re_pb2.BatchUpdateBlobsRequest.Request(digest=digest(b), data=b)
                  for b in blobs.values()]), timeout=60)

    execution = re_grpc.ExecutionStub(channel)
    response = re_pb2.ExecuteResponse()
    try:
        for op in execution.Execute(re_pb2.ExecuteRequest(
                instance_name=args.instance, action_digest=action_digest,
                skip_cache_lookup=True), timeout=600):
            if op.done:
                if op.HasField("error"):
                    response.status.CopyFrom(op.error)
                else:
                    op.response.Unpack(response)
    except grpc.RpcError as e:
        print(json.dumps({"error": {"code": e.code().name, "message": e.details()}}))
        return 2

    def read(d: re_pb2.Digest) -> bytes:
        if d.size_bytes == 0:
            return b""
        answer = cas.BatchReadBlobs(re_pb2.BatchReadBlobsRequest(
            instance_name=args.instance, digests=[d]), timeout=60)
        return bytes(answer.responses[0].data)

    result = response.result
    out: dict[str, Any] = {
        "status": {"code": code_pb2.Code.Name(response.status.code),
                   "message": response.status.message},
        "exit_code": result.exit_code,
        "stdout": read(result.stdout_digest).decode(errors="replace"),
        "stderr": read(result.stderr_digest).decode(errors="replace"),
        "files": {f.path: {"text": read(f.digest).decode(errors="replace"),
                           "executable": f.is_executable} for f in result.output_files},
        "dirs": {},
    }
    for d in result.output_directories:
        tree = re_pb2.Tree()
        tree.ParseFromString(read(d.tree_digest))
        children = {digest(c.SerializeToString()).hash: c for c in tree.children}
        files: dict[str, str] = {}
        todo = [(tree.root, "")]
        while todo:
            node, prefix = todo.pop()
            for f in node.files:
                files[prefix + f.name] = read(f.digest).decode(errors="replace")
            todo += [(children[sub.digest.hash], prefix + sub.name + "/")
                     for sub in node.directories]
        out["dirs"][d.path] = files
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Offline stand-in for @rules_proto//proto:defs.bzl: each macro forwards to the native rule."""

ProtoInfo = ProtoInfo

def proto_library(**kwargs):
    native.proto_library(**kwargs)

def proto_lang_toolchain(**kwargs):
    native.proto_lang_toolchain(**kwargs)

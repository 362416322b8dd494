"""The warm workspace: a long-lived container with the source and Bazel's output base in volumes, so a rebuild is Bazel's own incremental build."""

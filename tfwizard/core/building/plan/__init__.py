"""A recipe made a BuildPlan: the image, mounts, configure answers, Bazel's flags in named groups, the container steps; renderers and the fetch-only plan."""

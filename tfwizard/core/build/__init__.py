"""Everything that ends in a container: the plan and its flag groups, the runner and its
parts (containers, volumes, artifacts, attach, outcome), the record, progress, diagnosis,
Docker access, leftovers and bundles."""

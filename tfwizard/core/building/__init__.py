"""Everything that ends in a build container: the plan (plan/), the cold run and its record (run/), the warm workspace (warm/), and what is read back afterwards (report/)."""

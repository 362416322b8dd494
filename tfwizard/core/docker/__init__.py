"""Access to the Docker engine: one client per process and engine, images' facts, tfwizard's leftovers."""

"""Verifying an installed TensorFlow: the probe run in its interpreter, the job that judges it, its build facts against the build and this machine."""

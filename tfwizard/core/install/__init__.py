"""Installing a wheel into a virtualenv: the job, an official requirement, the reinstall list, what a wheel says of itself and whether it is what its plan promised."""

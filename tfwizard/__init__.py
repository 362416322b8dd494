"""tfwizard: build TensorFlow from source without the ordeal."""

__version__ = "0.1.0"

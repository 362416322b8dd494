"""TensorFlow's facts read from its own source tree: the reader, the overlay that corrects a lagging table entry for one build, the entry drafted for the knowledge base."""

"""What is read back from build records: history, estimates from it, and the bundle a user shares."""

"""A run: its owner (the manager), its assembly, the agent loop, and the conversation window."""

"""A run: its owner (the manager), the agent loop, and the conversation window it keeps."""

"""The workspace: folders and confinement, buffer-first reads and walks, .gitignore, sensitive
paths.
"""

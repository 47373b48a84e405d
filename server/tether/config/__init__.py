"""Settings: the layers (defaults, user file, project file, TETHER_*, editor) and trusted
projects.
"""

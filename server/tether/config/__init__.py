"""Settings: the one layer order (``assemble``: defaults, user file, project file,
``TETHER_*``, editor or flags), what an untrusted project may set (``project``), and reading,
validating, merging and defaults (``layers``).
"""

"""Writing files: the hardened disk writer, per-path locks, buffers and disk kept coherent
around commands.
"""

"""Text as LSP sees it: lines and positions, spans, edits and diffs, the proposed window,
linear-time regex.
"""

"""``tether acp``: the Agent Client Protocol (v1) front on the same core as ``tether serve``."""

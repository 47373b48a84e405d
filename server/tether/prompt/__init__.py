"""What the model reads besides the conversation: the system prompt, AGENTS.md, the editor's
state, @mentions, and untrusted text framed as data.
"""

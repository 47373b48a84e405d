"""Session storage: one JSONL log per session, plus a small index file next to it.

``records`` holds what a log line can be and reads a log back; ``writer`` appends to logs
from a background thread (and keeps each session's index); ``index`` is that summary;
``store`` lists sessions and finds runs from the indexes; ``repair`` closes tool calls a
dead server left open.
"""

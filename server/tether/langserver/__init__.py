"""Language servers Tether starts itself, for the code tools (``tools/lsp_tools.py``) when no
editor answers them: which server serves which language (``catalog.py``), one server process
and its LSP client (``client.py``: pygls' client, lsprotocol types), and a workspace's servers
started lazily and stopped with the front (``pool.py``).

Only ``client.py`` imports pygls and lsprotocol, when a server is first started.
"""

"""The shared warm server for ``tether run`` (issue 29, item 2; on unless ``TETHER_DAEMON=0``,
``daemon = false`` in the user's config file or ``--no-daemon`` turns it off).

``wire`` (the socket's folder, name and frames; standard library only), ``front`` (what
``tether run`` does instead of starting its own server: connect, hand over its terminal,
wait for the exit status), ``server`` (the daemon: one forked process per connection, running
the same ``tether run`` as in-process, with that connection's cwd, environment and terminal).
"""

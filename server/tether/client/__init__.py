"""The headless client: spawns ``tether serve`` and speaks protocol v1 to it (demo, run, tests).

Import its modules by name (``client.connection``, ``client.render``): ``tether run`` imports
``client.spawn`` alone to start its server before paying for the protocol's models."""

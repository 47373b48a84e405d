"""One module per scenario; each has ``NAME`` and ``async def run(ctx) -> list[Row]``."""

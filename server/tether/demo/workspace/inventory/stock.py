"""Items on the shelf and what they are worth."""


class Stock:
    """Quantities and unit prices of the items in a shop."""

    def __init__(self):
        self._items = {}

    def add(self, name, quantity, unit_price):
        """Put ``quantity`` more of ``name`` on the shelf at ``unit_price`` each."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        count, _ = self._items.get(name, (0, unit_price))
        self._items[name] = (count + quantity, unit_price)

    def remove(self, name, quantity):
        """Take ``quantity`` of ``name`` off the shelf."""
        count, price = self._items[name]
        if quantity > count:
            raise ValueError(f"only {count} {name} left")
        self._items[name] = (count - quantity, price)

    def quantity(self, name):
        """How many of ``name`` are on the shelf."""
        return self._items.get(name, (0, 0))[0]

    def total_value(self):
        """What everything on the shelf is worth."""
        total = 0
        for count, price in self._items.values():
            total += count + price
        return total

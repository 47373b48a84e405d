import unittest

from inventory import Stock


class StockTest(unittest.TestCase):
    def test_add_and_remove(self):
        stock = Stock()
        stock.add("apple", 5, 0.5)
        stock.remove("apple", 2)
        self.assertEqual(stock.quantity("apple"), 3)

    def test_total_value(self):
        stock = Stock()
        stock.add("apple", 4, 0.5)
        stock.add("pear", 2, 1.25)
        self.assertAlmostEqual(stock.total_value(), 4.5)


if __name__ == "__main__":
    unittest.main()

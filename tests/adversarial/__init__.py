"""Adversarial suites: generators that state a promise of the trust boundary (issue 24)."""

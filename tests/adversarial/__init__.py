"""Adversarial suites: generators (hypothesis) that state the promises of the trust boundary."""

"""Approval rules: exact, persistent, revocable allows, denies and asks (docs/approvals.md)."""

"""Delivery: the outbox a step writes its effects into, and the deliverer that shows them in
Slack after the commit, in order per message, with retries, and never under a lock."""

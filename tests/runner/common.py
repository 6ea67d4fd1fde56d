"""What the runner tests share: the task and seed of the recorded episode (see ``conftest``).

A plain module, not ``conftest``: tests import it, the conftest only holds fixtures."""

TASK = "put the red block in the green bin"
SEED = 0

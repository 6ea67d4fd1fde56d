"""One task, one episode: the only place that wires planner, bridge, skills and physics.

- :mod:`~skillbridge.runner.records`: what a run is asked (:class:`RunConfig`) and what it
  reports (:class:`RunResult`, progress events, exit codes);
- :mod:`~skillbridge.runner.runner`: :class:`Runner`, the closed loop executed and recorded;
- :mod:`~skillbridge.runner.executor`: the skill executor it drives;
- :mod:`~skillbridge.runner.faults`: faults a test or ``eval --faults`` injects into a run;
- :mod:`~skillbridge.runner.signals`: SIGTERM as a clean stop.

A run may hold a conversation (:class:`planner.conversation.Conversation`): the robot's
questions are asked there, and an utterance posted to it while the arm moves is taken at
the next control step (the runner stops the skill, brings the arm to rest, or lets a
release in progress finish; docs/CONVERSATION.md).

The cubes of a run (``--cubes``) are checked by the scene's own grammar, :mod:`sim.cubes`.
"""

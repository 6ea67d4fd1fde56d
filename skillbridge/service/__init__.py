"""``skillbridge serve``: the robot as an HTTP service (FastAPI under uvicorn).

Why a service: a chat interface, a language-model agent or a lab's own script must be able
to drive the robot, talk to it while it works and watch it, without a terminal. The pieces,
one concept a module:

- :mod:`~skillbridge.service.config`: what a server is started with, and its safety checks
  (loopback unless a bearer token is set; body, rate and count limits);
- :mod:`~skillbridge.service.frames`: rendered frames at a chosen rate, as base64 images;
- :mod:`~skillbridge.service.worker`: a worker process that runs one task at a time (a real
  :class:`~skillbridge.runner.runner.Runner` with its own scene and conversation) and
  streams its events back;
- :mod:`~skillbridge.service.pool`: the bounded pool of workers with a queue, a per-task
  timeout, and a dead worker replaced (only its own session fails);
- :mod:`~skillbridge.service.sessions`: a session: its event log, its state, the physics
  state it continues from;
- :mod:`~skillbridge.service.episodes`: episodes listed and read, never outside the runs
  folder;
- :mod:`~skillbridge.service.security`: the bearer token, request size and rate limits;
- :mod:`~skillbridge.service.app`: the FastAPI application (OpenAPI at ``/docs``, the web
  page at ``/``).
"""

"""A stand-in for ``evaluation.jobs.run_job`` in Ray workers: jobs that kill their own worker."""

import os
import time
from pathlib import Path


def run_job(job: dict) -> dict:
    if job.get("always_crash"):
        os._exit(9)  # what kill -9 or the OOM killer does to a worker
    marker = job.get("crash_once")
    if marker and not Path(marker).exists():
        Path(marker).write_text("crashed once")
        time.sleep(0.2)
        os._exit(9)
    return {"n": job["n"], "pid": os.getpid()}

"""A stand-in for ``evaluation.jobs.run_job`` in pool workers: one job kills its own worker."""

import os
import time


def run_job(job: dict) -> dict:
    if job.get("crash"):
        time.sleep(1.0)  # the other jobs finish first: only this one is lost with the pool
        os._exit(9)  # what kill -9 or the OOM killer does to a worker
    return {"n": job["n"]}

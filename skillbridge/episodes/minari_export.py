"""Recorded episodes as a Minari dataset (Farama's offline-RL standard), for offline RL users.

``--out DIR`` becomes a Minari datasets root holding one dataset, ``DIR/<namespace>/<name>``
(Minari's arrow format). Load it with ``MINARI_DATASETS_PATH=DIR`` and
``minari.load_dataset("skillbridge/tabletop-v0")``.

Per episode: ``observations`` is a dict of ``state`` (the arm's six joints and two fingers)
and ``environment_state`` (every cube's position and quaternion) for every recorded state,
the final one included (steps + 1 rows, as Minari wants); ``actions`` are the recorded
actions; the reward is sparse: 1 on the last step when the episode's goal held in physics,
which then ``terminates`` it (otherwise it is ``truncated``). Values are float64, bit-identical
to the episode. Only complete episodes have the state after the last action: incomplete and
zero-step ones are skipped with a reason.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from skillbridge.episodes.episode import Episode
from skillbridge.episodes.lerobot_export import (
    ExportError,
    ExportResult,
    Layout,
    check_target,
    find_episodes,
    publish,
    qpos_of,
    usable,
)

DATASET_ID = "skillbridge/tabletop-v0"
_ID = re.compile(r"[A-Za-z0-9_]+/[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*-v\d+")


def _minari():
    try:
        import minari
        from minari.data_collector import EpisodeBuffer
    except ImportError:
        raise ExportError(
            "--format minari needs minari: pip install 'skillbridge[minari]'"
        ) from None
    return minari, EpisodeBuffer


def check_out(out: Path, dataset_id: str, force: bool) -> None:
    earlier = (out / dataset_id / "data" / "metadata.json").is_file()
    check_target(out, force, earlier, f"does not hold the Minari dataset {dataset_id}")


def _buffer(EpisodeBuffer, i: int, ep: Episode, model, layout: Layout):
    q = qpos_of(model, ep.all_states())
    n = ep.n_steps
    res = ep.result
    ok = res.get("status") == "success"
    rewards = np.zeros(n)
    rewards[-1] = float(ok)
    term, trunc = np.zeros(n, bool), np.zeros(n, bool)
    term[-1], trunc[-1] = ok, not ok
    seed = ep.meta.get("seed")
    return EpisodeBuffer(
        id=i,
        seed=seed if isinstance(seed, int) else None,
        observations={"state": q[:, layout.state_qadr], "environment_state": q[:, layout.env_qadr]},
        actions=np.asarray(ep.actions, np.float64),
        rewards=rewards.tolist(),
        terminations=term.tolist(),
        truncations=trunc.tolist(),
    )


@contextlib.contextmanager
def _datasets_path(root: Path):
    old = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(root)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = old


def export_minari(
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    dataset_id: str = DATASET_ID,
    force: bool = False,
) -> ExportResult:
    """Export the complete episodes under ``paths`` as the Minari dataset ``dataset_id`` in
    the datasets root ``out`` (built in a temporary folder, renamed into place)."""
    import gymnasium as gym

    from sim import physics

    t0 = time.perf_counter()
    out = Path(out)
    if not _ID.fullmatch(dataset_id):
        raise ExportError(f"--dataset-id {dataset_id!r}: give NAMESPACE/NAME-vN, e.g. {DATASET_ID}")
    minari, EpisodeBuffer = _minari()
    check_out(out, dataset_id, force)
    eps, skipped = usable(
        find_episodes(paths),
        lambda ep: (
            None
            if ep.complete and ep.final_state is not None
            else "incomplete episode (no state after the last action)"
        ),
    )
    if not eps:
        raise ExportError("nothing to export: " + "; ".join(skipped or ["no episode"]))
    model = physics.load_model()
    layout = Layout.of(model)
    inf = np.inf
    obs_space = gym.spaces.Dict(
        {
            "state": gym.spaces.Box(-inf, inf, (len(layout.state_names),), np.float64),
            "environment_state": gym.spaces.Box(-inf, inf, (len(layout.env_names),), np.float64),
        }
    )
    act_space = gym.spaces.Box(-1.0, 1.0, (4,), np.float64)
    tmp = out.parent / f".{out.name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir(parents=True)
        buffers = [_buffer(EpisodeBuffer, i, ep, model, layout) for i, ep in enumerate(eps)]
        with _datasets_path(tmp), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # minari asks for an author e-mail, an env spec
            minari.create_dataset_from_buffers(
                dataset_id,
                buffers,
                observation_space=obs_space,
                action_space=act_space,
                algorithm_name="skillbridge (planner + skill policies)",
                author="skillbridge",
                description="Episodes recorded by skillbridge in its MuJoCo tabletop scene.",
                data_format="arrow",
            )
        publish(tmp, out, lambda: check_out(out, dataset_id, force))
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError):
            raise ExportError(f"cannot write {out}: {e.strerror or e}") from None
        raise
    frames = sum(e.n_steps for e in eps)
    return ExportResult(
        out,
        len(eps),
        frames,
        len({e.meta.get("task") for e in eps}),
        skipped,
        time.perf_counter() - t0,
        fmt=f"minari {dataset_id}",
    )

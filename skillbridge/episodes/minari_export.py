"""Recorded episodes as a Minari dataset (Farama's offline-RL standard), for offline RL users.

``--out DIR`` is a Minari datasets root; the export writes one dataset in it,
``DIR/<namespace>/<name>`` (Minari's arrow format). Load it with
``MINARI_DATASETS_PATH=DIR`` and ``minari.load_dataset("skillbridge/tabletop-v0")``;
``dataset.recover_environment()`` makes the env the episodes were recorded in
(``skillbridge/Tabletop-v0``, or ``skillbridge/TabletopArticulated-v0`` for the articulated
scene: the dataset stores its gymnasium spec), so a policy trained on the data rolls out
there as it is.

Per episode: ``observations`` are the env's own (its ``observation_space``, a Dict of
``proprio``, ``object_pos``, ``object_quat``, ``object_present`` and, in the articulated
scene, ``articulation``), computed by the env from every recorded state, the final one
included (steps + 1 rows, as Minari wants); float64, exactly what the env returned while
recording. ``actions`` are the recorded actions in the env's action space (float32: the
float64 record rounded once). The reward is sparse: 1 on the last step when the episode's
goal held in physics, which then ``terminates`` it (otherwise it is ``truncated``). The
seed and the reset options (``cubes``, ``drawer``, ``light``) are the episode's, so
``env.reset(seed=..., options=...)`` starts where it started (not for a chain link that
continued from the previous episode's state: those have neither). The task text is in
``infos["task"]`` (one per observation) and in the episode metadata with the episode's
folder name, outcome and trace id. Only complete episodes have the state after the last
action: incomplete and zero-step ones are skipped with a reason.

``--force`` replaces only this dataset's folder; other datasets in the root stay.
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
from typing import Any

import numpy as np

from skillbridge.episodes.episode import Episode
from skillbridge.episodes.export_common import (
    ExportError,
    check_owned,
    check_state_size,
    check_target,
    find_episodes,
    publish,
    scene_of,
    seed_of,
    temp_dir,
    usable,
)
from skillbridge.episodes.lerobot_export import ExportResult

DATASET_ID = "skillbridge/tabletop-v0"
_ID = re.compile(r"[A-Za-z0-9_]+/[A-Za-z0-9_]+(-[A-Za-z0-9_]+)*-v\d+")
#: The reset options an episode's meta.json ``scene`` records (see the runner).
RESET_OPTIONS = ("cubes", "drawer", "light")


def _minari():
    try:
        import minari
        import pyarrow  # noqa: F401  (Minari's arrow format; minari itself does not need it)
        from minari.data_collector import EpisodeBuffer
    except ImportError:
        raise ExportError(
            "--format minari needs minari: pip install 'skillbridge[minari]'"
        ) from None
    return minari, EpisodeBuffer


def check_id(dataset_id: str) -> str:
    """``dataset_id`` if both our pattern (NAMESPACE/NAME-vN, no path tricks) and Minari's
    own parser accept it (Minari wants namespaces of two characters or more)."""
    if not _ID.fullmatch(dataset_id):
        raise ExportError(f"--dataset-id {dataset_id!r}: give NAMESPACE/NAME-vN, e.g. {DATASET_ID}")
    try:
        from minari.dataset.minari_dataset import parse_dataset_id
        from minari.namespace import validate_namespace
    except ImportError:
        return dataset_id  # export_minari says minari is missing
    try:
        namespace, _, _ = parse_dataset_id(dataset_id)
        validate_namespace(namespace)
    except (ValueError, TypeError) as e:
        why = str(e).split(". ")[0].strip() or type(e).__name__
        raise ExportError(f"--dataset-id {dataset_id!r}: Minari refuses it ({why})") from None
    return dataset_id


def _own_files(dataset_id: str) -> re.Pattern[str]:
    """The files a Minari arrow dataset ``dataset_id`` holds (relative to the root)."""
    return re.compile(
        re.escape(dataset_id) + r"/data/(?:metadata\.json|\d+/(?:metadata\.json|part-\d+\.arrow))"
    )


def check_out(out: Path, dataset_id: str, force: bool) -> None:
    earlier = (out / dataset_id / "data" / "metadata.json").is_file()
    check_target(out, force, earlier, f"does not hold the Minari dataset {dataset_id}")
    if earlier and not os.path.islink(out):
        check_owned(out, (dataset_id,), _own_files(dataset_id))


def env_id_of(scene: str) -> str:
    from sim import scenes

    return scenes.get(scene).env_id


def reset_options(ep: Episode) -> dict | None:
    """The options the episode's env was reset with (None for a continued chain link)."""
    sc = ep.meta.get("scene") or {}
    if sc.get("continued"):
        return None
    return {k: sc[k] for k in RESET_OPTIONS if sc.get(k) is not None}


def observations(env, ep: Episode) -> dict[str, np.ndarray]:
    """The env's observation of every recorded state: reset as recorded (which cubes are
    present is env state that the physics state does not hold), then each state restored."""
    opts = reset_options(ep)
    try:
        env.reset(seed=seed_of(ep), options=opts)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        msg = str(e).splitlines()[0][:160] if str(e) else type(e).__name__
        raise ExportError(f"{ep.path}: meta.json scene options are not the env's ({msg})") from None
    rows = []
    for s in ep.all_states():
        env.set_state(s)
        rows.append(env.observe())
    return {k: np.stack([r[k] for r in rows]) for k in rows[0]}


def _buffer(EpisodeBuffer, i: int, ep: Episode, env):
    n = ep.n_steps
    ok = ep.result.get("status") == "success"
    rewards = np.zeros(n)
    rewards[-1] = float(ok)
    term, trunc = np.zeros(n, bool), np.zeros(n, bool)
    term[-1], trunc[-1] = ok, not ok
    opts = reset_options(ep)
    return EpisodeBuffer(
        id=i,
        seed=seed_of(ep) if opts is not None else None,
        options=opts or None,
        observations=observations(env, ep),
        actions=np.asarray(ep.actions).astype(env.action_space.dtype),
        rewards=rewards.tolist(),
        terminations=term.tolist(),
        truncations=trunc.tolist(),
        infos={"task": [str(ep.meta.get("task", ""))] * (n + 1)},
    )


def _episode_metadata(ep: Episode) -> dict[str, Any]:
    return {
        "task": str(ep.meta.get("task", "")),
        "skillbridge_episode": ep.path.name,
        "skillbridge_outcome": str(ep.result.get("status")),
        "skillbridge_trace_id": ep.meta.get("trace_id"),
        "skillbridge_seed": seed_of(ep),
    }


@contextlib.contextmanager
def _datasets_path(root: Path):
    old = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(root.absolute())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = old


def _requirements() -> list[str]:
    import mujoco

    # replay is exact only with the MuJoCo the episodes were recorded with
    return ["skillbridge", f"mujoco=={mujoco.__version__}"]


def export_minari(
    paths: Iterable[str | Path],
    out: str | Path,
    *,
    dataset_id: str = DATASET_ID,
    force: bool = False,
) -> ExportResult:
    """Export the complete episodes under ``paths`` as the Minari dataset ``dataset_id`` in
    the datasets root ``out`` (built in a temporary folder, moved into place)."""
    t0 = time.perf_counter()
    out = Path(out)
    check_id(dataset_id)
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
    import gymnasium as gym

    scene = scene_of(eps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's checker on a headless machine
        env = gym.make(env_id_of(scene))  # its spec is what recover_environment() makes
    tmp: Path | None = None
    try:
        base: Any = env.unwrapped  # the TabletopEnv under gymnasium's wrappers
        for e in eps:
            check_state_size(e, base.model)
        buffers = [_buffer(EpisodeBuffer, i, ep, base) for i, ep in enumerate(eps)]
        tmp = temp_dir(out)
        with _datasets_path(tmp), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # minari asks for an e-mail, a code permalink
            ds = minari.create_dataset_from_buffers(
                dataset_id,
                buffers,
                env=env,
                algorithm_name="skillbridge (planner + skill policies)",
                author="skillbridge",
                description=(
                    f"Episodes recorded by skillbridge in its MuJoCo {scene} scene; the task "
                    "text of each is in infos['task'] and the episode metadata."
                ),
                data_format="arrow",
                requirements=_requirements(),
            )
            ds.storage.update_episode_metadata([_episode_metadata(e) for e in eps], range(len(eps)))
        namespace = dataset_id.split("/")[0]
        publish(
            tmp,
            out,
            (dataset_id,),
            lambda: check_out(out, dataset_id, force),
            shared=(f"{namespace}/namespace_metadata.json",),
        )
    except BaseException as e:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError):
            raise ExportError(f"cannot write {out}: {e.strerror or e}") from None
        raise
    finally:
        env.close()
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

"""CLI verbs that exercise the scene alone: ``demo``."""

from __future__ import annotations

from pathlib import Path

import typer

from skillbridge.errors import UserError, safe


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo(
    seed: int = typer.Option(0, "--seed", help="Scene seed."),
    episodes: int = typer.Option(
        3, "-n", "--n-episodes", min=1, max=1000, help="Pick-and-place rounds."
    ),
    video: Path = typer.Option(Path("runs/demo.mp4"), "--video", help="mp4 to write."),
):
    """Scripted (non-learned) pick-and-place in the scene, rendered to a video."""
    from sim.video import VideoError

    try:
        _demo(seed, episodes, video)
    except VideoError as e:  # a read-only disk, a folder, a device, a full disk
        raise UserError(str(e), 2) from None


def _demo(seed: int, episodes: int, video: Path) -> None:
    import numpy as np

    import sim  # noqa: F401  (sets MUJOCO_GL)
    from sim import scene
    from sim.env import TabletopEnv
    from sim.scripted import run_pick_place
    from sim.video import VideoWriter, caption
    from skillbridge.errors import console as make_console

    console = make_console()
    # the writer first: it checks --video (folder, device, read-only disk) before any work
    vw = VideoWriter(video, fps=TabletopEnv.metadata["render_fps"])
    env = TabletopEnv(width=480, height=360)
    rng = np.random.default_rng(seed)
    try:
        with vw:
            orig = env.step_physics

            for i in range(episodes):
                env.reset(seed=seed + i)
                cube = str(rng.choice(scene.CUBE_NAMES))
                target = str(rng.choice(scene.BIN_NAMES))
                text = f"scripted: {cube} -> {target}"

                def stepped(action, control_steps=1, _t=text):
                    orig(action, control_steps)
                    vw.append(caption(env.render_rgb(), _t))

                env.step_physics = stepped  # type: ignore[method-assign]
                ok = run_pick_place(env, cube, target)
                env.step_physics = orig  # type: ignore[method-assign]
                console.print(f"{safe(text)}: {'[green]success' if ok else '[red]failed'}")
    finally:
        env.close()
    console.print(f"video: {safe(video)} ({vw.frames} frames)", highlight=False)

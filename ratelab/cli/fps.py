"""``ratelab fps``: how fast the live limiter panel redraws, per algorithm."""

from __future__ import annotations

from .support import command, count, flags, seconds, table


def add_fps(sub) -> None:
    p = command(
        sub, "fps", run=run_fps, render=render_fps,
        help="measure the live limiter's redraw rate (frames per second)",
        description="Step the live limiter panel (ratelab.widgets.LiveLimiter) --frames times "
                    "per registry algorithm, --dt virtual seconds a frame, with the gentle "
                    "stream on, and time step + redraw on the real clock (the figures vary "
                    "from run to run).",
        example="ratelab fps --frames 100 --dt 0.05")
    p.add_argument("--frames", type=count, default=200, help="frames to draw per algorithm")
    p.add_argument("--dt", type=seconds, default=0.05, help="virtual time a frame advances")


def run_fps(args) -> dict:
    from ..widgets import measure_all_fps  # here: ipywidgets, matplotlib load for fps only

    with flags(frames="--frames", dt="--dt"):
        return measure_all_fps(args.frames, args.dt)


def render_fps(r: dict) -> str:
    rows = [{"algorithm": x["algorithm"], "frames_per_s": round(x["frames_per_s"])}
            for x in r["results"]]
    return (f"{r['frames']} frames of {r['dt_s']:g} s per algorithm\n"
            + table(rows, headers={"frames_per_s": "frames/s"}))

"""The agent-facing task description of each Core-16 environment (EvoPolicyGym's ``task.md``).

EvoPolicyGym v0.1.0 gives its agent one ``task.md`` per environment: what to achieve, what an
observation and an action are, how reward is paid, and where feedback is. ``evotree init
--protocol evopolicygym --env ID`` writes :func:`render` of the environment into ``task.md`` of
the workspace. The texts are evotree's own, written from the environments' documentation; they
name no seed, pool size or anchor (those stay hidden).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TaskDoc", "TASKS", "render", "TASK_FILE"]

#: Where the description is written in a new workspace.
TASK_FILE = "task.md"

_MINIGRID_OBS = (
    "A dict: `image`, the 7x7 cells in front of the agent, each three integers (object type, colour, "
    "state such as open/closed/locked); `direction`, 0 to 3 (east, south, west, north); `mission`, "
    "the instruction as text. The view does not pass through walls or closed doors."
)
_MINIGRID_ACT = (
    "A Discrete action of 7: 0 turn left, 1 turn right, 2 move forward, 3 pick up, 4 drop, "
    "5 toggle (open a door, with the key of its colour when locked; open a box), 6 done (unused)."
)
_MINIGRID_REW = (
    "0 until the mission is completed, then 1 - 0.9 * (steps taken / step limit): the same success "
    "sooner is worth more. Running out of steps gives 0."
)
_FETCH_OBS = (
    "A dict: `observation` (25 values: gripper position, object position and rotation, their relative "
    "position and velocities, finger state), `achieved_goal` (the object's position, 3 values) and "
    "`desired_goal` (the target position, 3 values)."
)
_FETCH_ACT = (
    "A Box of 4 in [-1, 1]: the gripper's displacement in x, y and z and the fingers' "
    "opening (positive) or closing (negative)."
)
_FETCH_REW = "-1 on every step the object is more than 5 cm from the target, 0 on a step it is within: a sparse reward."


@dataclass(frozen=True)
class TaskDoc:
    """What an agent is told about one environment."""

    title: str
    objective: str
    observation: str
    action: str
    reward: str
    notes: tuple[str, ...] = ()


TASKS: dict[str, TaskDoc] = {
    "Acrobot-v1": TaskDoc(
        "Acrobot",
        "Swing the free end of a two-link chain, driven only at the joint between the links, above "
        "the target height as quickly as possible.",
        "A Box of 6: cosine and sine of both joint angles, then both angular velocities.",
        "A Discrete action of 3: torque -1, 0 or +1 on the actuated (middle) joint.",
        "-1 per step until the tip is high enough; the episode then ends. Fewer steps, a less negative return.",
        ("Direct pushing is too weak: energy has to be pumped in by swinging back and forth.",),
    ),
    "MountainCarContinuous-v0": TaskDoc(
        "Continuous Mountain Car",
        "Drive an underpowered car out of a valley to the flag on the right hilltop.",
        "A Box of 2: the car's position and velocity.",
        "A Box of 1 in [-1, 1]: the engine force (negative pushes left).",
        "+100 on reaching the flag, minus 0.1 * force^2 on every step: wasted force costs.",
        (
            "The car has to rock back and forth to gain momentum; doing nothing avoids the cost but never "
            "reaches the flag.",
        ),
    ),
    "BipedalWalker-v3": TaskDoc(
        "Bipedal Walker",
        "Make a two-legged robot walk forward over uneven ground to the end of the course "
        "without falling.",
        "A Box of 24: hull angle and angular velocity, horizontal and vertical speed, each hip and knee angle "
        "and speed, whether each leg touches the ground, and 10 lidar distance readings ahead.",
        "A Box of 4 in [-1, 1]: motor torques of hip 1, knee 1, hip 2 and knee 2.",
        "Reward for forward progress (about 300 for reaching the end), -100 when the hull touches the ground, "
        "and a small cost for torque.",
        ("Falling ends the episode with the penalty; a stable gait matters more than speed.",),
    ),
    "CarRacing-v3": TaskDoc(
        "Car Racing",
        "Drive a car around a randomly generated track from top-down pixels, covering as much of "
        "the track as possible.",
        "An RGB image of 96x96x3 (values 0 to 255) seen from above; the bar at the bottom shows speed and "
        "steering. Trajectories in the feedback leave image observations out (null).",
        "A Box of 3: steering in [-1, 1], gas in [0, 1], brake in [0, 1].",
        "-0.1 per frame and +1000/N for each of the track's N tiles visited the first time; leaving the "
        "playfield ends the episode with -100.",
        ("The road must be recognized from the pixels (grey against green grass).",),
    ),
    "HalfCheetah-v5": TaskDoc(
        "HalfCheetah",
        "Make a planar two-legged cheetah run forward as fast as possible.",
        "A Box of 17: the body's height and the angles of the torso and six joints, then their velocities "
        "(the forward position is left out).",
        "A Box of 6 in [-1, 1]: torques of the back and front thigh, shin and foot joints.",
        "Forward velocity on each step minus 0.1 * the sum of squared torques. The episode never ends early.",
        (),
    ),
    "Ant-v5": TaskDoc(
        "Ant",
        "Make a four-legged robot walk forward as fast as possible without falling over.",
        "A Box: the torso's height and orientation, the eight joint angles, the velocities, and the external "
        "contact forces of the body parts (the schema gives the size).",
        "A Box of 8 in [-1, 1]: torques of the hip and ankle of each leg.",
        "Per step: +1 while healthy (torso height within range), plus forward velocity, minus costs of "
        "torque and of contact forces. Leaving the healthy range ends the episode.",
        (),
    ),
    "Pusher-v5": TaskDoc(
        "Pusher",
        "Move a seven-joint arm so that it pushes an object on a table to a goal position.",
        "A Box of 23: the seven joint angles and velocities, then the positions of the fingertip, the object "
        "and the goal (3 values each).",
        "A Box of 7 in [-2, 2]: joint torques.",
        "Per step: minus the object's distance to the goal, minus half the fingertip's distance to the "
        "object, minus 0.1 * the sum of squared torques.",
        (),
    ),
    "Reacher-v5": TaskDoc(
        "Reacher",
        "Move the tip of a two-joint arm to a randomly placed target and keep it there.",
        "A Box of 10: cosine and sine of both joint angles, the target's position, the joint velocities and "
        "the vector from the target to the fingertip (x, y).",
        "A Box of 2 in [-1, 1]: torques of the two joints.",
        "Per step: minus the distance from fingertip to target, minus the sum of squared torques.",
        (),
    ),
    "MiniGrid-DoorKey-16x16-v0": TaskDoc(
        "MiniGrid DoorKey 16x16",
        "Pick up the key, open the locked door in the wall that splits the room, and "
        "reach the green goal square.",
        _MINIGRID_OBS,
        _MINIGRID_ACT,
        _MINIGRID_REW,
        ("The room is large and only a small part of it is in view: search systematically.",),
    ),
    "MiniGrid-KeyCorridorS4R3-v0": TaskDoc(
        "MiniGrid KeyCorridor S4R3",
        "Pick up the ball behind a locked door; its key lies in another room off "
        "the same corridor.",
        _MINIGRID_OBS,
        _MINIGRID_ACT,
        _MINIGRID_REW,
        ("The mission text names the ball to pick up.",),
    ),
    "MiniGrid-FourRooms-v0": TaskDoc(
        "MiniGrid FourRooms",
        "Reach the green goal square in a grid of four rooms joined by narrow gaps.",
        _MINIGRID_OBS,
        _MINIGRID_ACT,
        _MINIGRID_REW,
        ("The agent's and the goal's positions change from episode to episode.",),
    ),
    "MiniGrid-ObstructedMaze-1Q-v1": TaskDoc(
        "MiniGrid ObstructedMaze 1Q",
        "Pick up the blue ball somewhere in the maze.",
        _MINIGRID_OBS,
        _MINIGRID_ACT,
        _MINIGRID_REW,
        (
            "Doors may be locked, their keys hidden in boxes (toggle a box to open it), and balls may block "
            "doors (pick them up and drop them elsewhere).",
        ),
    ),
    "parking-v0": TaskDoc(
        "Highway parking",
        "Drive a car into the marked parking spot, at the right heading, without hitting anything.",
        "A dict: `observation` (the car's x, y, vx, vy, cosine and sine of its heading, scaled), "
        "`achieved_goal` (the same for the car now) and `desired_goal` (the same for the spot).",
        "A Box of 2 in [-1, 1]: acceleration and steering angle.",
        "Per step: minus a weighted distance between the car's state and the spot's; a collision is "
        "penalized. Reaching the spot ends the episode.",
        (),
    ),
    "roundabout-v0": TaskDoc(
        "Highway roundabout",
        "Drive through a busy roundabout quickly without colliding.",
        "A table of nearby vehicles (the ego vehicle first), one row of kinematic features (presence, "
        "position, velocity) each, relative to the ego vehicle.",
        "A Discrete action of 5 meta-actions: 0 lane left, 1 idle, 2 lane right, 3 faster, 4 slower.",
        "Reward for speed, a small cost for changing lanes, a large penalty for a collision (which ends "
        "the episode).",
        (),
    ),
    "FetchPush-v4": TaskDoc(
        "Fetch Push",
        "Push a block on the table with the robot's gripper to a target position on the table.",
        _FETCH_OBS,
        _FETCH_ACT,
        _FETCH_REW,
        ("The gripper stays closed in this task; the target is on the table.",),
    ),
    "FetchPickAndPlace-v4": TaskDoc(
        "Fetch Pick and Place",
        "Grasp a block with the gripper and move it to a target position, which may be "
        "in the air above the table.",
        _FETCH_OBS,
        _FETCH_ACT,
        _FETCH_REW,
        ("A target in the air needs the block lifted: grasp it first.",),
    ),
}


def render(env_id: str, *, max_episode_steps: int | None = None) -> str:
    """The ``task.md`` of ``env_id`` (a generic one for an environment outside Core-16)."""
    doc = TASKS.get(env_id) or TaskDoc(
        env_id,
        f"Maximize the total Gymnasium reward of `{env_id}` over each episode.",
        "See the `obs_space` schema the policy is built with.",
        "Return an action matching the `action_space` schema.",
        "The episode's return is the sum of its rewards.",
    )
    lines = [f"# {doc.title}", "", f"Gymnasium id: `{env_id}`."]
    if max_episode_steps:
        lines.append(f"Step limit per episode: {max_episode_steps}.")
    lines += [
        "",
        "## Objective",
        "",
        doc.objective,
        "",
        "## Policy",
        "",
        "Write `policy.py` with `class Policy(obs_space, action_space, env_meta)`: the spaces are JSON "
        "schemas; `reset(episode_index)` starts an episode (its index within the run, never its seed); "
        "`act(obs)` gets the observation as JSON data (lists, dicts, numbers, text) and returns an action.",
        "",
        "## Observation",
        "",
        doc.observation,
        "",
        "## Action",
        "",
        doc.action,
        "An action outside the space is clipped or repaired into it and flagged `action_invalid` in the step's "
        "`info`.",
        "",
        "## Reward",
        "",
        doc.reward,
        "",
        "## Feedback and budget",
        "",
        "Each run plays the train instances named in `gym.toml` (`instances`, ids 0 to 63 of a fixed pool; "
        "the same id is the same episode every time) and charges them to the search's budget of 128 "
        "episodes, a failed run's too. Its returns and per-step trajectories are in the run's "
        "`evidence/train/feedback/` (`summary.json`, `episodes/ep_NNN/trajectory.jsonl`). Validation and "
        "held-out episodes, and their scores, stay hidden until the search is finalized.",
    ]
    if doc.notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in doc.notes]
    return "\n".join(lines) + "\n"

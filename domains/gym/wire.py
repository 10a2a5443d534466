"""The pipe between the environment's side and the policy's process: frames, actions, spaces.

Every message is a frame: a 4-byte big-endian length, then a payload whose first byte says
what it is:

* ``J`` + UTF-8 JSON object (both directions: control messages, failures);
* ``S`` (an episode starts), ``O`` (an observation) + a pickle, and ``E`` (the episode is
  over); ``R``, one round of several lanes (:func:`encode_request`: the lanes whose episodes
  ended, the lanes' observations as one block of raw array data when they are arrays of one
  dtype and shape, else a pickle, and the starts, pickled): **only from the environment's side
  to the policy's process** (data the policy may see). The environment's side never unpickles
  anything: a pickle runs code where it is loaded;
* ``N`` (policy → environment): the answers of a round when every lane answered an action of
  one kind (:func:`encode_reply`): ``i`` and one 8-byte integer per lane, or ``b``, a dtype and a
  shape and one array per lane, in the order the round asked them; ``M``: the answers of a
  round in any other case, each a lane number, a length and an ``A`` or ``J`` payload;
* ``A`` + an action (policy → environment): a flags byte (bit 0: EvoPolicyGym coerced it,
  bit 1: a JSON copy of the raw action follows), a type byte (``i``: an 8-byte signed integer,
  ``b``: the raw bytes of an array of the action space's dtype and shape, ``j``: tagged JSON,
  see :func:`tag`), a 4-byte length, the data, then the optional JSON.

The environment's side decodes an action with the action space it holds (never with a type
the policy names) and checks it again before it steps: the policy's process can only send
values, never objects.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import pickle
import select
import struct
import time
from typing import Any

import numpy as np

__all__ = [
    "GO",
    "MAX_FRAME",
    "ProtocolError",
    "send",
    "send_bytes",
    "FrameReader",
    "policy_seed",
    "clean_space",
    "tag",
    "untag",
    "encode_action",
    "decode_action_frame",
    "encode_request",
    "decode_request",
    "encode_reply",
    "decode_reply",
]

_HEADER = struct.Struct(">I")
#: The host's first frame to a policy's process: load policy.py now (the process waits for it
#: after its own imports, so a process started early runs no candidate code before its host
#: adopted it: :func:`evotree.domains.gym.launch.prestart`).
GO = b"G"
_ACTION = struct.Struct(">BcI")  # flags, type, length of the data
_INT = struct.Struct(">q")
MAX_FRAME = 64 * 1024 * 1024
#: bytes asked of one read: below the allocator's mmap threshold (a 1 MiB buffer cost an mmap,
#: an mremap and a munmap per read)
_CHUNK = 1 << 16
#: dtype kinds an array from the policy's process may have: booleans and numbers, never objects
_NUMERIC = "biuf"


class ProtocolError(Exception):
    """A frame that breaks the protocol (too large, not JSON, an undecodable action)."""


def send_bytes(fd: int, payload: bytes, deadline: float | None = None) -> None:
    """Write one frame (``payload`` starts with its type byte). With ``deadline`` the
    descriptor is non-blocking and a reader that stops reading is a :class:`TimeoutError`
    past it (a frame larger than the pipe's buffer would block the writer for ever)."""
    data = _HEADER.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            wait = deadline - time.monotonic() if deadline is not None else 1.0
            if wait <= 0 or not select.select([], [fd], [], wait)[1]:
                if deadline is not None:
                    raise TimeoutError from None
            continue
        view = view[written:]


def send(fd: int, message: dict[str, Any]) -> None:
    """Write one JSON frame."""
    send_bytes(fd, b"J" + json.dumps(message, separators=(",", ":"), allow_nan=True).encode())


class FrameReader:
    """Reads frames from a pipe, with a deadline (``nonblocking``: the descriptor is made
    non-blocking, and a read is tried before any wait: one system call when the answer is
    there already, as it mostly is)."""

    def __init__(self, fd: int, *, nonblocking: bool = False) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self.nonblocking = nonblocking
        if nonblocking:
            os.set_blocking(fd, False)

    def _frame(self) -> bytes | None:
        if len(self.buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self.buffer)
        if size > MAX_FRAME:
            raise ProtocolError(f"a message of {size} bytes (more than {MAX_FRAME})")
        if size == 0:
            raise ProtocolError("an empty message")
        if len(self.buffer) < _HEADER.size + size:
            return None
        data = bytes(self.buffer[_HEADER.size : _HEADER.size + size])
        del self.buffer[: _HEADER.size + size]
        return data

    def read_frame(self, deadline: float | None) -> bytes | None:
        """The next frame's payload; None at end of file; TimeoutError past ``deadline``."""
        while True:
            frame = self._frame()
            if frame is not None:
                return frame
            if self.nonblocking:
                try:
                    chunk = os.read(self.fd, _CHUNK)
                except BlockingIOError:
                    wait = deadline - time.monotonic() if deadline is not None else None
                    if wait is not None and wait <= 0:
                        raise TimeoutError from None
                    if not select.select([self.fd], [], [], wait)[0]:
                        raise TimeoutError from None
                    continue
            else:
                if deadline is not None:
                    wait = deadline - time.monotonic()
                    if wait <= 0 or not select.select([self.fd], [], [], wait)[0]:
                        raise TimeoutError
                chunk = os.read(self.fd, _CHUNK)
            if not chunk:
                return None
            if not self.buffer and len(chunk) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(chunk)
                if len(chunk) == _HEADER.size + size and 0 < size <= MAX_FRAME:
                    return chunk[_HEADER.size :]  # the common case: exactly one frame
            self.buffer += chunk

    def read(self, deadline: float | None) -> dict[str, Any] | None:
        """The next frame as a JSON object (a frame of another type is a :class:`ProtocolError`)."""
        frame = self.read_frame(deadline)
        if frame is None:
            return None
        return json_frame(frame)


def json_frame(frame: bytes) -> dict[str, Any]:
    if frame[:1] != b"J":
        raise ProtocolError(f"expected a JSON message, got one of type {frame[:1]!r}")
    try:
        message = json.loads(frame[1:])
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"a message that is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message that is not a JSON object")
    return message


# ---------------------------------------------------------------------------- the policy's RNG
def policy_seed(env_id: str, index: int) -> int:
    """The seed of the policy's own generators for episode ``index`` of ``env_id``.

    Derived from what the policy may know (the environment and the episode's place in its
    pool), never from the episode's seed: the same policy plays the same pool the same way,
    and its generators tell it nothing about the hidden seeds."""
    digest = hashlib.sha256(f"evotree policy rng\0{env_id}\0{int(index)}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


# ---------------------------------------------------------------------------- spaces
def clean_space(space: Any) -> Any:
    """A new space equal to ``space`` that refers to nothing of the environment (and whose
    generator is unseeded): what the policy's process gets. A space type this does not know
    becomes a bare ``gymnasium.spaces.Space`` of the same shape and dtype."""
    from gymnasium import spaces

    kind = type(space)
    if kind is spaces.Discrete:
        return spaces.Discrete(int(space.n), start=int(space.start), dtype=space.dtype.type)
    if kind is spaces.Box:
        return spaces.Box(
            np.array(space.low, copy=True),
            np.array(space.high, copy=True),
            space.shape,
            space.dtype.type,
        )
    if kind is spaces.MultiDiscrete:
        return spaces.MultiDiscrete(
            np.array(space.nvec, copy=True),
            dtype=space.dtype.type,
            start=np.array(space.start, copy=True),
        )
    if kind is spaces.MultiBinary:
        return spaces.MultiBinary(
            np.array(space.n, copy=True) if isinstance(space.n, np.ndarray) else space.n
        )
    if kind is spaces.Tuple:
        return spaces.Tuple([clean_space(s) for s in space.spaces])
    if kind is spaces.Dict:
        return spaces.Dict({k: clean_space(s) for k, s in space.spaces.items()}, sort_keys=False)
    if kind is spaces.Text:
        return spaces.Text(
            space.max_length, min_length=space.min_length, charset=space.character_set
        )
    shape = getattr(space, "shape", None)
    dtype = getattr(space, "dtype", None)
    return spaces.Space(
        shape=tuple(shape) if shape is not None else None,
        dtype=dtype if isinstance(dtype, np.dtype) and dtype.kind in _NUMERIC else None,
    )


# ---------------------------------------------------------------------------- values
def tag(value: Any, depth: int = 0) -> Any:
    """A value as JSON data that keeps numpy types, tuples and non-finite floats:
    ``{"a": [dtype, shape, base64]}`` arrays, ``{"g": [dtype, base64]}`` numpy scalars,
    ``{"t": [...]}`` tuples, ``{"d": [[k, v], ...]}`` dicts, ``{"f": "nan"}`` floats.
    Raises TypeError for anything else (an object cannot leave the policy's process)."""
    if depth > 32:
        raise TypeError("nested too deeply")
    if value is None or isinstance(value, (bool, str)) or type(value) is int:
        return value
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else {"f": repr(float(value))}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _NUMERIC:
            raise TypeError(f"an array of dtype {value.dtype}")
        data = np.ascontiguousarray(value)
        return {"a": [data.dtype.str, list(data.shape), base64.b64encode(data.tobytes()).decode()]}
    if isinstance(value, np.generic):
        if value.dtype.kind not in _NUMERIC:
            raise TypeError(f"a numpy scalar of dtype {value.dtype}")
        return {"g": [value.dtype.str, base64.b64encode(value.tobytes()).decode()]}
    if isinstance(value, int):  # an int subclass (not bool)
        return int(value)
    if isinstance(value, list):
        return [tag(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {"t": [tag(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"d": [[tag(k, depth + 1), tag(v, depth + 1)] for k, v in value.items()]}
    raise TypeError(f"an object of type {type(value).__name__}")


def _dtype(text: Any) -> np.dtype:
    if not isinstance(text, str) or len(text) > 8:
        raise ProtocolError("a malformed dtype")
    try:
        dtype = np.dtype(text)
    except TypeError:
        raise ProtocolError(f"an unknown dtype {text[:20]!r}") from None
    if dtype.kind not in _NUMERIC or dtype.hasobject:
        raise ProtocolError(f"an array of dtype {dtype}")
    return dtype


def untag(data: Any, depth: int = 0) -> Any:
    """The value :func:`tag` encoded; :class:`ProtocolError` for anything malformed."""
    if depth > 33:
        raise ProtocolError("nested too deeply")
    if data is None or isinstance(data, (bool, str, int, float)):
        return data
    if isinstance(data, list):
        return [untag(v, depth + 1) for v in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise ProtocolError("a malformed value")
    ((key, body),) = data.items()
    try:
        if key == "f":
            if body not in ("nan", "inf", "-inf"):
                raise ProtocolError("a malformed float")
            return float(body)
        if key == "t":
            return tuple(untag(v, depth + 1) for v in body)
        if key == "d":
            return {untag(k, depth + 1): untag(v, depth + 1) for k, v in body}
        if key in ("a", "g"):
            dtype = _dtype(body[0])
            shape = tuple(int(n) for n in body[1]) if key == "a" else ()
            if any(n < 0 for n in shape) or len(shape) > 32:
                raise ProtocolError("a malformed shape")
            raw = base64.b64decode(body[-1], validate=True)
            if len(raw) != dtype.itemsize * math.prod(shape):
                raise ProtocolError("an array whose data does not match its shape")
            array = np.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)
            return array if key == "a" else array[()]
    except ProtocolError:
        raise
    except (TypeError, ValueError, IndexError, KeyError) as exc:
        raise ProtocolError(f"a malformed value: {exc}") from None
    raise ProtocolError(f"an unknown value type {key[:20]!r}")


def encode_action(
    action: Any, space: Any, *, invalid: bool = False, raw: Any = None, with_raw: bool = False
) -> bytes:
    """The ``A`` frame of an action of ``space`` (policy side). ``raw``: EvoPolicyGym's JSON copy of
    what act() returned, for the trajectory (sent when ``with_raw``)."""
    flags = (1 if invalid else 0) | (2 if with_raw else 0)
    if type(action) is int and -(1 << 63) <= action < (1 << 63):
        kind, data = b"i", _INT.pack(action)
    elif (
        type(action) is np.ndarray
        and action.dtype == getattr(space, "dtype", None)
        and action.shape == getattr(space, "shape", None)
        and action.dtype.kind in _NUMERIC
    ):
        kind, data = b"b", np.ascontiguousarray(action).tobytes()
    else:
        kind, data = b"j", json.dumps(tag(action), separators=(",", ":")).encode()
    trailer = json.dumps(raw, separators=(",", ":"), default=repr).encode() if with_raw else b""
    return b"A" + _ACTION.pack(flags, kind, len(data)) + data + trailer


def decode_action_frame(frame: bytes, space: Any) -> tuple[Any, bool, Any]:
    """(action, coerced, raw JSON or None) of an ``A`` frame, decoded with ``space`` (the
    environment's own action space); :class:`ProtocolError` if it does not fit."""
    if len(frame) < 1 + _ACTION.size:
        raise ProtocolError("a truncated action")
    flags, kind, size = _ACTION.unpack_from(frame, 1)
    start = 1 + _ACTION.size
    data = frame[start : start + size]
    if len(data) != size:
        raise ProtocolError("a truncated action")
    if kind == b"i":
        if size != _INT.size:
            raise ProtocolError("a malformed integer action")
        (action,) = _INT.unpack(data)
    elif kind == b"b":
        dtype, shape = getattr(space, "dtype", None), getattr(space, "shape", None)
        if not isinstance(dtype, np.dtype) or dtype.kind not in _NUMERIC or shape is None:
            raise ProtocolError("an array action for a space that has no array actions")
        if size != dtype.itemsize * math.prod(shape):
            raise ProtocolError(
                f"an array action of {size} bytes for a space of shape {shape} and dtype {dtype}"
            )
        action = np.frombuffer(bytearray(data), dtype=dtype).reshape(shape)
    elif kind == b"j":
        try:
            action = untag(json.loads(data))
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"a malformed action: {exc}") from None
    else:
        raise ProtocolError(f"an action of unknown type {kind!r}")
    raw = None
    if flags & 2:
        try:
            raw = json.loads(frame[start + size :])
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"a malformed raw action: {exc}") from None
    return action, bool(flags & 1), raw


# ---------------------------------------------------------------------------- rounds of lanes
_COUNTS = struct.Struct("<HHHH")  # starts, ends, observations, blocks of observations
_SIZE = struct.Struct("<I")


def _array_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    text = dtype.str.encode()
    return (
        bytes((len(text),)) + text + bytes((len(shape),)) + struct.pack(f"<{len(shape)}I", *shape)
    )


def _read_array_header(frame: bytes, at: int) -> tuple[np.dtype, tuple[int, ...], int]:
    try:
        size = frame[at]
        dtype = _dtype(frame[at + 1 : at + 1 + size].decode("ascii"))
        at += 1 + size
        ndim = frame[at]
        shape = struct.unpack_from(f"<{ndim}I", frame, at + 1)
    except (IndexError, UnicodeDecodeError, struct.error):
        raise ProtocolError("a malformed array header") from None
    return dtype, tuple(shape), at + 1 + 4 * ndim


def _same_arrays(values: list[Any]) -> bool:
    first = values[0]
    if type(first) is not np.ndarray or first.dtype.kind not in _NUMERIC or not first.ndim:
        return False  # (a 0-d array would come back as a numpy scalar)
    dtype, shape = first.dtype, first.shape
    return all(type(v) is np.ndarray and v.dtype == dtype and v.shape == shape for v in values)


def _one_block(observed: list[tuple[int, Any]]) -> bytes | None:
    """The one raw block (with its size in front) of ``observed`` when every observation is a
    numeric array of the first one's dtype and shape, as :func:`encode_request`'s general path
    would write it; None otherwise (checked without hashing a dtype per lane)."""
    first = observed[0][1]
    if type(first) is not np.ndarray or first.dtype.kind not in _NUMERIC or not first.ndim:
        return None
    dtype, shape, array = first.dtype, first.shape, np.ndarray
    for _, obs in observed:
        if type(obs) is not array or obs.shape != shape:
            return None
        if obs.dtype is not dtype and obs.dtype != dtype:
            return None
    data = b"".join([obs.tobytes() for _, obs in observed])
    body = _SIZE.pack(len(observed)) + b"b" + _array_header(dtype, shape) + data
    return _SIZE.pack(len(body)) + body


def encode_request(
    starts: list[tuple[int, dict[str, Any]]], ends: list[int], observed: list[tuple[int, Any]]
) -> tuple[bytes, list[int]]:
    """The ``R`` frame of one round (environment side) and the order of the lanes it asks (the
    order of the answers): the lanes whose episodes ended, each lane's next observation, the
    episodes that start. Observations that are arrays travel as blocks of raw data, one per
    dtype and shape; anything else, and the starts, pickled."""
    if observed:
        block = _one_block(observed)
        if block is not None:  # the common case: every observation an array of one kind
            order = [lane for lane, _ in observed]
            numbers = [*ends, *order]
            frame = (
                b"R"
                + _COUNTS.pack(len(starts), len(ends), len(order), 1)
                + struct.pack(f"<{len(numbers)}H", *numbers)
                + _SIZE.pack(len(block))
                + block
                + (pickle.dumps(starts, protocol=pickle.HIGHEST_PROTOCOL) if starts else b"")
            )
            return frame, [*order, *(lane for lane, _ in starts)]
    groups: dict[Any, list[tuple[int, Any]]] = {}
    other: list[tuple[int, Any]] = []
    for lane, obs in observed:
        if type(obs) is np.ndarray and obs.dtype.kind in _NUMERIC and obs.ndim:
            groups.setdefault((obs.dtype, obs.shape), []).append((lane, obs))
        else:
            other.append((lane, obs))
    blocks = []
    order = []
    for (dtype, shape), items in groups.items():
        order.extend(lane for lane, _ in items)
        data = b"".join(obs.tobytes() for _, obs in items)
        blocks.append(_SIZE.pack(len(items)) + b"b" + _array_header(dtype, shape) + data)
    if other:
        order.extend(lane for lane, _ in other)
        data = pickle.dumps([obs for _, obs in other], protocol=pickle.HIGHEST_PROTOCOL)
        blocks.append(_SIZE.pack(len(other)) + b"p" + data)
    block = b"".join(_SIZE.pack(len(b)) + b for b in blocks)
    numbers = [*ends, *order]
    frame = (
        b"R"
        + _COUNTS.pack(len(starts), len(ends), len(order), len(blocks))
        + struct.pack(f"<{len(numbers)}H", *numbers)
        + _SIZE.pack(len(block))
        + block
        + (pickle.dumps(starts, protocol=pickle.HIGHEST_PROTOCOL) if starts else b"")
    )
    return frame, [*order, *(lane for lane, _ in starts)]


def decode_request(
    frame: bytes,
) -> tuple[list[tuple[int, dict[str, Any]]], list[int], list[tuple[int, Any]]]:
    """(starts, ends, observed) of an ``R`` frame (policy side: it comes from the judge).
    Each observation of a raw block is a writable array of its own round's buffer."""
    nstarts, nends, nobs, nblocks = _COUNTS.unpack_from(frame, 1)
    at = 1 + _COUNTS.size
    numbers = struct.unpack_from(f"<{nends + nobs}H", frame, at)
    at += 2 * (nends + nobs)
    (size,) = _SIZE.unpack_from(frame, at)
    at += _SIZE.size
    end = at + size
    values: list[Any] = []
    for _ in range(nblocks):
        (length,) = _SIZE.unpack_from(frame, at)
        (count,) = _SIZE.unpack_from(frame, at + _SIZE.size)
        block = frame[at + 2 * _SIZE.size : at + _SIZE.size + length]
        at += _SIZE.size + length
        if block[:1] == b"b":
            dtype, shape, offset = _read_array_header(block, 1)
            rows = np.frombuffer(bytearray(block[offset:]), dtype=dtype).reshape((count, *shape))
            values.extend(rows)
        else:
            values.extend(pickle.loads(block[1:]))
    observed = list(zip(numbers[nends:], values, strict=True))
    starts = pickle.loads(frame[end:]) if nstarts else []
    return starts, list(numbers[:nends]), observed


def encode_reply(answers: list[tuple[int, Any, bytes | None, Any]]) -> bytes:
    """The answers of a round (policy side): ``(lane, action, None, space)`` for an action
    checked here, ``(lane, None, frame, space)`` for a failure (or an EvoPolicyGym frame).
    ``N`` when every answer is an integer, or an array of one dtype and shape; else ``M``."""
    if answers and all(frame is None for _, _, frame, _ in answers):
        actions = [action for _, action, _, _ in answers]
        if all(type(a) is int for a in actions):
            try:
                return b"Ni" + struct.pack(f"<{len(actions)}q", *actions)
            except struct.error:
                pass  # an integer past 64 bits: the general form
        elif _same_arrays(actions):
            first = actions[0]
            return (
                b"Nb"
                + _array_header(first.dtype, first.shape)
                + b"".join(a.tobytes() for a in actions)
            )
    parts = []
    for lane, action, frame, space in answers:
        payload = frame if frame is not None else encode_action(action, space)
        parts.append(struct.pack(">II", lane, len(payload)) + payload)
    return b"M" + struct.pack(">I", len(parts)) + b"".join(parts)


def decode_reply(frame: bytes, order: list[int]) -> list[tuple[int, Any, bytes | None]]:
    """The answers of a round (environment side), one per lane of ``order`` (the lanes asked,
    observations first, then starts): ``(lane, value, None)`` for an action value, still to be
    checked with the lane's action space, or ``(lane, None, payload)`` for an ``A`` / ``J``
    payload. :class:`ProtocolError` for anything that is not exactly one answer per lane."""
    kind, count = frame[:1], len(order)
    if kind == b"N":
        sub = frame[1:2]
        if sub == b"i":
            if len(frame) != 2 + 8 * count:
                raise ProtocolError("a lanes reply of the wrong size")
            values = struct.unpack_from(f"<{count}q", frame, 2)
            return [(lane, value, None) for lane, value in zip(order, values)]
        if sub == b"b":
            dtype, shape, at = _read_array_header(frame, 2)
            if len(shape) > 32 or len(frame) != at + dtype.itemsize * math.prod(shape) * count:
                raise ProtocolError("a lanes reply of the wrong size")
            rows = np.frombuffer(bytearray(frame[at:]), dtype=dtype).reshape((count, *shape))
            return [(lane, rows[j], None) for j, lane in enumerate(order)]
        raise ProtocolError(f"a lanes reply of unknown kind {sub!r}")
    if kind != b"M" or len(frame) < 5:
        raise ProtocolError(f"expected the lanes' answers, got a message of type {kind!r}")
    expected = set(order)
    (number,) = struct.unpack_from(">I", frame, 1)
    position, out, seen = 5, [], set()
    for _ in range(number):
        if position + 8 > len(frame):
            raise ProtocolError("a truncated lanes reply")
        lane, size = struct.unpack_from(">II", frame, position)
        position += 8
        answer = frame[position : position + size]
        position += size
        if len(answer) != size or lane not in expected or lane in seen or not answer:
            raise ProtocolError("a malformed lanes reply")
        seen.add(lane)
        out.append((lane, None, answer))
    if seen != expected or position != len(frame):
        raise ProtocolError("a lanes reply that does not answer every lane")
    return out

"""The one JSON codec for wire records.

Every message on the bus is ``json.dumps`` of a record with every field
present (``None`` as ``null``).  Decoding is lenient about *shape* (unknown
keys are ignored, missing keys take the dataclass default, ``null`` stays
``None``) but strict about *types*: nothing is coerced, and a value of the
wrong JSON type raises :class:`SchemaError` naming the record and field.
(The one conversion is upstream's: a ``bytes`` field travels as its UTF-8 text.)

These functions run on every message, so each record class is analysed
once (``typing.get_type_hints`` and ``dataclasses.fields``) into a cached
plan of per-field converters; the per-message work is a loop over that plan.
"""

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints

import pydantic_core

__all__ = ["SchemaError", "decode", "encode", "from_dict", "to_dict"]

#: The bytes parser of the hot path (see ``decode``); strings cached off: payloads are
#: short-lived, and a cache would keep their text.
_fast_json = functools.partial(pydantic_core.from_json, cache_strings=False)


def _not_serialisable(o: Any) -> Any:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _make_encode_json() -> Callable[[Any], str]:
    """``json.dumps`` with its defaults, built once.

    ``json.dumps`` (``JSONEncoder.encode``) builds its C encoder anew for every
    call, which is more than half its time on our small records.  The same C
    encoder with the same settings, built once, writes the same text.  It keeps no
    circular-reference marks (a record that contains itself, which no decoded
    payload can be, ends in RecursionError instead of ValueError).  Where the C
    encoder is missing (not CPython) this is ``JSONEncoder().encode``.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder().encode
    # markers, default, encoder, indent, key_separator, item_separator, sort_keys, skipkeys, allow_nan
    chunks = make(None, _not_serialisable, json.encoder.encode_basestring_ascii, None,
                  ": ", ", ", False, False, True)

    def encode_json(obj: Any) -> str:
        return "".join(chunks(obj, 0))

    return encode_json


_encode_json = _make_encode_json()

T = TypeVar("T")

_MISSING = object()
_NONE_TYPE = type(None)


class SchemaError(ValueError):
    """A payload does not fit its record schema.

    For type mismatches ``record``, ``field``, ``expected`` and ``actual``
    are set, so callers can report or test the exact failure; ``root`` and
    ``path`` locate a nested record's field inside the outermost record.
    For malformed JSON only the message is set.
    """

    def __init__(
        self,
        message: str,
        *,
        record: str | None = None,
        field: str | None = None,
        expected: str | None = None,
        actual: str | None = None,
    ) -> None:
        super().__init__(message)
        self.record = record
        self.field = field
        self.expected = expected
        self.actual = actual
        self.root: str | None = None
        self.path = ""

    @classmethod
    def _mismatch(cls, record: str, field: str, expected: str, actual: str) -> "SchemaError":
        return cls(
            f"{record}.{field}: expected {expected}, got {actual}",
            record=record,
            field=field,
            expected=expected,
            actual=actual,
        )

    def _nest(self, segment: str, root: str | None = None) -> None:
        """Prefix the location with an enclosing field/index (error path only)."""
        self.path = _join(segment, self.path)
        if root is not None:
            self.root = root
            message = (
                f"{self.record}.{self.field}: expected {self.expected}, "
                f"got {self.actual} (at {root}.{self.path})"
            )
            self.args = (message,)


class _Mismatch(Exception):
    """Internal, cheap signal from converters; turned into SchemaError by the record loop."""

    __slots__ = ("actual", "expected", "loc")

    def __init__(self, expected: str, value: Any, loc: str = "") -> None:
        self.expected = expected
        self.actual = _type_name(value)
        self.loc = loc


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _join(segment: str, rest: str) -> str:
    if not rest or rest.startswith("["):
        return segment + rest
    return f"{segment}.{rest}"


# ---------------------------------------------------------------------------
# Per-type converter specs
#
# A spec is (fast, conv, enc, expected):
#   fast      exact class that needs no checking or conversion, or None
#   conv      value -> decoded value; raises _Mismatch / SchemaError
#             (never called with None at field level; container elements
#             may be None and conv must reject or accept them)
#   enc       value -> JSON-ready value, or None when the value is already
#             JSON-ready (scalars and containers of scalars)
#   expected  type name used in error messages
# ---------------------------------------------------------------------------

_Spec = tuple[type | None, Callable[[Any], Any], Callable[[Any], Any] | None, str]


def _conv_str(v: Any) -> Any:
    if isinstance(v, str):
        return v
    raise _Mismatch("str", v)


def _conv_int(v: Any) -> Any:
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise _Mismatch("int", v)


def _conv_float(v: Any) -> Any:
    # JSON has one number type: an integral float arrives as int.  Keeping
    # the int (no coercion) re-encodes the payload unchanged.
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    raise _Mismatch("float", v)


def _conv_bool(v: Any) -> Any:
    if isinstance(v, bool):
        return v
    raise _Mismatch("bool", v)


def _conv_any(v: Any) -> Any:
    return v


def _conv_bytes(v: Any) -> Any:
    # Upstream writes bytes as their UTF-8 text and reads text back as bytes.
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    raise _Mismatch("bytes", v)


def _enc_bytes(v: Any) -> Any:
    return v.decode("utf-8") if isinstance(v, (bytes, bytearray)) else v


_SCALARS: dict[Any, _Spec] = {
    str: (str, _conv_str, None, "str"),
    int: (int, _conv_int, None, "int"),
    float: (float, _conv_float, None, "float"),
    bool: (bool, _conv_bool, None, "bool"),
    bytes: (bytes, _conv_bytes, _enc_bytes, "bytes"),
    Any: (None, _conv_any, None, "any"),
}


def _optional(conv: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def conv_optional(v: Any) -> Any:
        return None if v is None else conv(v)

    return conv_optional


def _spec_for(tp: Any, owner: type) -> _Spec:
    """Build the converter spec for one annotation (plan-build time only)."""
    optional = False
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not _NONE_TYPE]
        if len(args) != 1:
            raise TypeError(f"{owner.__name__}: unsupported union type {tp!r}")
        optional = True
        tp = args[0]
        origin = typing.get_origin(tp)

    if tp in _SCALARS:
        fast, conv, enc, expected = _SCALARS[tp]
    elif origin is list:
        (elem,) = typing.get_args(tp) or (Any,)
        fast, conv, enc, expected = None, *_list_spec(_spec_for(elem, owner)), "list"
    elif origin is dict:
        key, value = typing.get_args(tp) or (str, Any)
        if key is not str:
            raise TypeError(f"{owner.__name__}: map keys must be str, not {key!r}")
        fast, conv, enc, expected = None, *_dict_spec(_spec_for(value, owner)), "dict"
    elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
        fast, conv, enc, expected = None, _record_conv(tp), _encode_record, tp.__name__
    else:
        raise TypeError(f"{owner.__name__}: unsupported field type {tp!r}")

    if optional:
        conv = _optional(conv)
    return fast, conv, enc, expected


def _list_spec(
    elem: _Spec,
) -> tuple[Callable[[Any], Any], Callable[[Any], Any] | None]:
    efast, econv, eenc, _ = elem
    # Numbers: ints are valid floats, so both count as "no check needed".
    efast2 = int if efast is float else efast

    def conv(v: Any) -> Any:
        if not isinstance(v, list):
            raise _Mismatch("list", v)
        if efast is not None:
            for x in v:
                c = x.__class__
                if c is not efast and c is not efast2:
                    break
            else:
                return list(v)
        out = []
        for i, x in enumerate(v):
            try:
                out.append(econv(x))
            except _Mismatch as e:
                e.loc = _join(f"[{i}]", e.loc)
                raise
            except SchemaError as e:
                e._nest(f"[{i}]")
                raise
        return out

    if eenc is None:
        return conv, None

    def enc(v: Any) -> Any:
        return [None if x is None else eenc(x) for x in v]

    return conv, enc


def _dict_spec(
    value: _Spec,
) -> tuple[Callable[[Any], Any], Callable[[Any], Any] | None]:
    vfast, vconv, venc, _ = value
    vfast2 = int if vfast is float else vfast

    def conv(v: Any) -> Any:
        if not isinstance(v, dict):
            raise _Mismatch("dict", v)
        if vfast is not None:
            for k, x in v.items():
                c = x.__class__
                if k.__class__ is not str or (c is not vfast and c is not vfast2):
                    break
            else:
                return dict(v)
        out = {}
        for k, x in v.items():
            seg = f"[{k!r}]"
            if not isinstance(k, str):
                raise _Mismatch("str key", k, seg)
            try:
                out[k] = vconv(x)
            except _Mismatch as e:
                e.loc = _join(seg, e.loc)
                raise
            except SchemaError as e:
                e._nest(seg)
                raise
        return out

    if venc is None:
        return conv, None

    def enc(v: Any) -> Any:
        return {k: None if x is None else venc(x) for k, x in v.items()}

    return conv, enc


def _record_conv(cls: type) -> Callable[[Any], Any]:
    def conv(v: Any) -> Any:
        # An already-built record (from Python callers mixing the two) is kept.
        if v.__class__ is cls:
            return v
        return _decode_record(cls, v)

    return conv


# ---------------------------------------------------------------------------
# Per-class plans
# ---------------------------------------------------------------------------

# cls -> (decode fields, encode fields)
#   decode field: (name, fast, conv)
#   encode field: (name, enc)
_PLANS: dict[type, tuple[tuple[Any, ...], tuple[Any, ...]]] = {}


def _plan(cls: type) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    plan = _PLANS.get(cls)
    if plan is not None:
        return plan
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{cls!r} is not a dataclass record")
    hints = get_type_hints(cls)
    decode_fields = []
    encode_fields = []
    for f in dataclasses.fields(cls):
        fast, conv, enc, _ = _spec_for(hints[f.name], cls)
        if f.init:
            decode_fields.append((f.name, fast, conv))
        encode_fields.append((f.name, enc))
    plan = (tuple(decode_fields), tuple(encode_fields))
    _PLANS[cls] = plan
    return plan


def _decode_record(cls: type, data: Any) -> Any:
    if not isinstance(data, dict):
        raise _Mismatch(cls.__name__, data)
    kwargs = {}
    get = data.get
    for name, fast, conv in _plan(cls)[0]:
        v = get(name, _MISSING)
        if v is _MISSING:
            continue  # the dataclass default applies
        if v is None or v.__class__ is fast:
            kwargs[name] = v
            continue
        try:
            kwargs[name] = conv(v)
        except _Mismatch as e:
            raise SchemaError._mismatch(cls.__name__, name + e.loc, e.expected, e.actual) from None
        except SchemaError as e:
            e._nest(name, cls.__name__)
            raise
    return cls(**kwargs)


def _encode_record(obj: Any) -> dict[str, Any]:
    out = {}
    for name, enc in _plan(obj.__class__)[1]:
        v = getattr(obj, name)
        out[name] = v if enc is None or v is None else enc(v)
    return out


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def to_dict(obj: Any) -> dict[str, Any]:
    """Convert a record to JSON-ready data with every field present.

    ``None`` stays ``None`` (written as null), nested records become dicts.
    Lists and maps holding only scalars are passed through as-is (not
    copied), so treat the result as read-only.  No type checking is done
    here: a wrongly typed value is written as it is and the receiver's
    decoder reports it.
    """
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise TypeError(f"to_dict() needs a dataclass record, got {type(obj).__name__}")
    return _encode_record(obj)


def encode(obj: Any) -> bytes:
    """Serialise a record to the wire payload (``json.dumps`` defaults, UTF-8).

    Default ``json.dumps`` settings match upstream byte for byte, including
    ``\\u`` escaping of non-ASCII text.
    """
    plan = _PLANS.get(obj.__class__)
    if plan is None:  # first use of this class, or not a record: the checked path
        return json.dumps(to_dict(obj)).encode("utf-8")
    out = {}
    for name, enc in plan[1]:
        v = getattr(obj, name)
        out[name] = v if enc is None or v is None else enc(v)
    return _encode_json(out).encode("utf-8")


def from_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Build a ``cls`` record from decoded JSON data.

    Unknown keys are ignored, missing keys take the dataclass default,
    ``null`` stays ``None``, nested records are decoded recursively.  A value
    of the wrong type raises :class:`SchemaError`; nothing is coerced.
    """
    _plan(cls)  # TypeError early for a non-record class
    if not isinstance(data, dict):
        raise SchemaError(
            f"{cls.__name__}: expected dict, got {_type_name(data)}",
            record=cls.__name__,
            expected="dict",
            actual=_type_name(data),
        )
    return _decode_nested(cls, data)


def _decode_nested(cls: type[T], data: dict[str, Any]) -> T:
    # Records that contain themselves (a Term quoting a Triple of Terms) decode
    # recursively: a payload nested deep enough runs out of stack, which is
    # that payload's fault, so it is a SchemaError like any other misfit.
    try:
        return _decode_record(cls, data)
    except RecursionError:
        raise SchemaError(f"{cls.__name__}: nested too deeply to decode") from None


def decode(cls: type[T], payload: bytes | bytearray | str) -> T:
    """Parse a wire payload into a ``cls`` record.

    Malformed JSON (or bad UTF-8) and a top level that is not a JSON object
    raise :class:`SchemaError`, so a consumer needs to catch only that.
    """
    try:
        if payload.__class__ is bytes:
            # pydantic-core's parser (pydantic is a dependency already) takes UTF-8
            # bytes in about a quarter of the stdlib's time on our records; what it
            # refuses (a BOM, UTF-16, a lone surrogate escape, nesting past its
            # limit) takes the stdlib's general path, so what is accepted, and
            # how, is unchanged.
            try:
                data = _fast_json(payload)
            except ValueError:
                data = json.loads(payload)
        else:
            data = json.loads(payload)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, UnicodeDecodeError
        raise SchemaError(f"{cls.__name__}: invalid JSON payload: {e}") from None
    if not isinstance(data, dict):
        raise SchemaError(
            f"{cls.__name__}: payload must be a JSON object, got {_type_name(data)}",
            record=cls.__name__,
            expected="dict",
            actual=_type_name(data),
        )
    return _decode_nested(cls, data)

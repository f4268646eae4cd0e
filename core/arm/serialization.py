"""Dictionary (config) conversion of the arm description: ``to_dict`` / ``from_dict``.

Every description dataclass derives from :class:`Description`; its dictionaries hold only
types TOML can represent, and every structural mistake (unknown or missing key, wrong
container) is reported with its key path (``links[2].mas: unknown field``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Self

from core.numerics import validation as check


def is_unset(value: object) -> bool:
    """True for None and the empty tuple: a field that is not used."""
    return value is None or (isinstance(value, tuple) and not value)


def normalize(obj: object, **values: object) -> None:
    """Store canonical field values on a frozen dataclass (during ``__post_init__`` only)."""
    for name, value in values.items():
        object.__setattr__(obj, name, value)


def key_path(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def check_keys(data: object, path: str, cls: type) -> Mapping[str, Any]:
    """Check ``data`` is a mapping holding only fields of ``cls`` and all its required ones."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{path or cls.__name__}: expected a mapping (a table), got {data!r}")
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    for key in data:
        if key not in names:
            raise ValueError(f"{key_path(path, key)}: unknown field (expected one of: {', '.join(names)})")
    for f in fields:
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if required and f.name not in data:
            raise ValueError(f"{key_path(path, f.name)}: missing required field")
    return data


def list_of_tables(value: object, path: str) -> tuple[Any, ...]:
    items = check.sequence_items(value)
    if items is None:
        raise ValueError(f"{path}: expected a list (an array of tables), got {value!r}")
    return items


def plain(value: object) -> object:
    """Convert a stored field value to JSON/TOML types: nested dicts, lists, floats, strings."""
    if isinstance(value, Description):
        return value.to_dict()
    if isinstance(value, tuple):
        return [plain(item) for item in value]
    return value


class Description:
    """Dictionary conversion shared by the description dataclasses.

    ``to_dict`` writes every field in its stored (canonical) form and omits
    fields that are None or empty, so the result holds only types TOML can
    represent. ``from_dict`` checks the keys and calls the constructor, which
    validates the values; classes with nested descriptions override
    ``_from_dict`` to build those first.
    """

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict of floats, strings, bools, lists and dicts; None and empty fields omitted."""
        result = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if not is_unset(value):
                result[f.name] = plain(value)
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "") -> Self:
        """Build from a dict as written by ``to_dict`` (or read from a config file).

        Parameters
        ----------
        data : mapping
        path : str
            Where ``data`` sits in a larger document (e.g. ``"arm.links[2]"``):
            key errors then name the full key path and value errors say
            ``"arm.links[2]: EI must be > 0, got -1.0"``.

        Raises
        ------
        ValueError
            For an unknown or missing key (message: the key path) and
            :class:`~core.numerics.validation.InputError` (a ValueError) for any
            invalid value (message: where, the field and the value).
        """
        if not path:
            return cls._from_dict(data, "")
        with check.located(path):
            return cls._from_dict(data, path)

    @classmethod
    def _from_dict(cls, data: Mapping[str, Any], path: str) -> Self:
        return cls(**check_keys(data, path, cls))

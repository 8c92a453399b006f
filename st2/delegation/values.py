"""A tiny immutable value type for the hot path: ``collections.namedtuple`` builds its class
with ``exec`` and ``dataclasses`` imports ``inspect``; together they cost the hook more than
its own work. A subclass names its fields in ``__slots__`` and may give trailing defaults."""

from __future__ import annotations


class Value:
    __slots__ = ()
    defaults: tuple = ()

    def __init__(self, *arguments, **keywords) -> None:
        names = self.__slots__
        first_default = len(names) - len(self.defaults)
        for index, name in enumerate(names):
            if name in keywords:
                value = keywords.pop(name)
            elif index < len(arguments):
                value = arguments[index]
            elif index >= first_default:
                value = self.defaults[index - first_default]
            else:
                raise TypeError(f"{type(self).__name__}: missing {name}")
            object.__setattr__(self, name, value)
        if keywords or len(arguments) > len(names):
            raise TypeError(f"{type(self).__name__}: unexpected arguments")

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def astuple(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.astuple() == self.astuple()

    def __hash__(self) -> int:
        return hash(self.astuple())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

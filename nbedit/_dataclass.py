"""A small, drop-in subset of :mod:`dataclasses` for nbedit's own value classes, quick to import.

Why: an agent starts ``nbedit`` once per edit, and start-up is most of such a call. Importing
:mod:`dataclasses` costs about as much as a bare interpreter start (it imports :mod:`inspect`, which
imports ``dis``, ``ast``, ``tokenize`` ...), and the stdlib decorator then builds every class by
``exec``-ing six functions for it and, for ``slots=True``, rebuilds the class. nbedit creates dozens
of such classes on the way to a one-file patch. This module gives the same classes for the options
nbedit uses - ``dataclass(frozen=..., slots=..., eq=...)``, ``field(default=, default_factory=,
repr=, compare=)``, ``fields`` and ``replace`` - with one ``__init__`` per class, made when first
used from a body compiled with the package (``_dataclass_inits``; ``exec`` only for a class of more
than 24 fields), and shared methods built on :func:`operator.attrgetter` for ``__eq__``, ``__hash__``
and ``__repr__``.

The semantics follow the stdlib of the Python versions nbedit supports, for those options:

- ``__init__`` takes the fields in order, positionally or by keyword; a ``default_factory`` is called
  once per instance; a missing argument is a ``TypeError``; a field without a default after one with
  a default, or a ``list``/``dict``/``set`` default, is refused when the class is made.
- ``__repr__`` is ``Name(a=1, b='x')`` over the ``repr=True`` fields (a class's own ``__repr__`` wins);
  ``__eq__`` compares tuples of the ``compare=True`` fields of two instances of the same class.
- hashing: ``frozen`` and ``eq`` hash the compared fields; ``eq`` without ``frozen`` is unhashable;
  ``eq=False`` keeps ``object``'s identity equality and hash.
- ``frozen`` assignment and deletion raise ``FrozenInstanceError`` (an :class:`AttributeError`; when
  the caller has imported :mod:`dataclasses`, also an instance of its ``FrozenInstanceError``).
- ``slots=True`` rebuilds the class with ``__slots__`` and no ``__dict__``; frozen slotted classes get
  ``__getstate__``/``__setstate__`` so :mod:`copy` and :mod:`pickle` work, as the stdlib does.
- ``__match_args__`` lists the fields.

``NamedTuple`` is here for the same reason: ``typing`` costs a few milliseconds to import, and its
``NamedTuple`` compiles every field's annotation; this one makes the same ``collections.namedtuple``
class (fields, defaults, the class's own methods and docstring) and keeps the annotations as written.

Code that uses the stdlib on these classes keeps working: ``__dataclass_fields__`` holds ``Field``
objects whose stdlib markers (``_field_type``, ``MISSING``) are looked up in :mod:`dataclasses` only
when read, so ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` accept them, and the
stdlib decorator can make a subclass of one (``__dataclass_params__`` tells it whether it is frozen).
Not supported (nbedit does not use them, and the decorator refuses them): inheritance between data
classes, ``ClassVar``/``InitVar``/``KW_ONLY`` fields, ``__post_init__``, ordering, ``init=False``.
Type checkers see the stdlib names, so mypy checks these classes as the data classes they are.
"""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    from dataclasses import FrozenInstanceError as FrozenInstanceError
    from dataclasses import dataclass as dataclass
    from dataclasses import field as field
    from dataclasses import fields as fields
    from dataclasses import replace as replace
    from typing import NamedTuple as NamedTuple

    def made_in_bulk(cls: type[T], count: int, *columns: Iterable[object]) -> list[T]: ...

    from collections.abc import Iterable
    from typing import TypeVar

    T = TypeVar("T")
else:
    import sys
    from _operator import attrgetter  # operator.attrgetter (operator.py imports it from there)

    from nbedit import _dataclass_inits as _inits

    class _MissingType:
        __slots__ = ()

        def __repr__(self) -> str:
            return "MISSING"

    MISSING = _MissingType()

    # types.MemberDescriptorType (what a slot is), without types or a class made to find it
    _MemberDescriptor = type(type.__dict__["__basicsize__"])

    # Every class is ~30 us of a start (each special method is looked up along its bases): the error,
    # NamedTuple's machinery and the empty metadata's class are made when first needed (``__getattr__``).
    _made: dict[str, object] = {}

    def _frozen_instance_error():
        if "FrozenInstanceError" not in _made:

            class FrozenInstanceError(AttributeError):
                """Assignment to, or deletion of, a field of a frozen data class."""

            FrozenInstanceError.__qualname__ = "FrozenInstanceError"
            _made["FrozenInstanceError"] = FrozenInstanceError
        return _made["FrozenInstanceError"]

    _both_frozen_errors: list[type] = []

    def _frozen_error(message):
        # a caller that imported dataclasses may catch its FrozenInstanceError: raise one that is both
        stdlib = sys.modules.get("dataclasses")
        if stdlib is None:
            return _frozen_instance_error()(message)
        if not _both_frozen_errors:
            _both_frozen_errors.append(
                type(
                    "FrozenInstanceError",
                    (_frozen_instance_error(), stdlib.FrozenInstanceError),
                    {"__module__": __name__},
                )
            )
        return _both_frozen_errors[0](message)

    class Field:
        """One field of a data class; read by this module and, lazily, by :mod:`dataclasses`."""

        __slots__ = ("name", "type", "_default", "_default_factory", "repr", "compare", "_hash")

        def __init__(self, default, default_factory, repr, compare):
            if default is not MISSING and default_factory is not MISSING:
                raise ValueError("cannot specify both default and default_factory")
            self.name = None
            self.type = None
            self._default = default
            self._default_factory = default_factory
            self.repr = repr
            self.compare = compare
            self._hash = None

        # what the stdlib reads: its own markers, fetched only when it asks (it is imported then)
        @property
        def default(self):
            return _stdlib_missing() if self._default is MISSING else self._default

        @property
        def default_factory(self):
            return _stdlib_missing() if self._default_factory is MISSING else self._default_factory

        @property
        def _field_type(self):
            import dataclasses

            return dataclasses._FIELD

        init = True
        kw_only = False

        @property
        def hash(self):
            return self._hash

        @property
        def metadata(self):
            return _empty_metadata()

        def __repr__(self) -> str:
            return (
                f"Field(name={self.name!r},type={self.type!r},default={self._default!r},"
                f"default_factory={self._default_factory!r},init=True,repr={self.repr!r},"
                f"hash=None,compare={self.compare!r},metadata={self.metadata!r},kw_only=False)"
            )

    def _stdlib_missing():
        import dataclasses

        return dataclasses.MISSING

    def _empty_metadata():
        # what the stdlib gives a field without metadata: an empty mapping (one, made once)
        if "_EMPTY_METADATA" not in _made:

            class _EmptyMetadata(dict):
                __slots__ = ()
                __qualname__ = "_EmptyMetadata"

            _made["_EMPTY_METADATA"] = _EmptyMetadata()
        return _made["_EMPTY_METADATA"]

    class _Parameters:
        """What the stdlib reads of a class's options (``frozen``, when it makes a subclass of it)."""

        __slots__ = ("init", "repr", "eq", "order", "unsafe_hash", "frozen", "match_args", "kw_only", "slots")

        def __init__(self, frozen, eq, slots):
            self.init = self.repr = self.match_args = True
            self.order = self.unsafe_hash = self.kw_only = False
            self.frozen = frozen
            self.eq = eq
            self.slots = slots

        def __repr__(self) -> str:
            return (
                f"_DataclassParams(init=True,repr=True,eq={self.eq!r},order=False,unsafe_hash=False,"
                f"frozen={self.frozen!r})"
            )

    def field(*, default=MISSING, default_factory=MISSING, repr=True, compare=True):
        """A field with a default, a factory, or left out of ``repr``/comparison (as the stdlib's)."""
        return Field(default, default_factory, repr, compare)

    def fields(class_or_instance):
        """The fields of a data class or of one of its instances, in order."""
        try:
            found = class_or_instance.__dataclass_fields__
        except AttributeError:
            raise TypeError("must be called with a dataclass type or instance") from None
        return tuple(found.values())

    def replace(obj, /, **changes):
        """A copy of ``obj`` with ``changes`` made, built by its ``__init__`` (as the stdlib's)."""
        found = getattr(type(obj), "__dataclass_fields__", None)
        if found is None:
            raise TypeError("replace() should be called on dataclass instances")
        for name in found:
            if name not in changes:
                changes[name] = getattr(obj, name)
        return obj.__class__(**changes)

    # --- the shared methods ---------------------------------------------------------------------------

    def _tuple_getter(names):
        # always a tuple, as the stdlib compares and hashes (self.a,) - not self.a - for one field
        if len(names) >= 2:
            return attrgetter(*names)
        if len(names) == 1:
            one = attrgetter(names[0])
            return lambda instance: (one(instance),)
        return lambda instance: ()

    def _eq(self, other):
        if other.__class__ is self.__class__:
            compared = self.__class__.__dataclass_compared__
            return compared(self) == compared(other)
        return NotImplemented

    def _hash(self):
        return hash(self.__class__.__dataclass_compared__(self))

    _repr_running: set[tuple[int, int]] = set()

    def _repr(self):
        key = (id(self), _get_ident())
        if key in _repr_running:
            return "..."
        _repr_running.add(key)
        try:
            shown = self.__class__.__dataclass_shown__
            values = shown[1](self)
            text = ", ".join([f"{name}={value!r}" for name, value in zip(shown[0], values, strict=True)])
        finally:
            _repr_running.discard(key)
        return f"{self.__class__.__qualname__}({text})"

    from _thread import get_ident as _get_ident

    def _frozen_setattr(self, name, value):
        cls = type(self)
        if "__dataclass_fields__" in cls.__dict__ or name in cls.__dataclass_fields__:
            raise _frozen_error(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def _frozen_delattr(self, name):
        cls = type(self)
        if "__dataclass_fields__" in cls.__dict__ or name in cls.__dataclass_fields__:
            raise _frozen_error(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    def _getstate(self):
        return [getattr(self, name) for name in self.__dataclass_fields__]

    def _setstate(self, state):
        for name, value in zip(self.__dataclass_fields__, state, strict=False):
            object.__setattr__(self, name, value)

    # --- the decorator --------------------------------------------------------------------------------

    def _init_function(qualname, field_list, frozen, owner=None):
        namespace = {"_setattr": object.__setattr__, "_MISSING": MISSING}
        # A frozen slotted class sets each field through its slot's own descriptor: the same store
        # ``object.__setattr__`` ends in, without looking the name up on the class for every field
        # (a patch of 900 hunks makes thousands of these objects).
        slots = owner is not None and all(_slot(owner, item.name) is not None for item in field_list)
        if owner is not None:
            made = _from_template(qualname, field_list, owner, frozen, slots)
            if made is not None:
                return made
        parameters = ["self"]
        body = []
        for item in field_list:
            name = item.name
            if item._default_factory is not MISSING:
                namespace[f"_factory_{name}"] = item._default_factory
                parameters.append(f"{name}=_MISSING")
                value = f"_factory_{name}() if {name} is _MISSING else {name}"
            else:
                if item._default is not MISSING:
                    namespace[f"_default_{name}"] = item._default
                    parameters.append(f"{name}=_default_{name}")
                else:
                    parameters.append(name)
                value = name
            if frozen and slots:
                namespace[f"_set_{name}"] = _slot(owner, name).__set__
                body.append(f"    _set_{name}(self, {value})")
            else:
                body.append(
                    f"    _setattr(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}"
                )
        source = f"def __init__({', '.join(parameters)}):\n" + ("\n".join(body) or "    pass") + "\n"
        exec(source, namespace)  # noqa: S102 - the source is made of the class's own field names
        function = namespace["__init__"]
        function.__qualname__ = f"{qualname}.__init__"
        return function

    def _from_template(qualname, field_list, owner, frozen, slots):
        # the same function as the compiled one below, from a body compiled with the package
        # (``_dataclass_inits``): no ``exec``; None when there is no such body for this class. Each
        # field's setter does what the compiled line does: a frozen slotted class's slot setter,
        # ``object.__setattr__`` for another frozen class, ``setattr`` (the class's own
        # ``__setattr__``, as ``self.name = value``) for the rest; a field with a factory calls it
        # when its argument is left out (its default is MISSING, as the compiled one's).
        if len(field_list) > _inits.MOST_FIELDS:
            return None
        namespace = {}
        defaults = []
        for index, item in enumerate(field_list):
            if frozen and slots:
                setter = _slot(owner, item.name).__set__
            elif frozen:
                setter = _object_setter(item.name)
            else:
                setter = _attribute_setter(item.name)
            if item._default_factory is not MISSING:
                setter = _made_when_missing(item._default_factory, setter)
                defaults.append(MISSING)
            elif item._default is not MISSING:
                defaults.append(item._default)
            namespace[f"set{index}"] = setter
        template = getattr(_inits, f"init_{len(field_list)}").__code__
        renamed = {"co_varnames": ("self", *(item.name for item in field_list)), "co_name": "__init__"}
        if hasattr(template, "co_qualname"):  # Python 3.11+
            renamed["co_qualname"] = f"{qualname}.__init__"
        function = _Function(template.replace(**renamed), namespace, "__init__", tuple(defaults) or None)
        function.__qualname__ = f"{qualname}.__init__"
        return function

    _Function = type(_from_template)  # types.FunctionType, without types

    def _slot(owner, name):
        # the field's slot (its member descriptor), or None. A descriptor that reads a slot through (a value
        # made when read: models._DecodedOnRead) names it ``slot``; __init__ and made_in_bulk fill that.
        found = owner.__dict__.get(name)
        if type(found) is not _MemberDescriptor:
            found = getattr(found, "slot", None)
        return found if type(found) is _MemberDescriptor else None

    def _object_setter(name):
        def set_field(self, value):
            object.__setattr__(self, name, value)

        return set_field

    def _attribute_setter(name):
        def set_field(self, value):
            setattr(self, name, value)

        return set_field

    def _made_when_missing(factory, setter):
        def set_field(self, value):
            setter(self, factory() if value is MISSING else value)

        return set_field

    class _LazyInit:
        """The class's ``__init__``, compiled the first time it is looked up (made or inspected).

        Compiling is most of the cost of making a class, and a command uses few of the classes its
        modules define: each is compiled when it is first needed, then replaces this placeholder.
        """

        __slots__ = ("qualname", "field_list", "frozen")

        def __init__(self, qualname, field_list, frozen):
            self.qualname = qualname
            self.field_list = field_list
            self.frozen = frozen

        def __get__(self, instance, owner):
            defining = next((cls for cls in owner.__mro__ if cls.__dict__.get("__init__") is self), None)
            function = _init_function(self.qualname, self.field_list, self.frozen, defining)
            if defining is not None:
                type.__setattr__(defining, "__init__", function)
            return function if instance is None else function.__get__(instance, owner)

    def _process(cls, frozen, slots, eq):
        class_dict = cls.__dict__
        if any("__dataclass_fields__" in vars(base) for base in cls.__mro__[1:]):
            raise TypeError(f"{cls.__name__}: inheriting from a data class is not supported here")
        if "__post_init__" in class_dict:
            raise TypeError(f"{cls.__name__}: __post_init__ is not supported here")
        annotations = class_dict.get("__annotations__", {})
        if "self" in annotations or "_setattr" in annotations or "_MISSING" in annotations:
            raise TypeError(f"{cls.__name__}: a field may not be called 'self', '_setattr' or '_MISSING'")
        field_list = []
        seen_default = False
        for name, annotation in annotations.items():
            if isinstance(annotation, str):
                text = annotation
            else:
                text = getattr(annotation, "__name__", repr(annotation))
            if "ClassVar" in text or "InitVar" in text or "KW_ONLY" in text:
                raise TypeError(
                    f"{cls.__name__}.{name}: ClassVar, InitVar and KW_ONLY are not supported here"
                )
            value = class_dict.get(name, MISSING)
            item = value if isinstance(value, Field) else Field(value, MISSING, True, True)
            item.name = name
            item.type = annotation
            default = item._default
            if default is not MISSING and default.__class__.__hash__ is None:
                raise ValueError(
                    f"mutable default {type(default)} for field {name} is not allowed: use default_factory"
                )
            has_default = default is not MISSING or item._default_factory is not MISSING
            if has_default:
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            # as the stdlib: a plain default stays a class attribute, a field() object goes away
            if isinstance(value, Field):
                if default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, default)
            field_list.append(item)

        names = tuple(item.name for item in field_list)
        cls.__dataclass_fields__ = {item.name: item for item in field_list}
        cls.__dataclass_params__ = _Parameters(frozen, eq, slots)
        if "__init__" not in class_dict:
            cls.__init__ = _LazyInit(cls.__qualname__, field_list, frozen)
            cls.__dataclass_init_made__ = True  # its __init__ sets each field, nothing else (made_in_bulk)
        if "__repr__" not in class_dict:
            shown = tuple(item.name for item in field_list if item.repr)
            cls.__dataclass_shown__ = (shown, _tuple_getter(shown))
            cls.__repr__ = _repr
        if eq:
            compared = tuple(item.name for item in field_list if item.compare)
            cls.__dataclass_compared__ = staticmethod(_tuple_getter(compared))
            if "__eq__" not in class_dict:
                cls.__eq__ = _eq
            if "__hash__" not in class_dict or class_dict["__hash__"] is None:
                cls.__hash__ = _hash if frozen else None
        if frozen:
            for name in ("__setattr__", "__delattr__"):
                if name in class_dict:
                    raise TypeError(f"cannot overwrite attribute {name} in class {cls.__name__}")
            cls.__setattr__ = _frozen_setattr
            cls.__delattr__ = _frozen_delattr
        if "__match_args__" not in class_dict:
            cls.__match_args__ = names
        if slots:
            cls = _with_slots(cls, names, frozen)
        return cls

    def _with_slots(cls, names, frozen):
        # as the stdlib: a new class with the fields as slots, without __dict__ and __weakref__
        if "__slots__" in cls.__dict__:
            raise TypeError(f"{cls.__name__} already specifies __slots__")
        class_dict = dict(cls.__dict__)
        inherited = {slot for base in cls.__mro__[1:-1] for slot in getattr(base, "__slots__", ())}
        class_dict["__slots__"] = tuple(name for name in names if name not in inherited)
        for name in names:
            class_dict.pop(name, None)
        class_dict.pop("__dict__", None)
        class_dict.pop("__weakref__", None)
        qualname = getattr(cls, "__qualname__", None)
        rebuilt = type(cls)(cls.__name__, cls.__bases__, class_dict)
        if qualname is not None:
            rebuilt.__qualname__ = qualname
        if frozen:
            if "__getstate__" not in class_dict:
                rebuilt.__getstate__ = _getstate
            if "__setstate__" not in class_dict:
                rebuilt.__setstate__ = _setstate
        return rebuilt

    def made_in_bulk(cls, count, *columns):
        """``[cls(*row) for row in zip(*columns)]`` for ``count`` rows, each field column set at C speed.

        A parser that makes a thousand hunks at once spends most of that on the calls of their
        ``__init__`` (one call a field, each through Python): here a frozen slotted data class's
        instances are made empty in one map and each field's slot is filled for all of them in
        another, through the slot's own descriptor (what its ``__init__`` calls, value for value).
        Every field needs a column: ``count`` values (any iterable) or ``itertools.repeat(value)``;
        a column of another length raises ``ValueError`` before anything is made (no instance is
        left with an empty slot). Any other class (not frozen, not slotted, with an ``__init__`` or a
        ``__new__`` of its own) is made by its ``__init__``.
        """
        fields_ = getattr(cls, "__dataclass_fields__", None)
        if fields_ is None or len(columns) != len(fields_):
            raise TypeError(f"{getattr(cls, '__name__', cls)!r}: made_in_bulk needs one column a field")
        columns = [
            column if type(column) is repeat or hasattr(column, "__len__") else list(column)
            for column in columns
        ]
        for column in columns:
            if type(column) is not repeat and len(column) != count:
                raise ValueError(f"a column of {len(column)} values for {count} instances")
        params = cls.__dict__.get("__dataclass_params__")
        setters = [_slot(cls, name) for name in fields_]
        slotted = all(item is not None for item in setters)
        own = not cls.__dict__.get("__dataclass_init_made__") or cls.__new__ is not object.__new__
        if params is None or not params.frozen or not slotted or own:
            return list(islice(map(cls, *columns), count))
        made = list(map(cls.__new__, repeat(cls, count)))
        for setter, column in zip(setters, columns, strict=True):
            consume(map(setter.__set__, made, column))
        return made

    from _collections import deque as _deque  # collections.deque, without the collections package
    from itertools import islice, repeat

    consume = _deque(maxlen=0).extend  # runs an iterator to its end at C speed, keeping nothing

    def dataclass(cls=None, /, *, frozen=False, slots=False, eq=True):
        """``@dataclass`` / ``@dataclass(frozen=True, slots=True, eq=False)``, as the stdlib's."""

        def wrap(cls):
            return _process(cls, frozen, slots, eq)

        if cls is None:
            return wrap
        return wrap(cls)

    # --- NamedTuple without typing --------------------------------------------------------------------

    _NAMED_TUPLE_PROHIBITED = frozenset(
        {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults"}
        | {"_make", "_replace", "_asdict", "_source"}
    )

    def _named_tuple_classes():
        # ``NamedTuple`` and its metaclass, made when a module first names them (``__getattr__``)
        if "NamedTuple" not in _made:

            class _NamedTupleMeta(type):
                # as typing.NamedTuple: collections.namedtuple of the annotated fields, then the class's own
                # methods, properties and docstring; annotations stay as written (typing turns strings into
                # ForwardRef objects, compiling each one, which is most of what such a class costs to make)
                def __new__(metaclass, name, bases, namespace):
                    if bases != (_made["NamedTuple"],):
                        raise TypeError("can only inherit from a NamedTuple type here")
                    annotations = namespace.get("__annotations__", {})
                    default_names = []
                    for field_name in annotations:
                        if field_name in namespace:
                            default_names.append(field_name)
                        elif default_names:
                            raise TypeError(
                                f"Non-default namedtuple field {field_name} cannot follow default field"
                                f"{'s' if len(default_names) > 1 else ''} {', '.join(default_names)}"
                            )
                    from collections import namedtuple  # loaded by the first NamedTuple made

                    made = namedtuple(
                        name,
                        list(annotations),
                        defaults=[namespace[field_name] for field_name in default_names],
                        module=namespace["__module__"],
                    )
                    made.__annotations__ = made.__new__.__annotations__ = dict(annotations)
                    for key, value in namespace.items():
                        if key in _NAMED_TUPLE_PROHIBITED:
                            raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                        kept = key not in ("__module__", "__name__", "__annotations__")
                        if kept and key not in made._fields:
                            setattr(made, key, value)
                    return made

            _NamedTupleMeta.__qualname__ = "_NamedTupleMeta"
            _made["_NamedTupleMeta"] = _NamedTupleMeta
            _made["NamedTuple"] = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})
        return _made

    def __getattr__(name):
        if name == "FrozenInstanceError":
            return _frozen_instance_error()
        if name in ("NamedTuple", "_NamedTupleMeta"):
            return _named_tuple_classes()[name]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def literal_aliases(module, aliases):
        """A module ``__getattr__`` giving ``Literal`` type aliases to a program that reads them at
        run time (``typing.get_args(models.Operation)``): built with typing then, so that importing
        the module never loads typing. ``aliases`` maps a name to the alias's values."""

        def __getattr__(name):
            if name in aliases:
                from typing import Literal

                return Literal[aliases[name]]
            raise AttributeError(f"module {module!r} has no attribute {name!r}")

        return __getattr__

"""nbedit's quick data classes behave as the stdlib's: every class in the package against a stdlib twin.

``nbedit._dataclass`` replaces :mod:`dataclasses` for nbedit's own classes (start-up time). These tests
walk every module of the package, find every class it made, build the same class with the stdlib
decorator from the same annotations, defaults and options, and check that both behave alike: the
``__init__`` (positional, keyword, defaults, factories, missing and extra arguments), ``repr``,
equality and hashing, frozen errors, slots, copy/deepcopy/pickle, ``replace``, ``__match_args__`` and
the stdlib's own ``fields``/``asdict``/``is_dataclass``/``replace`` used on nbedit's classes.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import pickle
import pkgutil
from typing import Any

import pytest

import nbedit
from nbedit import _dataclass


def _nbedit_modules() -> list[Any]:
    modules = []
    for info in pkgutil.walk_packages(nbedit.__path__, "nbedit."):
        try:
            modules.append(importlib.import_module(info.name))
        except ImportError as error:  # an optional front end whose dependency is not installed here
            if not (error.name or "").startswith(("nbedit", "nbedit.")):
                continue
            raise
    return modules


def _nbedit_classes() -> list[type]:
    found: dict[str, type] = {}
    for module in _nbedit_modules():
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and "__dataclass_fields__" in value.__dict__
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


CLASSES = _nbedit_classes()


def _options(cls: type) -> dict[str, bool]:
    return {
        "frozen": cls.__dict__.get("__setattr__") is _dataclass._frozen_setattr,
        "slots": "__slots__" in cls.__dict__,
        "eq": "__eq__" in cls.__dict__,
    }


def _twin(cls: type) -> type:
    """The same class made by the stdlib decorator."""
    namespace: dict[str, Any] = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    annotations = {}
    for item in _dataclass.fields(cls):
        annotations[item.name] = item.type
        options = {"repr": item.repr, "compare": item.compare}
        if item._default is not _dataclass.MISSING:
            namespace[item.name] = dataclasses.field(default=item._default, **options)
        elif item._default_factory is not _dataclass.MISSING:
            namespace[item.name] = dataclasses.field(default_factory=item._default_factory, **options)
        else:
            namespace[item.name] = dataclasses.field(**options)
    namespace["__annotations__"] = annotations
    made = {
        "__init__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__getstate__", "__setstate__",
        "__match_args__", "__slots__", "__dict__", "__weakref__", "__annotations__", "__module__", "__qualname__",
    }  # fmt: skip
    for name, own in cls.__dict__.items():  # the class's own methods and properties come along
        if name in made or name in annotations or name.startswith("__dataclass_") or own is _dataclass._repr:
            continue
        namespace[name] = own
    return dataclasses.dataclass(**_options(cls))(type(cls.__name__, (), namespace))


def _values(cls: type, tag: str = "") -> dict[str, str]:
    return {item.name: f"{tag}value of {item.name}" for item in _dataclass.fields(cls)}


def _required(cls: type) -> dict[str, str]:
    return {
        item.name: f"value of {item.name}"
        for item in _dataclass.fields(cls)
        if item._default is _dataclass.MISSING and item._default_factory is _dataclass.MISSING
    }


def _shown(value: object) -> str:
    try:
        return repr(value)
    except Exception as error:  # noqa: BLE001 - compared, not hidden
        return f"{type(error).__name__}: {error}"


def test_every_class_of_the_package_is_found() -> None:
    # the walk must reach the engine, storage, render and front-end classes, or the tests below prove little
    assert len(CLASSES) >= 60
    modules = {cls.__module__ for cls in CLASSES}
    assert {
        "nbedit.engine.models",
        "nbedit.errors",
        "nbedit.storage.atomic",
        "nbedit.apply_result",
    } <= modules


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_the_class_behaves_as_its_stdlib_twin(cls: type) -> None:
    twin = _twin(cls)
    options = _options(cls)
    values = _values(cls)
    ours, theirs = cls(*values.values()), twin(*values.values())
    by_keyword = cls(**values)

    # __init__: the same parameters, positional or keyword, the same defaults
    our_parameters = inspect.signature(cls.__init__).parameters
    their_parameters = inspect.signature(twin.__init__).parameters
    assert list(our_parameters) == list(their_parameters)
    for name, parameter in their_parameters.items():
        assert our_parameters[name].kind == parameter.kind
        if parameter.default is inspect.Parameter.empty or repr(parameter.default) == "<factory>":
            assert (our_parameters[name].default is inspect.Parameter.empty) is (
                parameter.default is inspect.Parameter.empty
            )
        else:
            assert our_parameters[name].default is parameter.default
    for name in values:
        assert getattr(ours, name) == getattr(theirs, name) == getattr(by_keyword, name)

    # only the required arguments: defaults and factories give the same values, factories one per instance
    required = _required(cls)
    least, their_least, again = cls(**required), twin(**required), cls(**required)
    for item in _dataclass.fields(cls):
        assert getattr(least, item.name) == getattr(their_least, item.name)
        if item._default_factory is not _dataclass.MISSING:
            assert getattr(least, item.name) is not getattr(again, item.name)
    if required:
        missing = dict(required)
        missing.pop(next(iter(missing)))
        with pytest.raises(TypeError) as our_error:
            cls(**missing)
        with pytest.raises(TypeError) as their_error:
            twin(**missing)
        assert str(our_error.value).split("(", 1)[1] == str(their_error.value).split("(", 1)[1]
    with pytest.raises(TypeError):
        cls(*values.values(), "one too many")
    with pytest.raises(TypeError):
        cls(**values, unknown="x")

    # repr (the twin has the same qualified name, and a class's own __repr__ is kept by both)
    # (an own __repr__ may need real values, not these strings: then both fail alike)
    assert _shown(ours) == _shown(theirs)

    # equality and hashing
    other_values = _values(cls, "other ")
    if options["eq"]:
        assert ours == by_keyword
        assert not ours.__ne__(by_keyword)
        assert (ours == theirs) is False  # another class
        for item in _dataclass.fields(cls):
            changed = cls(**{**values, item.name: other_values[item.name]})
            assert (changed == ours) is (not item.compare)
            assert (twin(**{**values, item.name: other_values[item.name]}) == theirs) is (not item.compare)
        if options["frozen"]:
            assert hash(ours) == hash(theirs) == hash(by_keyword)
        else:
            assert cls.__hash__ is None and twin.__hash__ is None  # type: ignore[comparison-overlap]
            with pytest.raises(TypeError):
                hash(ours)
    else:
        assert ours != by_keyword and ours == ours  # noqa: PLR0124 - identity equality
        assert hash(ours) == object.__hash__(ours)
        assert twin.__eq__ is object.__eq__

    # frozen: assigning or deleting a field fails with the stdlib's error type and message
    name = next(iter(values))
    if options["frozen"]:
        for action in (lambda target: setattr(target, name, "x"), lambda target: delattr(target, name)):
            with pytest.raises(dataclasses.FrozenInstanceError) as our_frozen:
                action(ours)
            with pytest.raises(dataclasses.FrozenInstanceError) as their_frozen:
                action(theirs)
            assert isinstance(our_frozen.value, AttributeError)
            assert str(our_frozen.value) == str(their_frozen.value)
        with pytest.raises(dataclasses.FrozenInstanceError):
            ours.not_a_field = 1  # type: ignore[attr-defined]
    else:
        setattr(ours, name, "changed")
        assert getattr(ours, name) == "changed"
        setattr(ours, name, values[name])

    # slots
    assert hasattr(ours, "__dict__") is hasattr(theirs, "__dict__")
    if options["slots"]:
        assert cls.__slots__ == twin.__slots__  # type: ignore[attr-defined]

    # copy, deepcopy and pickle keep every field
    for duplicate in (copy.copy(ours), copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert type(duplicate) is cls
        assert {key: getattr(duplicate, key) for key in values} == values

    # replace (ours and the stdlib's), __match_args__, the stdlib's view of the class
    for replace in (_dataclass.replace, dataclasses.replace):
        changed = replace(ours, **{name: "replaced"})
        assert type(changed) is cls and getattr(changed, name) == "replaced"
        assert all(getattr(changed, key) == getattr(ours, key) for key in values if key != name)
    assert cls.__match_args__ == twin.__match_args__  # type: ignore[attr-defined]
    assert dataclasses.is_dataclass(cls) and dataclasses.is_dataclass(ours)
    assert [item.name for item in dataclasses.fields(cls)] == [item.name for item in dataclasses.fields(twin)]
    assert [(item.repr, item.compare) for item in dataclasses.fields(ours)] == [
        (item.repr, item.compare) for item in dataclasses.fields(theirs)
    ]
    assert dataclasses.asdict(ours) == dataclasses.asdict(theirs)
    assert dataclasses.astuple(ours) == dataclasses.astuple(theirs)
    for item in dataclasses.fields(cls):
        their_item = twin.__dataclass_fields__[item.name]  # type: ignore[attr-defined]
        assert item.default is their_item.default or item.default == their_item.default
        assert (item.default_factory is dataclasses.MISSING) is (
            their_item.default_factory is dataclasses.MISSING
        )


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_the_stdlib_decorator_makes_a_subclass_of_the_class(cls: type) -> None:
    # a caller's own data class on top of one of nbedit's (tests/test_jupyter_review.py does it)
    options = _options(cls)
    subclass = dataclasses.dataclass(**options)(
        type(
            "Extended",
            (cls,),
            {"__module__": __name__, "__annotations__": {"extra": "str"}, "extra": "default extra"},
        )
    )
    values = _values(cls)
    made = subclass(*values.values(), "given extra")
    assert [item.name for item in dataclasses.fields(subclass)] == [*values, "extra"]
    assert {name: getattr(made, name) for name in values} == values and made.extra == "given extra"
    assert subclass(**_required(cls)).extra == "default extra"
    assert dataclasses.replace(made, extra="other").extra == "other"
    if options["frozen"]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.extra = "changed"
    if options["eq"]:
        assert made == subclass(*values.values(), "given extra")
        assert made != subclass(*values.values(), "another extra")


# --- what the decorator refuses, as the stdlib does, and what it does not support -------------------


def _both(body: dict[str, Any], **options: bool) -> tuple[BaseException | None, BaseException | None]:
    caught: list[BaseException | None] = []
    for decorator in (_dataclass.dataclass, dataclasses.dataclass):
        try:
            decorator(**options)(type("Sample", (), dict(body)))
        except (TypeError, ValueError) as error:
            caught.append(error)
        else:
            caught.append(None)
    return caught[0], caught[1]


@pytest.mark.parametrize(
    "body",
    [
        {"__annotations__": {"first": "int", "second": "int"}, "first": 1},  # no default after a default
        {"__annotations__": {"items": "list[int]"}, "items": []},  # a mutable default
        {"__annotations__": {"items": "dict[str, int]"}, "items": {}},
    ],
)
def test_bad_classes_are_refused_with_the_stdlib_error(body: dict[str, Any]) -> None:
    ours, theirs = _both(body, frozen=True, slots=True)
    assert ours is not None and theirs is not None
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs) or type(ours) is TypeError


def test_unsupported_features_are_refused_not_ignored() -> None:
    @_dataclass.dataclass(frozen=True)
    class Base:
        value: int

    with pytest.raises(TypeError, match="inheriting"):
        _dataclass.dataclass(frozen=True)(type("Child", (Base,), {"__annotations__": {"other": "int"}}))
    with pytest.raises(TypeError, match="__post_init__"):
        _dataclass.dataclass(type("Late", (), {"__annotations__": {"value": "int"}, "__post_init__": print}))
    with pytest.raises(TypeError, match="ClassVar"):
        _dataclass.dataclass(type("Shared", (), {"__annotations__": {"value": "ClassVar[int]"}}))
    with pytest.raises(ValueError, match="both default and default_factory"):
        _dataclass.field(default=1, default_factory=list)


def test_a_frozen_error_is_an_attribute_error_without_the_stdlib() -> None:
    assert issubclass(_dataclass.FrozenInstanceError, AttributeError)


def test_repr_of_a_value_that_contains_itself_stops() -> None:
    @_dataclass.dataclass(slots=True)
    class Node:
        children: list[Any]

    @dataclasses.dataclass(slots=True)
    class Twin:
        children: list[Any]

    node, twin = Node([]), Twin([])
    node.children.append(node)
    twin.children.append(twin)
    assert repr(node) == repr(twin).replace("Twin", "Node")


# --- NamedTuple without typing ----------------------------------------------------------------------


def _named_tuple_classes() -> list[type]:
    return [
        value
        for module in _nbedit_modules()
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and issubclass(value, tuple)
        and hasattr(value, "_fields")
        and value.__name__ in module.__dict__
        and "__annotations__" in value.__dict__
    ]


NAMED_TUPLES = _named_tuple_classes()


def test_the_named_tuples_on_the_command_path_are_found() -> None:
    from nbedit.storage import records

    assert {records.Entry, records.FileSummary} <= set(NAMED_TUPLES)


@pytest.mark.parametrize("cls", NAMED_TUPLES, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_a_named_tuple_behaves_as_the_typing_one(cls: type) -> None:
    import typing

    namespace = {
        name: value
        for name, value in cls.__dict__.items()
        if not name.startswith("_") or name == "__doc__"
        if name not in cls._fields  # type: ignore[attr-defined]
    }
    namespace["__annotations__"] = dict(cls.__annotations__)
    namespace.update(cls._field_defaults)  # type: ignore[attr-defined]
    namespace["__module__"] = cls.__module__
    twin = typing.NamedTupleMeta("twin", (typing._NamedTuple,), namespace)  # type: ignore[attr-defined]
    assert cls._fields == twin._fields and cls._field_defaults == twin._field_defaults  # type: ignore[attr-defined]
    assert cls.__doc__ == twin.__doc__ and cls.__mro__[1:] == twin.__mro__[1:] == (tuple, object)
    values = [f"value of {name}" for name in cls._fields]  # type: ignore[attr-defined]
    ours, theirs = cls(*values), twin(*values)
    assert ours == theirs and hash(ours) == hash(theirs) and tuple(ours) == tuple(theirs)
    assert repr(ours) == repr(theirs).replace("twin(", f"{cls.__name__}(", 1)
    assert ours._asdict() == theirs._asdict()  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(ours)) == ours and copy.deepcopy(ours) == ours
    for name, value in vars(cls).items():
        if isinstance(value, property):
            assert _shown_property(ours, name) == _shown_property(theirs, name)
    required = {name: f"value of {name}" for name in cls._fields if name not in cls._field_defaults}  # type: ignore[attr-defined]
    assert cls(**required) == twin(**required)
    with pytest.raises(TypeError):
        cls()


def _shown_property(value: object, name: str) -> str:
    try:
        return repr(getattr(value, name))
    except Exception as error:  # noqa: BLE001 - compared, not hidden
        return f"{type(error).__name__}: {error}"


def test_a_named_tuple_refuses_what_typing_refuses() -> None:
    with pytest.raises(
        TypeError, match="Non-default namedtuple field second cannot follow default field first"
    ):
        _dataclass._NamedTupleMeta(
            "Bad",
            (_dataclass.NamedTuple,),
            {"__module__": __name__, "__annotations__": {"first": "int", "second": "int"}, "first": 1},
        )
    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):
        _dataclass._NamedTupleMeta(
            "Bad",
            (_dataclass.NamedTuple,),
            {"__module__": __name__, "__annotations__": {"first": "int"}, "_replace": 1},
        )


# --- type aliases: what type checkers read and what a program reads at run time are the same -----


def test_the_literal_aliases_read_at_run_time_are_the_ones_type_checkers_read() -> None:
    import ast
    import typing

    checked = 0
    for module in _nbedit_modules():
        if not hasattr(module, "_TYPE_ALIASES"):
            continue
        tree = ast.parse(inspect.getsource(module))
        written = {
            node.targets[0].id: ast.literal_eval(node.value.slice)
            for block in tree.body
            if isinstance(block, ast.If)
            and isinstance(block.test, ast.Name)
            and block.test.id == "TYPE_CHECKING"
            for node in block.body
            if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "Literal"
        }
        assert set(written) == set(module._TYPE_ALIASES), module.__name__
        for name, values in written.items():
            assert typing.get_args(getattr(module, name)) == values, (module.__name__, name)
            checked += 1
    assert checked >= 5  # Operation, Surface, Origin, Status, Role
    with pytest.raises(AttributeError):
        nbedit.errors.NoSuchAlias  # type: ignore[attr-defined]  # noqa: B018


# --- the pre-compiled __init__ bodies (nbedit/_dataclass_inits.py) --------------------------------

MOST = 24
HEAD = '''"""Pre-compiled ``__init__`` bodies for ``nbedit._dataclass``: one function per number of fields.

Why: compiling a class's ``__init__`` (``exec`` of its source) costs some 0.1-0.2 ms, and the
``nbedit apply`` of a small patch makes about twenty data classes' instances, so compiling was
about a twentieth of the whole call. The body of a frozen slotted class's ``__init__`` is the
same for every class with as many fields: each argument handed to its slot's setter. These
functions are that body, compiled with the package (their bytecode is in the ``.pyc``);
``_dataclass`` gives one the class's field names (``code.replace(co_varnames=...)``: the
parameters are renamed, the bytecode is unchanged), its defaults and its setters (``setN``, the
globals of the new function). Another class's setters do what its compiled line would (set the
field with ``object.__setattr__`` when frozen, with ``setattr`` when not; call the field's
``default_factory`` when the argument was left out); only a class with more than ``MOST_FIELDS``
fields has its ``__init__`` compiled as before.

Generated: ``tests/test_dataclass_compat.py`` checks this file is exactly what
``template_source`` there writes (edit that, not this).
"""

MOST_FIELDS = %d

# ruff: noqa: F821 - ``setN`` are the globals each copy is given
''' % MOST


def template_source() -> str:
    """The text of ``nbedit/_dataclass_inits.py`` (write it with this when ``MOST`` changes)."""
    parts = [HEAD]
    for count in range(MOST + 1):
        parameters = ", ".join(["self", *(f"f{index}" for index in range(count))])
        body = "\n".join(f"    set{index}(self, f{index})" for index in range(count)) or "    pass"
        parts.append(f"\n\ndef init_{count}({parameters}):  # type: ignore[no-untyped-def]\n{body}\n")
    return "".join(parts)


def test_the_init_bodies_module_is_what_its_generator_writes() -> None:
    from pathlib import Path

    from nbedit import _dataclass_inits

    assert Path(_dataclass_inits.__file__).read_text(encoding="utf-8") == template_source()


@pytest.mark.parametrize("count", [0, 1, 2, 5, 24, 25])
def test_an_init_from_a_body_behaves_as_a_compiled_one(count: int) -> None:
    # field names that are the bodies' own parameter and global names, and Python names besides
    names = ["f1", "set0", "f0", "self_", "init_3", "x"][:count]
    names += [f"field_{n}" for n in range(max(0, count - 6))]
    annotations = dict.fromkeys(names, "int")
    defaults = {name: index for index, name in enumerate(names) if index >= count // 2}
    made = _dataclass.dataclass(frozen=True, slots=True)(
        type("Made", (), {"__annotations__": annotations, **defaults, "__module__": __name__})
    )
    twin = dataclasses.dataclass(frozen=True, slots=True)(
        type("Made", (), {"__annotations__": dict(annotations), **defaults, "__module__": __name__})
    )
    init = made.__init__  # compiled (or taken from a body) when first read
    assert ("_setattr" not in init.__globals__) == (count <= MOST)  # an exec'd one has the helpers
    def parameters(function: Any) -> list[tuple[str, Any, Any]]:
        found = inspect.signature(function).parameters.values()
        return [(parameter.name, parameter.kind, parameter.default) for parameter in found]

    assert parameters(init) == parameters(twin.__init__)
    values = [100 + index for index in range(count)]
    for arguments, keywords in ((values, {}), ([], dict(zip(names, values, strict=True)))):
        built, expected = made(*arguments, **keywords), twin(*arguments, **keywords)
        assert [getattr(built, name) for name in names] == [getattr(expected, name) for name in names]
    required = [name for name in names if name not in defaults]
    for arguments in ([], values + [0]):
        if not arguments and not required:
            continue
        with pytest.raises(TypeError) as ours:
            made(*arguments)
        with pytest.raises(TypeError) as theirs:
            twin(*arguments)
        # the same words after the function's name (the stdlib's code is named for its factory)
        assert str(ours.value).split("()", 1)[1] == str(theirs.value).split("()", 1)[1]


@pytest.mark.parametrize("frozen", [True, False])
@pytest.mark.parametrize("slots", [True, False])
def test_an_init_with_a_factory_or_not_frozen_from_a_body_is_the_stdlib_s(frozen: bool, slots: bool) -> None:
    # a class with a default_factory, without slots or not frozen gets its __init__ from a body too:
    # the same values, factory calls, signature, and (not frozen) every field set through __setattr__
    def made_by(decorator: Any, field: Any, calls: list[str]) -> type:
        def factory() -> list[int]:
            calls.append("factory")
            return []

        body: dict[str, Any] = {
            "__annotations__": {"a": "int", "b": "list[int]", "c": "int"},
            "b": field(default_factory=factory),
            "c": 3,
            "__module__": __name__,
        }
        if not frozen:

            def __setattr__(self: Any, name: str, value: Any) -> None:  # noqa: N807
                calls.append(name)
                object.__setattr__(self, name, value)

            body["__setattr__"] = __setattr__
        return decorator(frozen=frozen, slots=slots)(type("Made", (), body))

    ours_calls: list[str] = []
    theirs_calls: list[str] = []
    made = made_by(_dataclass.dataclass, _dataclass.field, ours_calls)
    twin = made_by(dataclasses.dataclass, dataclasses.field, theirs_calls)
    assert "_setattr" not in made.__init__.__globals__  # from a body, not compiled
    for arguments in ((1,), (1, [5]), (1, [5], 7)):
        built, expected = made(*arguments), twin(*arguments)
        assert (built.a, built.b, built.c) == (expected.a, expected.b, expected.c)
    assert made(1).b is not made(1).b and twin(1).b is not twin(1).b  # a new list each time
    assert ours_calls == theirs_calls and ours_calls.count("factory") == 3  # only where left out
    ours = inspect.signature(made.__init__).parameters
    theirs = inspect.signature(twin.__init__).parameters
    assert [(p.name, p.kind) for p in ours.values()] == [(p.name, p.kind) for p in theirs.values()]
    assert ours["c"].default == 3 and repr(ours["b"].default) == "MISSING"
    if not frozen:  # a subclass's own __setattr__ sees the fields set, as with the stdlib's __init__

        def subclass_calls(base: type) -> list[str]:
            seen: list[str] = []

            def __setattr__(self: Any, name: str, value: Any) -> None:  # noqa: N807
                seen.append(name)
                object.__setattr__(self, name, value)

            type("Sub", (base,), {"__setattr__": __setattr__})(1)
            return seen

        assert subclass_calls(made) == subclass_calls(twin) == ["a", "b", "c"]

"""Pre-compiled ``__init__`` bodies for ``nbedit._dataclass``: one function per number of fields.

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

MOST_FIELDS = 24

# ruff: noqa: F821 - ``setN`` are the globals each copy is given


def init_0(self):  # type: ignore[no-untyped-def]
    pass


def init_1(self, f0):  # type: ignore[no-untyped-def]
    set0(self, f0)


def init_2(self, f0, f1):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)


def init_3(self, f0, f1, f2):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)


def init_4(self, f0, f1, f2, f3):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)


def init_5(self, f0, f1, f2, f3, f4):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)


def init_6(self, f0, f1, f2, f3, f4, f5):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)


def init_7(self, f0, f1, f2, f3, f4, f5, f6):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)


def init_8(self, f0, f1, f2, f3, f4, f5, f6, f7):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)


def init_9(self, f0, f1, f2, f3, f4, f5, f6, f7, f8):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)


def init_10(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)


def init_11(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)


def init_12(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)


def init_13(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)


def init_14(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)


def init_15(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)


def init_16(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)


def init_17(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)
    set16(self, f16)


def init_18(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)
    set16(self, f16)
    set17(self, f17)


def init_19(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)
    set16(self, f16)
    set17(self, f17)
    set18(self, f18)


def init_20(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)
    set16(self, f16)
    set17(self, f17)
    set18(self, f18)
    set19(self, f19)


def init_21(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)
    set16(self, f16)
    set17(self, f17)
    set18(self, f18)
    set19(self, f19)
    set20(self, f20)


def init_22(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)
    set16(self, f16)
    set17(self, f17)
    set18(self, f18)
    set19(self, f19)
    set20(self, f20)
    set21(self, f21)


def init_23(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)
    set16(self, f16)
    set17(self, f17)
    set18(self, f18)
    set19(self, f19)
    set20(self, f20)
    set21(self, f21)
    set22(self, f22)


def init_24(self, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23):  # type: ignore[no-untyped-def]
    set0(self, f0)
    set1(self, f1)
    set2(self, f2)
    set3(self, f3)
    set4(self, f4)
    set5(self, f5)
    set6(self, f6)
    set7(self, f7)
    set8(self, f8)
    set9(self, f9)
    set10(self, f10)
    set11(self, f11)
    set12(self, f12)
    set13(self, f13)
    set14(self, f14)
    set15(self, f15)
    set16(self, f16)
    set17(self, f17)
    set18(self, f18)
    set19(self, f19)
    set20(self, f20)
    set21(self, f21)
    set22(self, f22)
    set23(self, f23)

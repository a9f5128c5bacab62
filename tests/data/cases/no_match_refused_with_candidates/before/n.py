def f():
    return compute(1)

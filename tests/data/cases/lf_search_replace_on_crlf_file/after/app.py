def greet(name):
    """Say hello."""
    return 'hi ' + name

print(greet('x'))

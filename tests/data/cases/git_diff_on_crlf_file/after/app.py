def greet(name):
    return 'hello ' + name

print(greet('x'))

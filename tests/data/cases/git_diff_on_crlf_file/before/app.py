def greet(name):
    return 'hi ' + name

print(greet('x'))

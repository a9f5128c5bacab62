class Box:
    def size(self):
        return 1

class Box:
    def size(self):
        # computed
        return 2

class Config:
    debug = False
    level = 1


class Other:
    pass


class Config:
    debug = False
    level = 1

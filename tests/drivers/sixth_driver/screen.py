"""The sixth driver's screen grammar: it never finds a composer."""


class Sixth:
    name = "sixth"

    def locate(self, screen):
        return None

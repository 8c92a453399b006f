"""The sixth driver's expansion: the ``sixth { … }`` block → ``st2 driver sixth-session``."""


def expand(declaration, host: str, st2_command: list[str]):
    return declaration._replace(argv=(*st2_command, "driver", "sixth-session", "--identity",
                                      f"{host}.{declaration.identity}", "--", "sixth"))

"""The one error type the CLI turns into a one-line message and a non-zero exit."""


class UserError(Exception):
    """Bad input from the user: printed as one line, exit code ``code``, never a traceback."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code

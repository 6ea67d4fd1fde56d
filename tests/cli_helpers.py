"""Running the CLI in-process through its real entry point, for the tests of several packages."""

import sys


def run_cli(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Run ``skillbridge ARGS`` in-process through the real entry point."""
    from skillbridge import cli

    monkeypatch.setattr(sys, "argv", ["skillbridge", *args])
    monkeypatch.setattr(cli.err_console, "soft_wrap", True)  # a line is a line, not 80 cols
    code = 0
    try:
        cli.run()
    except SystemExit as e:
        code = 0 if e.code is None else int(e.code)
    out, err = capsys.readouterr()
    return code, out, err


def sigint_default() -> None:
    """``preexec_fn`` of a child a Ctrl-C test interrupts. A shell starts a background job
    with SIGINT ignored and children inherit that, so the suite run as a background job
    would see its children ignore the test's SIGINT; restored to the default, the child's
    Python turns it into KeyboardInterrupt as in a terminal."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)

"""The view's widgets: the usage header, and the modal screens (compose, desired state, detail).
Textual is imported here and in :mod:`st2.top.app` only."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Sparkline, Static

from st2.top.plain import account_lines, gauge
from st2.top.usage_view import SAMPLING_OFF, UsageView

VERDICT_STYLE = {"OK": "green", "RESET-OK": "green", "PAUSE": "bold red", "STALE": "yellow"}


def gauge_text(label: str, percent: float | None) -> Text:
    style = "dim" if percent is None else "red" if percent >= 90 else "yellow" if percent >= 70 else "green"
    return Text(gauge(label, percent), style=style)


class UsageHeader(Vertical):
    """Both windows as gauges, the verdict word, and the history sparkline (or how to turn
    sampling on)."""

    DEFAULT_CSS = """
    UsageHeader { height: 3; padding: 0 1; background: $panel; }
    UsageHeader > Static { height: 1; width: 1fr; }
    UsageHeader > Sparkline { height: 1; width: 60; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="gauges")
        yield Sparkline([], id="spark")
        yield Static(id="sampling")
        yield Static(id="accounts")

    def show(self, usage: UsageView) -> None:
        line = Text()
        line.append_text(gauge_text("5h", usage.five_hour_pct))
        line.append("   ")
        line.append_text(gauge_text("7d", usage.seven_day_pct))
        line.append("   verdict ")
        line.append(usage.verdict_word, style=VERDICT_STYLE.get(usage.verdict_word, ""))
        self.query_one("#gauges", Static).update(line)
        spark = self.query_one("#spark", Sparkline)
        spark.data = usage.spark[-60:] if usage.sampling and usage.spark else []
        spark.display = usage.sampling and bool(usage.spark)
        sampling = self.query_one("#sampling", Static)
        if not usage.sampling:
            sampling.update(Text(SAMPLING_OFF, style="dim"))
        elif not usage.spark:
            sampling.update(Text("history: no samples in the last hours", style="dim"))
        else:
            sampling.update(Text(f"history: {len(usage.spark)} samples, last {usage.spark[-1]:g}%", style="dim"))
        accounts = self.query_one("#accounts", Static)
        lines = Text()
        for index, (account, text) in enumerate(zip(usage.accounts, account_lines(usage))):
            head, _, word = text.rpartition(" ")
            lines.append(("\n" if index else "") + head + " ")
            lines.append(word, style=VERDICT_STYLE.get(account.verdict_word, ""))
        accounts.update(lines)
        accounts.styles.height = len(usage.accounts)
        accounts.display = bool(usage.accounts)
        self.styles.height = 3 + len(usage.accounts)


class PromptScreen(ModalScreen[str | None]):
    """One line of input; Enter returns it, Escape returns None."""

    AUTO_FOCUS = "*"  # its first focusable widget (the input), not the app's table
    BINDINGS = [("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical { width: 80%; height: auto; border: thick $accent; padding: 1 2; background: $surface; }
    """

    def __init__(self, title: str, placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(placeholder=self.placeholder, id="prompt")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class DetailScreen(ModalScreen[None]):
    """A seat's detail pane; any of Escape, q or Enter closes it."""

    AUTO_FOCUS = "*"  # its first focusable widget (the scroll), not the app's table
    BINDINGS = [("escape", "close", "Close"), ("q", "close", "Close"), ("enter", "close", "Close")]
    DEFAULT_CSS = """
    DetailScreen { align: center middle; }
    DetailScreen > VerticalScroll { width: 90%; height: 90%; border: thick $accent; padding: 0 1; background: $surface; }
    """

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("\n".join(self.lines)), id="detail")

    def action_close(self) -> None:
        self.dismiss(None)

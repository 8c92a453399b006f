"""The roster behind `st2 agents`: one row per discovered seat, joining declared presence,
desired lifecycle, observed harness state, native-driver diagnostics and harness context as
independent axes."""

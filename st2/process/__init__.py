"""Reading live processes: one ``/proc/<pid>/stat`` parser for every part that checks a PID."""

"""Attack tests: each module plays one attacker against a real kernel and real files.

An attacker here is whoever can write the workspace (a shipped `.logician/`, a shared folder,
a prompt injection that the model repeats); each test asserts what the person who opens the
workspace would notice: the marker file never appears, no file outside changes, the planted
value is refused by name.
"""

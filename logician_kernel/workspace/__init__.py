"""The front door of everything durable: a workspace's `.logician/` state, its threads, and
the frame bracket the kernel, `%load_ext` and scripts share.

Uses everything durable below it; nothing below imports it."""

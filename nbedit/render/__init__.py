"""Plans and history rendered as text, rich terminal output and HTML (shared by CLI and widgets)."""

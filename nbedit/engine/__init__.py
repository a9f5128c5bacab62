"""The pure engine: text in, text out. No file I/O, no IPython or ipywidgets imports."""

"""The Jupyter front end: magics, the input transformer, review and history widgets."""

"""The editor's problems around an edit: asked, settled, and reported as the model reads them."""

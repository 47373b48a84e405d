"""The LSP front: pygls server, handlers, and the LSP implementation of the Host seam."""

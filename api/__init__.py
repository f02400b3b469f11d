"""The service's imperative shell: the Litestar app, its database code and the command line."""

"""The ASGI application for servers that import it by name (`uvicorn api.asgi:app`)."""

from api.app import create_app

app = create_app()

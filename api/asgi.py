"""The ASGI application for servers that import it by name (`uvicorn api.asgi:app`,
`litestar --app api.asgi:app run`): checked first, so that a bad setting or a database not
yet migrated is one line saying what to do, not a traceback."""

from api.startup import checked_app

app = checked_app()

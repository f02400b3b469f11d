"""Refusals of the application's services, each with a stable machine-readable code.

Services say what went wrong in the domain's words and never choose an HTTP status: the
command line and the HTTP edge present the same refusal differently, and only
`api.http.problems` maps each kind below to a status. A new refusal picks the kind that
describes it; its `code` is part of the contract with clients (docs/spec/api.md).
"""


class DomainError(Exception):
    """A refusal: `code` is the contract's reason, `detail` a sentence for a person."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


class NotFound(DomainError):
    """No such thing, or not the caller's to see: the two are never told apart."""

    def __init__(self, what: str) -> None:
        super().__init__("not_found", f"{what} not found")


class Conflict(DomainError):
    """The request is well formed, but the state of things forbids it now."""


class Refused(DomainError):
    """A rule of the house refuses the request as asked, whatever the state."""


class Forbidden(DomainError):
    """The caller's role may not do this."""

    def __init__(self, detail: str = "this role may not do that") -> None:
        super().__init__("forbidden", detail)


class Restricted(DomainError):
    """The player's own protections bar this now (self-exclusion, a play-time limit): the
    request is understood and allowed to the role, but not to this player at this time."""


class Throttled(DomainError):
    """Too many failed attempts from this client: try again in `retry_after` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "too_many_requests", f"too many failed authentications; retry in {retry_after} s"
        )
        self.retry_after = retry_after


class Unauthenticated(DomainError):
    """The caller did not prove who they are (`token_revoked`, `token_expired`: with a
    token that no longer works)."""

    def __init__(self, detail: str, *, code: str = "unauthorized") -> None:
        super().__init__(code, detail)


class InvalidInput(DomainError):
    """A value the request carries is malformed; `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__("validation_error", f"{field}: {message}")
        self.field = field
        self.message = message

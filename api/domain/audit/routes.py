"""Audit (auditor only): replay one hand against its record and ledger; ledger integrity.

Both read inside one snapshot (`read_snapshot`): what they compare was true at one instant,
and on SQLite they never take the write lock.
"""

from litestar import Controller, get
from sqlalchemy.orm import Session

from api.db.snapshot import read_snapshot
from api.domain.audit import views as audit_views
from api.domain.audit.schemas import HandAudit, LedgerIntegrity
from api.domain.tokens.service import Role
from api.http.routing import (
    BEARER,
    DatabaseDependency,
    PathId,
    PrincipalDependency,
    problems,
)


class AuditController(Controller):
    path = "/v1/audit"
    tags = ("audit",)
    security = BEARER

    @get("/hands/{hand_id:int}", sync_to_thread=True, responses=problems(403, 404))
    def audit_hand(
        self, hand_id: PathId, database: DatabaseDependency, principal: PrincipalDependency
    ) -> HandAudit:
        """Re-derive the hand from its seeds and recorded rules; compare record and ledger."""
        principal.require(Role.AUDITOR)
        with read_snapshot(database.engine) as connection, Session(bind=connection) as session:
            return audit_views.hand_audit(session, hand_id)

    @get("/ledger", sync_to_thread=True, responses=problems(403))
    def audit_ledger(
        self, database: DatabaseDependency, principal: PrincipalDependency
    ) -> LedgerIntegrity:
        """Hash chain, trial balance, stored balances, and money held for unsettled hands."""
        principal.require(Role.AUDITOR)
        with read_snapshot(database.engine) as connection, Session(bind=connection) as session:
            return audit_views.ledger_integrity(session)

"""Service settings, read from `CASINO_WAR_*` environment variables."""

from datetime import timedelta
from functools import cache, lru_cache
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from api.domain.protection.policy import ProtectionPolicy
from ledger.database import POOL_SIZE


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CASINO_WAR_", frozen=True)

    database_url: str = "sqlite:///casino-war.db"
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    gaming_day_timezone: str = "UTC"
    gaming_day_start_hour: int = Field(default=0, ge=0, le=23)
    decision_timeout_seconds: int = Field(default=86_400, gt=0)
    abandoned_tie_action: Literal["surrender", "war"] = "surrender"
    # Player protection: how long a looser limit waits, and the pause that ends play time.
    limit_cooling_off_seconds: int = Field(default=86_400, ge=0)
    play_idle_gap_seconds: int = Field(default=300, gt=0)
    # The longest a request waits on the database (a lock, a statement, a connection)
    # before it is answered 503 service_unavailable.
    database_timeout_seconds: float = Field(default=30.0, gt=0)
    # Database connections each server process keeps and never exceeds, and so the units of
    # work it runs at once: half for the commands and token look-ups (on SQLite served by one
    # process, one at a time on the event loop), half for the synchronous reads
    # (`api.db.threads`). Past them a request waits for its turn.
    database_pool_size: int = Field(default=POOL_SIZE, ge=2)
    # One line per request on stderr (method, path, status, duration, request id); plain
    # text, or JSON lines for a log shipper.
    access_log: bool = True
    log_format: Literal["text", "json"] = "text"
    # Token lifetimes: staff tokens always expire; player tokens when this says so.
    staff_token_ttl_seconds: int = Field(default=30 * 86_400, gt=0)
    player_token_ttl_seconds: int | None = Field(default=None, gt=0)
    # How long a worker trusts a token it has looked up: the bound on how long a revoked
    # token can still act (issue 17 promises one second), and one query per token per
    # worker per this many seconds. Longer only where that promise is not needed (the
    # instruction counts of `benchmarks.server_instructions`, where valgrind slows a server
    # fiftyfold).
    token_cache_seconds: float = Field(default=1.0, gt=0, le=3600)
    # Failed authentications one client address may make in a minute before a 429.
    auth_failures_per_minute: int = Field(default=20, gt=0)
    # Browser origins allowed to call the API (CORS); empty: CORS off. A JSON list.
    cors_allowed_origins: tuple[str, ...] = ()
    # Placing and deciding hands, deposits and withdrawals served in front of the
    # framework (`api.http.hot_path`), with the same answers; off, every request goes
    # through Litestar (for comparison).
    hot_path: bool = True
    # How many server processes share the database; `casino-war serve --workers` sets it.
    workers: int = Field(default=1, ge=1)

    @field_validator("database_url")
    @classmethod
    def _supported_database(cls, value: str) -> str:
        if not value.startswith(("sqlite://", "postgresql", "postgres://", "postgres+psycopg")):
            raise ValueError(
                "must be sqlite:///PATH or postgresql://USER@HOST/DATABASE "
                "(the two databases this service runs on)"
            )
        try:
            make_url(value)  # a port that is not a number, say: refused here, not mid-start
        except (ArgumentError, ValueError):
            raise ValueError("is not a database URL (USER:PASSWORD@HOST:PORT/DATABASE)") from None
        return value

    @field_validator("gaming_day_timezone")
    @classmethod
    def _known_time_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)  # at start-up rather than mid-report
        except (ZoneInfoNotFoundError, ValueError, OSError) as unknown:
            # A KeyError, or an OSError for a folder of zones: pydantic reports neither.
            raise ValueError("must be an IANA time zone such as Europe/Malta") from unknown
        return value

    @property
    def time_zone(self) -> ZoneInfo:
        return ZoneInfo(self.gaming_day_timezone)

    @property
    def staff_token_ttl(self) -> timedelta:
        return timedelta(seconds=self.staff_token_ttl_seconds)

    @property
    def player_token_ttl(self) -> timedelta | None:
        if self.player_token_ttl_seconds is None:
            return None
        return timedelta(seconds=self.player_token_ttl_seconds)

    @property
    def protection(self) -> ProtectionPolicy:
        return _protection(
            self.gaming_day_timezone,
            self.gaming_day_start_hour,
            self.limit_cooling_off_seconds,
            self.play_idle_gap_seconds,
        )


@lru_cache(maxsize=16)
def _protection(
    zone: str, start_hour: int, cooling_off_seconds: int, idle_gap_seconds: int
) -> ProtectionPolicy:
    """Built once for each setting of it: every hand placed asks for it. (Kept out of the
    settings themselves, whose copies with other values would carry it along.)"""
    return ProtectionPolicy(
        zone=ZoneInfo(zone),
        start_hour=start_hour,
        cooling_off=timedelta(seconds=cooling_off_seconds),
        idle_gap=timedelta(seconds=idle_gap_seconds),
    )


@cache
def get_settings() -> Settings:
    return Settings()

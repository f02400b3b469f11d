"""Service settings, read from `CASINO_WAR_*` environment variables."""

from functools import cache
from typing import Literal
from zoneinfo import ZoneInfo

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CASINO_WAR_", frozen=True)

    database_url: str = "sqlite:///casino-war.db"
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    gaming_day_timezone: str = "UTC"
    gaming_day_start_hour: int = Field(default=0, ge=0, le=23)
    decision_timeout_seconds: int = Field(default=86_400, gt=0)
    abandoned_tie_action: Literal["surrender", "war"] = "surrender"
    # How many server processes share the database; `casino-war serve --workers` sets it.
    workers: int = Field(default=1, ge=1)

    @field_validator("gaming_day_timezone")
    @classmethod
    def _known_time_zone(cls, value: str) -> str:
        ZoneInfo(value)  # raises for an unknown zone, at start-up rather than mid-report
        return value

    @property
    def time_zone(self) -> ZoneInfo:
        return ZoneInfo(self.gaming_day_timezone)


@cache
def get_settings() -> Settings:
    return Settings()

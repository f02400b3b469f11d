"""The standalone verifier re-derives hands in a real browser exactly as the engine does:
every vector of the project's test vectors, from a file opened from disk, and a hand the
live service dealt, filled in from a link."""

import json
import re
from html import unescape
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import chromium, file_url, final_dom

pytestmark = pytest.mark.skipif(
    chromium() is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)
VECTORS: dict[str, list[dict[str, Any]]] = json.loads(
    (Path(__file__).parent.parent / "data" / "vectors.json").read_text(encoding="utf-8")
)
PAGE = files("api.web").joinpath("verify.html").read_text(encoding="utf-8")


def _verifier_script() -> str:
    match = re.search(r'<script id="verifier">(.*?)</script>', PAGE, re.DOTALL)
    assert match is not None
    return match.group(1)


HARNESS = """<!doctype html><meta charset="utf-8"><pre id="results">pending</pre>
<script>{verifier}</script>
<script>
const vectors = {vectors};
(async () => {{
  const out = {{shuffle: [], below: [], settlement: []}};
  for (const v of vectors.shuffle) {{
    const stream = await randomStream(v.server_seed, v.client_seed, v.nonce);
    const first = [];
    for (let i = 0; i < v.first_u32.length; i++) first.push(await stream.nextU32());
    const shoe = orderedShoe(v.decks, v.jokers_per_deck);
    out.shuffle.push({{first_u32: first,
      cards: await drawCards(v.server_seed, v.client_seed, v.nonce, shoe, 7),
      hash: await serverSeedHash(v.server_seed)}});
  }}
  for (const v of vectors.below) {{
    const stream = await randomStream(v.server_seed, v.client_seed, v.nonce);
    const values = [];
    for (let i = 0; i < v.first_12.length; i++) values.push(await stream.below(v.n));
    out.below.push({{values, consumed: stream.consumed}});
  }}
  for (const v of vectors.settlement) {{
    const shoe = orderedShoe(v.decks, 0);
    const hand = await deriveHand({{...v, jokers_per_deck: 0, ace_low: false,
      action: v.action ?? ""}});
    out.settlement.push({{
      cards: await drawCards(v.server_seed, v.client_seed, v.nonce, shoe, 4 + v.burn_cards),
      player: hand.player, dealer: hand.dealer, outcome: hand.outcome,
      war_player: hand.war?.player, war_dealer: hand.war?.dealer,
      main: hand.main === null ? null : Number(hand.main), tie: Number(hand.tie)}});
  }}
  document.getElementById("results").textContent = JSON.stringify(out);
}})().catch(error => {{ document.getElementById("results").textContent = "ERROR " + error; }});
</script>
"""


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    harness = tmp_path_factory.mktemp("verifier") / "harness.html"
    harness.write_text(
        HARNESS.format(verifier=_verifier_script(), vectors=json.dumps(VECTORS)),
        encoding="utf-8",
    )
    dom = final_dom(file_url(harness))
    text = unescape(re.search(r'<pre id="results">(.*?)</pre>', dom, re.DOTALL).group(1))  # type: ignore[union-attr]
    assert not text.startswith(("ERROR", "pending")), text
    results: dict[str, list[dict[str, Any]]] = json.loads(text)
    return results


def test_the_stream_and_the_shuffle_match_every_vector(derived: dict[str, Any]) -> None:
    for vector, got in zip(VECTORS["shuffle"], derived["shuffle"], strict=True):
        assert got["first_u32"] == vector["first_u32"]
        assert got["cards"] == vector["first_7_cards"]
        assert got["hash"] == vector["server_seed_hash"]


def test_unbiased_integers_match_every_vector(derived: dict[str, Any]) -> None:
    for vector, got in zip(VECTORS["below"], derived["below"], strict=True):
        assert got["values"] == vector["first_12"]
        assert got["consumed"] == vector["u32_consumed"]


def test_every_settlement_vector_is_re_derived_to_the_unit(derived: dict[str, Any]) -> None:
    for vector, got in zip(VECTORS["settlement"], derived["settlement"], strict=True):
        expected = vector["result"]
        assert got["cards"] == vector["cards"]
        assert (got["player"], got["dealer"], got["outcome"]) == (
            expected["player"], expected["dealer"], expected["outcome"],
        )  # fmt: skip
        assert (got["main"], got["tie"]) == (expected["main"], expected["tie"])
        if "war_player" in expected:
            assert (got["war_player"], got["war_dealer"]) == (
                expected["war_player"], expected["war_dealer"],
            )  # fmt: skip


def _testid(dom: str, name: str) -> str:
    match = re.search(rf'data-testid="{name}"[^>]*>(.*?)</output>', dom, re.DOTALL)
    assert match is not None, name
    return unescape(match.group(1)).strip()


def test_the_page_opened_from_disk_verifies_a_hand_from_its_link(tmp_path: Path) -> None:
    vector = next(v for v in VECTORS["settlement"] if v["action"] == "war")
    shuffle = VECTORS["shuffle"][0]
    page = tmp_path / "verify.html"
    page.write_text(PAGE, encoding="utf-8")
    fragment = (
        f"server_seed={vector['server_seed']}&client_seed={vector['client_seed']}"
        f"&nonce={vector['nonce']}&bet={vector['bet']}&tie_bet={vector['tie_bet']}"
        f"&action=war&server_seed_hash={shuffle['server_seed_hash']}"
    )
    dom = final_dom(f"{file_url(page)}#{fragment}")
    assert _testid(dom, "cards") == " ".join(vector["cards"])
    assert _testid(dom, "outcome") == vector["result"]["outcome"]
    net = vector["result"]["main"] + vector["result"]["tie"]
    assert _testid(dom, "net") == (f"+{net}" if net > 0 else str(net))
    assert _testid(dom, "commitment") == "mismatch"  # that hash is another seed's

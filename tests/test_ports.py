"""The tests' servers get ports that no other test process can be given (`tests.ports`)."""

import socket

from tests.ports import claim_block, free_port, own_block


def test_a_block_claimed_by_one_process_is_not_claimed_again_while_it_holds_it() -> None:
    first_claim, first = claim_block()
    second_claim, second = claim_block()
    try:
        assert set(first).isdisjoint(second)
    finally:
        first_claim.close()
        second_claim.close()


def test_a_free_port_is_one_of_this_process_block_and_can_be_bound() -> None:
    port = free_port()
    assert port in own_block()[1]
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))

"""The one secret masker."""
from __future__ import annotations

from lodestar.plugin.masking import mask_secrets

KEY = "sk-test-0123456789abcdef"


def test_known_secrets_and_key_shaped_words_are_masked():
    assert mask_secrets(f"bad key {KEY} and sk-other-abcdefghij", (KEY,), key_shapes=True) == "bad key *** and ***"
    assert mask_secrets(f"key {KEY}, other sk-other-abcdefghij", (KEY,)) == "key ***, other sk-other-abcdefghij"


def test_placeholder_keys_of_local_servers_are_not_masked():
    assert mask_secrets("x marks the box", ("x", "", None)) == "x marks the box"
    assert mask_secrets("token abcd here", ("abcd",)) == "token *** here"

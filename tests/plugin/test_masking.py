"""The one secret masker."""
from __future__ import annotations

import pytest

from lodestar.plugin.masking import mask_secrets

KEY = "sk-test-0123456789abcdef"


def test_known_secrets_and_key_shaped_words_are_masked():
    assert mask_secrets(f"bad key {KEY} and sk-other-abcdefghij", (KEY,), key_shapes=True) == "bad key *** and ***"
    assert mask_secrets(f"key {KEY}, other sk-other-abcdefghij", (KEY,)) == "key ***, other sk-other-abcdefghij"


def test_placeholder_keys_of_local_servers_are_not_masked():
    assert mask_secrets("x marks the box", ("x", "", None)) == "x marks the box"
    assert mask_secrets("token abcd here", ("abcd",)) == "token *** here"


def test_with_parts_every_run_of_eight_or_more_characters_of_the_key_is_masked():
    """A server echoing the key without its 'sk-' prefix, or 8 characters of it, gave those away (issue 60)."""
    text = f"echo {KEY[3:]}, part {KEY[5:13]}, seven {KEY[5:12]}, spliced {KEY[3:11]}{KEY[12:20]}, full {KEY}."
    assert mask_secrets(text, (KEY,), parts=True) == f"echo ***, part ***, seven {KEY[5:12]}, spliced ***, full ***."
    assert mask_secrets(text, (KEY,)).count("***") == 1  # without parts: only the exact key
    assert mask_secrets("abcdefg and abcdefg", ("abcdefg",), parts=True) == "*** and ***"  # short keys: exact only


@pytest.mark.timing
def test_masking_parts_of_a_long_key_takes_one_pass_over_the_text():
    """Linear in the text, whatever the key's length: a 200-character key over 2 MB of text (masking every substring
    of the key would try some 20,000 of them)."""
    import random
    import string
    import time

    rng = random.Random(60)
    key = "sk-" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(200))
    filler = "".join(rng.choice(string.ascii_lowercase + " ") for _ in range(1_000_000))
    text = filler + key[40:52] + filler + key[100:108]
    started = time.perf_counter()
    masked = mask_secrets(text, (key,), parts=True)
    seconds = time.perf_counter() - started
    assert masked == filler + "***" + filler + "***"
    assert seconds < 3.0, f"{seconds:.1f} s"

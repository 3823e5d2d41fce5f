"""kiln.units.parse_size against tests/byte_sizes.tsv, the cases kilnd's
flags (kiln::parseByteSize, AgentMainTest) are tested against too."""

import pathlib

import pytest

from kiln.units import format_bytes, parse_size

CASES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "byte_sizes.tsv"


def _cases():
    for line in CASES.read_text().splitlines():
        if line and not line.startswith("#"):
            text, expected = line.rsplit("\t", 1)
            yield text, expected


@pytest.mark.parametrize("text,expected", list(_cases()))
def test_parse_size_as_kilnd_does(text, expected):
    if expected == "error":
        with pytest.raises(ValueError):
            parse_size(text)
    else:
        assert parse_size(text) == int(expected)


def test_format_bytes():
    assert format_bytes(1023) == "1023 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(20 << 30) == "20.0 GiB"

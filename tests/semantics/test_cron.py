"""robfig/cron v3's ParseStandard: what it accepts, and its words for what it refuses."""

import pytest

from fleetwarden.semantics.cron import CronError, parse_standard


@pytest.mark.parametrize(
    "spec",
    ["* * * * *", "*/15 0-6 1,15 * mon-fri", "0 0 1 JAN,jul ?", "5/10 * * * 0", "@weekly",
     "@every 90s", "CRON_TZ=UTC 0 3 * * *", "0" * 5000 + "1 * * * *", "@every 0001s"],
)  # fmt: skip
def test_accepted(spec: str) -> None:
    parse_standard(spec)


MANY = "9" * 5000


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty spec string"),
        ("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"),
        ("0 24 * * *", "end of range (24) above maximum (23): 24"),
        ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("0 0 * 9-3 *", "beginning of range (9) beyond end of range (3): 9-3"),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("*/2/3 * * * *", "too many slashes: */2/3"),
        ("0 0 * * fri-", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
        ("@every tomorrow", 'failed to parse duration @every tomorrow: time: invalid duration '
         '"tomorrow"'),
        # Past int64, and (at 5000 digits) past what int() converts: out of range, as Go says.
        ("0 0 * * 99999999999999999999", "failed to parse int from 99999999999999999999: "
         'strconv.Atoi: parsing "99999999999999999999": value out of range'),
        (MANY + " * * * *", f'failed to parse int from {MANY}: strconv.Atoi: parsing "{MANY}": '
         "value out of range"),
        ("@every " + MANY + "s", f"failed to parse duration @every {MANY}s: time: invalid "
         f'duration "{MANY}s"'),
    ],
)  # fmt: skip
def test_refused(spec: str, message: str) -> None:
    with pytest.raises(CronError) as refused:
        parse_standard(spec)
    assert str(refused.value) == message

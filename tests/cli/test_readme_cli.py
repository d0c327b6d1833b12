"""The README's command-line section: an `xcore run` line for every registered method, and each
line's arguments and settings valid (parsed and validated exactly as the command would)."""

from __future__ import annotations

import shlex
from pathlib import Path

from xcore import cli
from xcore.data.samples import load_sample
from xcore.methods import REGISTRY

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## The command line")
    block = text[text.index("```bash\n", start) + 8:]
    block = block[:block.index("```")]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_readme_runs_every_registered_method_with_valid_settings():
    commands = readme_commands()
    assert all(c[0] == "xcore" for c in commands)
    runs = [c for c in commands if c[1] == "run" and c[3].startswith("sample:")]
    assert sorted({c[2] for c in runs}) == sorted(REGISTRY)
    for command in commands:
        args = cli.parser().parse_args(command[1:])  # every line parses
        if args.command == "run" and args.data.startswith("sample:"):
            spec = REGISTRY[args.method]
            assert args.data == f"sample:{spec.sample}"
            ds = load_sample(spec.sample)
            settings = cli.build_settings(spec, ds, {}, cli.parse_set(args.set or [], spec.settings_type))
            for pair in args.set:
                key, value = pair.split("=")
                got = getattr(settings, key)
                assert (",".join(got) if isinstance(got, tuple) else str(got)) == value

"""The documentation keeps up with the command line. Scenario: someone adds an option to `report` and forgets
docs/commands.md, or the README grows back into a diary. Every command and every option that `--help`
lists must be documented in its command's section of docs/commands.md (the options every log-reading
command shares, in "Shared options"); every page the README links to exists; the README stays short.
"""

from __future__ import annotations

import re

import pytest
import typer

from rebalance_doctor.cli import app

from support import ROOT

COMMANDS_DOC = ROOT / "docs" / "commands.md"
SHARED = "Shared options"


def sections() -> dict[str, str]:
    """docs/commands.md cut at its headings: heading text → the text under it."""
    text = COMMANDS_DOC.read_text()
    parts = re.split(r"^#{2,3} (.+)$", text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def commands(group=None, path=()):
    """(command path, long options) for every command and sub-command, as `--help` shows them."""
    group = group or typer.main.get_command(app)
    for name, command in group.commands.items():
        if getattr(command, "commands", None):
            yield from commands(command, (*path, name))
        else:
            options = [opt for param in command.params for opt in getattr(param, "opts", []) if opt.startswith("--")]
            yield " ".join((*path, name)), [opt for opt in options if opt != "--help"]


SHARED_OPTIONS = set(next(options for name, options in commands() if name == "events")) - {"--output", "--format", "--kind"}


@pytest.mark.parametrize(("command", "options"), list(commands()), ids=lambda value: value if isinstance(value, str) else "")
def test_every_command_and_option_is_documented(command: str, options: list[str]):
    found = sections()
    own = found.get(f"rebalance-doctor {command}")
    assert own is not None, f"docs/commands.md has no section '## rebalance-doctor {command}'"
    shared = found[SHARED]
    missing = [o for o in options if f"`{o}`" not in own and not (o in SHARED_OPTIONS and f"`{o}`" in shared)]
    assert missing == [], f"rebalance-doctor {command}: undocumented {missing}"


def test_the_programs_own_options_are_documented():
    program = typer.main.get_command(app)
    text = COMMANDS_DOC.read_text()
    assert [o for p in program.params for o in p.opts if o.startswith("--") and f"`{o}`" not in text] == []


def test_the_readme_is_a_short_guide_whose_links_resolve():
    readme = ROOT / "README.md"
    assert len(readme.read_bytes()) <= 10 * 1024
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme.read_text())
    local = [link for link in links if "://" not in link]
    assert local and [link for link in local if not (ROOT / link).exists()] == []


def test_every_docs_page_is_reachable_from_the_readme():
    text = (ROOT / "README.md").read_text()
    pages = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))
    assert [page for page in pages if page not in text] == []


def test_the_readme_names_every_client_library_the_catalogs_know():
    """A user looking for their client finds it in the README's table of families (aiokafka rides on kafka-python,
    sarama-cluster on sarama)."""
    from rebalance_doctor.catalog.schema import COMPONENTS

    names = {"kafka-python": "kafka-python", "kafkajs": "KafkaJS", "sarama": "sarama", "franz-go": "franz-go",
             "kafka-go": "kafka-go", "ruby-kafka": "ruby-kafka", "streamiz": "Streamiz", "librdkafka": "librdkafka",
             "streams": "Kafka Streams", "connect": "Kafka Connect", "consumer": "KIP-848", "arroyo": "Arroyo", "karafka": "Karafka",
             "rust-rdkafka": "rust-rdkafka", "kafka-node": "kafka-node", "brod": "brod", "masstransit": "MassTransit",
             "smallrye": "SmallRye"}
    text = (ROOT / "README.md").read_text()
    assert set(COMPONENTS) - {"broker", "jvm"} <= set(names)
    assert [name for name in names.values() if name not in text] == []
